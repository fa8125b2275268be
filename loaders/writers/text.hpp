// Text helpers of the writers, one of each: CSV fields (RFC 4180), JSON strings, and atomic file
// writes. Writers know nothing of scheduling: they format tables the engine filled.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace colmatch::writers {

/// A failed write (create, write, flush or rename); what() names the path and the cause.
class WriteError : public std::runtime_error {
 public:
  WriteError(const std::string& where, const std::string& why) : std::runtime_error(where + ": " + why), path(where) {}
  std::string path;
};

/// Appends `v` to `out` as one CSV field: as is, or in double quotes (quotes doubled) when it holds
/// a comma, a quote or a line break.
void csv_field(std::string& out, std::string_view v);

/// Whether `v` is written as is as a CSV field (holds no comma, quote or line break).
inline bool plain_field(std::string_view v) noexcept {
  // (find_first_of over a set calls memchr once per character: a loop the compiler vectorizes instead)
  bool plain = true;
  for (const char c : v) plain &= c != ',' && c != '"' && c != '\n' && c != '\r';
  return plain;
}

/// `s` escaped for the inside of a JSON (or TOML basic) string: `"` `\` and control characters.
std::string json_escape(std::string_view s);

/// `s` as a JSON string literal, quotes included.
std::string json_string(std::string_view s);

/// `v` as a JSON number: its shortest form, or `decimals` digits after the point when decimals >= 0; `null`
/// when it is not finite (JSON has no NaN or infinity: a sum that overflowed, a ratio of two infinities),
/// so that every JSON file colmatch writes parses with a strict parser.
std::string json_number(double v, int decimals = -1);

/// Writes `content` to `path` atomically: a temporary file in the same folder, then rename. Throws
/// WriteError (and leaves no temporary file) on failure. For one file; a run's outputs use OutputSet.
void write_file_atomic(const std::string& path, const std::string& content);

/// The files of one run, published together as one transaction:
///  * an advisory lock (flock on `<parent>/.<name>.lock`) is taken first: a second run on the same folder
///    fails at once with WriteError instead of interleaving;
///  * files are written into a fresh private folder beside `dir` (mkdtemp, mode 0700; each file created
///    with O_EXCL|O_NOFOLLOW, written whole and fsynced), so nothing is followed or overwritten on the way;
///  * publish() swaps that folder with `dir` in one rename (renameat2 RENAME_EXCHANGE; a plain rename when
///    `dir` does not exist yet) and removes the previous set, stale files included. A reader sees the
///    whole previous set or the whole new one, never a mix;
///  * an existing `dir` is replaced only if it holds nothing but files colmatch writes (else WriteError,
///    and it is left untouched), so a mistyped `--out $HOME` cannot remove anything;
///  * on failure, destruction before publish(), SIGINT or SIGTERM, the private folder is removed.
class OutputSet {
 public:
  explicit OutputSet(const std::string& dir);
  ~OutputSet();
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;
  /// Writes one file of the set (a plain name, no folder). Throws WriteError.
  void add(const std::string& name, const std::string& content);
  /// Appends the text of piece `i` (0 <= i < pieces) of a file to `out`, which is empty on entry.
  using PieceFn = std::function<void(size_t i, std::string& out)>;
  /// Writes one file of the set from `pieces` pieces: formatted in parallel (oneTBB, a few pieces ahead
  /// of the writer) and written in order as each is ready, so a table of millions of rows never sits in
  /// memory whole and is written while still cache-warm (a 147 MB results.csv: 0.8 s as one string, a
  /// fraction of that in pieces of ~1 MB). `fill` must be safe to call from several threads at once.
  /// Throws WriteError; an exception from `fill` propagates (the set is then not published).
  void add_pieces(const std::string& name, size_t pieces, const PieceFn& fill);
  /// Makes the set visible at `dir`. Throws WriteError (the previous set then stays as it was).
  void publish();

 private:
  // A file of the set being written: append() adds to it (one caller at a time), start_writeback()
  // has the kernel start writing back what has been appended so far (from any thread, also while
  // append() runs: so that it is not on the appending thread's time).
  class FileSink;
  // Creates file `name` of the set, lets `body` write it through the sink it is given, fsyncs it.
  void write_file(const std::string& name, const std::function<void(FileSink&)>& body);
  std::string dir_, tmp_;
  int lock_fd_ = -1;
  bool published_ = false;
};

}  // namespace colmatch::writers
