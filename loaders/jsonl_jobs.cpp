// The parallel reader of job JSON Lines shared by the native and Accelerator formats: jsonl_jobs.hpp.
#include "loaders/jsonl_jobs.hpp"

#include <tbb/parallel_for.h>

#include "engine/model/counting_sort.hpp"

namespace colmatch::loaders::jsonl {

uint32_t KindTexts::find_or_add(Local& mine, std::string_view key, std::string_view text) {
  const uint64_t h = std::hash<std::string_view>{}(key);
  size_t at = 0;
  if (const uint32_t number = mine.find(h, key, at); number != kNone) return number;
  Shard& shard = shards_[h >> 58];
  uint32_t number = kNone;
  {
    const std::lock_guard<std::mutex> hold(shard.lock);
    size_t shared_at = 0;
    number = shard.table.find(h, key, shared_at);
    if (number == kNone) {
      number = next_.fetch_add(1, std::memory_order_relaxed);
      shard.kinds.push_back({number, shard.texts.size(), text.size()});
      shard.table.add(shared_at, h, key, number);
      shard.texts.append(text);  // a line: at most 64 MiB
    }
  }
  mine.add(at, h, key, number);
  return number;
}

std::vector<std::string_view> KindTexts::texts() const {
  std::vector<std::string_view> out(next_.load());
  tbb::parallel_for(size_t{0}, shards_.size(), [&](size_t s) {
    const Shard& shard = shards_[s];
    for (const auto& [number, at, size] : shard.kinds) out[number] = std::string_view(shard.texts).substr(at, size);
  });
  return out;
}

Ordered order_pieces(std::map<size_t, std::unique_ptr<JobPiece>>& done, size_t kinds) {
  Ordered out;
  PiecesInOrder& order = out.order;
  size_t jobs = 0;
  for (auto& [index, piece] : done) {
    JobPiece& p = *piece;
    if (p.error && p.error->line < out.bad_line) {
      out.bad_line = p.error->line;
      out.bad = &*p.error;
    }
    order.pieces.push_back(&p);
    order.start.push_back(jobs);
    jobs += p.size();
  }
  order.start.push_back(jobs);
  // Each kind's first job found in parallel (an atomic minimum per kind), the kinds sorted by it, the
  // jobs' kinds renumbered in parallel: the numbering does not depend on the threads.
  std::vector<std::atomic<uint64_t>> first_job(kinds);
  tbb::parallel_for(size_t{0}, first_job.size(),
                    [&](size_t k) { first_job[k].store(UINT64_MAX, std::memory_order_relaxed); });
  tbb::parallel_for(size_t{0}, order.pieces.size(), [&](size_t q) {
    const JobPiece& p = *order.pieces[q];
    for (size_t i = 0; i < p.size(); ++i) {
      if (p.kind[i] == kNone) continue;
      const uint64_t at = order.start[q] + i;
      std::atomic<uint64_t>& first = first_job[p.kind[i]];
      uint64_t seen = first.load(std::memory_order_relaxed);
      while (at < seen && !first.compare_exchange_weak(seen, at, std::memory_order_relaxed)) {}
    }
  });
  for (uint32_t k = 0; k < first_job.size(); ++k)
    if (first_job[k].load(std::memory_order_relaxed) != UINT64_MAX) out.met.push_back(k);
  std::sort(out.met.begin(), out.met.end(), [&](uint32_t a, uint32_t b) {
    return first_job[a].load(std::memory_order_relaxed) < first_job[b].load(std::memory_order_relaxed);
  });
  std::vector<uint32_t> dense(kinds, kNone);
  for (size_t x = 0; x < out.met.size(); ++x) dense[out.met[x]] = static_cast<uint32_t>(x);
  tbb::parallel_for(size_t{0}, order.pieces.size(), [&](size_t q) {
    for (uint32_t& k : order.pieces[q]->kind)
      if (k != kNone) k = dense[k];
  });
  return out;
}

void throw_first_error(const std::string& path, const Ordered& in,
                       const std::optional<std::pair<size_t, size_t>>& repeated) {
  if (repeated) {
    const auto [later, i] = in.order.locate(repeated->first);
    const auto [earlier, e] = in.order.locate(repeated->second);
    if (later->line_of(i) <= in.bad_line)
      throw JobIds::duplicate_id(path, later->line_of(i), "id", std::string(later->id(i)), earlier->line_of(e));
  }
  if (in.bad != nullptr) throw *in.bad;
}

// The first job (in file order) whose id an earlier job has: (its index, the earlier one's); or none.
// JobIds' check, in parallel: the jobs are scattered by the top byte of their id's hash into 256
// buckets (each piece writing its part of every bucket, so a bucket keeps file order), then each bucket
// is scanned in order with a table of its own, small enough for the cache; a bucket's first repeat is
// its earliest, and the earliest over the buckets is the file's.
std::optional<std::pair<size_t, size_t>> first_repeated_id(const PiecesInOrder& in) {
  constexpr size_t kBuckets = 256;
  const size_t np = in.pieces.size();
  std::vector<std::array<size_t, kBuckets>> at(np);  // per piece: where its part of each bucket starts
  tbb::parallel_for(size_t{0}, np, [&](size_t p) {
    at[p].fill(0);
    for (const uint64_t h : in.pieces[p]->id_hash) ++at[p][h >> 56];
  });
  const std::vector<size_t> bucket = bucket_starts(at, kBuckets);
  std::vector<uint64_t> hash(in.start.back());
  std::vector<uint32_t> job(in.start.back());
  tbb::parallel_for(size_t{0}, np, [&](size_t p) {
    const JobPiece& piece = *in.pieces[p];
    for (size_t i = 0; i < piece.size(); ++i) {
      const uint64_t h = piece.id_hash[i];
      const size_t to = at[p][h >> 56]++;
      hash[to] = h;
      job[to] = static_cast<uint32_t>(in.start[p] + i);
    }
  });
  struct Seen {
    uint32_t job = kNone;
    bool empty() const noexcept { return job == kNone; }
  };
  std::vector<std::optional<std::pair<size_t, size_t>>> found(kBuckets);
  tbb::parallel_for(size_t{0}, kBuckets, [&](size_t b) {
    HashSlots<Seen> seen(bucket[b + 1] - bucket[b]);
    for (size_t e = bucket[b]; e < bucket[b + 1]; ++e) {
      size_t slot = 0;
      if (const Seen* s = seen.find(
              hash[e], [&](const Seen& x) { return in.id(x.job) == in.id(job[e]); }, slot)) {
        found[b] = std::make_pair(size_t{job[e]}, size_t{s->job});
        return;
      }
      seen.insert(slot, hash[e], {job[e]});
    }
  });
  std::optional<std::pair<size_t, size_t>> first;
  for (const auto& f : found)
    if (f && (!first || f->first < first->first)) first = f;
  return first;
}

}  // namespace colmatch::loaders::jsonl
