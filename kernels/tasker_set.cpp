#include "kernels/tasker_set.hpp"

#include "kernels/kernels.hpp"

namespace colmatch::kernels {

TaskerSet TaskerSet::from_words(std::vector<uint64_t> words, size_t universe, uint64_t count) {
  TaskerSet s;
  s.universe_ = universe;
  s.count_ = count;
  if (count * 16 < universe) {
    std::vector<uint32_t> members;
    members.reserve(count);
    for (size_t w = 0; w < words.size(); ++w)
      for (uint64_t x = words[w]; x != 0; x &= x - 1)
        members.push_back(static_cast<uint32_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(x))));
    s.roaring_.reset(roaring_bitmap_of_ptr(members.size(), members.data()));
    roaring_bitmap_run_optimize(s.roaring_.get());
  } else {
    s.words_ = std::move(words);
  }
  return s;
}

size_t TaskerSet::next(size_t pos) const noexcept {
  if (pos >= universe_) return universe_;
  if (roaring_) {
    roaring_uint32_iterator_t it;
    roaring_init_iterator(roaring_.get(), &it);
    if (!roaring_move_uint32_iterator_equalorlarger(&it, static_cast<uint32_t>(pos))) return universe_;
    return it.current_value;
  }
  const size_t r = find_next_set(words_.data(), words_.size(), pos);
  return r < universe_ ? r : universe_;
}

void TaskerSet::remove(uint32_t t) noexcept {
  if (!contains(t)) return;
  --count_;
  if (roaring_) roaring_bitmap_remove(roaring_.get(), t);
  else words_[t >> 6] &= ~(uint64_t{1} << (t & 63));
}

void TaskerSet::add(uint32_t t) noexcept {
  if (t >= universe_ || contains(t)) return;
  ++count_;
  if (roaring_) roaring_bitmap_add(roaring_.get(), t);
  else words_[t >> 6] |= uint64_t{1} << (t & 63);
}

TaskerSet TaskerSet::clone() const {
  TaskerSet s;
  s.universe_ = universe_;
  s.count_ = count_;
  s.words_ = words_;
  if (roaring_) s.roaring_.reset(roaring_bitmap_copy(roaring_.get()));
  return s;
}

std::vector<uint32_t> TaskerSet::to_vector() const {
  std::vector<uint32_t> out;
  out.reserve(count_);
  for (size_t t = next(0); t < universe_; t = next(t + 1)) out.push_back(static_cast<uint32_t>(t));
  return out;
}

void TaskerSet::or_into(std::vector<uint64_t>& words) const noexcept {
  if (roaring_) {
    roaring_iterate(
        roaring_.get(),
        [](uint32_t t, void* p) {
          (*static_cast<std::vector<uint64_t>*>(p))[t >> 6] |= uint64_t{1} << (t & 63);
          return true;
        },
        &words);
    return;
  }
  for (size_t w = 0; w < words_.size() && w < words.size(); ++w) words[w] |= words_[w];
}

size_t TaskerSet::bytes() const noexcept {
  if (roaring_) return roaring_bitmap_portable_size_in_bytes(roaring_.get());
  return words_.size() * sizeof(uint64_t);
}

}  // namespace colmatch::kernels
