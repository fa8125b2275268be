// TaskerSet: a set of tasker indices in [0, universe), stored as dense 64-bit words or as a CRoaring
// bitmap, whichever fits its density (see from_words). The eligibility of one job category is one
// TaskerSet; dispatch walks it in index order with next().
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <roaring/roaring.h>

namespace colmatch::kernels {

class TaskerSet {
 public:
  /// An empty set over zero taskers.
  TaskerSet() = default;
  TaskerSet(const TaskerSet&) = delete;
  TaskerSet& operator=(const TaskerSet&) = delete;
  TaskerSet(TaskerSet&&) noexcept = default;
  TaskerSet& operator=(TaskerSet&&) noexcept = default;
  ~TaskerSet() = default;

  /// Builds a set over `universe` taskers from a bitmask of words_for(universe) words (tail clear),
  /// given its population count. Stays dense unless fewer than one tasker in 16 is a member:
  /// a sparse set then costs at most 2 bytes a member in a Roaring array container against
  /// universe/8 bytes dense, and next() jumps over empty stretches instead of scanning zero words.
  /// Allocates; never throws on valid input (std::bad_alloc aside).
  static TaskerSet from_words(std::vector<uint64_t> words, size_t universe, uint64_t count);

  size_t universe() const noexcept { return universe_; }
  uint64_t count() const noexcept { return count_; }
  bool sparse() const noexcept { return roaring_ != nullptr; }
  /// Inline when dense (dispatch and the simulator ask it per tasker); O(log) when sparse.
  bool contains(uint32_t t) const noexcept {
    if (roaring_) return roaring_bitmap_contains(roaring_.get(), t);
    return t < universe_ && ((words_[t >> 6] >> (t & 63)) & 1) != 0;
  }
  /// The smallest member >= pos, or universe() if there is none. Dense: O(gap / 64); sparse: O(log).
  size_t next(size_t pos) const noexcept;
  /// A walk over the members in increasing order, for loops that ask next() with a position that never
  /// decreases (dispatch's scans of a category's taskers). Dense: next() itself; sparse: one Roaring
  /// iterator kept from call to call and advanced, where next() searches the bitmap afresh each time
  /// (O(log) a call: a third of a scan's cost on Slurm's sparse categories). The set must outlive the walk
  /// and not change during it.
  class Walk {
   public:
    explicit Walk(const TaskerSet& s) noexcept : s_(s) {}
    /// The smallest member >= pos, or universe(). pos must be >= the pos of the call before.
    size_t next(size_t pos) noexcept {
      if (!s_.roaring_) return s_.next(pos);
      if (pos >= s_.universe_) return s_.universe_;
      if (!started_) {
        roaring_init_iterator(s_.roaring_.get(), &it_);
        started_ = true;
      }
      // a short step forward by advancing, a long one (a skipped block of 64) by a search
      for (int steps = 0; it_.has_value && it_.current_value < pos; ++steps)
        if (steps == 8 ? !roaring_move_uint32_iterator_equalorlarger(&it_, static_cast<uint32_t>(pos))
                       : !roaring_advance_uint32_iterator(&it_))
          break;
      return it_.has_value ? it_.current_value : s_.universe_;
    }

   private:
    const TaskerSet& s_;
    roaring_uint32_iterator_t it_{};
    bool started_ = false;
  };
  /// The members as words of 64 taskers (bit t % 64 of word t / 64) when the set is dense; empty when
  /// sparse (walk it with next() or each_word()).
  std::span<const uint64_t> dense_words() const noexcept {
    return roaring_ ? std::span<const uint64_t>{} : std::span<const uint64_t>{words_};
  }
  /// Removes t if present (used when a tasker's fixed attributes change: one bit, not the whole set).
  void remove(uint32_t t) noexcept;
  /// Adds t (t < universe()).
  void add(uint32_t t) noexcept;
  /// A copy (sets are move-only to make copies visible).
  TaskerSet clone() const;
  /// Members in increasing order.
  std::vector<uint32_t> to_vector() const;
  /// ORs the members into `words` (words_for(universe()) words): word by word when dense, member by
  /// member when sparse. O(universe / 64) or O(count).
  void or_into(std::vector<uint64_t>& words) const noexcept;
  /// Bytes held by the representation (words or serialized Roaring size).
  size_t bytes() const noexcept;
  /// Calls fn(w, bits) for each word of 64 taskers ([64w, 64w + 64)) holding a member, by increasing w,
  /// bits the members' mask. Dense: O(universe / 64); sparse: O(count log).
  template <class Fn>
  void each_word(Fn&& fn) const {
    if (!roaring_) {
      for (size_t w = 0; w < words_.size(); ++w)
        if (words_[w] != 0) fn(w, words_[w]);
      return;
    }
    struct Words {
      Fn& fn;
      size_t w = ~size_t{0};
      uint64_t bits = 0;
    } words{fn};
    roaring_iterate(
        roaring_.get(),
        [](uint32_t t, void* p) {
          auto& x = *static_cast<Words*>(p);
          if ((t >> 6) != x.w) {
            if (x.bits != 0) x.fn(x.w, x.bits);
            x.w = t >> 6;
            x.bits = 0;
          }
          x.bits |= uint64_t{1} << (t & 63);
          return true;
        },
        &words);
    if (words.bits != 0) fn(words.w, words.bits);
  }

 private:
  struct RoaringFree {
    void operator()(roaring_bitmap_t* r) const noexcept { roaring_bitmap_free(r); }
  };
  size_t universe_ = 0;
  uint64_t count_ = 0;
  std::vector<uint64_t> words_;
  std::unique_ptr<roaring_bitmap_t, RoaringFree> roaring_;
};

}  // namespace colmatch::kernels
