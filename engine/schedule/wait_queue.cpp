#include "engine/schedule/wait_queue.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace colmatch {

RankSet::RankSet(size_t n) : words_((n + 63) / 64, 0), summary_((n + 4095) / 4096, 0), n_(n) {}

void RankSet::insert(size_t r) noexcept {
  uint64_t& w = words_[r >> 6];
  const uint64_t bit = uint64_t{1} << (r & 63);
  if (w & bit) return;
  w |= bit;
  summary_[r >> 12] |= uint64_t{1} << ((r >> 6) & 63);
  ++count_;
}

void RankSet::erase(size_t r) noexcept {
  uint64_t& w = words_[r >> 6];
  const uint64_t bit = uint64_t{1} << (r & 63);
  if (!(w & bit)) return;
  w &= ~bit;
  if (w == 0) summary_[r >> 12] &= ~(uint64_t{1} << ((r >> 6) & 63));
  --count_;
}

size_t RankSet::next(size_t r) const noexcept {
  if (r >= n_) return npos;
  size_t w = r >> 6;
  const uint64_t bits = words_[w] & (~uint64_t{0} << (r & 63));
  if (bits) return (w << 6) + static_cast<size_t>(std::countr_zero(bits));
  if (++w >= words_.size()) return npos;
  size_t s = w >> 6;
  uint64_t sb = summary_[s] & (~uint64_t{0} << (w & 63));
  while (sb == 0) {
    if (++s >= summary_.size()) return npos;
    sb = summary_[s];
  }
  w = (s << 6) + static_cast<size_t>(std::countr_zero(sb));
  return (w << 6) + static_cast<size_t>(std::countr_zero(words_[w]));
}

WaitQueue::WaitQueue(std::vector<uint32_t> order, const std::vector<uint32_t>& category, size_t categories,
                     PerJob<double> estimate)
    : order_(std::move(order)),
      rank_(category.size(), UINT32_MAX),
      ready_(order_.size()),
      cat_of_(category),
      first_(categories + 1, 0),
      slot_(category.size(), 0),
      tree_at_(categories, 0),
      leaves_(categories, 0),
      estimate_(std::move(estimate)),
      count_(categories, 0),
      listed_(categories, 0) {
  for (uint32_t r = 0; r < order_.size(); ++r) {
    rank_[order_[r]] = r;
    ++first_[category[order_[r]] + 1];
  }
  for (size_t c = 0; c < categories; ++c) first_[c + 1] += first_[c];
  by_cat_.resize(order_.size());
  std::vector<uint32_t> fill(first_.begin(), first_.end() - 1);
  for (uint32_t r = 0; r < order_.size(); ++r) {  // ascending ranks per category
    const uint32_t j = order_[r], c = category[j];
    slot_[j] = fill[c] - first_[c];
    by_cat_[fill[c]++] = r;
  }
  size_t at = 0;
  for (size_t c = 0; c < categories; ++c) {
    leaves_[c] = std::bit_ceil(std::max<uint32_t>(1, first_[c + 1] - first_[c]));
    tree_at_[c] = at;
    at += 2 * size_t{leaves_[c]};
  }
  tree_.assign(at, std::numeric_limits<double>::infinity());
}

void WaitQueue::set_leaf(uint32_t c, size_t slot, double v) noexcept {
  double* tree = tree_.data() + tree_at_[c];
  size_t node = leaves_[c] + slot;
  tree[node] = v;
  for (node /= 2; node >= 1; node /= 2) {
    const double m = std::min(tree[2 * node], tree[2 * node + 1]);
    if (tree[node] == m) break;  // ancestors hold the same minimum already
    tree[node] = m;
  }
}

void WaitQueue::add(uint32_t j) {
  const uint32_t r = rank_[j];
  if (r == UINT32_MAX || ready_.contains(r)) return;
  ready_.insert(r);
  const uint32_t c = cat_of_[j];
  // a ready job's leaf must be finite to be found: an infinite estimate is kept as the largest double
  const double e = estimate_[j];
  set_leaf(c, slot_[j],
           std::isnan(e) ? std::numeric_limits<double>::max() : std::min(e, std::numeric_limits<double>::max()));
  if (count_[c]++ == 0 && !listed_[c]) {
    listed_[c] = 1;
    active_.push_back(c);
  }
}

void WaitQueue::remove(uint32_t j) {
  const uint32_t r = rank_[j];
  if (r == UINT32_MAX || !ready_.contains(r)) return;
  ready_.erase(r);
  const uint32_t c = cat_of_[j];
  set_leaf(c, slot_[j], std::numeric_limits<double>::infinity());
  --count_[c];
}

void WaitQueue::compact() {
  std::erase_if(active_, [&](uint32_t c) {
    if (count_[c] != 0) return false;
    listed_[c] = 0;
    return true;
  });
}

}  // namespace colmatch
