#include "engine/batch/queue_blocking.hpp"

#include <algorithm>
#include <bit>
#include <span>

namespace colmatch {

QueueBlocks::QueueBlocks(const BlockingQueues& queues, Capacity& capacity)
    : queues_(queues), capacity_(capacity), blocked_(queues.names.size(), 0), first_up_(queues.names.size(), 0) {}

bool QueueBlocks::any_up(const kernels::TaskerSet& set, size_t& cursor) const {
  for (cursor = set.next(cursor); cursor < set.universe() && capacity_.down(static_cast<uint32_t>(cursor));
       cursor = set.next(cursor + 1)) {}
  return cursor < set.universe();
}

QueueBlock QueueBlocks::before(uint32_t j, uint32_t need) {
  const uint32_t q = queues_.queue_of_job[j];
  return q == kNone ? QueueBlock::Open : state_of(q, need);
}

QueueBlock QueueBlocks::state_of(uint32_t q, uint32_t need) {
  if (blocked_[q]) return QueueBlock::Behind;
  const kernels::TaskerSet& set = queues_.taskers[q];
  bool enough = any_up(set, first_up_[q]);
  if (enough && need > 1) {
    if (queue_up_.empty()) {  // counted once; hold_one() keeps the counts from then on
      queue_up_.assign(queues_.names.size(), 0);
      for (size_t k = 0; k < queue_up_.size(); ++k) {
        const kernels::TaskerSet& s = queues_.taskers[k];
        for (size_t t = s.next(0); t < s.universe(); t = s.next(t + 1))
          queue_up_[k] += capacity_.down(static_cast<uint32_t>(t)) ? 0 : 1;
      }
    }
    enough = queue_up_[q] >= need;
  }
  if (enough) return QueueBlock::Open;
  block(q);
  return QueueBlock::Held;
}

void QueueBlocks::failed(uint32_t j) {
  if (const uint32_t q = queues_.queue_of_job[j]; q != kNone) fail_queue(q);
}

void QueueBlocks::hold(const kernels::TaskerSet& set) {
  for (size_t t = set.next(0); t < set.universe(); t = set.next(t + 1)) hold_one(static_cast<uint32_t>(t));
}

void QueueBlocks::hold_one(uint32_t x) {
  if (capacity_.down(x)) return;
  capacity_.set_down(x, true);
  held_.push_back(x);
  for (size_t k = 0; k < queue_up_.size(); ++k) queue_up_[k] -= queues_.taskers[k].contains(x) ? 1 : 0;
}

bool QueueBlocks::all_held(size_t c, const kernels::TaskerSet& eligible, uint32_t need) {
  if (first_unheld_.size() <= c) first_unheld_.resize(c + 1, 0);
  if (!any_up(eligible, first_unheld_[c])) return true;
  return need > 1 && all_held(c, std::span<const kernels::TaskerSet>(&eligible, 1), need);
}

bool QueueBlocks::all_held(size_t c, std::span<const kernels::TaskerSet> choices, uint32_t need) {
  if (up_count_.size() <= c) up_count_.resize(c + 1);
  UpCount& u = up_count_[c];
  if (u.held != held_.size() && !u.short_of) {  // (short of it once, short for the rest of the pass)
    bool short_of = true;
    for (const kernels::TaskerSet& set : choices) {
      uint32_t up = 0;
      for (size_t t = set.next(0); t < set.universe() && up < need; t = set.next(t + 1))
        up += capacity_.down(static_cast<uint32_t>(t)) ? 0 : 1;
      if (up >= need) {
        short_of = false;
        break;
      }
    }
    u = {held_.size(), short_of};
  }
  return u.short_of;
}

bool QueueBlocks::busy(uint32_t t) const noexcept {
  return capacity_.available(queues_.busy_consumable, t) <= 0;  // (NaN: no pool of it there, not busy)
}

bool QueueBlocks::any_busy(const kernels::TaskerSet& requested) {
  if (queues_.busy_consumable == kNone) return false;
  const size_t universe = requested.universe();
  if (busy_.empty()) {  // the taskers busy before any job of the pass was placed
    busy_.assign(kernels::words_for(universe), 0);
    for (uint32_t t = 0; t < universe; ++t)
      if (busy(t)) busy_[t >> 6] |= uint64_t{1} << (t & 63);
  }
  auto up_and_busy = [&](size_t t) {
    const auto x = static_cast<uint32_t>(t);
    return (busy_[t >> 6] >> (t & 63) & 1) != 0 && !capacity_.down(x) && busy(x);
  };
  const std::span<const uint64_t> words = requested.dense_words();
  if (words.empty()) {  // sparse: member by member
    for (size_t t = requested.next(0); t < universe; t = requested.next(t + 1))
      if (up_and_busy(t)) return true;
    return false;
  }
  for (size_t w = 0; w < words.size(); ++w)
    for (uint64_t bits = words[w] & busy_[w]; bits != 0; bits &= bits - 1)
      if (up_and_busy(w * 64 + static_cast<size_t>(std::countr_zero(bits)))) return true;
  return false;
}

void QueueBlocks::placed_on(uint32_t t) {
  if (queues_.busy_consumable == kNone || busy_.empty()) return;  // (none asked yet: the first scan sees it)
  // a host or farm-wide pool of it: the placement may have made other taskers busy too, scanned again
  if (capacity_.shared(queues_.busy_consumable)) busy_.clear();
  else if (busy(t)) busy_[t >> 6] |= uint64_t{1} << (t & 63);
}

void QueueBlocks::block(uint32_t q) {
  blocked_[q] = 1;
  const kernels::TaskerSet& set = queues_.taskers[q];
  for (size_t t = set.next(first_up_[q]); t < set.universe(); t = set.next(t + 1)) hold_one(static_cast<uint32_t>(t));
}

void QueueBlocks::release() {
  for (const uint32_t t : held_) capacity_.set_down(t, false);
  held_.clear();
  // the rest of the pass's state goes too (cursors, counts, memos: stale once taskers are up again)
  std::fill(blocked_.begin(), blocked_.end(), 0);
  std::fill(first_up_.begin(), first_up_.end(), 0);
  first_unheld_.clear();
  queue_up_.clear();
  up_count_.clear();
  busy_.clear();
}

}  // namespace colmatch
