#include "engine/schedule/availability.hpp"

#include <algorithm>
#include <cmath>

namespace colmatch {

void Availability::init(const SimConfig& policy, const Catalog& catalog, const TaskerTable& taskers,
                        const JobTable& jobs, const FarmEvents& farm, Capacity& cap, Capacity& idle) {
  kind_ = policy.availability;
  farm_ = &farm;
  jobs_ = &jobs;
  if (kind_ == ResourceAvailability::Dedicated) return;
  const auto& cons = catalog.consumables();
  tracked_.assign(cons.size(), 0);
  bool any = false;
  for (size_t k = 0; k < cons.size(); ++k) any |= (tracked_[k] = !taskers.columns[cons[k]].multi_level()) != 0;
  if (!any) {
    tracked_.clear();
    return;
  }
  held_.assign(taskers.size(), {});
  future_held_.assign(taskers.size(), {});
  walk_of_.assign(taskers.size(), 0);
  for (size_t k = 0; k < cons.size() && k < farm.load.size(); ++k) {
    if (!tracked_[k] || farm.load[k].empty()) continue;
    for (uint32_t x = 0; x < taskers.size(); ++x) {
      if (!taskers.columns[cons[k]].has(x)) continue;
      cap.set_queue_free(k, x, free_with(held_[x], k, x, cap));
      idle.set_queue_free(k, x, free_with(held_[x], k, x, idle));  // the idle farm carries the load too
    }
  }
}

double Availability::load_of(size_t k, uint32_t x) const noexcept {
  return k < farm_->load.size() && !farm_->load[k].empty() ? farm_->load[k][x] : 0.0;
}

// What tracked consumable k has free on tasker x with the charges `held` there, on `cap`'s configured
// amounts: MAX(0, configured - occupancy).
double Availability::free_with(const std::vector<HeldCharge>& held, size_t k, uint32_t x, const Capacity& cap) const {
  double d = 0, u = load_of(k, x);
  for (const HeldCharge& h : held) {
    if (h.k != k) continue;
    d += h.amount;
    u += h.used;
  }
  const double occupied = kind_ == ResourceAvailability::Utilized ? u : std::max(d, u);
  return std::max(0.0, cap.configured_amount(k, x) - occupied);
}

double Availability::free_now(size_t k, uint32_t x, const Capacity& cap) const {
  return free_with(held_[x], k, x, cap);
}

// Job j's charges on tracked consumables are added to (`on`) or dropped from the per-tasker lists
// `held`; touched_ gets the (consumable, tasker) pairs whose free amount must be set again.
void Availability::hold(std::vector<std::vector<HeldCharge>>& held, uint32_t j, std::span<const HeldAmount> charges,
                        bool on) {
  touched_.clear();
  for (const HeldAmount& c : charges) {
    if (!tracked(c.k)) continue;
    std::vector<HeldCharge>& list = held[c.x];
    const double f = jobs_->utilization.at(c.k, j);
    const HeldCharge h{j, c.k, c.amount, (std::isnan(f) ? 1.0 : f) * c.amount};
    auto at = std::lower_bound(list.begin(), list.end(), h);
    if (on) list.insert(at, h);
    else if (at != list.end() && at->job == j && at->k == c.k) list.erase(at);
    touched_.emplace_back(c.k, c.x);
  }
}

void Availability::occupy(uint32_t j, std::span<const HeldAmount> charges, bool on, Capacity& cap,
                          std::vector<uint32_t>& grown) {
  hold(held_, j, charges, on);
  for (const auto& [k, x] : touched_)
    if (cap.set_queue_free(k, x, free_with(held_[x], k, x, cap))) grown.push_back(x);
}

void Availability::vacate(uint32_t rj, std::span<const Allocation> allocs, std::span<const HeldAmount> charges,
                          Capacity& future) {
  for (const Allocation& a : allocs) {
    const uint32_t x = a.tasker;
    if (walk_of_[x] == walk_) continue;
    walk_of_[x] = walk_;
    future_held_[x] = held_[x];
  }
  hold(future_held_, rj, charges, false);
  for (const auto& [k, x] : touched_) future.set_queue_free(k, x, free_with(future_held_[x], k, x, future));
}

}  // namespace colmatch
