#include "engine/schedule/easy_reservation.hpp"

#include "engine/schedule/world.hpp"
#include "kernels/dassert.hpp"

namespace colmatch {

EasyReservation::EasyReservation(SimWorld& w) : ReservationBook(w), pool_(PoolProfile::of_farm(w)) {}

// A pooled job's units: one a slot (PoolProfile::of_farm), wherever it is placed.
uint32_t EasyReservation::units_of(uint32_t j) const noexcept { return w_.jobs.slots[j]; }

// On a pooled farm: the free units as the running jobs end, every end at a time together.
void EasyReservation::reserve_by_count(uint32_t j, Reservation& r) {
  const int64_t need = w_.jobs.slots[j];
  int64_t free = pool_->free_now(w_.used);
  for (auto it = w_.running.begin(); it != w_.running.end();) {
    const double expected_end = it->first;
    for (; it != w_.running.end() && it->first == expected_end; ++it) free += units_held(w_.res, it->second);
    if (free < need) continue;
    made(r, j, expected_end, sim_estimate(w_.jobs, j), {});  // (slots, not taskers)
    extra_ = free - need;
    return;
  }
}

// The earliest time job j fits, releasing the running jobs in order of their expected end on a copy of
// the capacity; the capacity then, with every job ending at that time released, is kept (at_shadow_) for
// leaves_alone. A full placement is tried only when a cheap
// test says it can succeed: for $pe_slots, one of the taskers the last release touched has room
// (nothing else changed); for $fill_up, the eligible taskers together take enough slot instances. Both
// tests are exact necessary conditions when the job charges no shared (host or global) pool; with
// shared pools every release is followed by a full placement.
void EasyReservation::reserve(uint32_t j, Reservation& r) {
  r.active = false;
  if (pool_) {
    reserve_by_count(j, r);
    return;
  }
  const uint32_t c = w_.cats.of_job[j];
  // the job fits once its slot instances over its taskers reach its slots ($fill_up, a slot a tasker, Grid
  // Engine's $fill_up and $round_robin host by host), or a placement must say ($pe_slots over a host's
  // taskers and N a host: tried when a release gives an eligible tasker a slot instance)
  const AllocationRule rule = w_.cats.rule[c];
  const bool fill = spreads(rule) && rule != AllocationRule::HostPeSlots && rule != AllocationRule::HostBlocks;
  const bool shared = !w_.cap_placer.queue_only(c);
  const kernels::TaskerSet& elig = w_.eligible[c].eligible;
  if (!future_) {  // (made when a reservation on taskers is first asked for: EASY's runs only)
    future_.emplace(w_);
    at_shadow_.emplace(w_);
    probe_.emplace(w_);
  }
  future_->cap = w_.cap;  // the capacity as the running jobs end (storage reused across reservations)
  // slot instances tasker t takes then, capped at the job's slots: the capped sum reaches the slots
  // exactly when the uncapped one does
  auto instances = [&](uint32_t t) { return future_->placer.instances(c, t, false, w_.jobs.slots[j]); };
  // $fill_up: instances over the eligible taskers, and per tasker (a copy of the kept totals, updated
  // as the walk releases capacity: each tasker's count is computed once per release, not twice)
  uint64_t total = 0;
  if (fill && !shared) {
    const InstanceTotal& kept = instance_total(c);
    COLMATCH_DASSERT(w_.cats.slots[c] == w_.jobs.slots[j], "a category's jobs ask for its slots");
    total = kept.total;
    future_instances_ = kept.per_tasker;
  }
  std::vector<Allocation> trial;
  w_.availability.begin_walk();
  const SimResult& res = w_.res;
  // running job rj ends on future_: its charges come back, and the kept totals follow. Returns whether
  // the job may fit now (a full placement is worth trying).
  auto release = [&](uint32_t rj) {
    bool worth = shared;
    for (uint32_t a = 0; a < res.alloc_count[rj]; ++a) {
      const uint32_t x = res.allocations[res.alloc_first[rj] + a].tasker;
      if (!shared && fill && elig.contains(x)) total -= future_instances_[x];
    }
    release_running(w_, rj, future_->cap, vacated_);
    for (uint32_t a = 0; a < res.alloc_count[rj] && !shared; ++a) {
      const uint32_t x = res.allocations[res.alloc_first[rj] + a].tasker;
      if (!elig.contains(x)) continue;
      if (fill) {
        future_instances_[x] = instances(x);
        total += future_instances_[x];
      } else {
        worth = worth || future_->cap.fits(w_.cap_placer.charges(c), x);
      }
    }
    if (fill && !shared) worth = total >= w_.jobs.slots[j];
    return worth;
  };
  // every job ending at a time released together, then one try: the capacity then (at_shadow_, the extra
  // processors of Mu'alem and Feitelson) counts every job that ends at the shadow time
  for (auto it = w_.running.begin(); it != w_.running.end();) {
    const double expected_end = it->first;
    bool worth = false;
    for (; it != w_.running.end() && it->first == expected_end; ++it) worth = release(it->second) || worth;
    if (!worth) continue;
    trial.clear();
    if (!future_->placer.plan(j, w_.policy.allocation, trial)) continue;
    made(r, j, expected_end, sim_estimate(w_.jobs, j), trial);
    at_shadow_->cap = future_->cap;
    // $fill_up on its taskers' own pools with no per-job charge: it fits while its slot instances reach
    // its slots, which the walk has counted per tasker (leaves_alone then needs no placement)
    counted_ = fill && !shared;
    counted_ = counted_ && !w_.cats.master_charge[c].any_positive();
    if (counted_) {
      at_shadow_instances_ = future_instances_;
      at_shadow_total_ = total;
    }
    return;
  }
  // does not fit even once every running job has ended: no reservation
}

const EasyReservation::InstanceTotal& EasyReservation::instance_total(uint32_t c) {
  InstanceTotal* e = nullptr;
  for (InstanceTotal& x : totals_)
    if (x.category == c) e = &x;
  if (e == nullptr) {
    e = &totals_[0];
    for (InstanceTotal& x : totals_)
      if (x.used < e->used) e = &x;
    e->category = c;
    e->total = 0;
    e->per_tasker.assign(w_.taskers.size(), 0);
    const kernels::TaskerSet& elig = w_.eligible[c].eligible;
    for (size_t t = elig.next(0); t < elig.universe(); t = elig.next(t + 1)) {
      e->per_tasker[t] = w_.cap_placer.instances(c, static_cast<uint32_t>(t), false, w_.cats.slots[c]);
      e->total += e->per_tasker[t];
    }
  }
  e->used = ++totals_clock_;
  return *e;
}

void EasyReservation::tasker_changed(uint32_t x) {
  for (InstanceTotal& e : totals_) {
    if (e.category == UINT32_MAX || !w_.eligible[e.category].eligible.contains(x)) continue;
    e.total -= e.per_tasker[x];
    e.per_tasker[x] = w_.cap_placer.instances(e.category, x, false, w_.cats.slots[e.category]);
    e.total += e.per_tasker[x];
  }
}

void EasyReservation::plan(uint32_t j, double /*t*/, Reservation& r) {
  tried_ = true;
  if (resv_job_ != j || resv_version_ != w_.state_version || w_.policy.full_cycles) {
    reserve(j, resv_);
    resv_job_ = j;
    resv_version_ = w_.state_version;
  }
  r = resv_;
}

std::optional<bool> EasyReservation::fits_by_count(uint32_t j) const {
  if (!pool_) return std::nullopt;
  return pool_->free_now(w_.used) >= static_cast<int64_t>(units_of(j));
}

bool EasyReservation::take_booked(uint32_t /*j*/, std::vector<Allocation>& /*out*/) {
  COLMATCH_DASSERT(false, "EASY's reservation is given up before its job's next turn");
  return false;
}

bool EasyReservation::leaves_alone(uint32_t j, const std::vector<Allocation>& allocs) {
  const Reservation& r = resv_;
  if (pool_) return units_of(j) <= extra_;  // j's units come out of the extra processors
  if (counted_) {  // the slot instances r's job loses on j's taskers, against what it has to spare
    const uint32_t c = w_.cats.of_job[r.job];
    const kernels::TaskerSet& elig = w_.eligible[c].eligible;
    const uint32_t slots = w_.jobs.slots[r.job];
    at_shadow_->cap.begin();
    w_.for_each_charge(w_.charged(j), allocs.data(), allocs.size(),
                       [&](size_t k, uint32_t x, double amount) { at_shadow_->cap.take(k, x, amount); });
    uint64_t lost = 0;
    if (seen_.empty()) seen_.assign(w_.taskers.size(), 0);
    ++seen_stamp_;
    for (const Allocation& a : allocs) {
      const uint32_t x = a.tasker;
      if (seen_[x] == seen_stamp_) continue;  // each tasker once
      seen_[x] = seen_stamp_;
      if (elig.contains(x)) lost += at_shadow_instances_[x] - at_shadow_->placer.instances(c, x, false, slots);
    }
    at_shadow_->cap.rollback();
    return at_shadow_total_ >= lost + slots;
  }
  probe_->cap = at_shadow_->cap;
  const uint32_t charged = w_.charged(j);  // (the plan below may record r.job's choice, never j's)
  w_.for_each_charge(charged, allocs.data(), allocs.size(),
                     [&](size_t k, uint32_t x, double amount) { probe_->cap.take(k, x, amount); });
  probe_trial_.clear();
  return probe_->placer.plan(r.job, w_.policy.allocation, probe_trial_);
}

void EasyReservation::started_beside(uint32_t j, const std::vector<Allocation>& allocs) {
  if (booked() == 0) return;
  COLMATCH_DASSERT(has(resv_.job) && resv_.active, "the booked reservation is resv_");
  if (pool_) {
    extra_ -= units_of(j);
    return;
  }
  w_.for_each_charge(w_.charged(j), allocs.data(), allocs.size(),
                     [&](size_t k, uint32_t x, double amount) { at_shadow_->cap.take(k, x, amount); });
  if (!counted_) return;
  const uint32_t c = w_.cats.of_job[resv_.job];
  for (const Allocation& a : allocs) {
    if (!w_.eligible[c].eligible.contains(a.tasker)) continue;
    at_shadow_total_ -= at_shadow_instances_[a.tasker];
    at_shadow_instances_[a.tasker] = at_shadow_->placer.instances(c, a.tasker, false, w_.jobs.slots[resv_.job]);
    at_shadow_total_ += at_shadow_instances_[a.tasker];
  }
}

// (asked only when the reservation starts before j's end: booked, and j runs past its shadow time)
bool EasyReservation::delays_booked(uint32_t j, double /*t*/, double /*end*/, const std::vector<Allocation>& allocs) {
  COLMATCH_DASSERT(has(resv_.job) && resv_.active, "the booked reservation is resv_");
  return !leaves_alone(j, allocs);
}

}  // namespace colmatch
