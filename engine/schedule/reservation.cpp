#include "engine/schedule/reservation.hpp"

#include "engine/schedule/world.hpp"
#include "kernels/dassert.hpp"

namespace colmatch {

Reservations::Reservations(SimWorld& w)
    : w_(w),
      future_(Capacity::configured(w.catalog, w.taskers)),
      future_placer_(w.taskers, w.jobs, w.cats, w.eligible, future_, nullptr),
      master_memo_(w.cats.size(), {~uint64_t{0}, 0}) {}

// The earliest time job j fits, releasing the running jobs in order of their expected end on a copy of
// the capacity; the taskers it would get then are reserved. A full placement is tried only when a cheap
// test says it can succeed: for $pe_slots, one of the taskers the last release touched has room
// (nothing else changed); for $fill_up, the eligible taskers together take enough slot instances. Both
// tests are exact necessary conditions when the job charges no shared (host or global) pool; with
// shared pools every release is followed by a full placement.
void Reservations::reserve(uint32_t j, Reservation& r) {
  r.active = false;
  const uint32_t c = w_.cats.of_job[j];
  const bool fill = w_.cats.rule[c] == AllocationRule::FillUp;
  const bool shared = !w_.cap_placer.queue_only(c);
  const kernels::TaskerSet& elig = w_.eligible[c].eligible;
  future_ = w_.cap;  // the capacity as the running jobs end (storage reused across reservations)
  // slot instances tasker t takes then, capped at the job's slots: the capped sum reaches the slots
  // exactly when the uncapped one does
  auto instances = [&](uint32_t t) { return future_placer_.instances(c, t, false, w_.jobs.slots[j]); };
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
  for (const auto& [expected_end, rj] : w_.running) {
    bool worth = shared;
    for (uint32_t a = 0; a < res.alloc_count[rj]; ++a) {
      const uint32_t x = res.allocations[res.alloc_first[rj] + a].tasker;
      if (!shared && fill && elig.contains(x)) total -= future_instances_[x];
    }
    w_.for_each_charge(rj, [&](size_t k, uint32_t x, double amount) {
      if (!w_.availability.tracked(k)) future_.release(k, x, amount);
    });
    if (w_.availability.active()) w_.availability.vacate(w_, rj, future_);
    for (uint32_t a = 0; a < res.alloc_count[rj] && !shared; ++a) {
      const uint32_t x = res.allocations[res.alloc_first[rj] + a].tasker;
      if (!elig.contains(x)) continue;
      if (fill) {
        future_instances_[x] = instances(x);
        total += future_instances_[x];
      } else {
        worth = worth || future_.fits(w_.cap_placer.charges(c), x);
      }
    }
    if (fill && !shared) worth = total >= w_.jobs.slots[j];
    if (!worth) continue;
    trial.clear();
    if (!future_placer_.plan(j, w_.policy.allocation, trial)) continue;
    r.active = true;
    r.shadow = expected_end;
    r.reserved.assign(w_.taskers.size(), 0);
    for (const Allocation& a : trial) r.reserved[a.tasker] = 1;
    return;
  }
  // does not fit even once every running job has ended: no reservation
}

const Reservations::InstanceTotal& Reservations::instance_total(uint32_t c) {
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

void Reservations::tasker_changed(uint32_t x) {
  for (InstanceTotal& e : totals_) {
    if (e.category == UINT32_MAX || !w_.eligible[e.category].eligible.contains(x)) continue;
    e.total -= e.per_tasker[x];
    e.per_tasker[x] = w_.cap_placer.instances(e.category, x, false, w_.cats.slots[e.category]);
    e.total += e.per_tasker[x];
  }
}

const Reservation& Reservations::reservation_for(uint32_t j) {
  if (resv_job_ != j || resv_version_ != w_.state_version || w_.policy.full_cycles) {
    reserve(j, resv_);
    resv_job_ = j;
    resv_version_ = w_.state_version;
  }
  return resv_;
}

bool Reservations::leaves_alone(uint32_t j, const std::vector<Allocation>& allocs, const Reservation& r) const {
  if (!w_.cap_placer.queue_only(w_.cats.of_job[j])) return false;
  for (const Allocation& a : allocs)
    if (r.reserved[a.tasker]) return false;
  return true;
}

// The master depends on the category and the capacity only: one search per category until a job starts.
bool Reservations::cannot_leave_alone(uint32_t j, const Reservation& r) {
  const uint32_t c = w_.cats.of_job[j];
  if (!w_.cap_placer.queue_only(c)) return true;
  if (w_.cats.rule[c] != AllocationRule::FillUp) return false;
  auto& [gen, master] = master_memo_[c];
  if (gen != w_.state_version) {
    gen = w_.state_version;
    master = w_.placer(c).fill_up_master(j);
  }
  return master >= w_.taskers.size() || r.reserved[master];
}

}  // namespace colmatch
