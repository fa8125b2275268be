// Reads a text file line by line, decompressing a gzip or zstd file (ByteStream: by its magic number).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/byte_stream.hpp"

namespace colmatch::loaders {

/// Called now and then with (path, lines read so far, bytes read so far); used for progress output.
using ProgressFn = std::function<void(const std::string& path, uint64_t lines, uint64_t bytes)>;

/// The longest line a LineReader returns (64 MiB): a longer one is a LoadError naming file and line, so
/// that one line of an input (a runaway file without newlines) cannot take the run's memory.
inline constexpr size_t kMaxLineBytes = size_t{64} << 20;

/// While alive, every LineReader this thread opens without a ProgressFn of its own reports to `progress`:
/// a format whose loader is made of many readers (Grid Engine's and Slurm's dumps, the DIRAC CFG, the
/// Accelerator's Tcl) then reports, and lets the caller interrupt (the Python module's Ctrl-C, issue 45:
/// it waited 73 s for a whole dump to load), without each reader taking the callback. load_format opens
/// one. Scopes nest; `progress` must outlive the scope.
class ProgressScope {
 public:
  explicit ProgressScope(const ProgressFn& progress) noexcept;
  ~ProgressScope();
  ProgressScope(const ProgressScope&) = delete;
  ProgressScope& operator=(const ProgressScope&) = delete;

 private:
  const ProgressFn* previous_;
};

class LineReader {
 public:
  /// Opens `path`; throws LoadError naming the file if it cannot be opened. Without `progress`, the
  /// thread's ProgressScope's, if any.
  explicit LineReader(std::string path, ProgressFn progress = {});
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  /// Reads the next line without its '\n' (and '\r'); false at end of file. Throws LoadError on a
  /// read error (truncated or corrupt gzip or zstd: ByteStream). The view is valid until the next call. `line()` is the
  /// 1-based number of the line returned last.
  bool next(std::string_view& out);
  size_t line() const noexcept { return line_; }
  const std::string& path() const noexcept { return path_; }

 private:
  bool refill();
  std::string path_;
  std::unique_ptr<ByteStream> in_;
  std::vector<char> buf_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  std::string carry_;
  size_t line_ = 0;
  uint64_t bytes_ = 0;
  ProgressFn progress_;
};

/// Whole lines of a text file, handed to a worker: `text` ends after a '\n' (or at the end of the
/// file); its first line is line `first_line` (1-based) of the file; `index` numbers the pieces of the
/// file from 0 in file order, so that per-piece results can be put back in order. `padding` bytes after
/// the text may be read (not written, not relied on: they are later pieces' or slack), as simdjson's
/// padding: a parser may then read a line in place.
struct LinePiece {
  std::string_view text;
  size_t first_line = 1;
  size_t index = 0;
  size_t padding = 0;
};

/// Reads `path` (zstd, gzip or plain, as LineReader) in pieces of about `piece_bytes` cut at line ends and
/// calls `fn(piece)` for them in parallel (oneTBB). A plain regular file is mapped (mmap: pages of the
/// page cache, no copy) and handed out in windows of whole lines (64 pieces, at least `block_bytes`),
/// each piece's pages dropped once it is done, so the file is not resident whole; a gzip file (or a
/// pipe) is decompressed on a thread of its own in blocks of whole lines of about `block_bytes`, one
/// block ahead of the pieces, so memory stays two blocks however large the file. `fn` must be safe to
/// call from several threads at once, and keep no view into a piece's text after it returns. Throws
/// LoadError naming file and line for a read error or a line longer than kMaxLineBytes (before any piece
/// of the window or block holding it is handed out); an exception from `fn` propagates (the first one
/// thrown). Progress is reported once per window or block.
void for_each_line_piece(const std::string& path, const ProgressFn& progress,
                         const std::function<void(const LinePiece&)>& fn, size_t block_bytes = size_t{32} << 20,
                         size_t piece_bytes = size_t{1} << 20);

/// The lines of a LinePiece, as LineReader::next gives them: without '\n' and a final '\r', a UTF-8
/// byte-order mark dropped from line 1 of the file. `line()` is the file's 1-based number of the line
/// returned last.
class PieceLines {
 public:
  explicit PieceLines(const LinePiece& piece) : rest_(piece.text), line_(piece.first_line - 1) {}
  bool next(std::string_view& out);
  size_t line() const noexcept { return line_; }

 private:
  std::string_view rest_;
  size_t line_;
};

/// Splits a CSV line on commas (the traces have no quoted fields). Fields are views into `line`.
void split_csv(std::string_view line, std::vector<std::string_view>& fields);

}  // namespace colmatch::loaders
