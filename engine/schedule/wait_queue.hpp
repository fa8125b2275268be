// The waiting jobs of a simulation, kept so that a scheduling cycle visits what changed instead of the
// whole queue. Used when job priorities do not change with time (Moab's priority factors without the
// queue-time or expansion-factor weights): every job then has a fixed rank in priority order, computed
// once, and a set of waiting jobs is a set of ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "engine/model/per_job.hpp"

namespace colmatch {

/// A set of ranks 0..n-1: one bit per rank and one summary bit per 64-rank word, so next() skips 4,096
/// absent ranks per summary word. insert/erase/contains O(1); next O(1 + gap / 4096). n bits + n/64 bits.
class RankSet {
 public:
  static constexpr size_t npos = static_cast<size_t>(-1);
  explicit RankSet(size_t n = 0);
  void insert(size_t r) noexcept;
  void erase(size_t r) noexcept;
  bool contains(size_t r) const noexcept { return (words_[r >> 6] >> (r & 63)) & 1; }
  /// The smallest member >= r, or npos.
  size_t next(size_t r) const noexcept;
  size_t size() const noexcept { return count_; }

 private:
  std::vector<uint64_t> words_, summary_;
  size_t n_ = 0, count_ = 0;
};

/// The ready jobs (submitted, not held, dependencies done, not throttled) in priority order, globally
/// and per job category. Per category the jobs are kept in rank order under a min-tree of their time
/// estimates (walltimes), so "the first ready job of category c after rank p whose estimate passes a
/// monotone test" (EASY: ends before the reservation) is O(log jobs of c) instead of a scan.
/// Memory: about 16 bytes per job (ranks, slots, the order twice) and its category's min-tree (2 to 4
/// doubles a job); the categories and a uniform estimate are not copied. Not thread-safe.
class WaitQueue {
 public:
  static constexpr uint32_t kNoJob = UINT32_MAX;
  /// `order`: the jobs to be ranked, highest priority first (a job not in it is never ready).
  /// `category[j]`: job j's category (< categories); kept by reference, it must outlive the queue.
  /// `estimate[j]`: seconds, NaN counted as +inf (stored once when every job's is the same).
  WaitQueue(std::vector<uint32_t> order, const std::vector<uint32_t>& category, size_t categories,
            PerJob<double> estimate);

  uint32_t rank(uint32_t j) const noexcept { return rank_[j]; }
  uint32_t job(size_t rank) const noexcept { return order_[rank]; }
  bool ready(uint32_t j) const noexcept { return ready_.contains(rank_[j]); }
  void add(uint32_t j);     ///< job j becomes ready (no-op if it is)
  void remove(uint32_t j);  ///< job j is no longer ready (no-op if it is not)
  size_t size() const noexcept { return ready_.size(); }

  /// The ready job with the smallest rank >= r, or kNoJob.
  uint32_t first(size_t r) const noexcept {
    const size_t x = ready_.next(r);
    return x == RankSet::npos ? kNoJob : order_[x];
  }
  /// The ready job of category c with the smallest rank >= r whose estimate e passes `test(e)`, or
  /// kNoJob. `test` must be monotone: if it holds for e, it holds for every smaller e.
  template <class Test>
  uint32_t first_in(uint32_t c, size_t r, Test&& test) const;
  /// Categories that had a ready job since the last compact(); some may have none now.
  const std::vector<uint32_t>& categories() const noexcept { return active_; }
  size_t ready_in(uint32_t c) const noexcept { return count_[c]; }
  /// Drops the categories without ready jobs from categories().
  void compact();

 private:
  void set_leaf(uint32_t c, size_t slot, double v) noexcept;
  template <class Test>
  size_t find(uint32_t c, size_t node, size_t lo, size_t hi, size_t from, Test& test) const;

  std::vector<uint32_t> order_, rank_;
  RankSet ready_;
  const std::vector<uint32_t>& cat_of_;  // per job (the caller's)
  std::vector<uint32_t> first_;          // per category: offset of its jobs in by_cat_ (categories + 1)
  std::vector<uint32_t> by_cat_;         // per category, its ranked jobs' ranks, ascending
  std::vector<uint32_t> slot_;           // per job: index among its category's jobs
  std::vector<size_t> tree_at_;          // per category: offset of its min-tree in tree_
  std::vector<uint32_t> leaves_;         // per category: leaf count (a power of two)
  std::vector<double> tree_;             // 1-based heaps: node i has children 2i, 2i+1; +inf where not ready
  PerJob<double> estimate_;              // per job; NaN read as +inf
  std::vector<uint32_t> count_, active_;
  std::vector<uint8_t> listed_;
};

template <class Test>
size_t WaitQueue::find(uint32_t c, size_t node, size_t lo, size_t hi, size_t from, Test& test) const {
  const double* tree = tree_.data() + tree_at_[c];
  if (hi <= from || !(tree[node] < std::numeric_limits<double>::infinity()) || !test(tree[node])) return SIZE_MAX;
  if (hi - lo == 1) return lo;
  const size_t mid = lo + (hi - lo) / 2;
  const size_t left = find(c, 2 * node, lo, mid, from, test);
  return left != SIZE_MAX ? left : find(c, 2 * node + 1, mid, hi, from, test);
}

template <class Test>
uint32_t WaitQueue::first_in(uint32_t c, size_t r, Test&& test) const {
  if (count_[c] == 0) return kNoJob;
  const uint32_t* begin = by_cat_.data() + first_[c];
  size_t from = 0, hi = first_[c + 1] - first_[c];  // from: the first of c's jobs ranked >= r
  while (from < hi) {
    const size_t mid = (from + hi) / 2;
    if (begin[mid] < r) from = mid + 1;
    else hi = mid;
  }
  const size_t slot = find(c, 1, 0, leaves_[c], from, test);
  return slot == SIZE_MAX ? kNoJob : order_[begin[slot]];
}

}  // namespace colmatch
