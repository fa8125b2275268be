#include "engine/schedule/pooled_book.hpp"

#include "engine/schedule/world.hpp"

namespace colmatch {

void PooledBook::early_starts(double t, std::vector<uint32_t>& jobs) const {
  jobs.clear();
  const double latest = pool_.dip(t, 1);  // (more slots: an earlier dip)
  for (auto it = shadows_.upper_bound({t, UINT32_MAX}); it != shadows_.end() && !(latest < it->first); ++it)
    if (!(pool_.dip(t, w_.jobs.slots[it->second]) < it->first)) jobs.push_back(it->second);
}

void PooledBook::started(uint32_t j, double t) {
  pool_.started(t, t + sim_estimate(w_.jobs, j), units_held(w_.res, j));
}

void PooledBook::ended(uint32_t j, double t) {
  pool_.release(t, w_.res.start[j] + sim_estimate(w_.jobs, j), units_held(w_.res, j));
}

// Its slots, wherever they are free.
void PooledBook::plan(uint32_t j, double t, Reservation& r) {
  r.active = false;
  const double est = sim_estimate(w_.jobs, j);
  const double at = pool_.earliest(t, w_.jobs.slots[j], est);
  if (at < std::numeric_limits<double>::infinity()) made(r, j, at, est, {});
}

// Asked of the count as it stands, its own units given back (exact, without giving them back and planning
// it again: most reservations stay where they are).
bool PooledBook::may_move_earlier(uint32_t j, double t) const {
  return pool_.fits_before(t, w_.jobs.slots[j], sim_estimate(w_.jobs, j), of(j).shadow, of(j).end);
}

void PooledBook::held(const Reservation& r) { pool_.hold(r.shadow, r.end, w_.jobs.slots[r.job]); }

void PooledBook::released(const Reservation& r) { pool_.release(r.shadow, r.end, w_.jobs.slots[r.job]); }

bool PooledBook::take_booked(uint32_t j, std::vector<Allocation>& out) {
  const uint32_t c = w_.cats.of_job[j];
  return !w_.settled(c) && w_.placer(c).try_place(j, w_.policy.allocation, out);
}

// Job j's slots are free from t until `end`, its own reservation given back.
bool PooledBook::free_until(uint32_t j, double t, double end) const {
  if (!has(j)) return pool_.free_throughout(t, end, w_.jobs.slots[j]);
  const Reservation& own = of(j);
  return pool_.free_throughout(t, end, w_.jobs.slots[j], own.shadow, own.end, w_.jobs.slots[j]);
}

// (the booked reservations keep their units whichever taskers j takes)
bool PooledBook::delays_booked(uint32_t j, double t, double end, const std::vector<Allocation>& /*allocs*/) {
  return !free_until(j, t, end);
}

// Its slots are free now but not until `end` (no room now: the placement fails and says so).
bool PooledBook::forbids_booked(uint32_t j, double t, double end) {
  return pool_.free_now(w_.used) >= w_.jobs.slots[j] && !free_until(j, t, end);
}

}  // namespace colmatch
