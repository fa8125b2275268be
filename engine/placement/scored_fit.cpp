// The node choices that look at every tasker with room (Moab's allocation policies, seed 001): first
// available (the lowest input index: the farm's own order, FIRSTAVAILABLE), best fit (the least room left
// after the job, summed over its charges relative to each: MINRESOURCE-like) and worst fit (the most).
// Ties go to the first in rank order. O(taskers of the tier), whole blocks of 64 skipped where
// Capacity::block_full says none has room.
#include "engine/placement/placer.hpp"

namespace colmatch {

size_t Placer::pick_scored(const kernels::TaskerSet& tier, const std::vector<Charge>& ch, AllocationPolicy policy,
                           double& key_out) const {
  const size_t universe = tier.universe();
  size_t t = universe;
  double best = 0;
  kernels::TaskerSet::Walk walk(tier);
  for (size_t x = walk.next(0); x < universe; x = walk.next(x + 1)) {
    if (cap_.block_full(ch, x >> 6)) {
      x = (((x >> 6) + 1) << 6) - 1;
      continue;
    }
    const auto tx = static_cast<uint32_t>(x);
    if (!cap_.fits(ch, tx)) continue;
    double key = 0;
    if (policy == AllocationPolicy::FirstAvailable) {
      key = taskers_.input_index[x];
    } else {
      for (const Charge& q : ch) key += (cap_.available(q.k, tx) - q.amount) / q.amount;
      if (policy == AllocationPolicy::WorstFit) key = -key;
    }
    if (t >= universe || key < best) {
      t = x;
      best = key;
    }
  }
  key_out = best;
  return t;
}

}  // namespace colmatch
