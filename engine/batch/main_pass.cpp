// Slurm's main scheduling pass in the batch walk (engine/batch/walk.hpp's hooks): partitions as blocking
// queues (engine/batch/queue_blocking.hpp), jobs of several partitions tried in each, their records of
// lower PriorityTiers where they come, named nodes held, and Slurm's reasons (Priority, Resources,
// ReqNodeNotAvail, "Nodes required for job are DOWN, DRAINED or reserved ..."). job_scheduler.c's _schedule.
#include <algorithm>
#include <bit>
#include <functional>

#include "engine/batch/walk.hpp"

namespace colmatch {

bool Walk::queue_step(uint32_t j, uint32_t c, WalkOut& out) {
  if (const std::span<const uint32_t> qs = blocks_->queues().queues_of(j); !qs.empty()) {
    step_several(j, c, qs, out);
    return true;
  }
  if (past_queue_depth(blocks_->queues().queue_of_job[j])) {  // "reached partition %s job limit"
    pend(j, c, PendingReason::BehindHigherPriority, out);
    return true;
  }
  if (const QueueBlock b = blocks_->before(j, cats_.fewest_taskers(c)); b != QueueBlock::Open) {
    pend(j, c, b == QueueBlock::Behind ? PendingReason::BehindHigherPriority : PendingReason::TaskersHeld, out);
    return true;
  }
  return false;
}

void Walk::pend_blocking(uint32_t j, uint32_t c, PendingReason r) {
  if (blocks_->holds_own(j) && (r == PendingReason::NoFreeCapacity || r == PendingReason::EligibleHeld ||
                                r == PendingReason::NoEligibleTasker)) {
    hold(eligible_[c].eligible);
  } else if (r == PendingReason::NoFreeCapacity) {
    blocks_->failed(j);
    placer_.forget_last();  // held taskers may split runs (ConsecutiveBestFit)
  }
}

Walk::Within& Walk::within(uint32_t c, uint32_t q) {
  const uint64_t id = (uint64_t{c} << 32) | q;
  auto it = within_.find(id);
  if (it != within_.end()) return it->second;
  // at most kWithinKept kept (memory bounded whatever the categories): dropped together, built again
  // when asked again (O(taskers / 64) each), under fresh keys
  if (within_.size() >= kWithinKept) within_.clear();
  const kernels::TaskerSet& queue = blocks_->queues().taskers[q];
  auto cut = [&](const kernels::TaskerSet& set) {
    std::vector<uint64_t> a(kernels::words_for(set.universe()), 0), b(a.size(), 0);
    set.or_into(a);
    queue.or_into(b);
    uint64_t n = 0;
    for (size_t w = 0; w < a.size(); ++w) n += static_cast<uint64_t>(std::popcount(a[w] &= b[w]));
    return kernels::TaskerSet::from_words(std::move(a), set.universe(), n);
  };
  Within x;
  x.e.eligible = cut(eligible_[c].eligible);
  for (const kernels::TaskerSet& tier : eligible_[c].tiers) x.e.tiers.push_back(cut(tier));
  if (requested_ != nullptr) x.requested = cut((*requested_)[c]);
  x.key = cats_.size() + next_within_key_++;
  return within_.emplace(id, std::move(x)).first->second;
}

void Walk::next_records(size_t i, WalkOut& out) {
  while (!later_.empty() && later_.front().at <= i && !pass_ended()) {
    std::pop_heap(later_.begin(), later_.end(), std::greater<>{});
    const Later x = later_.back();
    later_.pop_back();
    step_several(x.job, cats_.of_job[x.job], blocks_->queues().queues_of(x.job), out, x.from);
  }
}

void Walk::defer(uint32_t j, double p, uint32_t from) {
  const double submit = jobs_.submit[j];
  const auto it = std::partition_point(order_.begin(), order_.end(), [&](uint32_t k) {
    const double pk = jobs_.priority[k];
    if (pk != p) return pk > p;
    const double sk = jobs_.submit[k];
    return sk != submit ? sk < submit : k < j;
  });
  later_.push_back({static_cast<size_t>(it - order_.begin()), p, j, from});
  std::push_heap(later_.begin(), later_.end(), std::greater<>{});
}

void Walk::step_several(uint32_t j, uint32_t c, std::span<const uint32_t> qs, WalkOut& out, size_t from) {
  const uint32_t need = cats_.fewest_taskers(c);
  const std::span<const double> priority = blocks_->queues().priorities_of(j);
  size_t to = qs.size();
  if (!priority.empty())
    for (to = from + 1; to < qs.size() && priority[to] == priority[from];) ++to;
  PendingReason r = PendingReason::None;
  if (from > 0) {  // a later record: the job pends already
    r = res_.reason[j];
    --out.pending;
  }
  for (const uint32_t q : qs.subspan(from, to - from)) {
    if (past_queue_depth(q)) {  // (partition_job_depth: this record not tried)
      if (r == PendingReason::None) r = PendingReason::BehindHigherPriority;
      continue;
    }
    const QueueBlock b = blocks_->state_of(q, need);
    if (b == QueueBlock::Behind) {
      if (r == PendingReason::None || r == PendingReason::NoFreeCapacity || r == PendingReason::TaskersHeld)
        r = PendingReason::BehindHigherPriority;
      continue;
    }
    if (b == QueueBlock::Held) {  // (state_of blocked it)
      r = PendingReason::TaskersHeld;
      placer_.forget_last();
      continue;
    }
    Within& x = within(c, q);
    if (x.never < 0) x.never = never_in(c, x.e) ? 1 : 0;
    if (x.never != 0) {
      r = PendingReason::NoEligibleTasker;
      if (blocks_->holds_own(j)) hold(x.e.eligible);
      continue;
    }
    if (place_within(j, x.e, out)) return;
    r = no_room_in(c, x.key, x.e, requested_ != nullptr ? &x.requested : nullptr);
    if (blocks_->holds_own(j)) {
      hold(x.e.eligible);
    } else if (r == PendingReason::NoFreeCapacity) {
      blocks_->fail_queue(q);
      placer_.forget_last();
    }
  }
  res_.reason[j] = r;
  ++out.pending;
  if (to < qs.size()) defer(j, priority[to], static_cast<uint32_t>(to));
}

PendingReason Walk::no_room_in(uint32_t c, size_t key, const CategoryEligibility& e,
                               const kernels::TaskerSet* requested) {
  const uint32_t need = cats_.fewest_taskers(c);
  const std::span<const kernels::TaskerSet> choices = choices_in(c, e);
  // a node pick with fewer than its count up fails first, as the pick's own _pick_best_nodes says (Slurm:
  // `-C ssd*2` with every ssd node held and none of them busy is ReqNodeNotAvail, though busy nodes
  // without ssd are up)
  for (const Categories::NodePick& p : cats_.node_picks_of(c)) {
    if (blocks_ == nullptr) break;
    if (placer_.pick_taskers(p, [&](uint32_t t) { return e.eligible.contains(t) && !cap_.down(t); }) >= p.count)
      continue;
    const bool busy = requested_ != nullptr && blocks_->any_busy((*requested_)[p.all()]);
    return busy ? PendingReason::NoFreeCapacity : PendingReason::EligibleHeld;
  }
  const bool held = blocks_ != nullptr && (choices.size() > 1 ? blocks_->all_held(key, choices, need)
                                                              : blocks_->all_held(key, e.eligible, need));
  const bool not_avail = held && !(requested != nullptr && blocks_->any_busy(*requested));
  return not_avail ? PendingReason::EligibleHeld : PendingReason::NoFreeCapacity;
}

}  // namespace colmatch
