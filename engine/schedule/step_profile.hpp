// A step function of time with range updates and range queries, for the pooled book's count of free
// units (engine/schedule/pool_profile.hpp). The function is kept as its change points in time order, cut
// into blocks of at most 2 x kBlock points, each with a pending addition and its minimum and maximum:
// an addition over a time range, a minimum over one and the first time a bound is crossed cost
// O(points / kBlock + kBlock) whatever the number of reservations and running jobs it holds. Internal
// to engine/schedule/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "kernels/dassert.hpp"

namespace colmatch {

/// An integer step function f of time (seconds): f(x) is the value of the last change point at or before
/// x; one point at -inf holds the value before every other. Not thread-safe.
class StepProfile {
 public:
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  /// f(x) = value for every x.
  explicit StepProfile(int64_t value) { blocks_.push_back(Block{{-kInf}, {value}, 0, value, value}); }

  /// f(x) += delta for x in [a, b) (b may be +inf). O(points / kBlock + kBlock).
  void add(double a, double b, int64_t delta) {
    if (!(a < b) || delta == 0) return;
    split_at(a);
    if (b < kInf) split_at(b);
    for_range(*this, a, b, [&](Block& k, size_t i, size_t e) {
      if (i == 0 && e == k.time.size()) {
        k.lazy += delta;
        k.mn += delta;
        k.mx += delta;
        return true;
      }
      for (size_t x = i; x < e; ++x) k.val[x] += delta;
      k.refresh();
      return true;
    });
  }
  /// f(x).
  int64_t at(double x) const {
    const auto [b, i] = locate(x);
    return blocks_[b].val[i] + blocks_[b].lazy;
  }
  /// The smallest f(x) for x in [a, b) (a < b).
  int64_t min(double a, double b) const {
    int64_t m = std::numeric_limits<int64_t>::max();
    for_range(*this, a, b, [&](const Block& k, size_t i, size_t e) {
      if (i == 0 && e == k.time.size()) {
        m = std::min(m, k.mn);
      } else {
        for (size_t x = i; x < e; ++x) m = std::min(m, k.val[x] + k.lazy);
      }
      return true;
    });
    return m;
  }
  /// The first x >= a where f(x) < bound (below) or f(x) >= bound (!below); +inf if none.
  double first(double a, int64_t bound, bool below) const {
    double found = kInf;
    auto hit = [&](int64_t v) { return below ? v < bound : v >= bound; };
    for_range(*this, a, kInf, [&](const Block& k, size_t i, size_t e) {
      if (i == 0 && e == k.time.size() && !hit(below ? k.mn : k.mx)) return true;
      for (size_t x = i; x < e; ++x)
        if (hit(k.val[x] + k.lazy)) {
          found = std::max(a, k.time[x]);
          return false;
        }
      return true;
    });
    return found;
  }
  /// The first run of f >= bound from a: [start, end) with start the first x >= a where f(x) >= bound
  /// (first(a, bound, false)) and end the first x >= start where f(x) < bound (first(start, bound,
  /// true)); {+inf, +inf} if none. One walk where the two questions would take two.
  std::pair<double, double> first_run(double a, int64_t bound) const {
    double start = kInf, end = kInf;
    for_range(*this, a, kInf, [&](const Block& k, size_t i, size_t e) {
      if (start == kInf) {  // looking for the run's start
        if (i == 0 && e == k.time.size() && k.mx < bound) return true;
        while (i < e && k.val[i] + k.lazy < bound) ++i;
        if (i == e) return true;
        start = std::max(a, k.time[i]);
        ++i;
      } else if (i == 0 && e == k.time.size() && k.mn >= bound) {
        return true;  // the whole block within the run
      }
      for (; i < e; ++i)
        if (k.val[i] + k.lazy < bound) {
          end = k.time[i];
          return false;
        }
      return true;
    });
    return {start, end};
  }
  /// Forgets the change points before `now` that no x >= now reads (whole blocks). Amortised O(1).
  void forget_before(double now) {
    size_t drop = 0;
    while (drop + 1 < blocks_.size() && blocks_[drop + 1].time.front() <= now) ++drop;
    if (drop == 0) return;
    blocks_.erase(blocks_.begin(), blocks_.begin() + static_cast<std::ptrdiff_t>(drop));
    blocks_.front().time.front() = -kInf;  // (its value holds from there on)
  }
  /// Change points held (the -inf one included).
  size_t points() const noexcept {
    size_t n = 0;
    for (const Block& k : blocks_) n += k.time.size();
    return n;
  }

 private:
  static constexpr size_t kBlock = 64;
  struct Block {
    std::vector<double> time;
    std::vector<int64_t> val;  // f = val + lazy
    int64_t lazy, mn, mx;
    void refresh() {
      mn = std::numeric_limits<int64_t>::max();
      mx = std::numeric_limits<int64_t>::min();
      for (const int64_t v : val) mn = std::min(mn, v), mx = std::max(mx, v);
      mn += lazy;
      mx += lazy;
    }
  };

  // The block holding the last point at or before x, and that point's index in it.
  std::pair<size_t, size_t> locate(double x) const {
    auto bt = std::upper_bound(blocks_.begin(), blocks_.end(), x,
                               [](double v, const Block& k) { return v < k.time.front(); });
    const auto b = static_cast<size_t>(bt - blocks_.begin()) - 1;  // (the -inf point: b >= 0)
    const Block& k = blocks_[b];
    const auto i = static_cast<size_t>(std::upper_bound(k.time.begin(), k.time.end(), x) - k.time.begin()) - 1;
    return {b, i};
  }
  // A change point at x (holding f(x)), so that ranges may start or end there.
  void split_at(double x) {
    auto [b, i] = locate(x);
    Block& k = blocks_[b];
    if (k.time[i] == x) return;
    k.time.insert(k.time.begin() + static_cast<std::ptrdiff_t>(i + 1), x);
    k.val.insert(k.val.begin() + static_cast<std::ptrdiff_t>(i + 1), k.val[i]);
    if (k.time.size() <= 2 * kBlock) return;
    Block tail{{k.time.begin() + kBlock, k.time.end()}, {k.val.begin() + kBlock, k.val.end()}, k.lazy, 0, 0};
    k.time.resize(kBlock);
    k.val.resize(kBlock);
    k.refresh();
    tail.refresh();
    blocks_.insert(blocks_.begin() + static_cast<std::ptrdiff_t>(b + 1), std::move(tail));
  }
  // Calls fn(block, first index, end index) over the points whose pieces meet [a, b): from the last point
  // at or before a to the last point before b, block by block, while fn returns true. `self` is *this,
  // const for the questions (fn then sees const blocks).
  template <class Self, class Fn>
  static void for_range(Self& self, double a, double b, Fn&& fn) {
    auto [blk, i] = self.locate(a);
    for (; blk < self.blocks_.size(); ++blk, i = 0) {
      auto& k = self.blocks_[blk];
      if (!(k.time[i] < b)) return;
      size_t e = k.time.size();
      if (!(k.time.back() < b))
        e = static_cast<size_t>(std::lower_bound(k.time.begin() + static_cast<std::ptrdiff_t>(i), k.time.end(), b) -
                                k.time.begin());
      if (!fn(k, i, e)) return;
      if (e < k.time.size()) return;
    }
  }

  std::vector<Block> blocks_;
};

}  // namespace colmatch
