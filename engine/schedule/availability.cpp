#include "engine/schedule/availability.hpp"

#include <algorithm>
#include <cmath>

#include "engine/schedule/world.hpp"

namespace colmatch {

void Availability::init(SimWorld& w) {
  if (w.policy.availability == ResourceAvailability::Dedicated) return;
  const auto& cons = w.catalog.consumables();
  tracked_.assign(cons.size(), 0);
  bool any = false;
  for (size_t k = 0; k < cons.size(); ++k) any |= (tracked_[k] = !w.taskers.columns[cons[k]].multi_level()) != 0;
  if (!any) {
    tracked_.clear();
    return;
  }
  held_.assign(w.taskers.size(), {});
  future_held_.assign(w.taskers.size(), {});
  walk_of_.assign(w.taskers.size(), 0);
  for (size_t k = 0; k < cons.size() && k < w.farm.load.size(); ++k) {
    if (!tracked_[k] || w.farm.load[k].empty()) continue;
    for (uint32_t x = 0; x < w.taskers.size(); ++x) {
      if (!w.taskers.columns[cons[k]].has(x)) continue;
      w.cap.set_queue_free(k, x, free_with(w, held_[x], k, x, w.cap));
      w.idle.set_queue_free(k, x, free_with(w, held_[x], k, x, w.idle));  // the idle farm carries the load too
    }
  }
}

double Availability::load_of(const SimWorld& w, size_t k, uint32_t x) const noexcept {
  return k < w.farm.load.size() && !w.farm.load[k].empty() ? w.farm.load[k][x] : 0.0;
}

// What tracked consumable k has free on tasker x with the charges `held` there, on `cap`'s configured
// amounts: MAX(0, configured - occupancy).
double Availability::free_with(const SimWorld& w, const std::vector<HeldCharge>& held, size_t k, uint32_t x,
                               const Capacity& cap) const {
  double d = 0, u = load_of(w, k, x);
  for (const HeldCharge& h : held) {
    if (h.k != k) continue;
    d += h.amount;
    u += h.used;
  }
  const double occupied = w.policy.availability == ResourceAvailability::Utilized ? u : std::max(d, u);
  return std::max(0.0, cap.configured_amount(k, x) - occupied);
}

double Availability::free_now(const SimWorld& w, size_t k, uint32_t x, const Capacity& cap) const {
  return free_with(w, held_[x], k, x, cap);
}

// Job j's charges on tracked consumables are added to (`on`) or dropped from the per-tasker lists
// `held`; touched_ gets the (consumable, tasker) pairs whose free amount must be set again.
void Availability::hold(const SimWorld& w, std::vector<std::vector<HeldCharge>>& held, uint32_t j, bool on) {
  touched_.clear();
  w.for_each_charge(j, [&](size_t k, uint32_t x, double amount) {
    if (!tracked(k)) return;
    std::vector<HeldCharge>& list = held[x];
    const double f = w.jobs.utilization.at(k, j);
    const HeldCharge h{j, static_cast<uint32_t>(k), amount, (std::isnan(f) ? 1.0 : f) * amount};
    auto at = std::lower_bound(list.begin(), list.end(), h);
    if (on) list.insert(at, h);
    else if (at != list.end() && at->job == j && at->k == k) list.erase(at);
    touched_.emplace_back(k, x);
  });
}

void Availability::occupy(SimWorld& w, uint32_t j, bool on) {
  hold(w, held_, j, on);
  for (const auto& [k, x] : touched_)
    if (w.cap.set_queue_free(k, x, free_with(w, held_[x], k, x, w.cap))) w.grew(x);
}

void Availability::vacate(const SimWorld& w, uint32_t rj, Capacity& future) {
  for (uint32_t a = 0; a < w.res.alloc_count[rj]; ++a) {
    const uint32_t x = w.res.allocations[w.res.alloc_first[rj] + a].tasker;
    if (walk_of_[x] == walk_) continue;
    walk_of_[x] = walk_;
    future_held_[x] = held_[x];
  }
  hold(w, future_held_, rj, false);
  for (const auto& [k, x] : touched_) future.set_queue_free(k, x, free_with(w, future_held_[x], k, x, future));
}

}  // namespace colmatch
