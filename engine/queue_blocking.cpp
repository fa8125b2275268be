#include "engine/queue_blocking.hpp"

namespace colmatch {

QueueBlocks::QueueBlocks(const BlockingQueues& queues, Capacity& capacity)
    : queues_(queues), capacity_(capacity), blocked_(queues.names.size(), 0), first_up_(queues.names.size(), 0) {}

QueueBlock QueueBlocks::before(uint32_t j) {
  const uint32_t q = queues_.queue_of_job[j];
  if (q == kNone) return QueueBlock::Open;
  if (blocked_[q]) return QueueBlock::Behind;
  const kernels::TaskerSet& set = queues_.taskers[q];
  size_t& t = first_up_[q];
  for (t = set.next(t); t < set.universe() && capacity_.down(static_cast<uint32_t>(t)); t = set.next(t + 1)) {}
  if (t < set.universe()) return QueueBlock::Open;
  block(q);
  return QueueBlock::Held;
}

void QueueBlocks::failed(uint32_t j) {
  const uint32_t q = queues_.queue_of_job[j];
  if (q != kNone && !blocked_[q]) block(q);
}

bool QueueBlocks::all_held(size_t c, const kernels::TaskerSet& eligible) {
  if (first_unheld_.size() <= c) first_unheld_.resize(c + 1, 0);
  size_t& t = first_unheld_[c];
  for (t = eligible.next(t); t < eligible.universe() && capacity_.down(static_cast<uint32_t>(t));
       t = eligible.next(t + 1)) {}
  return t >= eligible.universe();
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
