// The order the batch dispatch considers jobs in (dispatch.hpp, dispatch_order): priority descending,
// then submit time ascending, then input order. In passes over pieces of the job table, in parallel.
#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <optional>

#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include "engine/batch/dispatch.hpp"
#include "engine/model/counting_sort.hpp"

namespace colmatch {

namespace {

constexpr size_t kPiece = size_t{1} << 16;
constexpr size_t kMostLevels = 256;  // priorities sorted by a counting sort at most

// What the first pass learns of one piece of jobs.
struct PieceScan {
  size_t kept = 0;                       // jobs not rejected
  uint32_t first = kNone, last = kNone;  // the first and last of them
  bool in_order = true;                  // they are in dispatch order
  std::vector<double> levels;            // their distinct priorities, highest first, unless many
  bool many = false;                     // more than kMostLevels distinct priorities
};

// Jobs [p * kPiece, ...) of piece p: the scan above. (-0.0 and 0.0 are one priority.)
PieceScan scan_piece(const JobTable& jobs, size_t p) {
  PieceScan s;
  const size_t end = std::min(jobs.size(), (p + 1) * kPiece);
  double last_priority = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = p * kPiece; i < end; ++i) {
    const auto j = static_cast<uint32_t>(i);
    if (jobs.rejected(j)) continue;
    ++s.kept;
    const double v = jobs.priority[j];
    if (s.last != kNone) {
      const double pv = jobs.priority[s.last];
      if (v > pv || (v == pv && jobs.submit[j] < jobs.submit[s.last])) s.in_order = false;
    } else {
      s.first = j;
    }
    s.last = j;
    if (s.many || v == last_priority) continue;
    last_priority = v;
    const auto it = std::lower_bound(s.levels.begin(), s.levels.end(), v, std::greater<>());
    if (it != s.levels.end() && *it == v) continue;
    if (s.levels.size() == kMostLevels) {
      s.many = true;
      s.levels.clear();
      continue;
    }
    s.levels.insert(it, v);
  }
  return s;
}

}  // namespace

std::vector<uint32_t> dispatch_order(const JobTable& jobs) {
  const size_t pieces = (jobs.size() + kPiece - 1) / kPiece;
  std::vector<PieceScan> scans(pieces);
  tbb::parallel_for(size_t{0}, pieces, [&](size_t p) { scans[p] = scan_piece(jobs, p); });
  std::vector<size_t> offset(pieces + 1, 0);  // where each piece's kept jobs start in input order
  bool in_order = true, many = false;
  uint32_t previous = kNone;
  std::vector<double> levels;
  for (size_t p = 0; p < pieces; ++p) {
    const PieceScan& s = scans[p];
    offset[p + 1] = offset[p] + s.kept;
    in_order = in_order && s.in_order;
    if (s.kept > 0 && previous != kNone) {
      const double v = jobs.priority[s.first], pv = jobs.priority[previous];
      if (v > pv || (v == pv && jobs.submit[s.first] < jobs.submit[previous])) in_order = false;
    }
    if (s.kept > 0) previous = s.last;
    many = many || s.many;
    if (!many) levels.insert(levels.end(), s.levels.begin(), s.levels.end());
  }
  std::vector<uint32_t> order(offset[pieces]);
  auto for_each_kept = [&](size_t p, auto&& fn) {
    for (size_t i = p * kPiece; i < std::min(jobs.size(), (p + 1) * kPiece); ++i)
      if (!jobs.rejected(static_cast<uint32_t>(i))) fn(static_cast<uint32_t>(i));
  };
  // Already in order (a batch of equal priority submitted in order: an Accelerator farm's jobs): the
  // kept jobs as they are.
  if (in_order) {
    tbb::parallel_for(size_t{0}, pieces, [&](size_t p) {
      size_t at = offset[p];
      for_each_kept(p, [&](uint32_t j) { order[at++] = j; });
    });
    return order;
  }
  if (!many) {
    std::sort(levels.begin(), levels.end(), std::greater<>());
    levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
    many = levels.size() > kMostLevels;
  }
  struct Key {
    double submit;
    uint32_t job;
  };
  auto by_submit = [](const Key& a, const Key& b) {
    return a.submit != b.submit ? a.submit < b.submit : a.job < b.job;
  };
  // A few priorities (the common case: levels, not a value per job): each job's level once, the jobs put
  // in their level's bucket in input order (a stable counting sort, in parallel over pieces), and each
  // bucket sorted by submit time only where it is not in that order already. O(n) for a batch submitted
  // in order.
  if (!many) {
    const size_t nb = levels.size();
    std::vector<uint8_t> level(jobs.size());
    std::vector<std::vector<size_t>> at(pieces, std::vector<size_t>(nb, 0));  // per piece: where its part of a
    tbb::parallel_for(size_t{0}, pieces, [&](size_t p) {                      // bucket starts
      for_each_kept(p, [&](uint32_t j) {
        const auto b = static_cast<size_t>(
            std::lower_bound(levels.begin(), levels.end(), jobs.priority[j], std::greater<>()) - levels.begin());
        level[j] = static_cast<uint8_t>(b);
        ++at[p][b];
      });
    });
    const std::vector<size_t> start = bucket_starts(at, nb);
    tbb::parallel_for(size_t{0}, pieces,
                      [&](size_t p) { for_each_kept(p, [&](uint32_t j) { order[at[p][level[j]]++] = j; }); });
    for (size_t b = 0; b < nb; ++b) {
      const size_t first = start[b], last = start[b + 1];
      std::atomic<bool> sorted{true};  // within the bucket, input order: by submit time where it ties
      tbb::parallel_for(tbb::blocked_range<size_t>(first + 1, std::max(first + 1, last), 1 << 16),
                        [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t i = r.begin(); i < r.end() && sorted.load(std::memory_order_relaxed); ++i)
                            if (jobs.submit[order[i]] < jobs.submit[order[i - 1]]) sorted = false;
                        });
      if (sorted) continue;
      std::vector<Key> keys(last - first);
      for (size_t i = first; i < last; ++i) keys[i - first] = {jobs.submit[order[i]], order[i]};
      tbb::parallel_sort(keys.begin(), keys.end(), by_submit);
      for (size_t i = first; i < last; ++i) order[i] = keys[i - first].job;
    }
    return order;
  }
  // Else sorted by value with the index as the last key, which is the stable order, in parallel.
  struct FullKey {
    double priority, submit;
    uint32_t job;
  };
  std::vector<FullKey> keys(order.size());
  tbb::parallel_for(size_t{0}, pieces, [&](size_t p) {
    size_t at = offset[p];
    for_each_kept(p, [&](uint32_t j) { keys[at++] = {jobs.priority[j], jobs.submit[j], j}; });
  });
  tbb::parallel_sort(keys.begin(), keys.end(), [](const FullKey& a, const FullKey& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.submit != b.submit) return a.submit < b.submit;
    return a.job < b.job;
  });
  tbb::parallel_for(tbb::blocked_range<size_t>(0, keys.size(), 8192), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i < r.end(); ++i) order[i] = keys[i].job;
  });
  return order;
}

}  // namespace colmatch
