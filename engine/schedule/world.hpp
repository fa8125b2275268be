// What every scheduler of `colmatch simulate` shares (internal to engine/schedule/): the farm's capacity
// and its changes over time, the running jobs with their ends, the wake-ups of held jobs, the job
// categories with their eligibility (computed on a category's first submit), the placement state that
// says which categories cannot place until capacity grows, the credentials' running counts, and the
// result being built. A scheduling policy (Scheduler, below) decides which waiting job
// starts where; it starts jobs through start(), and the event loop (simulation.cpp) ends them through
// finish() and tells the policy.
//
// Seed 001 (Moab) step 1, "refresh resources", is here: R.Available = R.Configured - R.Dedicated (or
// MAX(R.Dedicated, R.Utilized), engine/schedule/availability.hpp) as jobs start and end and the farm
// changes (engine/schedule/events.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <queue>
#include <set>
#include <utility>
#include <vector>

#include "engine/placement/placer.hpp"
#include "engine/schedule/availability.hpp"
#include "engine/schedule/events.hpp"
#include "engine/schedule/policy.hpp"
#include "engine/schedule/result.hpp"
#include "engine/schedule/throttles.hpp"

namespace colmatch {

class Scheduler;

/// The shared state of one simulation run. Fields are public: the world is the policies' workspace;
/// its invariants are kept by the methods that change capacity (start, finish, apply_farm_events).
/// Memory O(jobs + taskers + categories). Not thread-safe.
class SimWorld {
 public:
  /// Checks the farm's events and the policy's interval (throws std::invalid_argument for an event
  /// naming a tasker or consumable that does not exist, out of time order, or a Configure on a
  /// consumable with a host or global pool; PolicyError for an interval the clock cannot step by), then
  /// applies the taskers down at the start and the farm's load. Keeps references to every argument.
  SimWorld(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs, const SimConfig& policy,
           const kernels::KernelTable& k, const FarmEvents& farm);

  /// The policy told of capacity changes (Scheduler::tasker_changed); set once, before the run.
  void set_policy(Scheduler* p) noexcept { policy_hooks = p; }

  /// The earliest time something happens: an arrival from `next`, an end, a wake-up, a farm event
  /// (+inf: nothing more).
  double next_event(size_t next) const;
  /// No event known now would bring another cycle by `until` (the jobs this cycle starts may still).
  bool might_be_last(size_t next, double t) const;
  /// The farm changes due by time t (taskers down, up, configured amounts).
  void apply_farm_events(double t);

  /// Job j is submitted at t: its category's eligibility is computed if this is its first job (and
  /// whether it fits the idle farm at all); its reason becomes "no free capacity" until a policy says more.
  void submit(uint32_t j);
  /// Job j starts at t on `allocs` (their charges already committed on cap): the result, the running
  /// set, its end, the credentials' counts and the availability follow; the policy hears of every
  /// tasker it touches.
  void start(uint32_t j, double t, const std::vector<Allocation>& allocs, bool backfilled);
  /// Job j ends at t: its charges come back (logged as growth for the placement state).
  void finish(uint32_t j, double t);

  /// Calls f(consumable, tasker, amount) for every charge job j holds (the amounts Placer took).
  template <class F>
  void for_each_charge(uint32_t j, F&& f) const {
    for_each_charge(charged(j), res.allocations.data() + res.alloc_first[j], res.alloc_count[j], f);
  }
  /// The category whose charges job j's last placement took: its own, or for a job that chooses among
  /// solutions (Categories::solutions) the solution its last successful placement (by any placer of
  /// this world) or its reservation used.
  uint32_t charged(uint32_t j) const noexcept {
    const uint32_t c = cats.of_job[j];
    return !cats.chooses(c) || chosen[j] == kNone ? c : chosen[j];
  }
  /// The same for a job of category c placed on allocs[0..n) (allocs[0] the master).
  template <class F>
  void for_each_charge(uint32_t c, const Allocation* allocs, size_t n, F&& f) const;
  /// Job j's charges on its allocations (for_each_charge), replacing `out`'s contents.
  void charges_of(uint32_t j, std::vector<HeldAmount>& out) const {
    out.clear();
    for_each_charge(j, [&](size_t kk, uint32_t x, double amount) {
      out.push_back({static_cast<uint32_t>(kk), x, amount});
    });
  }
  /// Job j's allocations (it has started).
  std::span<const Allocation> allocations_of(uint32_t j) const noexcept {
    return {res.allocations.data() + res.alloc_first[j], res.alloc_count[j]};
  }

  /// The placer, with category c's dispatch cursors made valid for the capacity as it is now.
  Placer& placer(uint32_t c);
  /// Category c settles: its placement failed, and so will every job of c until capacity grows where it
  /// could help (the name the batch dispatch and the placer's cursors use too).
  void settle(uint32_t c);
  /// Category c's placement still fails (world.cpp: the growth log grown_).
  bool settled(uint32_t c);
  /// Capacity grew on tasker x (kept for settled() and placer()).
  void grew(uint32_t x);
  /// Job j of category c fits now (its placement is tried and undone, `trial` keeps it); marks c failed
  /// if not.
  bool fits_now(uint32_t j, uint32_t c);

  /// At the end of the run: each job still waiting for capacity whose charge a farm-wide pool cannot
  /// take now says which (SimResult::detail: "waiting for License:spice: 0 of 4 free", Altair
  /// Accelerator's counted maps; global_pool_wait_text), one text per category.
  void name_pool_waits();
  /// At the end of the run: the jobs removed when a cycle considered them (start() with no allocation)
  /// are reported so (SimReason::Removed, when and why), not as started.
  void finish_removals();
  /// Category c's jobs do what a gate says (JobTable::Choice::gate).
  bool gated(uint32_t c) const noexcept { return gate_of(cats, jobs, c) != nullptr; }
  /// Every dependency of job j has ended.
  bool dependencies_ended(uint32_t j) const;
  /// A cycle at t that started at t0 wall-clock ends: its timeline row and its cost.
  void end_cycle(double t, std::chrono::steady_clock::time_point t0, uint64_t queued);

  const Catalog& catalog;
  const TaskerTable& taskers;
  const JobTable& jobs;
  const SimConfig& policy;
  const kernels::KernelTable& k;
  const FarmEvents& farm;
  Scheduler* policy_hooks = nullptr;

  Categories cats;
  /// Per job that chooses among solutions (else unused; empty when no job does): the solution its last
  /// successful placement took (Placer::record_choices; every placer of the world writes here).
  std::vector<uint32_t> chosen;
  std::vector<CategoryEligibility> eligible;
  std::vector<uint8_t> evaluated;   ///< per category: eligibility computed
  std::vector<uint8_t> idle_tried;  ///< per category: fits_idle known (its first job submitted)
  std::vector<uint8_t> fits_idle;   ///< per category: one of its jobs fits the idle farm
  DispatchCursors cursors;
  Capacity cap;       ///< the capacity now
  Placer cap_placer;  ///< places on cap (placer(c) validates the cursors first)
  Capacity idle;      ///< configured capacity, never charged: can a category run at all?
  Placer idle_placer;
  Availability availability;   ///< Moab's R.Utilized (resource_availability utilized, combined)
  Credentials creds;           ///< running jobs and slots per credential, with their limits
  std::vector<uint8_t> ended;  ///< per job
  uint64_t ended_count = 0;
  std::vector<double> used;        ///< per consumable: what the running jobs hold
  std::vector<uint32_t> arrivals;  ///< the jobs to schedule (not rejected), by submit time
  uint64_t state_version = 0;      ///< advances whenever a job starts or ends or the farm changes
  std::vector<Allocation> trial;   ///< a placement being tried
  TimedJobs ends, wakes;
  std::set<std::pair<double, uint32_t>> running;  ///< (expected end, job)
  SimResult res;

 private:
  void check_interval() const;
  void evaluate(uint32_t c);
  void validate_cursors(uint32_t c);
  void check_farm_events() const;
  bool could_take(uint32_t c, uint32_t x) const;
  void occupy(uint32_t j, bool on);

  size_t next_farm_ = 0;                // the next farm event to apply
  std::vector<uint64_t> settled_at_;    // per category: the Capacity epoch in which its placement failed
  std::vector<size_t> settled_since_;   // per category, once failed: grown_ entries looked at since
  std::vector<uint32_t> revived_by_;    // per category, once failed: a grown tasker that could take a job
  std::vector<size_t> cursor_seen_;     // per category: grown_ entries its cursors account for
  std::vector<uint64_t> cursor_epoch_;  // per category charging a shared pool: its cursors' epoch
  std::vector<uint32_t> grown_;         // taskers whose capacity grew (ends, taskers up, pools enlarged)
  // grown_'s suffix minima: (index, tasker) with both increasing, each tasker below every one logged after
  // it; the least tasker logged from index i on is the first entry at or after i (validate_cursors)
  std::vector<std::pair<size_t, uint32_t>> grown_min_;
  std::vector<std::pair<uint32_t, std::string>> removed_;  // jobs removed (start() with no allocation)
  std::vector<HeldAmount> held_scratch_;                   // occupy(): a job's charges
  std::vector<uint32_t> grown_scratch_;                    // occupy(): the taskers where capacity grew
};

/// A scheduling policy as the event loop sees it (Flux's queue-policy interface, Slurm's scheduler
/// plugin): told of each event once, never once per tasker, and asked to run a cycle.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  /// Job j was submitted at t (SimWorld::submit has run).
  virtual void submitted(uint32_t j, double t) = 0;
  /// Job j's hold may have ended at t (a wake-up it asked for through SimWorld::wakes).
  virtual void woke(uint32_t j, double t) = 0;
  /// Job j ended at t (SimWorld::finish has run).
  virtual void ended(uint32_t j, double t) = 0;
  /// Capacity on tasker x changed (a start, an end, a farm event).
  virtual void tasker_changed(uint32_t x) = 0;
  /// One scheduling cycle at t; `last`: no known event brings another by `until`, or every cycle must
  /// give every waiting job its reason (SimConfig::full_cycles).
  virtual void cycle(double t, bool last) = 0;
  /// The jobs waiting now (submitted, not started), for the timeline.
  virtual uint64_t queued() const = 0;
  /// A time the policy wants a cycle at though nothing happens then (+inf: none): the event loop takes
  /// the earlier of it and the next event.
  virtual double next_wake() const { return std::numeric_limits<double>::infinity(); }
};

template <class F>
void SimWorld::for_each_charge(uint32_t c, const Allocation* allocs, size_t n, F&& f) const {
  const JobTable::FitUnit unit = cats.fit_unit_of(c);
  for (size_t a = 0; a < n; ++a) {
    const Allocation& x = allocs[a];
    // (Slurm's -n N -N K: an allocation's slots are its tasks there, its charges one unit and the extra tasks')
    const uint32_t units = unit.total > 0 ? 1 : x.slots;
    cats.each_allocation_charge(c, units, a == 0, [&](uint32_t kk, double amount) {
      if (!(amount > 0)) return true;
      const auto& kinds = cats.charge_kind[c];  // a default charge holds nothing where no pool exists
      if (!kinds.empty() && kinds[kk] == ChargeKind::WhereDefined &&
          !taskers.columns[catalog.consumables()[kk]].is_defined(x.tasker))
        return true;
      f(kk, x.tasker, amount);
      return true;
    });
    // (Slurm's -n N -N K: the tasks beyond the first on this tasker)
    unit.each_extra_task_charge(x.slots, policy.fit_consumable, policy.fit_limit,
                                [&](size_t kk, double amount) { f(kk, x.tasker, amount); });
  }
}

}  // namespace colmatch
