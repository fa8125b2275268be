// A job category's charges per consumable, kept sparsely. A farm may define many consumables (an
// Altair Accelerator farm has one per counted resource map, seed 000: 100,000 maps are ordinary) and a
// category charges a few of them, so a dense vector per category made categories x consumables a
// product (issue 28: 20,000 categories x 20,000 maps took 3.2 GB). Memory and the loops over a
// category's charges now grow with the amounts it takes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

namespace colmatch {

/// Amounts per consumable k (catalog.consumables() order, base units: bytes, seconds, slots) over a
/// width of consumables, of which only the nonzero ones are stored, by increasing k. Reads as a dense
/// vector (operator[], size()); loops that act on the charges walk nonzero(). Immutable once built.
class ChargeVector {
 public:
  struct Entry {
    uint32_t k = 0;
    double amount = 0;
    friend bool operator==(const Entry&, const Entry&) = default;
  };

  ChargeVector() = default;
  /// The dense vector `dense` (one amount per consumable); zeros (either sign) are not stored.
  ChargeVector(const std::vector<double>& dense) : width_(static_cast<uint32_t>(dense.size())) {  // NOLINT
    for (uint32_t k = 0; k < width_; ++k)
      if (dense[k] != 0) entries_.push_back({k, dense[k]});
  }
  ChargeVector(std::initializer_list<double> dense) : ChargeVector(std::vector<double>(dense)) {}  // NOLINT
  /// From entries in increasing k, all below `width` (zeros are dropped).
  ChargeVector(uint32_t width, std::vector<Entry> entries) : entries_(std::move(entries)), width_(width) {
    std::erase_if(entries_, [](const Entry& e) { return e.amount == 0; });
  }

  /// The number of consumables it covers (the catalog's; 0 for an empty vector).
  size_t size() const noexcept { return width_; }
  bool empty() const noexcept { return width_ == 0; }
  /// The amount of consumable k (0 when it takes none). O(log nonzero).
  double operator[](size_t k) const noexcept {
    const auto it =
        std::lower_bound(entries_.begin(), entries_.end(), k, [](const Entry& e, size_t key) { return e.k < key; });
    return it != entries_.end() && it->k == k ? it->amount : 0.0;
  }
  /// The consumables it takes, by increasing k, each amount nonzero.
  std::span<const Entry> nonzero() const noexcept { return entries_; }
  /// Some amount is > 0.
  bool any_positive() const noexcept {
    return std::any_of(entries_.begin(), entries_.end(), [](const Entry& e) { return e.amount > 0; });
  }
  /// One amount per consumable (size() values).
  std::vector<double> dense() const {
    std::vector<double> out(width_, 0.0);
    for (const Entry& e : entries_) out[e.k] = e.amount;
    return out;
  }
  /// The sum with `other` of the same width (or an empty one), entry by entry (each_of_both).
  ChargeVector plus(const ChargeVector& other) const;
  friend bool operator==(const ChargeVector&, const ChargeVector&) = default;

 private:
  std::vector<Entry> entries_;
  uint32_t width_ = 0;
};

/// Calls fn(k, a[k], b[k]) for each consumable k that `a` or `b` stores, by increasing k, while fn
/// returns true: the walk over two charges of one category ($fill_up's per-slot and per-job amounts)
/// in O(nonzero). Returns false when fn stopped it.
template <typename Fn>
bool each_of_both(const ChargeVector& a, const ChargeVector& b, Fn&& fn) {
  const auto x = a.nonzero(), y = b.nonzero();
  size_t i = 0, j = 0;
  while (i < x.size() || j < y.size()) {
    bool go = true;
    if (j == y.size() || (i < x.size() && x[i].k < y[j].k)) {
      go = fn(x[i].k, x[i].amount, 0.0);
      ++i;
    } else if (i == x.size() || y[j].k < x[i].k) {
      go = fn(y[j].k, 0.0, y[j].amount);
      ++j;
    } else {
      go = fn(x[i].k, x[i].amount, y[j].amount);
      ++i;
      ++j;
    }
    if (!go) return false;
  }
  return true;
}

inline ChargeVector ChargeVector::plus(const ChargeVector& other) const {
  std::vector<Entry> out;
  each_of_both(*this, other, [&](uint32_t k, double a, double b) {
    out.push_back({k, a + b});
    return true;
  });
  return ChargeVector(std::max(width_, other.width_), std::move(out));
}

}  // namespace colmatch
