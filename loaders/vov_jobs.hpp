// Internal to loaders/: the parallel reader of an Altair Accelerator jobs.jsonl (loaders/vov_jobs.cpp):
// pieces of the file read on several threads into columns, each job's kind (what its expansion depends on)
// numbered in one shared table, and the repeated-id check over the pieces. loaders/vov.cpp builds the
// dataset from them.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "engine/columns.hpp"
#include "engine/hash_slots.hpp"
#include "engine/vov.hpp"
#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders::vov_jobs {

// The jobs of one piece of jobs.jsonl as read on one thread, as columns: each job's kind (the index
// of what its expansion depends on: list, tool, owner, group, priority level, duration, a job
// category's; numbered by the shared KindTable, then densely), its line, and what is its own (id,
// times), laid out as JobBuilder::CopiedJobs takes them.
struct JobPiece {
  size_t first_line = 1;         // the piece's first line in the file
  std::vector<uint32_t> kind;    // per job
  std::vector<uint32_t> line;    // per job: its line in the file is first_line + line
  std::string id_text;           // the ids one after another
  std::vector<uint32_t> id_end;  // job i's id ends at id_end[i] in id_text
  std::vector<uint64_t> id_hash;
  std::vector<double> submit, runtime, walltime;  // per job, or empty while every job's is the default
  std::vector<double> duration;                   // expected_duration per job, or empty while every one is 0
  std::optional<LoadError> error;                 // the first in the piece: later lines are not read

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
    id_hash.clear();
    id_hash.reserve(guess);
  }
  std::string_view id(size_t i) const noexcept {
    const size_t from = i == 0 ? 0 : id_end[i - 1];
    return std::string_view(id_text).substr(from, id_end[i] - from);
  }
  size_t line_of(size_t i) const noexcept { return first_line + line[i]; }
};

// The fields of a job's kind as read (views into the parser's buffer, valid until the next line).
struct KindView {
  std::string_view resources, command, owner, group, priority;
  double expected_duration = 0;
  std::string_view tool = {};   // the command's (vov::tool_view)
  uint32_t timeleft_class = 0;  // which taskers TIMELEFT#<duration> keeps (see build_vov)
};

// The kind whose key (kind_key) is `key`, with the command and the duration as read: views into `key`
// and `command`.
KindView kind_of_key(std::string_view key, std::string_view command, double expected_duration);

// The kinds met so far, shared by the threads reading pieces: looked up by key, added once, numbered
// in the order they were added (numbers are made dense, in the order the file shows the kinds, once
// every piece is read). Each thread looks in a table of its own first, the shared one only for a kind
// it has not met. Both are open addressing over the keys' hashes with the keys in one string (no node
// or key allocated per kind, no list walked); the shared one is 64 shards by the hash's top bits, each
// behind its own lock.
class KindTable {
  // Keys and their numbers: open addressing over the keys' hashes, the keys one after another.
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

 public:
  /// One thread's kinds.
  using Local = KeyNumbers;
  /// The calling thread's own table (looked up once per piece: finding it costs a search by thread).
  Local& local() { return local_.local(); }
  /// The kind's number; `mine` is the calling thread's local().
  uint32_t find_or_add(Local& mine, std::string_view key, const KindView& r) {
    const uint64_t h = std::hash<std::string_view>{}(key);
    size_t at = 0;
    if (const uint32_t number = mine.find(h, key, at); number != kNone) return number;
    const uint32_t number = find_or_add_shared(h, key, r);
    mine.add(at, h, key, number);
    return number;
  }
  /// After reading: the kinds by number (views into the table, valid while it lives unchanged).
  std::vector<KindView> by_number() const {
    std::vector<KindView> out(next_.load());
    tbb::parallel_for(size_t{0}, shards_.size(), [&](size_t s) {
      const Shard& shard = shards_[s];
      for (const Shard::Kind& k : shard.kinds)
        out[k.number] =
            kind_of_key(std::string_view(shard.table.keys).substr(k.key_at, k.key_size),
                        std::string_view(shard.commands).substr(k.command_at, k.command_size), k.expected_duration);
    });
    return out;
  }

 private:
  struct Shard {
    // A kind as added: its key in table.keys, its first job's command in `commands` (the key holds
    // the tool only), its first job's duration (the key holds it rounded up) and its number. Its
    // texts are not copied out one by one: the 1M-job farm meets 36k kinds while reading, and only
    // the kinds that expand alike need a JobResources of their own.
    struct Kind {
      uint64_t key_at, command_at;
      uint32_t key_size, command_size, number;
      double expected_duration;
    };
    std::mutex lock;
    KeyNumbers table;
    std::string commands;
    std::vector<Kind> kinds;  // in the order added
  };
  uint32_t find_or_add_shared(uint64_t h, std::string_view key, const KindView& r) {
    Shard& shard = shards_[h >> 58];
    const std::lock_guard<std::mutex> hold(shard.lock);
    size_t at = 0;
    if (const uint32_t number = shard.table.find(h, key, at); number != kNone) return number;
    const uint32_t number = next_.fetch_add(1, std::memory_order_relaxed);
    shard.kinds.push_back({shard.table.keys.size(), shard.commands.size(), static_cast<uint32_t>(key.size()),
                           static_cast<uint32_t>(r.command.size()), number, r.expected_duration});
    shard.table.add(at, h, key, number);
    shard.commands.append(r.command);  // a command is a line's: at most 64 MiB
    return number;
  }
  std::array<Shard, 64> shards_;
  std::atomic<uint32_t> next_{0};
  tbb::enumerable_thread_specific<Local> local_;
};

// The pieces of jobs.jsonl in file order, each piece's first job's index counting the pieces' jobs.
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

// Reads the jobs of `piece` of `path` into `out` (a LoadError for a bad line is kept in out.error: the
// lines after it are not read), their kinds numbered in `kinds`, each command's tool found after
// `wrappers`: as one stream of JSON documents where it can be, else line by line.
void read_piece(const std::string& path, const LinePiece& piece, const vov::Wrappers& wrappers, KindTable& kinds,
                JobPiece& out);

// The first job (in file order) whose id an earlier job has: (its index, the earlier one's); or none.
// JobIds' check, in parallel: the jobs are scattered by the top byte of their id's hash into 256
// buckets (each piece writing its part of every bucket, so a bucket keeps file order), then each bucket
// is scanned in order with a table of its own, small enough for the cache; a bucket's first repeat is
// its earliest, and the earliest over the buckets is the file's.
std::optional<std::pair<size_t, size_t>> first_repeated_id(const PiecesInOrder& in);

}  // namespace colmatch::loaders::vov_jobs
