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

#include "engine/model/columns.hpp"
#include "engine/model/hash_slots.hpp"
#include "engine/model/vov.hpp"
#include "loaders/errors.hpp"
#include "loaders/jsonl_jobs.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders::vov_jobs {

using jsonl::JobPiece;
using jsonl::PiecesInOrder;

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
  using KeyNumbers = jsonl::KeyNumbers;

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

// Reads the jobs of `piece` of `path` into `out` (a LoadError for a bad line is kept in out.error: the
// lines after it are not read), their kinds numbered in `kinds`, each command's tool found after
// `wrappers`: as one stream of JSON documents where it can be, else line by line.
void read_piece(const std::string& path, const LinePiece& piece, const vov::Wrappers& wrappers, KindTable& kinds,
                JobPiece& out);

}  // namespace colmatch::loaders::vov_jobs
