#include "engine/schedule/reservation.hpp"

#include "engine/schedule/world.hpp"

namespace colmatch {

CapacityCopy::CapacityCopy(SimWorld& w)
    : cap(Capacity::configured(w.catalog, w.taskers)), placer(w.taskers, w.jobs, w.cats, w.eligible, cap, nullptr) {
  placer.record_choices(&w.chosen);
  placer.fit_by(w.policy.fit_consumable, w.policy.fit_limit);
}

void release_running(SimWorld& w, uint32_t rj, Capacity& future, std::vector<HeldAmount>& scratch) {
  if (!w.availability.active()) {
    w.for_each_charge(rj, [&](size_t k, uint32_t x, double amount) { future.release(k, x, amount); });
    return;
  }
  w.charges_of(rj, scratch);
  for (const HeldAmount& c : scratch)
    if (!w.availability.tracked(c.k)) future.release(c.k, c.x, c.amount);
  w.availability.vacate(rj, w.allocations_of(rj), scratch, future);
}

int64_t units_held(const SimResult& res, uint32_t j) {
  int64_t units = 0;
  for (uint32_t a = 0; a < res.alloc_count[j]; ++a) units += res.allocations[res.alloc_first[j] + a].slots;
  return units;
}

}  // namespace colmatch
