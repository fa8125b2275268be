// The node choice of Altair Accelerator (the greatest effective power wins, seed 000) and Moab's PRIORITY
// allocation (seed 001): taskers are stored in rank order, so the first of a tier with room from the
// category's cursor is the answer; the cursor moves to it (capacity only shrinks within a batch epoch:
// DispatchCursors), whole blocks of 64 skipped where Capacity::block_full says none has room.
#include "engine/placement/placer.hpp"

namespace colmatch {

size_t Placer::pick_in_rank_order(uint32_t c, size_t v, const kernels::TaskerSet& tier, const std::vector<Charge>& ch) {
  const size_t universe = tier.universe();
  kernels::TaskerSet::Walk walk(tier);
  size_t x = walk.next(cursor(c, v));
  while (x < universe) {
    if (cap_.block_full(ch, x >> 6)) {
      x = walk.next(((x >> 6) + 1) << 6);
      continue;
    }
    if (cap_.fits(ch, static_cast<uint32_t>(x))) break;
    x = walk.next(x + 1);
  }
  cursor(c, v) = x;
  return x;
}

}  // namespace colmatch
