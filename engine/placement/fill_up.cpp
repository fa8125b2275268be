// Grid Engine's $fill_up allocation rule for the Placer (seed 002, example E2): a job's slots spread over
// taskers in preference order, the master first with the per-job charges, each other tasker with as many
// slot instances as it takes; full taskers skipped 64 at a time (Capacity::room_words, block maxima).
#include <algorithm>
#include <span>

#include "engine/placement/placer.hpp"

namespace colmatch {

template <class Fn>
void Placer::each_with_room(uint32_t c, const kernels::TaskerSet& tier, size_t from, bool skip_blocks, size_t keep,
                            Fn&& fn) const {
  const size_t universe = tier.universe();
  const std::span<const uint64_t> words = tier.dense_words();
  if (words.empty()) {  // sparse: member by member
    for (size_t x = tier.next(from); x < universe; x = tier.next(x + 1)) {
      if (skip_blocks && (keep >> 6) != (x >> 6) && cap_.block_full(charges_[c], x >> 6)) {
        x = (((x >> 6) + 1) << 6) - 1;
        continue;
      }
      if (!fn(x)) return;
    }
    return;
  }
  const std::vector<uint32_t>& filter = room_filter_[c];
  for (size_t w = from >> 6; w < words.size(); ++w) {
    uint64_t bits = words[w];
    if (w == (from >> 6)) bits &= ~uint64_t{0} << (from & 63);
    for (const uint32_t k : filter) bits &= cap_.room_words(k)[w];
    if (bits == 0 || (skip_blocks && (keep >> 6) != w && cap_.block_full(charges_[c], w))) continue;
    for (; bits != 0; bits &= bits - 1)
      if (!fn(w * 64 + static_cast<size_t>(std::countr_zero(bits)))) return;
  }
}

size_t Placer::fill_up_master(uint32_t j) {
  const uint32_t c = cats_.of_job[j];
  const PreferenceTiers tiers(elig(c));
  const size_t universe = tiers[0].universe();
  if (cursors_ && !restricted_ && cursors_->settled(c)) return universe;
  const bool skip_blocks = all_queue_only_[c] && !charges_[c].empty();
  for (size_t v = 0; v < tiers.size(); ++v) {
    size_t found = universe;
    each_with_room(c, tiers[v], cursor(c, v), skip_blocks, SIZE_MAX, [&](size_t x) {
      if (instances(c, static_cast<uint32_t>(x), true, jobs_.slots[j]) == 0) return true;
      found = x;
      return false;
    });
    if (found < universe) return found;
  }
  return universe;
}

// Every tasker is eligible and every pool is the tasker's own: a job of `slots` slots cannot fit when all the
// queue-level free capacity together is short of its whole charge (checked in O(its charges)).
bool Placer::farm_short(uint32_t c, uint32_t slots) const {
  if (!all_queue_only_[c] || elig(c).eligible.count() != elig(c).eligible.universe()) return false;
  return !cats_.each_allocation_charge(c, slots, true, [&](uint32_t k, double whole) {
    return !(whole > 0 && cap_.queue_total(k, ledger_) + cap_.queue_total_slack(k) < whole);
  });
}

bool Placer::short_of_farm(uint32_t c, AllocationPolicy policy) {
  return method(c, policy) == PlacementMethod::FillUp && farm_short(c, cats_.slots[c]);
}

// $fill_up (seed 002, example E2): the master is the first tasker in preference order that takes
// at least one slot and the per-job charges; the other slots fill the remaining taskers in the same
// order, each with as many as fit. If not all slots fit, the caller rolls the tentative charges back.
bool Placer::place_fill_up(uint32_t j, uint32_t c, std::vector<Allocation>& out) {
  const PreferenceTiers tiers(elig(c));
  const size_t universe = tiers[0].universe();
  if (cursors_ && !restricted_ && cursors_->settled(c)) return false;
  if (farm_short(c, jobs_.slots[j])) {
    if (cursors_ && !restricted_) cursors_->settle(c);
    return false;
  }
  uint32_t remaining = jobs_.slots[j];
  const size_t first = out.size();
  advance_.clear();
  auto place = [&](size_t x, uint32_t n, bool master) {
    if (!planning_)
      cats_.each_allocation_charge(c, n, master, [&](uint32_t k, double amount) {
        if (amount > 0) cap_.take(ledger_, k, static_cast<uint32_t>(x), amount);
        return true;
      });
    out.push_back({static_cast<uint32_t>(x), n});
    remaining -= n;
  };
  // With only the taskers' own pools charged, a block of 64 taskers whose largest free amount cannot
  // take one slot instance is skipped whole (exact, as for $pe_slots), and so is a tasker with nothing
  // free of a per-instance charge (Capacity::room_words).
  const bool skip_blocks = all_queue_only_[c] && !charges_[c].empty();
  const size_t master = fill_up_master(j);
  if (master < universe) place(master, instances(c, static_cast<uint32_t>(master), true, remaining), true);
  for (size_t v = 0; v < tiers.size() && remaining > 0 && master != universe; ++v) {
    const kernels::TaskerSet& tier = tiers[v];
    // the first tasker from the cursor with room (or the master): the ones before it have none now, nor
    // in this epoch
    size_t first_room = master >= cursor(c, v) && tier.contains(static_cast<uint32_t>(master)) ? master : universe;
    each_with_room(c, tier, cursor(c, v), skip_blocks, master, [&](size_t x) {
      if (x == master) return true;
      const uint32_t n = instances(c, static_cast<uint32_t>(x), false, remaining);
      if (n == 0) return true;
      first_room = std::min(first_room, x);
      place(x, n, false);
      return remaining > 0;
    });
    advance_.emplace_back(v, first_room);
  }
  if (remaining > 0) {
    out.resize(first);
    // capacity only shrinks in this epoch and the category's jobs are alike: later ones cannot fit
    // (within a restriction, only there: the category's cursors stay as they are)
    if (cursors_ && !restricted_) cursors_->settle(c);
    return false;
  }
  if (cursors_ && !restricted_)
    for (const auto& [v, cur] : advance_) cursors_->at(c, v) = std::max(cursors_->at(c, v), cur);
  return true;
}

}  // namespace colmatch
