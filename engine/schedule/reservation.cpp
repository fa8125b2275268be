#include "engine/schedule/reservation.hpp"

#include <algorithm>
#include <cmath>

#include "engine/schedule/world.hpp"
#include "kernels/dassert.hpp"

namespace colmatch {

Reservations::Reservations(SimWorld& w)
    : w_(w),
      future_(Capacity::configured(w.catalog, w.taskers)),
      future_placer_(w.taskers, w.jobs, w.cats, w.eligible, future_, nullptr),
      master_memo_(w.cats.size(), {~uint64_t{0}, 0}),
      at_shadow_(Capacity::configured(w.catalog, w.taskers)),
      at_shadow_placer_(w.taskers, w.jobs, w.cats, w.eligible, at_shadow_, nullptr),
      holds_(w.taskers.size()),
      probe_(Capacity::configured(w.catalog, w.taskers)),
      probe_placer_(w.taskers, w.jobs, w.cats, w.eligible, probe_, nullptr),
      pool_(PoolProfile::of(w)) {
  if (w.policy.backfill == BackfillPolicy::Easy && w.policy.depth() == 1) easy_pool_ = PoolProfile::of_farm(w);
  future_placer_.record_choices(&w.chosen);
  at_shadow_placer_.record_choices(&w.chosen);
  probe_placer_.record_choices(&w.chosen);
  for (Placer* p : {&future_placer_, &at_shadow_placer_, &probe_placer_})
    p->fit_by(w.policy.fit_consumable, w.policy.fit_limit);
}

// Running job rj ends on future_ (a reservation's walk): its charges come back, those of consumables
// whose availability counts utilization through Availability's copy of the held charges.
void Reservations::release_running(uint32_t rj) {
  if (!w_.availability.active()) {
    w_.for_each_charge(rj, [&](size_t k, uint32_t x, double amount) { future_.release(k, x, amount); });
    return;
  }
  w_.charges_of(rj, vacated_);
  for (const HeldAmount& c : vacated_)
    if (!w_.availability.tracked(c.k)) future_.release(c.k, c.x, c.amount);
  w_.availability.vacate(rj, w_.allocations_of(rj), vacated_, future_);
}

// The earliest time job j fits, releasing the running jobs in order of their expected end on a copy of
// the capacity; the capacity then, with every job ending at that time released, is kept (at_shadow_) for
// leaves_alone. A full placement is tried only when a cheap
// test says it can succeed: for $pe_slots, one of the taskers the last release touched has room
// (nothing else changed); for $fill_up, the eligible taskers together take enough slot instances. Both
// tests are exact necessary conditions when the job charges no shared (host or global) pool; with
// shared pools every release is followed by a full placement.
void Reservations::reserve(uint32_t j, Reservation& r) {
  r.active = false;
  if (easy_pool_) {  // a pooled farm: the free units as the running jobs end, every end at a time together
    const int64_t need = w_.jobs.slots[j];
    int64_t free = easy_pool_->free_now(w_);
    for (auto it = w_.running.begin(); it != w_.running.end();) {
      const double expected_end = it->first;
      for (; it != w_.running.end() && it->first == expected_end; ++it) free += units_held(it->second);
      if (free < need) continue;
      r.active = true;
      r.job = j;
      r.shadow = expected_end;
      if (std::isnan(w_.res.reserved_at[j])) w_.res.reserved_at.set(j, r.shadow);
      r.end = expected_end + sim_estimate(w_.jobs, j);
      r.allocs.clear();  // (slots, not taskers)
      r.category = w_.charged(j);
      easy_extra_ = free - need;
      return;
    }
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
  // running job rj ends on future_: its charges come back, and the kept totals follow. Returns whether
  // the job may fit now (a full placement is worth trying).
  auto release = [&](uint32_t rj) {
    bool worth = shared;
    for (uint32_t a = 0; a < res.alloc_count[rj]; ++a) {
      const uint32_t x = res.allocations[res.alloc_first[rj] + a].tasker;
      if (!shared && fill && elig.contains(x)) total -= future_instances_[x];
    }
    release_running(rj);
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
    if (!future_placer_.plan(j, w_.policy.allocation, trial)) continue;
    r.active = true;
    r.job = j;
    r.shadow = expected_end;
    if (std::isnan(w_.res.reserved_at[j])) w_.res.reserved_at.set(j, r.shadow);
    r.end = expected_end + sim_estimate(w_.jobs, j);
    r.allocs = trial;
    r.category = w_.charged(j);
    at_shadow_ = future_;
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

bool Reservations::leaves_alone(uint32_t j, const std::vector<Allocation>& allocs, const Reservation& r) {
  COLMATCH_DASSERT(&r == &resv_ && r.active, "leaves_alone asks of the EASY reservation");
  if (easy_pool_) return units_of(j) <= easy_extra_;  // j's units come out of the extra processors
  if (counted_) {  // the slot instances r's job loses on j's taskers, against what it has to spare
    const uint32_t c = w_.cats.of_job[r.job];
    const kernels::TaskerSet& elig = w_.eligible[c].eligible;
    const uint32_t slots = w_.jobs.slots[r.job];
    at_shadow_.begin();
    w_.for_each_charge(w_.charged(j), allocs.data(), allocs.size(),
                       [&](size_t k, uint32_t x, double amount) { at_shadow_.take(k, x, amount); });
    uint64_t lost = 0;
    if (seen_.empty()) seen_.assign(w_.taskers.size(), 0);
    ++seen_stamp_;
    for (const Allocation& a : allocs) {
      const uint32_t x = a.tasker;
      if (seen_[x] == seen_stamp_) continue;  // each tasker once
      seen_[x] = seen_stamp_;
      if (elig.contains(x)) lost += at_shadow_instances_[x] - at_shadow_placer_.instances(c, x, false, slots);
    }
    at_shadow_.rollback();
    return at_shadow_total_ >= lost + slots;
  }
  probe_ = at_shadow_;
  const uint32_t charged = w_.charged(j);  // (the plan below may record r.job's choice, never j's)
  w_.for_each_charge(charged, allocs.data(), allocs.size(),
                     [&](size_t k, uint32_t x, double amount) { probe_.take(k, x, amount); });
  probe_trial_.clear();
  return probe_placer_.plan(r.job, w_.policy.allocation, probe_trial_);
}

void Reservations::started_under(uint32_t j, const std::vector<Allocation>& allocs,
                                 [[maybe_unused]] const Reservation& r) {
  COLMATCH_DASSERT(&r == &resv_ && r.active, "started_under the EASY reservation");
  if (easy_pool_) {
    easy_extra_ -= units_of(j);
    return;
  }
  w_.for_each_charge(w_.charged(j), allocs.data(), allocs.size(),
                     [&](size_t k, uint32_t x, double amount) { at_shadow_.take(k, x, amount); });
  if (!counted_) return;
  const uint32_t c = w_.cats.of_job[r.job];
  for (const Allocation& a : allocs) {
    if (!w_.eligible[c].eligible.contains(a.tasker)) continue;
    at_shadow_total_ -= at_shadow_instances_[a.tasker];
    at_shadow_instances_[a.tasker] = at_shadow_placer_.instances(c, a.tasker, false, w_.jobs.slots[r.job]);
    at_shadow_total_ += at_shadow_instances_[a.tasker];
  }
}

// ---- The book ----

void Reservations::early_starts(double t, std::vector<uint32_t>& jobs) const {
  jobs.clear();
  const double latest = pool_->dip(t, 1);  // (more slots: an earlier dip)
  for (auto it = shadows_.upper_bound({t, UINT32_MAX}); it != shadows_.end() && !(latest < it->first); ++it)
    if (!(pool_->dip(t, w_.jobs.slots[it->second]) < it->first)) jobs.push_back(it->second);
}

// A pooled job's units: one a slot (PoolProfile::of_farm), wherever it is placed.
uint32_t Reservations::units_of(uint32_t j) const noexcept { return w_.jobs.slots[j]; }

// The units job j holds on a pooled farm: its slots where it was placed (none for a job removed).
int64_t Reservations::units_held(uint32_t j) const {
  int64_t units = 0;
  for (uint32_t a = 0; a < w_.res.alloc_count[j]; ++a) units += w_.res.allocations[w_.res.alloc_first[j] + a].slots;
  return units;
}

void Reservations::started(uint32_t j, double t) {
  if (pool_) pool_->started(t, t + sim_estimate(w_.jobs, j), units_held(j));
}

void Reservations::ended(uint32_t j, double t) {
  if (pool_) pool_->release(t, w_.res.start[j] + sim_estimate(w_.jobs, j), units_held(j));
}

void Reservations::drop(uint32_t j) {
  if (!has(j)) return;
  const uint32_t slot = slot_of_[j];
  Reservation& r = book_[slot];
  shadows_.erase({r.shadow, j});
  ends_.erase({r.end, j});
  if (pool_) pool_->release(r.shadow, r.end, w_.jobs.slots[j]);
  for (const Allocation& a : r.allocs) std::erase(holds_[a.tasker], std::make_pair(r.shadow, j));
  r.job = kNoSlot;
  r.allocs.clear();
  free_slots_.push_back(slot);
  slot_of_[j] = kNoSlot;
}

const Reservation& Reservations::book(uint32_t j, double t, double latest) {
  plan_booking(j, t);
  if (trial_resv_.active && trial_resv_.shadow > latest) trial_resv_.active = false;  // past the window
  if (!trial_resv_.active) return trial_resv_;
  const bool slurm_map = w_.policy.slurm_backfill();
  if (const double resolution = slurm_map ? w_.policy.backfill_resolution : 0; resolution > 0) {
    // Slurm's bf_resolution: [start, end) rounded down, at least one step long
    const double s = std::floor(trial_resv_.shadow / resolution) * resolution;
    trial_resv_.end = std::max(std::floor(trial_resv_.end / resolution) * resolution, s + resolution);
    trial_resv_.shadow = s;
  }
  return insert(trial_resv_, !slurm_map);  // (Slurm's backfill plans again in its next cycle)
}

// The reservation book() would make for job j at t, in trial_resv_ (inactive if none), booking nothing.
void Reservations::plan_booking(uint32_t j, double t) {
  if (pool_) {  // its slots, wherever they are free
    trial_resv_.active = false;
    const double est = sim_estimate(w_.jobs, j);
    const double at = pool_->earliest(t, w_.jobs.slots[j], est);
    if (at < std::numeric_limits<double>::infinity()) made(trial_resv_, j, at, est, {});
  } else {
    reserve_after_book(j, trial_resv_);
  }
}

// Books reservation r (active, of a job holding none); `wake`: asks for a cycle at its start.
const Reservation& Reservations::insert(const Reservation& r, bool wake) {
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
  if (pool_) pool_->hold(r.shadow, r.end, w_.jobs.slots[j]);
  if (wake) w_.wakes.emplace(r.shadow, j);  // a cycle then, though no job may end then (they end by walltimes)
  for (const Allocation& a : r.allocs) {
    auto& h = holds_[a.tasker];
    h.insert(std::upper_bound(h.begin(), h.end(), std::make_pair(r.shadow, j)), {r.shadow, j});
  }
  return book_[slot];
}

bool Reservations::compress(uint32_t j, double t) {
  if (!has(j)) return false;
  // Pooled: whether it moves is asked of the count as it stands, its own units given back (exact,
  // without giving them back and planning it again: most reservations stay where they are)
  if (pool_ && !pool_->fits_before(t, w_.jobs.slots[j], sim_estimate(w_.jobs, j), of(j).shadow, of(j).end))
    return false;
  const Reservation old = of(j);
  drop(j);
  plan_booking(j, t);
  if (trial_resv_.active && trial_resv_.shadow < old.shadow) {
    insert(trial_resv_, trial_resv_.shadow > t);  // (one due now is this cycle's: MoabScheduler::compress)
    return true;
  }
  insert(old, false);  // as it was (its cycle was asked for when it was made)
  return false;
}

bool Reservations::take_booked(uint32_t j, std::vector<Allocation>& out) {
  if (pool_) {
    const uint32_t c = w_.cats.of_job[j];
    return !w_.settled(c) && w_.placer(c).try_place(j, w_.policy.allocation, out);
  }
  const Reservation& r = of(j);
  Capacity& cap = w_.cap;
  cap.begin();
  bool ok = true;
  w_.for_each_charge(r.category, r.allocs.data(), r.allocs.size(), [&](size_t k, uint32_t x, double amount) {
    if (!ok) return;
    ok = !cap.down(x) && cap.available(k, x) >= amount;
    if (ok) cap.take(k, x, amount);
  });
  for (const Allocation& a : r.allocs) ok = ok && !cap.down(a.tasker);  // (one that charges nothing)
  if (!ok) {
    cap.rollback();
    return false;
  }
  out = r.allocs;
  if (!w_.chosen.empty()) w_.chosen[j] = r.category;  // the solution it reserved, should it choose
  return true;
}

double Reservations::first_shadow_except(uint32_t j) const noexcept {
  for (const auto& [shadow, job] : shadows_)
    if (job != j) return shadow;
  return std::numeric_limits<double>::infinity();
}

// Tasker x is held by a reservation of a job other than j starting before `end`.
bool Reservations::held_by_other(uint32_t x, uint32_t j, double end) const noexcept {
  for (const auto& [shadow, job] : holds_[x]) {
    if (!(shadow < end)) return false;
    if (job != j) return true;
  }
  return false;
}

// Category c's eligible taskers that have nothing free now of some consumable its jobs charge (or are
// down), with its soft tiers cut alike: a booked reservation placed there keeps its hands off what is free
// now, which later jobs may backfill (issue 24: "choose the reserved taskers so that they leave the most
// of what is free now"). nullptr for a category that chooses among solutions (each has its own taskers),
// when every eligible tasker has something free now, or when none has.
const CategoryEligibility* Reservations::busy_now(uint32_t c) {
  if (w_.cats.chooses(c)) return nullptr;
  const CategoryEligibility& e = w_.eligible[c];
  const std::vector<Charge>& ch = w_.cap_placer.charges(c);
  busy_.eligible = e.eligible.clone();
  busy_.tiers.clear();
  for (const kernels::TaskerSet& tier : e.tiers) busy_.tiers.push_back(tier.clone());
  bool any_free = false;
  for (size_t t = e.eligible.next(0); t < e.eligible.universe(); t = e.eligible.next(t + 1)) {
    const auto x = static_cast<uint32_t>(t);
    bool free_now = !w_.cap.down(x);
    for (const Charge& k : ch) free_now = free_now && (!(k.amount > 0) || w_.cap.available(k.k, x) > 0);
    if (!free_now) continue;
    any_free = true;
    busy_.eligible.remove(x);
    for (kernels::TaskerSet& tier : busy_.tiers) tier.remove(x);
  }
  return any_free && busy_.eligible.count() > 0 ? &busy_ : nullptr;
}

// Plans job j with `placer`, first on the `busy` taskers only (when not nullptr), then on all of its
// eligible ones; a plan counts when `ok` (it leaves the pending reservations alone) holds of it.
template <class Ok>
bool Reservations::plan_leaving_free(Placer& placer, uint32_t j, const CategoryEligibility* busy,
                                     std::vector<Allocation>& trial, Ok&& ok) {
  if (busy != nullptr) {
    trial.clear();
    placer.restrict_to(busy);
    const bool placed = placer.plan(j, w_.policy.allocation, trial);
    placer.restrict_to(nullptr);
    if (placed && ok()) return true;
  }
  trial.clear();
  return placer.plan(j, w_.policy.allocation, trial) && ok();
}

// Reservation r is job j's at time T, for its walltime estimate `est`, on `allocs`.
void Reservations::made(Reservation& r, uint32_t j, double T, double est, const std::vector<Allocation>& allocs) {
  r.active = true;
  r.job = j;
  r.shadow = T;
  r.end = T + est;
  r.allocs = allocs;
  r.category = w_.charged(j);  // (the plan that found `allocs` recorded a choosing job's solution)
  if (std::isnan(w_.res.reserved_at[j])) w_.res.reserved_at.set(j, T);
}

// The walk of reserve(), with the booked reservations' ends among its steps: the running jobs end one at
// a time in order of their expected end, and the booked reservations' ends pass, all in time order (at
// one time, the running jobs' ends first); capacity comes back only at these steps. At each step T the
// job is tried as a start at T would be, with the farm as the book predicts it then: a booked
// reservation that has started by T (shadow <= T < end) is a running job, its charges taken; one that
// starts within the job's run (T < shadow < T + estimate) is still pending, and the job's placement must
// leave it alone (its taskers untouched, no shared pool charged), as book_allows asks of a start now.
// The book at a step is kept up to date step by step on the walk's capacity; under utilized or combined
// availability, where a release sets a tasker's free amount anew from the charges held there (which
// would drop the booked ones taken), each step's capacity is made again from the walk's (O(booked) a step).
// Long (about 140 lines): one walk over merged steps (running jobs' ends, booked reservations' ends) whose
// book state (the pending holds per tasker, the probe capacity) each step updates for the next; split, the
// pieces would pass that state around step by step.
void Reservations::reserve_after_book(uint32_t j, Reservation& r) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  r.active = false;
  const bool rebuilt = w_.availability.active();
  const CategoryEligibility* busy = busy_now(w_.cats.of_job[j]);
  const double est = sim_estimate(w_.jobs, j);
  const bool shared = !w_.cap_placer.queue_only(w_.cats.of_job[j]);
  std::vector<Allocation> trial;
  // Slurm's backfill (a category of its own taskers, charging no shared pool): the nodes of every
  // reservation overlapping the job's run are off limits whether it has started or not
  const bool slurm_nodes = w_.policy.slurm_backfill() && !shared && !w_.cats.chooses(w_.cats.of_job[j]);
  auto plan_off_holds = [&](Placer& placer, double T) {
    const CategoryEligibility* free = unheld_between(w_.cats.of_job[j], T, T + est);
    trial.clear();
    if (free != nullptr) placer.restrict_to(free);
    const bool placed = placer.plan(j, w_.policy.allocation, trial);
    placer.restrict_to(nullptr);
    return placed;
  };
  future_ = w_.cap;
  if (rebuilt) {
    w_.availability.begin_walk();
    pending_.resize(w_.taskers.size(), 0);
  } else {
    pending_count_.resize(w_.taskers.size(), 0);
  }
  auto running = w_.running.begin();
  auto next_end = ends_.begin();              // the steps the booked reservations' ends make
  auto started = shadows_.begin();            // the first booked reservation not started by the step's time
  auto window = shadows_.begin();             // the first not starting within the job's run from it
  size_t pending = 0;                         // booked reservations starting within the job's run (window - started)
  using Taken = std::pair<double, uint32_t>;  // (end, job): booked reservations running at the step
  std::priority_queue<Taken, std::vector<Taken>, std::greater<>> taken;
  // A step that changes nothing on the job's eligible taskers (capacity, or a pending reservation's
  // hold) cannot turn a failed placement into one that fits: only the first step after a change
  // places it (a category charging a shared pool, or a capacity made again: every step).
  const kernels::TaskerSet& elig = w_.eligible[w_.cats.of_job[j]].eligible;
  bool changed = true;
  auto touches = [&](const Allocation* allocs, uint32_t n) {
    for (uint32_t i = 0; i < n && !changed; ++i) changed = elig.contains(allocs[i].tasker);
  };
  auto charges_of = [&](uint32_t b, double sign) {
    const Reservation& x = of(b);
    touches(x.allocs.data(), static_cast<uint32_t>(x.allocs.size()));
    w_.for_each_charge(x.category, x.allocs.data(), x.allocs.size(),
                       [&](size_t k, uint32_t t, double amount) { future_.take(k, t, sign * amount); });
  };  // (take with -amount gives a take back exactly; release would pay a tasker's debt first)
  auto mark = [&](uint32_t b, int d) {
    touches(of(b).allocs.data(), static_cast<uint32_t>(of(b).allocs.size()));
    for (const Allocation& a : of(b).allocs) pending_count_[a.tasker] += d;
  };
  // The book at step T on a copy of the walk's capacity (probe_): the reservations running then take
  // their charges, those starting within the job's run hold their taskers (pending_). Returns whether any does.
  auto book_on_copy = [&](double T) {
    probe_ = future_;
    bool any = false;
    for (const Reservation& b : book_) {
      if (b.job == kNoSlot || !(b.end > T)) continue;  // a free slot; ended by then
      if (b.shadow <= T) {                             // running then
        w_.for_each_charge(b.category, b.allocs.data(), b.allocs.size(),
                           [&](size_t k, uint32_t x, double amount) { probe_.take(k, x, amount); });
      } else if (b.shadow < T + est) {  // starts while the job would run: left alone
        any = true;
        for (const Allocation& a : b.allocs) pending_[a.tasker] = 1;
      }
    }
    return any;
  };
  while (true) {
    const double at_running = running != w_.running.end() ? running->first : kInf;
    const double at_book = next_end != ends_.end() ? next_end->first : kInf;
    double T = 0;
    if (running != w_.running.end() && at_running <= at_book) {
      T = at_running;
      for (; running != w_.running.end() && running->first == T; ++running) {  // every end at T, then a try
        const uint32_t rj = running->second;
        release_running(rj);
        touches(w_.res.allocations.data() + w_.res.alloc_first[rj], w_.res.alloc_count[rj]);
      }
    } else if (next_end != ends_.end()) {
      T = at_book;
      while (next_end != ends_.end() && next_end->first == T) ++next_end;  // one try per time
    } else {
      break;  // fits at none of them
    }
    bool fits = false;
    if (rebuilt) {
      const bool any_pending = book_on_copy(T);
      auto leaves_pending = [&] {
        for (const Allocation& a : trial)
          if (pending_[a.tasker]) return false;
        return true;
      };
      fits = slurm_nodes ? plan_off_holds(probe_placer_, T)
                         : !(any_pending && shared) && plan_leaving_free(probe_placer_, j, busy, trial, leaves_pending);
      if (any_pending)
        for (const Reservation& b : book_)
          for (const Allocation& a : b.allocs) pending_[a.tasker] = 0;  // (a free slot has none)
    } else {
      // the book as it stands at T: reservations starting within [T, T + est) are pending (left alone),
      // those started by T and not ended run (their charges taken), those ended are gone
      for (; window != shadows_.end() && window->first < T + est; ++window) {
        mark(window->second, +1);
        ++pending;
      }
      for (; started != shadows_.end() && started->first <= T; ++started) {
        if (started == window) {  // (an estimate of 0: it never was within the run)
          ++window;
        } else {
          mark(started->second, -1);
          --pending;
        }
        if (of(started->second).end > T) {
          charges_of(started->second, +1);
          taken.push({of(started->second).end, started->second});
        }
      }
      while (!taken.empty() && taken.top().first <= T) {
        charges_of(taken.top().second, -1);
        taken.pop();
      }
      if (!changed && !shared) continue;
      changed = false;
      auto leaves_pending = [&] {
        for (const Allocation& a : trial)
          if (pending_count_[a.tasker] != 0) return false;
        return true;
      };
      fits = slurm_nodes
                 ? plan_off_holds(future_placer_, T)
                 : !(pending > 0 && shared) && plan_leaving_free(future_placer_, j, busy, trial, leaves_pending);
    }
    if (fits) {
      made(r, j, T, est, trial);
      break;
    }
  }
  for (; started != window; ++started) mark(started->second, -1);  // pending_count_ back to 0
}

// Pooled: job j's slots are free from t until `end`, its own reservation given back.
bool Reservations::pool_allows(uint32_t j, double t, double end) const {
  if (!has(j)) return pool_->free_throughout(t, end, w_.jobs.slots[j]);
  const Reservation& own = of(j);
  return pool_->free_throughout(t, end, w_.jobs.slots[j], own.shadow, own.end, w_.jobs.slots[j]);
}

bool Reservations::book_allows(uint32_t j, double t, double end, const std::vector<Allocation>& allocs) const {
  if (!(first_shadow_except(j) < end)) return true;
  if (pool_) return pool_allows(j, t, end);
  if (!w_.cap_placer.queue_only(w_.cats.of_job[j])) return false;
  for (const Allocation& a : allocs)
    if (held_by_other(a.tasker, j, end)) return false;
  return true;
}

bool Reservations::book_forbids(uint32_t j, double t, double end) {
  if (!(first_shadow_except(j) < end)) return false;
  if (pool_)  // (no room now: the placement fails and says so)
    return pool_->free_now(w_) >= w_.jobs.slots[j] && !pool_allows(j, t, end);
  const uint32_t c = w_.cats.of_job[j];
  if (!w_.cap_placer.queue_only(c)) return true;
  // (a Grid Engine host rule's master is where its first host's slots end: its placement says)
  if (!spreads(w_.cats.rule[c]) || by_host(w_.cats.rule[c])) return false;
  auto& [gen, master] = master_memo_[c];
  if (gen != w_.state_version) {
    gen = w_.state_version;
    master = w_.placer(c).fill_up_master(j);
  }
  return master >= w_.taskers.size() || held_by_other(static_cast<uint32_t>(master), j, end);
}

const CategoryEligibility* Reservations::unheld(uint32_t c, uint32_t j, double end) {
  if (pool_ || w_.cats.chooses(c) || !w_.cap_placer.queue_only(c)) return nullptr;
  return without_holds(c, -std::numeric_limits<double>::infinity(), end, j);
}

const CategoryEligibility* Reservations::unheld_between(uint32_t c, double from, double to) {
  return without_holds(c, from, to, UINT32_MAX);
}

// Category c's eligibility less the taskers of the booked reservations (other than job `except`'s) that
// start before `to` and end after `from`, or nullptr when none of its eligible taskers is among them.
const CategoryEligibility* Reservations::without_holds(uint32_t c, double from, double to, uint32_t except) {
  const CategoryEligibility& e = w_.eligible[c];
  bool any = false;
  for (const auto& [shadow, job] : shadows_) {
    if (!(shadow < to)) break;
    if (job == except || !(of(job).end > from)) continue;
    for (const Allocation& a : of(job).allocs) {
      if (!e.eligible.contains(a.tasker)) continue;
      if (!any) {
        any = true;
        unheld_.eligible = e.eligible.clone();
        unheld_.tiers.clear();
        for (const kernels::TaskerSet& tier : e.tiers) unheld_.tiers.push_back(tier.clone());
      }
      unheld_.eligible.remove(a.tasker);
      for (kernels::TaskerSet& tier : unheld_.tiers) tier.remove(a.tasker);
    }
  }
  return any ? &unheld_ : nullptr;
}

}  // namespace colmatch
