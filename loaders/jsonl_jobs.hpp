// The parallel reader of job JSON Lines shared by the native and Altair Accelerator formats (issue 29):
// a file cut into pieces read on several threads, each job reduced to its kind (what it shares with other
// jobs: one prototype each) and what is its own (id, times), the kinds numbered as the file shows them,
// and the repeated-id check over the pieces. Errors are the ones a reader going line by line would meet
// first. Internal to loaders/.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>
#include <tbb/enumerable_thread_specific.h>

#include "engine/model/hash_slots.hpp"
#include "engine/model/jobs.hpp"
#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders::jsonl {

/// The jobs of one piece of a jobs file as read on one thread, as columns: each job's kind (what it shares
/// with the other jobs of its kind: everything but its id and times; numbered by a shared table, then
/// densely), its line, and what is its own (id, times), laid out as JobBuilder::CopiedJobs takes them.
struct JobPiece {
  size_t first_line = 1;         // the piece's first line in the file
  std::vector<uint32_t> kind;    // per job
  std::vector<uint32_t> line;    // per job: its line in the file is first_line + line
  std::string id_text;           // the ids one after another
  std::vector<uint32_t> id_end;  // job i's id ends at id_end[i] in id_text
  std::vector<uint64_t> id_hash;
  std::vector<double> submit, runtime, walltime;  // per job, or empty while every job's is the default
  std::vector<double> duration;    // the Accelerator's expected_duration per job, or empty while every one is 0
  std::optional<LoadError> error;  // the first in the piece: later lines are not read
  // Where a format keeps them per job (the native one; empty for the Accelerator's, whose kinds hold
  // them): the priority, and the owner and group as indices into the piece's names.
  std::vector<double> priority;
  std::vector<uint32_t> owner, group;
  std::vector<std::string> owner_names, group_names;

  size_t size() const noexcept { return kind.size(); }
  /// Empties the columns, keeping room for the jobs of `bytes` of text (reserved pages that are not
  /// written cost nothing; columns that do not grow by copying): a job per 128 bytes, the ids a quarter.
  void reset(size_t bytes) {
    const size_t guess = bytes / 128;
    id_text.clear();
    id_text.reserve(bytes / 4);
    for (auto* v : {&kind, &line, &id_end}) {
      v->clear();
      v->reserve(guess);
    }
    for (auto* v : {&submit, &runtime, &walltime}) {
      v->clear();
      v->reserve(guess);
    }
    duration.clear();
    for (auto* v : {&owner, &group}) v->clear();
    for (auto* v : {&owner_names, &group_names}) v->clear();
    priority.clear();
    id_hash.clear();
    id_hash.reserve(guess);
  }
  std::string_view id(size_t i) const noexcept {
    const size_t from = i == 0 ? 0 : id_end[i - 1];
    return std::string_view(id_text).substr(from, id_end[i] - from);
  }
  size_t line_of(size_t i) const noexcept { return first_line + line[i]; }
  /// Appends the last job's `value` to `column` (submit, runtime, walltime, duration), a column kept
  /// empty while every job's value is `none` (bit for bit): call after the job's kind is pushed.
  void push(std::vector<double>& column, double value, double none) {
    if (column.empty() && std::memcmp(&value, &none, sizeof(double)) == 0) return;  // all default so far
    if (column.size() + 1 < kind.size()) column.resize(kind.size() - 1, none);
    column.push_back(value);
  }
};

/// The pieces of a jobs file in file order, each piece's first job's index counting the pieces' jobs.
struct PiecesInOrder {
  std::vector<JobPiece*> pieces;
  std::vector<size_t> start;  // start[q]: piece q's first job; start.back(): the number of jobs
  /// Job j's piece and its index there.
  std::pair<const JobPiece*, size_t> locate(size_t j) const {
    const size_t q = static_cast<size_t>(std::upper_bound(start.begin(), start.end(), j) - start.begin()) - 1;
    return {pieces[q], j - start[q]};
  }
  std::string_view id(size_t j) const {
    const auto [piece, i] = locate(j);
    return piece->id(i);
  }
};

/// The first job (in file order) whose id an earlier job has: (its index, the earlier one's); or none.
/// JobIds' check, in parallel: the jobs are scattered by the top byte of their id's hash into 256
/// buckets (each piece writing its part of every bucket, so a bucket keeps file order), then each bucket
/// is scanned in order with a table of its own, small enough for the cache; a bucket's first repeat is
/// its earliest, and the earliest over the buckets is the file's.
std::optional<std::pair<size_t, size_t>> first_repeated_id(const PiecesInOrder& in);

/// Keys and their numbers: open addressing over the keys' hashes, the keys one after another in one
/// string (no node or key allocated per kind, no list walked).
struct KeyNumbers {
  struct Slot {
    uint64_t at = 0;  // where its key is in `keys`
    uint32_t size = 0, number = kNone;
    bool empty() const noexcept { return number == kNone; }
  };
  HashSlots<Slot> index;
  std::string keys;
  /// The number of `key` (hash `h`), or kNone with `at` the slot where add() puts it.
  uint32_t find(uint64_t h, std::string_view key, size_t& at) const {
    const Slot* s = index.find(
        h, [&](const Slot& x) { return std::string_view(keys).substr(x.at, x.size) == key; }, at);
    return s == nullptr ? kNone : s->number;
  }
  void add(size_t at, uint64_t h, std::string_view key, uint32_t number) {
    index.insert(at, h, {keys.size(), static_cast<uint32_t>(key.size()), number});  // a key is a line's
    keys.append(key);
  }
};

/// The kinds met so far, shared by the threads reading pieces: looked up by key, added once with the
/// text of the first job met (its line: the prototype is built from it), numbered in the order added.
/// Each thread looks in a table of its own first, the shared one (64 shards by the hash's top bits,
/// each behind its own lock) only for a kind it has not met. Memory: each kind's key and first line.
class KindTexts {
 public:
  using Local = KeyNumbers;
  /// The calling thread's own table (looked up once per piece).
  Local& local() { return local_.local(); }
  /// The number of the kind `key`; `text` is kept when the kind is new. `mine` is local().
  uint32_t find_or_add(Local& mine, std::string_view key, std::string_view text);
  /// After reading: each kind's text by number (views into the table, valid while it lives unchanged).
  std::vector<std::string_view> texts() const;

 private:
  struct Shard {
    std::mutex lock;
    KeyNumbers table;
    std::string texts;
    std::vector<std::array<uint64_t, 3>> kinds;  // (number, text at, text size), in the order added
  };
  std::array<Shard, 64> shards_;
  std::atomic<uint32_t> next_{0};
  tbb::enumerable_thread_specific<Local> local_;
};

/// The pieces read (by piece index) in file order: the first error a piece met (the earliest line's:
/// it ends the file for a reader going line by line; `bad_line` SIZE_MAX when none), and each job's kind
/// renumbered densely in the order the file first shows the kinds (`met[x]`: the table's number of
/// kind x; jobs whose kind is kNone, a line that failed, keep it).
struct Ordered {
  PiecesInOrder order;
  std::vector<uint32_t> met;
  size_t bad_line = SIZE_MAX;
  const LoadError* bad = nullptr;
};
Ordered order_pieces(std::map<size_t, std::unique_ptr<JobPiece>>& done, size_t kinds);

/// The error to throw, as a reader going line by line would meet it: a repeated id (first_repeated_id)
/// on a line before the first bad one, or on it (the id is checked before the rest of its line), else
/// the first bad line's; nothing when neither.
void throw_first_error(const std::string& path, const Ordered& in,
                       const std::optional<std::pair<size_t, size_t>>& repeated);

/// Throws std::bad_alloc for simdjson's MEMALLOC: a parser whose buffers could not be allocated must not
/// be used again (simdjson 3.1 then reads through a null buffer), and out of memory is said as such.
inline void no_memory_if(simdjson::error_code err) {
  if (err == simdjson::MEMALLOC) throw std::bad_alloc();
}

/// The objects of a piece read as one stream of JSON documents (simdjson's parse_many: its first stage
/// over a megabyte at a time, not line by line), `take(doc, line, text)` called for each (`text`: the
/// document's own bytes). Returns false when the
/// piece is not simply one valid object on each line that is not blank (a document that is not an object,
/// is not valid, shares its line or spans lines, an error `take` throws, bytes left over), or when it
/// cannot be read so (without simdjson's padding readable after it: the file's last piece; a byte order
/// mark): the caller then reads it line by line, which meets the first of its errors as it would alone.
template <typename Take>
bool read_documents(const LinePiece& piece, simdjson::dom::parser& parser, Take&& take) {
  const std::string_view text = piece.text;
  if (piece.padding < simdjson::SIMDJSON_PADDING || (piece.first_line == 1 && text.starts_with("\xEF\xBB\xBF")))
    return false;
  constexpr size_t kBatch = size_t{1} << 20;  // a longer line is read line by line (CAPACITY)
#ifdef SIMDJSON_THREADS_ENABLED
  // Not a thread of simdjson's own per stream for the next batch's first stage (a thread created per
  // piece, 43 over the 1M-job farm, each with a parser of its own): the pieces keep every core busy.
  parser.threaded = false;
#endif
  simdjson::dom::document_stream docs;
  if (auto err = parser.parse_many(reinterpret_cast<const uint8_t*>(text.data()), text.size(), kBatch).get(docs)) {
    no_memory_if(err);
    return false;
  }
  size_t from = 0;  // the start of the line after the last document's
  size_t line = 0;  // the piece's lines before `from`
  try {
    for (auto it = docs.begin(); it != docs.end(); ++it) {
      simdjson::dom::element doc;
      if (auto err = (*it).get(doc)) {
        no_memory_if(err);
        return false;
      }
      const size_t start = it.current_index();
      if (start < from || start >= text.size() || text[start] != '{') return false;
      size_t end = text.find('\n', from);  // the first line end past the last document: a blank line's,
      for (; end < start; end = text.find('\n', end + 1)) ++line;  // or the document's own line's
      end = std::min(end, text.size());
      if (it.source().size() > end - start) return false;
      take(doc, piece.first_line + line, text.substr(start, it.source().size()));
      from = end + 1;
      ++line;
    }
  } catch (const LoadError&) {
    return false;
  }
  return docs.truncated_bytes() == 0;
}

/// Reads the documents of `piece` into `out` with `take(doc, line, text)` (which throws LoadError for a
/// bad job): as one stream (read_documents) where it can be, else line by line from a fresh `out`, the
/// first LoadError kept in out.error (the lines after it are not read), as a reader going line by line
/// would meet it. Blank lines are skipped.
template <typename Take>
void read_piece_documents(const std::string& path, const LinePiece& piece, simdjson::dom::parser& parser, JobPiece& out,
                          Take&& take) {
  if (read_documents(piece, parser, take)) return;
  // Line by line (what the stream read is dropped; kinds it added stay in the table, numbered only if a
  // job has them).
  out.reset(piece.text.size());
  // Bytes that may be read past the piece: a line with simdjson's padding readable after it is parsed
  // where it is, another is copied first.
  const char* const readable_end = piece.text.data() + piece.text.size() + piece.padding;
  PieceLines in(piece);
  std::string_view line;
  try {
    while (in.next(line)) {
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      const size_t ln = in.line();
      simdjson::dom::element doc;
      const bool padded = line.data() + line.size() + simdjson::SIMDJSON_PADDING <= readable_end;
      const auto err = parser.parse(line.data(), line.size(), !padded).get(doc);
      no_memory_if(err);
      if (err) throw LoadError(path, ln, "", fmt::format("malformed JSON: {}", simdjson::error_message(err)));
      take(doc, ln, line);
    }
  } catch (const LoadError& e) {
    out.error = e;
  }
}

}  // namespace colmatch::loaders::jsonl
