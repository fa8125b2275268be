// A job table column that costs nothing per job while every job has the same value (issue 29: a batch's
// submit times, walltimes, holds, credentials, rejections and notes are one value for most farms).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <type_traits>
#include <vector>

namespace colmatch {

/// One value of T per job: stored once (uniform) until a job gets a value that differs, then one per job.
/// "Differs" is bitwise (a NaN equals the same NaN; -0.0 differs from 0.0), so the values read back are
/// exactly the ones written. Reads are O(1) either way; a write that breaks uniformity copies the value
/// to every job (O(n), once).
template <class T>
class PerJob {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  PerJob() = default;
  /// n jobs, each with value v (uniform).
  PerJob(size_t n, T v) : n_(n), value_(v) {}

  size_t size() const noexcept { return n_; }
  bool empty() const noexcept { return n_ == 0; }
  /// Every job has the same value (nothing stored per job).
  bool uniform() const noexcept { return values_.empty(); }
  const T& operator[](size_t j) const noexcept { return values_.empty() ? value_ : values_[j]; }
  const T& back() const noexcept { return (*this)[n_ - 1]; }

  /// Room for n jobs' values once they differ (no growth copies while the column fills to n).
  void reserve(size_t n) {
    reserve_ = n;
    if (!values_.empty()) values_.reserve(n);
  }
  /// Appends a job with value v.
  void push_back(T v) {
    if (values_.empty()) {
      if (n_ == 0) value_ = v;
      if (same(v, value_)) {
        ++n_;
        return;
      }
      values_.reserve(std::max(reserve_, n_ + 1));
      values_.assign(n_, value_);
    }
    values_.push_back(v);
    ++n_;
  }
  /// Job j's value becomes v.
  void set(size_t j, T v) {
    if (values_.empty()) {
      if (same(v, value_)) return;
      values_.assign(n_, value_);
    }
    values_[j] = v;
  }
  /// n jobs, each with value v (uniform again).
  void assign(size_t n, T v) {
    values_.clear();
    values_.shrink_to_fit();
    n_ = n;
    value_ = v;
  }
  /// Grows to n jobs, the new ones with value v (stays uniform when v is the value of every job).
  void resize(size_t n, T v) {
    if (n <= n_) {
      if (!values_.empty()) values_.resize(n);
      n_ = n;
      return;
    }
    if (values_.empty() && (n_ == 0 || same(v, value_))) {
      if (n_ == 0) value_ = v;
      n_ = n;
      return;
    }
    if (values_.empty()) values_.assign(n_, value_);
    values_.resize(n, v);
    n_ = n;
  }
  /// One value per job, stored (for a caller that fills them in place, e.g. in parallel): what it
  /// writes at [0, size()) is the column. Call uniform_again() after to store one value if they agree.
  T* per_job() {
    if (values_.empty()) values_.assign(n_, value_);
    return values_.data();
  }
  /// Back to one stored value when every job's is the same. O(n).
  void uniform_again() {
    if (values_.empty()) return;
    for (const T& v : values_)
      if (!same(v, values_[0])) return;
    value_ = values_[0];
    values_.clear();
    values_.shrink_to_fit();
  }
  /// The comparison the column stores by: bitwise (a NaN equals the same NaN; -0.0 is not 0.0).
  static bool same(const T& a, const T& b) noexcept { return std::memcmp(&a, &b, sizeof(T)) == 0; }
  /// Bytes held per job (0 while uniform).
  size_t bytes() const noexcept { return values_.capacity() * sizeof(T); }

  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;
    const_iterator() = default;
    const_iterator(const PerJob* c, size_t i) : c_(c), i_(i) {}
    reference operator*() const { return (*c_)[i_]; }
    reference operator[](difference_type d) const { return (*c_)[i_ + static_cast<size_t>(d)]; }
    const_iterator& operator++() { return ++i_, *this; }
    const_iterator operator++(int) {
      const_iterator t = *this;
      ++i_;
      return t;
    }
    const_iterator& operator--() { return --i_, *this; }
    const_iterator operator--(int) {
      const_iterator t = *this;
      --i_;
      return t;
    }
    const_iterator& operator+=(difference_type d) { return i_ += static_cast<size_t>(d), *this; }
    const_iterator& operator-=(difference_type d) { return i_ -= static_cast<size_t>(d), *this; }
    friend const_iterator operator+(const_iterator a, difference_type d) { return a += d; }
    friend const_iterator operator+(difference_type d, const_iterator a) { return a += d; }
    friend const_iterator operator-(const_iterator a, difference_type d) { return a -= d; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.i_ == b.i_; }
    friend auto operator<=>(const const_iterator& a, const const_iterator& b) { return a.i_ <=> b.i_; }

   private:
    const PerJob* c_ = nullptr;
    size_t i_ = 0;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, n_}; }

  /// The same values job by job (whether stored once or per job).
  friend bool operator==(const PerJob& a, const PerJob& b) {
    if (a.n_ != b.n_) return false;
    for (size_t j = 0; j < a.n_; ++j)
      if (!same(a[j], b[j])) return false;
    return true;
  }

 private:
  size_t n_ = 0;
  T value_{};
  std::vector<T> values_;  // empty while uniform
  size_t reserve_ = 0;     // reserve(): the jobs values_ is sized for when it is made
};

}  // namespace colmatch
