#include "engine/schedule/book.hpp"

#include <cmath>

#include "engine/schedule/world.hpp"

namespace colmatch {

void ReservationBook::made(Reservation& r, uint32_t j, double T, double est,
                           const std::vector<Allocation>& allocs) const {
  r.active = true;
  r.job = j;
  r.shadow = T;
  r.end = T + est;
  r.allocs = allocs;
  r.category = w_.charged(j);  // (the plan that found `allocs` recorded a choosing job's solution)
  if (std::isnan(w_.res.reserved_at[j])) w_.res.reserved_at.set(j, T);
}

double ReservationBook::first_shadow_except(uint32_t j) const noexcept {
  for (const auto& [shadow, job] : shadows_)
    if (job != j) return shadow;
  return std::numeric_limits<double>::infinity();
}

void ReservationBook::drop(uint32_t j) {
  if (!has(j)) return;
  const uint32_t slot = slot_of_[j];
  Reservation& r = book_[slot];
  shadows_.erase({r.shadow, j});
  ends_.erase({r.end, j});
  released(r);
  r.job = kNoSlot;
  r.allocs.clear();
  free_slots_.push_back(slot);
  slot_of_[j] = kNoSlot;
}

const Reservation& ReservationBook::book(uint32_t j, double t, double latest) {
  plan(j, t, trial_);
  if (trial_.active && trial_.shadow > latest) trial_.active = false;  // past the window
  if (!trial_.active) return trial_;
  const bool slurm_map = kept() && w_.policy.slurm_backfill();
  if (const double resolution = slurm_map ? w_.policy.backfill_resolution : 0; resolution > 0) {
    // Slurm's bf_resolution: [start, end) rounded down, at least one step long
    const double s = std::floor(trial_.shadow / resolution) * resolution;
    trial_.end = std::max(std::floor(trial_.end / resolution) * resolution, s + resolution);
    trial_.shadow = s;
  }
  // (Slurm's backfill plans again in its next cycle; EASY in its next pass, which a running job's end brings)
  return insert(trial_, kept() && !slurm_map);
}

// Books reservation r (active, of a job holding none); `wake`: asks for a cycle at its start.
const Reservation& ReservationBook::insert(const Reservation& r, bool wake) {
  const uint32_t j = r.job;
  if (slot_of_.empty()) slot_of_.assign(w_.jobs.size(), kNoSlot);
  uint32_t slot = 0;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    book_[slot] = r;
  } else {
    slot = static_cast<uint32_t>(book_.size());
    book_.push_back(r);
  }
  slot_of_[j] = slot;
  shadows_.insert({r.shadow, j});
  ends_.insert({r.end, j});
  held(book_[slot]);
  if (wake) w_.wakes.emplace(r.shadow, j);  // a cycle then, though no job may end then (they end by walltimes)
  return book_[slot];
}

bool ReservationBook::compress(uint32_t j, double t) {
  if (!has(j) || !kept() || !may_move_earlier(j, t)) return false;
  const Reservation old = of(j);
  drop(j);
  plan(j, t, trial_);
  if (trial_.active && trial_.shadow < old.shadow) {
    insert(trial_, trial_.shadow > t);  // (one due now is this cycle's: MoabScheduler::compress)
    return true;
  }
  insert(old, false);  // as it was (its cycle was asked for when it was made)
  return false;
}

}  // namespace colmatch
