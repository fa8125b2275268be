#include "engine/queue_blocking.hpp"

namespace colmatch {

QueueBlocks::QueueBlocks(const BlockingQueues& queues, Capacity& capacity)
    : queues_(queues), capacity_(capacity), blocked_(queues.names.size(), 0), first_up_(queues.names.size(), 0) {}

bool QueueBlocks::any_up(const kernels::TaskerSet& set, size_t& cursor) const {
  for (cursor = set.next(cursor); cursor < set.universe() && capacity_.down(static_cast<uint32_t>(cursor));
       cursor = set.next(cursor + 1)) {}
  return cursor < set.universe();
}

QueueBlock QueueBlocks::before(uint32_t j) {
  const uint32_t q = queues_.queue_of_job[j];
  if (q == kNone) return QueueBlock::Open;
  if (blocked_[q]) return QueueBlock::Behind;
  if (any_up(queues_.taskers[q], first_up_[q])) return QueueBlock::Open;
  block(q);
  return QueueBlock::Held;
}

void QueueBlocks::failed(uint32_t j) {
  const uint32_t q = queues_.queue_of_job[j];
  if (q != kNone && !blocked_[q]) block(q);
}

bool QueueBlocks::all_held(size_t c, const kernels::TaskerSet& eligible) {
  if (first_unheld_.size() <= c) first_unheld_.resize(c + 1, 0);
  return !any_up(eligible, first_unheld_[c]);
}

bool QueueBlocks::any_busy(size_t c, const kernels::TaskerSet& requested) {
  const uint32_t k = queues_.busy_consumable;
  if (k == kNone) return false;
  if (busy_.size() <= c) busy_.resize(c + 1);
  Busy& b = busy_[c];
  if (b.placements == placements_ && b.held == held_.size()) return b.busy;
  b = {false, placements_, held_.size()};
  for (size_t t = requested.next(0); t < requested.universe() && !b.busy; t = requested.next(t + 1)) {
    const auto x = static_cast<uint32_t>(t);
    b.busy = !capacity_.down(x) && capacity_.available(k, x) <= 0;  // (NaN: no pool of it there, not busy)
  }
  return b.busy;
}

void QueueBlocks::block(uint32_t q) {
  blocked_[q] = 1;
  const kernels::TaskerSet& set = queues_.taskers[q];
  for (size_t t = set.next(first_up_[q]); t < set.universe(); t = set.next(t + 1)) {
    const auto x = static_cast<uint32_t>(t);
    if (capacity_.down(x)) continue;
    capacity_.set_down(x, true);
    held_.push_back(x);
  }
}

void QueueBlocks::release() {
  for (const uint32_t t : held_) capacity_.set_down(t, false);
  held_.clear();
}

}  // namespace colmatch
