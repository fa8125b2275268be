#include "engine/schedule/simulation.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <optional>
#include <queue>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "engine/matcher.hpp"
#include "engine/schedule/fbsng.hpp"
#include "engine/schedule/throttles.hpp"
#include "engine/schedule/wait_queue.hpp"
#include "kernels/dassert.hpp"

namespace colmatch {

const char* sim_reason_text(SimReason r) noexcept {
  switch (r) {
    case SimReason::None: return "";
    case SimReason::NotSubmitted: return "not submitted before the end of the run";
    case SimReason::Held: return "held";
    case SimReason::Dependency: return "waiting for a dependency";
    case SimReason::NoEligibleTasker: return "no eligible tasker";
    case SimReason::TooLarge: return "larger than its eligible taskers together";
    case SimReason::Throttled: return "throttled";
    case SimReason::Blocked: return "waiting behind a higher-priority job";
    case SimReason::Reservation: return "would delay a reservation";
    case SimReason::NoFreeCapacity: return "eligible but no free capacity";
    case SimReason::PriorityGap: return "held by a priority gap";
    case SimReason::Rejected: return "rejected";
  }
  return "";
}

double sim_duration(const JobTable& jobs, uint32_t j) noexcept {
  double d = jobs.runtime[j];
  if (!(d > 0)) d = 0;
  const double w = jobs.walltime[j];
  if (w >= 0 && w < d) d = w;  // ended at its walltime
  return d;
}

double sim_estimate(const JobTable& jobs, uint32_t j) noexcept {
  const double w = jobs.walltime[j];
  return w >= 0 ? w : sim_duration(jobs, j);
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr size_t kKinds = kCredentialKinds;

// Why a waiting job is out of the ready queue (static priority order; see WaitQueue) until the event
// that can change it: its hold's end, its dependency's end, the end of a job of the credential it was
// throttled on. No: ready, started, or never able to run.
enum class Parked : uint8_t { No, Held, Dependency, Throttled };

class Simulator {
 public:
  Simulator(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs, const SimPolicy& policy,
            const kernels::KernelTable& k, const FarmEvents& farm, const SimProgress& progress)
      : catalog_(catalog),
        taskers_(taskers),
        jobs_(jobs),
        policy_(policy),
        k_(k),
        farm_(farm),
        progress_(progress),
        cats_(categorize(catalog, jobs)),
        eligible_(cats_.size()),
        evaluated_(cats_.size(), 0),
        cursors_(cats_.size()),
        cap_(Capacity::configured(catalog, taskers)),
        placer_(taskers, jobs, cats_, eligible_, cap_, &cursors_),
        idle_(Capacity::configured(catalog, taskers)),
        idle_placer_(taskers, jobs, cats_, eligible_, idle_, nullptr),
        future_(Capacity::configured(catalog, taskers)),
        future_placer_(taskers, jobs, cats_, eligible_, future_, nullptr),
        fits_idle_(cats_.size(), 0),
        master_memo_(cats_.size(), {~uint64_t{0}, 0}),
        dead_(cats_.size(), ~uint64_t{0}),
        dead_since_(cats_.size(), 0),
        revived_by_(cats_.size(), kNone),
        cursor_seen_(cats_.size(), 0),
        cursor_epoch_(cats_.size(), 0),
        memo_(cats_.size()),
        creds_(jobs, policy.throttles),
        cred_priority_(creds_.priorities(policy.credential_priorities)),
        static_order_(policy.scheduler == Scheduler::Moab && policy.weights.queue_time == 0 &&
                      policy.weights.expansion == 0),
        ended_(jobs.size(), 0),
        used_(catalog.consumables().size(), 0.0),
        parked_(jobs.size(), Parked::No),
        dependents_(jobs.size()) {
    check_farm_events();
    check_interval();
    if (policy.scheduler == Scheduler::Fbsng) init_fbsng();
    for (uint32_t t = 0; t < farm.down_at_start.size(); ++t)
      if (farm.down_at_start[t]) cap_.set_down(t, true);
    init_availability();
    const size_t n = jobs.size();
    res_.start.assign(n, kNaN);
    res_.end.assign(n, kNaN);
    res_.alloc_first.assign(n, 0);
    res_.alloc_count.assign(n, 0);
    res_.reason.assign(n, SimReason::NotSubmitted);
    res_.detail.assign(n, {});
    res_.backfilled.assign(n, 0);
    res_.was_held.assign(n, 0);
    res_.was_throttled.assign(n, 0);
    res_.held_seconds.assign(catalog.consumables().size(), 0.0);
    for (uint32_t j = 0; j < n; ++j) {
      if (jobs.rejected(j)) {
        res_.reason[j] = SimReason::Rejected;
        continue;
      }
      arrivals_.push_back(j);
    }
    std::stable_sort(arrivals_.begin(), arrivals_.end(),
                     [&](uint32_t a, uint32_t b) { return jobs.submit[a] < jobs.submit[b]; });
    if (static_order_) {
      // priorities do not depend on time: one rank per job, in the order every cycle considers them
      std::vector<uint32_t> order = arrivals_;
      std::vector<double> prio(n, 0.0), est(n, 0.0);
      for (uint32_t j : order) {
        prio[j] = priority(j, 0);
        est[j] = sim_estimate(jobs, j);
      }
      std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        if (prio[a] != prio[b]) return prio[a] > prio[b];
        if (jobs.submit[a] != jobs.submit[b]) return jobs.submit[a] < jobs.submit[b];
        return a < b;
      });
      wq_.emplace(order, cats_.of_job, cats_.size(), est);
      queued_set_ = RankSet(order.size());
      visible_set_ = RankSet(order.size());
      for (size_t kind = 0; kind < kKinds; ++kind) streams_[kind].resize(creds_.count(kind));
    }
  }

  SimResult run() {
    size_t next = 0;  // next arrival
    double last_cycle = -std::numeric_limits<double>::infinity();
    while (true) {
      const double event = next_event(next);
      if (!std::isfinite(event)) break;
      double t = event;
      if (policy_.interval > 0) {  // the first multiple of the interval at or after the event
        const double n = std::ceil(event / policy_.interval);
        t = n * policy_.interval;
        if (t < event) t = (n + 1) * policy_.interval;  // event / interval rounded down to a whole number
        // never before the event, so that every cycle takes at least one and the loop advances whatever the
        // rounding (check_interval refuses the intervals that would lean on this, as far as it can foresee)
        t = std::max({t, event, last_cycle + policy_.interval});
      }
      if (policy_.min_interval > 0) t = std::max(t, last_cycle + policy_.min_interval);
      if (t > policy_.until) break;
      while (!ends_.empty() && ends_.top().first <= t) {  // 1. capacity comes back
        const uint32_t j = ends_.top().second;
        ends_.pop();
        finish(j, t);
      }
      apply_farm_events(t);
      while (next < arrivals_.size() && jobs_.submit[arrivals_[next]] <= t) submit(arrivals_[next++], t);
      while (!wakes_.empty() && wakes_.top().first <= t) {
        const uint32_t j = wakes_.top().second;
        wakes_.pop();
        if (static_order_ && parked_[j] == Parked::Held) classify(j, t);
        if (fbsng_ && parked_[j] == Parked::Held) fbsng_classify(j, t);
      }
      // The fast cycle decides the same starts as the full one but not every waiting job's reason; the
      // last cycle of the run, whose reasons are reported, is always a full one.
      if (fbsng_) cycle_fbsng(t, policy_.full_cycles || might_be_last(next, t));
      else if (static_order_ && !policy_.full_cycles && !might_be_last(next, t)) cycle_fast(t);
      else cycle_full(t);
      last_cycle = t;
      if (progress_ && (res_.cycles & 1023) == 0) progress_(t, ended_count_, arrivals_.size());
    }
    if (progress_) progress_(last_cycle, ended_count_, arrivals_.size());
    return std::move(res_);
  }

 private:
  struct Reservation {
    bool active = false;
    double shadow = 0;
    std::vector<uint8_t> reserved;  // per tasker
  };

  double next_event(size_t next) const {
    double t = std::numeric_limits<double>::infinity();
    if (next < arrivals_.size()) t = std::min(t, jobs_.submit[arrivals_[next]]);
    if (!ends_.empty()) t = std::min(t, ends_.top().first);
    if (!wakes_.empty()) t = std::min(t, wakes_.top().first);
    if (next_farm_ < farm_.events.size()) t = std::min(t, farm_.events[next_farm_].time);
    return t;
  }

  // An interval the clock cannot step by is refused before the run: one below the spacing of doubles at
  // the latest time the run can reach (1e-12 s at 1.7e9 s: the next cycle would round back to this one),
  // or one that takes the clock past the largest double. PolicyError, so the policy's file is named.
  void check_interval() const {
    const double i = policy_.interval;
    if (!(i > 0)) return;
    double horizon = 0;  // the latest submit, end, hold or farm event
    for (uint32_t j = 0; j < jobs_.size(); ++j) {
      for (const double x : {jobs_.submit[j], jobs_.submit[j] + sim_estimate(jobs_, j), jobs_.hold_until[j]})
        if (std::isfinite(x)) horizon = std::max(horizon, std::abs(x));
    }
    for (const TaskerEvent& e : farm_.events)
      if (std::isfinite(e.time)) horizon = std::max(horizon, std::abs(e.time));
    if (!std::isfinite(horizon + 2 * i))
      throw PolicyError(
          fmt::format("interval {} s takes the clock past the largest time (times reach {} s)", i, horizon));
    const double spacing = std::nextafter(horizon, std::numeric_limits<double>::infinity()) - horizon;
    if (!(i >= spacing))
      throw PolicyError(fmt::format(
          "interval {} s cannot advance the clock: times reach {} s, where they are {} s apart (interval = 0 runs a "
          "cycle at every event)",
          i, horizon, spacing));
  }

  void check_farm_events() const {
    const auto& cons = catalog_.consumables();
    if (!farm_.down_at_start.empty() && farm_.down_at_start.size() != taskers_.size())
      throw std::invalid_argument("FarmEvents: down_at_start must have one entry per tasker");
    double last = -std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < farm_.events.size(); ++i) {
      const TaskerEvent& e = farm_.events[i];
      const std::string at = fmt::format("FarmEvents: event {}: ", i);
      if (!(e.time >= last)) throw std::invalid_argument(at + "out of time order");
      last = e.time;
      if (e.tasker >= taskers_.size()) throw std::invalid_argument(at + "no such tasker");
      if (e.kind != TaskerEvent::Kind::Configure) continue;
      if (e.consumable >= cons.size()) throw std::invalid_argument(at + "no such consumable");
      const Column& col = taskers_.columns[cons[e.consumable]];
      if (col.multi_level()) throw std::invalid_argument(at + "the consumable has a host or global pool");
      if (!col.has(e.tasker)) throw std::invalid_argument(at + "the tasker has no value for the consumable");
      if (!(e.amount >= 0) || !std::isfinite(e.amount)) throw std::invalid_argument(at + "amount must be >= 0");
    }
  }

  // The farm changes due by time t: taskers go down or come up, configured amounts change.
  void apply_farm_events(double t) {
    while (next_farm_ < farm_.events.size() && farm_.events[next_farm_].time <= t) {
      const TaskerEvent& e = farm_.events[next_farm_++];
      switch (e.kind) {
        case TaskerEvent::Kind::Up:
          cap_.set_down(e.tasker, false);
          grew(e.tasker);
          break;
        case TaskerEvent::Kind::Down: cap_.set_down(e.tasker, true); break;
        case TaskerEvent::Kind::Configure:
          if (cap_.set_configured(e.consumable, e.tasker, e.amount)) grew(e.tasker);
          if (tracked(e.consumable) &&
              cap_.set_queue_free(e.consumable, e.tasker, free_with(held_[e.tasker], e.consumable, e.tasker, cap_)))
            grew(e.tasker);
          break;
      }
      ++state_version_;
      refresh_totals(e.tasker);
    }
  }

  // No event known now would bring another cycle by `until` (the jobs this cycle starts may still).
  bool might_be_last(size_t next, double t) const {
    double n = next_event(next);
    if (!std::isfinite(n)) return true;
    if (policy_.interval > 0) n = std::max(std::ceil(n / policy_.interval) * policy_.interval, t + policy_.interval);
    return n > policy_.until;
  }

  size_t queued_count() const {
    return fbsng_ ? fb_waiting_ : static_order_ ? queued_set_.size() : queued_.size() + dependency_parked_;
  }

  void submit(uint32_t j, double t) {
    const uint32_t c = cats_.of_job[j];
    if (!evaluated_[c]) {
      const Request* soft = cats_.soft[c] != 0 ? &jobs_.requests[cats_.soft[c]] : nullptr;
      eligible_[c] = evaluate_category(catalog_, taskers_, jobs_.requests[cats_.request[c]], soft, cats_.unit_charge[c],
                                       k_, &cats_.charge_kind[c]);
      require_master_fit(catalog_, taskers_, jobs_.requests[cats_.request[c]], cats_, c, eligible_[c]);
      cursors_.init(c, eligible_[c]);
      cursor_seen_[c] = grown_.size();
      cursor_epoch_[c] = cap_.epoch();
      evaluated_[c] = 1;
      std::vector<Allocation> trial;  // can it run at all, on the idle farm?
      if (eligible_[c].eligible.count() > 0 && idle_placer_.try_place(j, policy_.allocation, trial)) {
        idle_.rollback();
        fits_idle_[c] = 1;
      }
      ++res_.categories_evaluated;
    }
    res_.reason[j] = SimReason::NoFreeCapacity;
    if (fbsng_) {
      ++fb_waiting_;
      fbsng_classify(j, t);
      return;
    }
    if (static_order_) {
      queued_set_.insert(wq_->rank(j));
      visible_set_.insert(wq_->rank(j));
      classify(j, t);
      return;
    }
    const double hold = jobs_.hold_until[j];
    if (hold > t && std::isfinite(hold)) wakes_.emplace(hold, j);
    if (hold > t) queued_.push_back(j);  // held: each cycle says so (and marks it held)
    else queue_or_park(j);
  }

  // Time-dependent order: a job waiting for a dependency, and not held, is parked (reason Dependency,
  // which a full cycle would give it each time) until that job ends, instead of being visited by every
  // cycle.
  void queue_or_park(uint32_t j) {
    for (uint32_t d : jobs_.depends[j])
      if (!ended_[d]) {
        res_.reason[j] = SimReason::Dependency;
        dependents_[d].push_back(j);
        ++dependency_parked_;
        return;
      }
    queued_.push_back(j);
  }

  // Static order: puts a queued job where its state says (held, waiting for a dependency, ready).
  // A hold's end is an event (a cycle runs then) whatever the job's state after it.
  void classify(uint32_t j, double t) {
    const double hold = jobs_.hold_until[j];
    if (hold > t) {
      parked_[j] = Parked::Held;
      res_.was_held[j] = 1;
      if (std::isfinite(hold)) wakes_.emplace(hold, j);
      return;
    }
    parked_[j] = Parked::No;
    if (!fits_idle_[cats_.of_job[j]]) return;  // never ready: its reason comes from the full cycle
    for (uint32_t d : jobs_.depends[j])
      if (!ended_[d]) {
        parked_[j] = Parked::Dependency;
        dependents_[d].push_back(j);
        // its reason until that job ends, which a full cycle would give it each time: full cycles skip it
        res_.reason[j] = SimReason::Dependency;
        visible_set_.erase(wq_->rank(j));
        return;
      }
    visible_set_.insert(wq_->rank(j));
    wq_->add(j);
  }

  // Static order: parks job j if a credential limit keeps it from starting now. Until a job of that
  // credential ends the limit can only get tighter, so j stays parked until then.
  bool throttle(uint32_t j) {
    const auto v = creds_.violation(j);
    if (!v) return false;
    res_.was_throttled[j] = 1;
    wq_->remove(j);
    parked_[j] = Parked::Throttled;
    ThrottleStream& s = streams_[v.kind][v.id];
    const uint32_t r = wq_->rank(j);
    if (!s.active) {
      s.parked.push(r);
    } else if (creds_.full(v.kind, v.id)) {  // nothing more of it starts until one of its jobs ends
      s.active = false;
      s.parked.push(r);
    } else {
      s.deferred.push_back(r);  // too large for the room left; smaller jobs of it may still start
    }
    return true;
  }

  // Lazy unparking (static order). When a job of a credential ends, its parked jobs are logically
  // ready again, but most would only be parked again once one of them starts: a user with 10,000
  // waiting jobs and max_jobs 2 would have all of them moved back and forth at every end of one of its
  // jobs. Instead the credential's stream is made active and its parked jobs are taken back (surfaced)
  // one at a time, in rank order, just before the cycle's scan in rank order would pass them (the
  // scan and the backfill pass merge ready jobs with the active streams' heads), until the credential
  // is full again. A cycle thus makes the same starts as if every parked job had been unparked.

  // The credential's parked jobs may start again (one of its jobs ended): its stream becomes active.
  void activate(size_t kind, uint32_t id) {
    ThrottleStream& s = streams_[kind][id];
    for (uint32_t r : s.deferred) s.parked.push(r);
    s.deferred.clear();
    if (creds_.full(kind, id)) return;
    s.active = true;
    schedule_head(kind, id);
  }

  // Drops the stale tops of a stream (jobs started by a full cycle while parked) and enters its head in
  // heads_ if it has one ranked before its entry there.
  void schedule_head(size_t kind, uint32_t id) {
    ThrottleStream& s = streams_[kind][id];
    while (!s.parked.empty() && parked_[wq_->job(s.parked.top())] != Parked::Throttled) s.parked.pop();
    if (!s.active || s.parked.empty() || s.parked.top() >= s.entry) return;
    s.entry = s.parked.top();
    heads_.push({s.entry, static_cast<uint32_t>(kind), id});
  }

  // The smallest rank of a parked job of an active stream, or kNoHead; stale entries are dropped.
  uint32_t next_head() {
    while (!heads_.empty()) {
      const auto [r, kind, id] = heads_.top();
      ThrottleStream& s = streams_[kind][id];
      if (s.active && s.entry == r && !s.parked.empty() && s.parked.top() == r &&
          parked_[wq_->job(r)] == Parked::Throttled)
        return r;
      heads_.pop();
      if (s.entry == r) {
        s.entry = kNoHead;
        schedule_head(kind, id);
      }
    }
    return kNoHead;
  }

  // Takes back the job next_head() named: it is ready again. Returns it.
  uint32_t surface_head() {
    const auto [r, kind, id] = heads_.top();
    heads_.pop();
    ThrottleStream& s = streams_[kind][id];
    s.parked.pop();
    s.entry = kNoHead;
    const uint32_t j = wq_->job(r);
    parked_[j] = Parked::No;
    wq_->add(j);
    ++res_.unparked;
    schedule_head(kind, id);
    return j;
  }

  // The ready job with the smallest rank >= r, the active streams' parked jobs counted as ready.
  uint32_t next_ready(size_t r) {
    while (true) {
      const uint32_t j = wq_->first(r);
      const uint32_t h = next_head();
      if (h == kNoHead || (j != WaitQueue::kNoJob && wq_->rank(j) < h)) return j;
      surface_head();
    }
  }

  // Calls f(consumable, tasker, amount) for every charge job j holds (the amounts Placer took).
  template <class F>
  void for_each_charge(uint32_t j, F&& f) const {
    const uint32_t c = cats_.of_job[j];
    for (uint32_t a = 0; a < res_.alloc_count[j]; ++a) {
      const Allocation& x = res_.allocations[res_.alloc_first[j] + a];
      for (size_t k = 0; k < cats_.unit_charge[c].size(); ++k) {
        const double amount = cats_.allocation_charge(c, k, x.slots, a == 0);
        if (!(amount > 0)) continue;
        const auto& kinds = cats_.charge_kind[c];  // a default charge holds nothing where no pool exists
        if (!kinds.empty() && kinds[k] == ChargeKind::WhereDefined &&
            !taskers_.columns[catalog_.consumables()[k]].is_defined(x.tasker))
          continue;
        f(k, x.tasker, amount);
      }
    }
  }

  // ---- Moab's resource availability (ResourceAvailability, engine/schedule/simulation.hpp) ----
  // Under "utilized" or "combined", each queue-only consumable's free amount on a tasker is set from
  // an occupancy computed again from the charges held there whenever they change: D = the charges,
  // U = the tasker's load + each charge times its job's utilization, occupancy U or MAX(D, U), free =
  // MAX(0, configured - occupancy). Summed in job order, so the result does not depend on the order the
  // jobs started in. While a job is placed, its charges are taken in full (Placer); start() then sets
  // the free amounts its load leaves.

  struct HeldCharge {  // a charge held on a tasker, ordered by (job, consumable)
    uint32_t job, k;
    double amount, used;  // used: amount times the job's utilization of k
    bool operator<(const HeldCharge& o) const noexcept { return job != o.job ? job < o.job : k < o.k; }
  };

  bool tracked(size_t k) const noexcept { return !tracked_.empty() && tracked_[k]; }

  void init_availability() {
    if (policy_.availability == ResourceAvailability::Dedicated) return;
    const auto& cons = catalog_.consumables();
    tracked_.assign(cons.size(), 0);
    bool any = false;
    for (size_t k = 0; k < cons.size(); ++k) any |= (tracked_[k] = !taskers_.columns[cons[k]].multi_level()) != 0;
    if (!any) {
      tracked_.clear();
      return;
    }
    held_.assign(taskers_.size(), {});
    future_held_.assign(taskers_.size(), {});
    walk_of_.assign(taskers_.size(), 0);
    for (size_t k = 0; k < cons.size() && k < farm_.load.size(); ++k) {
      if (!tracked_[k] || farm_.load[k].empty()) continue;
      for (uint32_t x = 0; x < taskers_.size(); ++x) {
        if (!taskers_.columns[cons[k]].has(x)) continue;
        cap_.set_queue_free(k, x, free_with(held_[x], k, x, cap_));
        idle_.set_queue_free(k, x, free_with(held_[x], k, x, idle_));  // the idle farm carries the load too
      }
    }
  }

  double load_of(size_t k, uint32_t x) const noexcept {
    return k < farm_.load.size() && !farm_.load[k].empty() ? farm_.load[k][x] : 0.0;
  }

  // What tracked consumable k has free on tasker x with the charges `held` there, on `cap`'s configured
  // amounts: MAX(0, configured - occupancy).
  double free_with(const std::vector<HeldCharge>& held, size_t k, uint32_t x, const Capacity& cap) const {
    double d = 0, u = load_of(k, x);
    for (const HeldCharge& h : held) {
      if (h.k != k) continue;
      d += h.amount;
      u += h.used;
    }
    const double occupied = policy_.availability == ResourceAvailability::Utilized ? u : std::max(d, u);
    return std::max(0.0, cap.configured_amount(k, x) - occupied);
  }

  // Job j's charges on tracked consumables are added to (`on`) or dropped from the per-tasker lists
  // `held`; touched_ gets the (consumable, tasker) pairs whose free amount must be set again.
  void hold(std::vector<std::vector<HeldCharge>>& held, uint32_t j, bool on) {
    touched_.clear();
    for_each_charge(j, [&](size_t k, uint32_t x, double amount) {
      if (!tracked(k)) return;
      std::vector<HeldCharge>& list = held[x];
      const double f = jobs_.utilization.at(k, j);
      const HeldCharge h{j, static_cast<uint32_t>(k), amount, (std::isnan(f) ? 1.0 : f) * amount};
      auto at = std::lower_bound(list.begin(), list.end(), h);
      if (on) list.insert(at, h);
      else if (at != list.end() && at->job == j && at->k == k) list.erase(at);
      touched_.emplace_back(k, x);
    });
  }

  // Job j starts (`on`) or ends: the free amounts its charges touch are set again (a tasker whose
  // amount grew is logged for the cursors).
  void occupy(uint32_t j, bool on) {
    hold(held_, j, on);
    for (const auto& [k, x] : touched_)
      if (cap_.set_queue_free(k, x, free_with(held_[x], k, x, cap_))) grew(x);
  }

  // EASY's walk (reserve() starts one: ++walk_): running job rj ends on future_. A walk copies a
  // tasker's held charges when it first touches the tasker (copy on write: a walk touches the taskers
  // of the jobs it releases, not all).
  void future_vacate(uint32_t rj) {
    for (uint32_t a = 0; a < res_.alloc_count[rj]; ++a) {
      const uint32_t x = res_.allocations[res_.alloc_first[rj] + a].tasker;
      if (walk_of_[x] == walk_) continue;
      walk_of_[x] = walk_;
      future_held_[x] = held_[x];
    }
    hold(future_held_, rj, false);
    for (const auto& [k, x] : touched_) future_.set_queue_free(k, x, free_with(future_held_[x], k, x, future_));
  }

  void start(uint32_t j, double t, const std::vector<Allocation>& allocs, bool backfilled) {
    res_.start[j] = t;
    res_.end[j] = t + sim_duration(jobs_, j);
    res_.alloc_first[j] = static_cast<uint32_t>(res_.allocations.size());
    res_.alloc_count[j] = static_cast<uint32_t>(allocs.size());
    res_.allocations.insert(res_.allocations.end(), allocs.begin(), allocs.end());
    res_.reason[j] = SimReason::None;
    res_.detail[j].clear();
    res_.backfilled[j] = backfilled ? 1 : 0;
    const double held = res_.end[j] - t;
    for_each_charge(j, [&](size_t k, uint32_t, double amount) {
      used_[k] += amount;
      res_.held_seconds[k] += amount * held;
    });
    if (!tracked_.empty()) occupy(j, true);
    creds_.add(j, +1);
    if (fbsng_) {
      fbsng_use(j, +1);
      --fb_waiting_;
    }
    ends_.emplace(res_.end[j], j);
    running_.insert({t + sim_estimate(jobs_, j), j});
    ++state_version_;
    for (const Allocation& a : allocs) refresh_totals(a.tasker);
    if (static_order_) {
      queued_set_.erase(wq_->rank(j));
      visible_set_.erase(wq_->rank(j));
      wq_->remove(j);
      parked_[j] = Parked::No;  // a full cycle may start a parked job of an active stream
    }
  }

  void finish(uint32_t j, double t) {
    for_each_charge(j, [&](size_t k, uint32_t x, double amount) {
      if (!tracked(k)) cap_.release(k, x, amount);
      used_[k] -= amount;
    });
    if (!tracked_.empty()) occupy(j, false);
    creds_.add(j, -1);
    if (fbsng_) fbsng_use(j, -1);
    ended_[j] = 1;
    if (fbsng_) {
      for (uint32_t x : dependents_[j])
        if (parked_[x] == Parked::Dependency) fbsng_classify(x, t);
      std::vector<uint32_t>().swap(dependents_[j]);
    }
    ++ended_count_;
    running_.erase({res_.start[j] + sim_estimate(jobs_, j), j});
    ++state_version_;
    for (uint32_t a = 0; a < res_.alloc_count[j]; ++a) {
      refresh_totals(res_.allocations[res_.alloc_first[j] + a].tasker);
      grew(res_.allocations[res_.alloc_first[j] + a].tasker);
    }
    if (!static_order_) {
      for (uint32_t x : dependents_[j]) {
        --dependency_parked_;
        queue_or_park(x);  // waits again if another of its dependencies has not ended
      }
      std::vector<uint32_t>().swap(dependents_[j]);
      return;
    }
    for (size_t kind = 0; kind < kKinds; ++kind) activate(kind, creds_.cred(kind, j));  // room again
    for (uint32_t x : dependents_[j])
      if (parked_[x] == Parked::Dependency) classify(x, t);
    std::vector<uint32_t>().swap(dependents_[j]);
  }

  // EASY: the earliest time job j fits, releasing the running jobs in order of their expected end on a
  // copy of the capacity; the taskers it would get then are reserved. A full placement is tried only
  // when a cheap test says it can succeed: for $pe_slots, one of the taskers the last release touched
  // has room (nothing else changed); for $fill_up, the eligible taskers together take enough slot
  // instances. Both tests are exact necessary conditions when the job charges no shared (host or
  // global) pool; with shared pools every release is followed by a full placement.
  void reserve(uint32_t j, Reservation& r) {
    r.active = false;
    const uint32_t c = cats_.of_job[j];
    const bool fill = cats_.rule[c] == AllocationRule::FillUp;
    const bool shared = !placer_.queue_only(c);
    const kernels::TaskerSet& elig = eligible_[c].eligible;
    future_ = cap_;  // the capacity as the running jobs end (storage reused across reservations)
    // slot instances tasker t takes then, capped at the job's slots: the capped sum reaches the slots
    // exactly when the uncapped one does
    auto instances = [&](uint32_t t) { return future_placer_.instances(c, t, false, jobs_.slots[j]); };
    // $fill_up: instances over the eligible taskers, and per tasker (a copy of the kept totals, updated
    // as the walk releases capacity: each tasker's count is computed once per release, not twice)
    uint64_t total = 0;
    if (fill && !shared) {
      const InstanceTotal& kept = instance_total(c);
      COLMATCH_DASSERT(cats_.slots[c] == jobs_.slots[j], "a category's jobs ask for its slots");
      total = kept.total;
      future_instances_ = kept.per_tasker;
    }
    std::vector<Allocation> trial;
    ++walk_;
    for (const auto& [expected_end, rj] : running_) {
      bool worth = shared;
      for (uint32_t a = 0; a < res_.alloc_count[rj]; ++a) {
        const uint32_t x = res_.allocations[res_.alloc_first[rj] + a].tasker;
        if (!shared && fill && elig.contains(x)) total -= future_instances_[x];
      }
      for_each_charge(rj, [&](size_t k, uint32_t x, double amount) {
        if (!tracked(k)) future_.release(k, x, amount);
      });
      if (!tracked_.empty()) future_vacate(rj);
      for (uint32_t a = 0; a < res_.alloc_count[rj] && !shared; ++a) {
        const uint32_t x = res_.allocations[res_.alloc_first[rj] + a].tasker;
        if (!elig.contains(x)) continue;
        if (fill) {
          future_instances_[x] = instances(x);
          total += future_instances_[x];
        } else {
          worth = worth || future_.fits(placer_.charges(c), x);
        }
      }
      if (fill && !shared) worth = total >= jobs_.slots[j];
      if (!worth) continue;
      trial.clear();
      if (!future_placer_.plan(j, policy_.allocation, trial)) continue;
      r.active = true;
      r.shadow = expected_end;
      r.reserved.assign(taskers_.size(), 0);
      for (const Allocation& a : trial) r.reserved[a.tasker] = 1;
      return;
    }
    // does not fit even once every running job has ended: no reservation
  }

  // $fill_up categories charging no shared pool: how many slot instances (capped at the job's slots)
  // each eligible tasker takes now, and their sum; kept for the last few categories reserve() needed,
  // and updated on the taskers a start or an end touches instead of summed over the farm again.
  struct InstanceTotal {
    uint32_t category = UINT32_MAX;
    uint64_t total = 0, used = 0;  // used: when it was last needed (LRU)
    std::vector<uint32_t> per_tasker;
  };
  static constexpr size_t kInstanceTotals = 4;

  const InstanceTotal& instance_total(uint32_t c) {
    InstanceTotal* e = nullptr;
    for (InstanceTotal& x : totals_)
      if (x.category == c) e = &x;
    if (e == nullptr) {
      e = &totals_[0];
      for (InstanceTotal& x : totals_)
        if (x.used < e->used) e = &x;
      e->category = c;
      e->total = 0;
      e->per_tasker.assign(taskers_.size(), 0);
      const kernels::TaskerSet& elig = eligible_[c].eligible;
      for (size_t t = elig.next(0); t < elig.universe(); t = elig.next(t + 1)) {
        e->per_tasker[t] = placer_.instances(c, static_cast<uint32_t>(t), false, cats_.slots[c]);
        e->total += e->per_tasker[t];
      }
    }
    e->used = ++totals_clock_;
    return *e;
  }

  // Capacity on tasker x changed: the kept instance totals follow.
  void refresh_totals(uint32_t x) {
    for (InstanceTotal& e : totals_) {
      if (e.category == UINT32_MAX || !eligible_[e.category].eligible.contains(x)) continue;
      e.total -= e.per_tasker[x];
      e.per_tasker[x] = placer_.instances(e.category, x, false, cats_.slots[e.category]);
      e.total += e.per_tasker[x];
    }
  }

  // The reservation of job j on the farm as it is: kept while no job starts or ends. (Keeping it across
  // the starts it allows is not exact: a job ending at the same expected time as the one the
  // reservation waits for, or a best_fit placement, can move it.)
  const Reservation& reservation_for(uint32_t j) {
    if (resv_job_ != j || resv_version_ != state_version_ || policy_.full_cycles) {
      reserve(j, resv_);
      resv_job_ = j;
      resv_version_ = state_version_;
    }
    return resv_;
  }

  // A job placed on `allocs` leaves reservation r alone: none of its taskers is reserved and it
  // charges no pool shared between taskers (host or global).
  bool leaves_alone(uint32_t j, const std::vector<Allocation>& allocs, const Reservation& r) const {
    if (!placer_.queue_only(cats_.of_job[j])) return false;
    for (const Allocation& a : allocs)
      if (r.reserved[a.tasker]) return false;
    return true;
  }

  // Job j, which would not end before reservation r, cannot leave it alone, decided without a
  // placement: it charges a shared pool, or it is a $fill_up job whose master would be reserved (the
  // master depends on the category and the capacity only: one search per category until a job starts).
  bool cannot_leave_alone(uint32_t j, const Reservation& r) {
    const uint32_t c = cats_.of_job[j];
    if (!placer_.queue_only(c)) return true;
    if (cats_.rule[c] != AllocationRule::FillUp) return false;
    auto& [gen, master] = master_memo_[c];
    if (gen != state_version_) {
      gen = state_version_;
      master = placer(c).fill_up_master(j);
    }
    return master >= taskers_.size() || r.reserved[master];
  }

  double priority(uint32_t j, double t) const {
    const PriorityWeights& w = policy_.weights;
    const double wait = t - jobs_.submit[j], est = std::max(sim_estimate(jobs_, j), 1.0);
    return w.credential * (jobs_.priority[j] + cred_priority_[j]) + w.queue_time * wait / 60.0 +
           w.expansion * (wait + est) / est + w.size * jobs_.slots[j];
  }

  bool dependencies_ended(uint32_t j) const {
    for (uint32_t d : jobs_.depends[j])
      if (!ended_[d]) return false;
    return true;
  }

  void end_cycle(double t, std::chrono::steady_clock::time_point t0) {
    SimResult::Row row{t, running_.size(), queued_count(), used_};
    if (!res_.timeline.empty() && std::floor(res_.timeline.back().time / 60) == std::floor(t / 60))
      res_.timeline.back() = std::move(row);
    else res_.timeline.push_back(std::move(row));
    res_.cycle_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    res_.cycle_time.push_back(t);
  }

  // The cycle as the seed describes it: every waiting job in priority order, each given its reason.
  // O(waiting jobs) plus the placements; the reference the fast cycle is equal to.
  void cycle_full(double t) {
    const auto t0 = std::chrono::steady_clock::now();
    ++res_.cycles;
    ++res_.full_cycles;
    cursors_.sync(cap_);
    ready_.clear();
    auto consider = [&](uint32_t j) {
      if (jobs_.hold_until[j] > t) {
        res_.reason[j] = SimReason::Held;
        res_.was_held[j] = 1;
        return;
      }
      if (!dependencies_ended(j)) {
        res_.reason[j] = SimReason::Dependency;
        return;
      }
      if (!fits_idle_[cats_.of_job[j]]) {
        res_.reason[j] =
            eligible_[cats_.of_job[j]].eligible.count() == 0 ? SimReason::NoEligibleTasker : SimReason::TooLarge;
        return;
      }
      ready_.push_back({priority(j, t), j});
    };
    if (static_order_) {  // ranks are the priority order
      for (size_t r = visible_set_.next(0); r != RankSet::npos; r = visible_set_.next(r + 1)) consider(wq_->job(r));
    } else {
      for (uint32_t j : queued_) consider(j);
      std::sort(ready_.begin(), ready_.end(), [&](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first > b.first;
        if (jobs_.submit[a.second] != jobs_.submit[b.second]) return jobs_.submit[a.second] < jobs_.submit[b.second];
        return a.second < b.second;
      });
    }
    bool blocked = false, started = false;
    const Reservation* r = &no_reservation_;
    std::vector<Allocation>& trial = trial_;
    for (const auto& [prio, j] : ready_) {
      if (const auto v = creds_.violation(j)) {
        res_.reason[j] = SimReason::Throttled;
        res_.detail[j] = creds_.describe(v);
        res_.was_throttled[j] = 1;
        continue;
      }
      if (blocked && policy_.backfill == BackfillPolicy::None) {
        res_.reason[j] = SimReason::Blocked;
        continue;
      }
      // Under a reservation, a job that would not end by its time starts only if it has a placement that
      // leaves the reservation alone; else it waits for the reservation.
      const bool must_avoid = r->active && !(t + sim_estimate(jobs_, j) <= r->shadow);
      if (must_avoid && cannot_leave_alone(j, *r)) {
        res_.reason[j] = SimReason::Reservation;
        continue;
      }
      trial.clear();
      if (!placer(cats_.of_job[j]).try_place(j, policy_.allocation, trial)) {
        res_.reason[j] = must_avoid ? SimReason::Reservation : SimReason::NoFreeCapacity;
        if (!blocked) {
          blocked = true;
          if (policy_.backfill == BackfillPolicy::Easy) r = &reservation_for(j);
        }
        continue;
      }
      if (must_avoid && !leaves_alone(j, trial, *r)) {
        cap_.rollback();
        res_.reason[j] = SimReason::Reservation;
        continue;
      }
      cap_.commit();
      start(j, t, trial, r->active);
      started = true;
    }
    if (started && !static_order_)
      std::erase_if(queued_, [&](uint32_t j) { return res_.reason[j] == SimReason::None; });
    end_cycle(t, t0);
  }

  // The same starts as cycle_full, visiting what can change them (static order only). Ready jobs are
  // taken in rank order until the first that does not fit (the blocker); with EASY, each later start is
  // the lowest-ranked ready job that would start, found per category: a category whose placement
  // failed stays failed until a tasker that grew could take one of its jobs (dead()), categories are
  // tried in the order of a rank bound, and within a category the first
  // candidate is its first ready job or, when that one would have to avoid the reservation and cannot,
  // its first ready job that ends before the reservation (WaitQueue's min-tree over estimates).
  // Throttled jobs are parked on the way. Reasons are left to the last, full, cycle.
  void cycle_fast(double t) {
    const auto t0 = std::chrono::steady_clock::now();
    ++res_.cycles;
    wq_->compact();
    std::vector<Allocation>& trial = trial_;
    uint32_t blocker = WaitQueue::kNoJob;
    for (uint32_t j = next_ready(0); j != WaitQueue::kNoJob; j = next_ready(wq_->rank(j) + 1)) {
      if (throttle(j)) continue;
      const uint32_t c = cats_.of_job[j];
      trial.clear();
      if (dead(c) || !placer(c).try_place(j, policy_.allocation, trial)) {
        mark_dead(c);
        blocker = j;
        break;
      }
      cap_.commit();
      start(j, t, trial, false);
    }
    if (blocker != WaitQueue::kNoJob && policy_.backfill == BackfillPolicy::Easy) backfill(blocker, t);
    end_cycle(t, t0);
  }

  // The reservation of the blocker, made when a backfill candidate first needs it (when some job of a
  // category can be placed): a cycle where no category can place a job needs none.
  struct LazyReservation {
    Simulator& sim;
    uint32_t blocker;
    const Reservation* r = nullptr;
    double shadow = 0;
    const Reservation& get() {
      if (r == nullptr) {
        r = &sim.reservation_for(blocker);
        shadow = r->active ? r->shadow : std::numeric_limits<double>::infinity();
      }
      return *r;
    }
  };

  // A category's candidate, kept within one backfill pass while a start leaves what it saw alone: the
  // jobs it looked at (a: its first ready job from `from`; b: the first that ends before the
  // reservation) are still where they were and unthrottled, no shared pool is involved, and the start
  // took capacity from none of the taskers that could change its placement: its eligible taskers, or,
  // where placements take taskers in a fixed order (greatest_power, first_available, $fill_up), only
  // the taskers of the placement it found (a tasker skipped before had no room and has less now).
  // candidate() would then see the same jobs and the same placement and give the same answer.
  struct CandidateMemo {
    uint64_t pass = 0;
    uint32_t job = WaitQueue::kNoJob, a = WaitQueue::kNoJob, b = WaitQueue::kNoJob;
    std::vector<uint32_t> placed;  // the taskers of the placement it found (empty: it placed nothing)
  };

  // Placements of category c take taskers in a fixed order, whatever the capacity elsewhere.
  bool in_order(uint32_t c) const {
    return cats_.rule[c] == AllocationRule::FillUp || policy_.allocation == AllocationPolicy::GreatestPower ||
           policy_.allocation == AllocationPolicy::FirstAvailable;
  }

  // The start of a job on `allocs` may change what candidate() says for the memo of category c.
  bool start_touches(const CandidateMemo& m, uint32_t c, const std::vector<Allocation>& allocs) const {
    if (!m.placed.empty() && in_order(c)) {
      for (const Allocation& a : allocs)
        if (std::find(m.placed.begin(), m.placed.end(), a.tasker) != m.placed.end()) return true;
      return false;
    }
    for (const Allocation& a : allocs)
      if (eligible_[c].eligible.contains(a.tasker)) return true;
    return false;
  }

  bool memo_holds(const CandidateMemo& m, size_t from) const {
    for (uint32_t x : {m.a, m.b})
      if (x != WaitQueue::kNoJob && (wq_->rank(x) < from || creds_.violation(x))) return false;
    return true;
  }

  void backfill(uint32_t blocker, double t) {
    LazyReservation resv{*this, blocker};
    size_t from = wq_->rank(blocker) + 1;
    std::vector<Allocation>& trial = trial_;
    const uint64_t pass = ++backfill_pass_;
    const auto& cats = wq_->categories();  // grows only when a parked job is surfaced
    std::vector<std::pair<size_t, uint32_t>>& bounds = bounds_;
    while (true) {
      // Each category's candidate ranks no better than its first ready job: categories are tried in
      // the order of that bound (or of their kept candidate), until the bound passes the best found.
      bounds.clear();
      for (const uint32_t c : cats) {
        if (wq_->ready_in(c) == 0 || dead(c)) continue;
        const CandidateMemo& m = memo_[c];
        if (m.pass == pass && memo_holds(m, from)) {
          if (m.job != WaitQueue::kNoJob) bounds.emplace_back(wq_->rank(m.job), c);
          continue;
        }
        const uint32_t a = first_unthrottled(c, from, [](double) { return true; });
        if (a != WaitQueue::kNoJob) bounds.emplace_back(wq_->rank(a), c);
      }
      std::sort(bounds.begin(), bounds.end());
      uint32_t best = WaitQueue::kNoJob;
      // The bounds in order, merged with the active throttle streams' heads: a head ranked before the
      // best found is surfaced (it is a ready job of its category), and its category asked again.
      for (size_t i = 0;;) {
        const uint32_t h = next_head();
        const bool head = h != kNoHead && (i == bounds.size() || h < bounds[i].first);
        if (!head && i == bounds.size()) break;
        const size_t bound = head ? h : bounds[i].first;
        if (best != WaitQueue::kNoJob && bound > wq_->rank(best)) break;
        uint32_t c = 0;
        if (head) {
          c = cats_.of_job[surface_head()];
          memo_[c].pass = 0;
          if (dead(c)) continue;
        } else {
          c = bounds[i++].second;
        }
        CandidateMemo& m = memo_[c];  // not dead: nothing has grown or been placed since the bounds
        if (m.pass != pass || !memo_holds(m, from)) {
          m.pass = pass;
          m.job = candidate(c, from, t, resv, m);
        }
        const uint32_t j = m.job;
        if (j != WaitQueue::kNoJob && (best == WaitQueue::kNoJob || wq_->rank(j) < wq_->rank(best))) best = j;
      }
      if (best == WaitQueue::kNoJob) return;
      trial.clear();
      [[maybe_unused]] const bool placed = placer(cats_.of_job[best]).try_place(best, policy_.allocation, trial);
      COLMATCH_DASSERT(placed, "a backfill candidate places as it did when chosen");
      COLMATCH_DASSERT(t + sim_estimate(jobs_, best) <= resv.shadow || leaves_alone(best, trial, *resv.r),
                       "a backfill candidate leaves the reservation alone");
      cap_.commit();
      start(best, t, trial, resv.r->active);
      from = wq_->rank(best) + 1;
      const uint32_t cb = cats_.of_job[best];
      memo_[cb].pass = 0;
      const bool shared = !placer_.queue_only(cb);
      for (const uint32_t c : cats) {
        CandidateMemo& m = memo_[c];
        if (m.pass == pass && (shared || !placer_.queue_only(c) || start_touches(m, c, trial))) m.pass = 0;
      }
    }
  }

  // The placer, with category c's dispatch cursors made valid for the capacity as it is now. A cursor
  // says that no tasker before it can take the category's charge; capacity only shrinks except on
  // the taskers logged in grown_, so each cursor is pulled back to the first of those logged since it
  // was last made valid (categories charging a shared pool start again at 0 in each Capacity epoch).
  // Cheaper than starting every category again at 0 whenever a job ends.
  Placer& placer(uint32_t c) {
    if (!placer_.queue_only(c)) {
      if (cursor_epoch_[c] != cap_.epoch()) {
        cursors_.restart(c);
        cursor_epoch_[c] = cap_.epoch();
      }
      return placer_;
    }
    if (cursor_seen_[c] < grown_.size()) {
      uint32_t low = UINT32_MAX;
      for (size_t i = cursor_seen_[c]; i < grown_.size(); ++i) low = std::min(low, grown_[i]);
      cursors_.pull_back(c, low);
      cursor_seen_[c] = grown_.size();
    }
    return placer_;
  }

  // Category c's placement failed: so will every job of c until capacity grows where it could help.
  void mark_dead(uint32_t c) {
    dead_[c] = cap_.epoch();
    dead_since_[c] = grown_.size();
    revived_by_[c] = kNone;
  }

  // A tasker x whose capacity grew could take a job of category c now (one slot instance for $fill_up).
  bool could_take(uint32_t c, uint32_t x) const {
    if (!eligible_[c].eligible.contains(x)) return false;
    return cats_.rule[c] == AllocationRule::FillUp ? placer_.instances(c, x, false, 1) > 0
                                                   : cap_.fits(placer_.charges(c), x);
  }

  // Category c's placement still fails (exact for $pe_slots: it would fail; for $fill_up: no tasker
  // takes one slot instance, or it failed in this epoch). After c failed, only the taskers whose
  // capacity grew since (grown_, in order) can take one of its jobs: each is looked at once, when dead()
  // next asks, and the one found is asked again first (a tasker that had no room and has not grown
  // since has none now; one that grows again is logged again). A category charging a shared (host or
  // global) pool is tried again in every epoch.
  bool dead(uint32_t c) {
    if (dead_[c] == ~uint64_t{0}) return false;
    if (dead_[c] == cap_.epoch()) return true;
    if (!placer_.queue_only(c)) {
      dead_[c] = ~uint64_t{0};
      return false;
    }
    if (revived_by_[c] != kNone && could_take(c, revived_by_[c])) return false;
    revived_by_[c] = kNone;
    for (size_t& i = dead_since_[c]; i < grown_.size();) {
      const uint32_t x = grown_[i++];
      if (could_take(c, x)) {
        revived_by_[c] = x;
        return false;
      }
    }
    dead_[c] = cap_.epoch();
    return true;
  }

  // Capacity grew on tasker x (kept for dead() and placer()). The log is dropped when it reaches 256
  // entries a tasker (at least 4,096) by forgetting every failure and starting every cursor again:
  // memory stays O(taskers), and the cost (each category may scan its taskers once more) is spread
  // over that many growths. Small enough that the bundled KTH sample's tests go through it.
  void grew(uint32_t x) {
    if (grown_.size() >= std::max<size_t>(4096, 256 * taskers_.size())) {
      std::fill(dead_.begin(), dead_.end(), ~uint64_t{0});
      for (uint32_t c = 0; c < cats_.size(); ++c) cursors_.restart(c);
      std::fill(cursor_seen_.begin(), cursor_seen_.end(), 0);
      grown_.clear();
    }
    grown_.push_back(x);
  }

  // Job j of category c fits now (its placement is tried and undone, trial_ keeps it); marks c failed
  // if not: so would every job of c until capacity grows where it could help (dead()).
  bool fits_now(uint32_t j, uint32_t c) {
    trial_.clear();
    if (!placer(c).try_place(j, policy_.allocation, trial_)) {
      mark_dead(c);
      return false;
    }
    cap_.rollback();  // cursors stay valid (Placer::try_place)
    return true;
  }

  // The first ready job of category c ranked >= from whose walltime estimate passes `test` and that no
  // credential limit keeps from starting (the throttled ones met on the way are parked), or kNoJob.
  template <class Test>
  uint32_t first_unthrottled(uint32_t c, size_t from, Test&& test) {
    for (size_t at = from;;) {
      const uint32_t j = wq_->first_in(c, at, test);
      if (j == WaitQueue::kNoJob || !throttle(j)) return j;
      at = wq_->rank(j) + 1;
    }
  }

  // The ready job of category c ranked >= from that would start now, or kNoJob. Its first ready job a
  // starts if it fits and ends before the reservation, or if its placement leaves the reservation
  // alone. If a fits but must avoid the reservation and cannot, no job of c that must avoid it can
  // either (they all get the same placement now), and the candidate is the first that ends before it
  // (the same placement fits it). Until the reservation is made (the first category to get here), a
  // is placed first, so that a cycle where nothing fits makes no reservation; after, cycle_full's
  // shortcuts (shared pool, reserved $fill_up master) spare the placements they can.
  // Records in `memo` the jobs it looked at and the placement it found (for backfill's memo).
  uint32_t candidate(uint32_t c, size_t from, double t, LazyReservation& resv, CandidateMemo& memo) {
    memo.a = memo.b = WaitQueue::kNoJob;
    memo.placed.clear();
    auto fits_now = [&](uint32_t j) {
      if (!this->fits_now(j, c)) return false;
      memo.placed.clear();
      for (const Allocation& x : trial_) memo.placed.push_back(x.tasker);
      return true;
    };
    const uint32_t a = first_unthrottled(c, from, [](double) { return true; });
    memo.a = a;
    if (a == WaitQueue::kNoJob) return a;
    bool fits = false;
    if (resv.r == nullptr) {
      if (!fits_now(a)) return WaitQueue::kNoJob;
      fits = true;
    }
    const Reservation& r = resv.get();
    const double shadow = resv.shadow;
    auto ends_before = [&](double e) { return t + e <= shadow; };
    if (ends_before(sim_estimate(jobs_, a))) return fits || fits_now(a) ? a : WaitQueue::kNoJob;
    // with a's placement known (trial_) the shortcuts are implied by it; else they spare placing a
    if (fits || !cannot_leave_alone(a, r)) {
      if (!fits && !fits_now(a)) return WaitQueue::kNoJob;
      fits = true;
      if (leaves_alone(a, trial_, r)) return a;
    }
    const uint32_t b = first_unthrottled(c, from, ends_before);
    memo.b = b;
    if (b == WaitQueue::kNoJob) return b;
    return fits || fits_now(b) ? b : WaitQueue::kNoJob;
  }

  // ---- FBSNG (engine/schedule/fbsng.hpp: the rules Q1-Q3, S1-S2, P1 named below) ----

  uint32_t process_type(uint32_t j) const { return creds_.cred(static_cast<size_t>(policy_.process_type), j); }

  void init_fbsng() {
    fbsng_.emplace(fbsng_queue_params(policy_.fbsng, jobs_));
    const auto& cons = catalog_.consumables();
    const size_t types = creds_.count(static_cast<size_t>(policy_.process_type));
    quota_.assign(types, Quota{});
    quota_use_.assign(types, QuotaUse{});
    for (uint32_t id = 0; id < types; ++id) {
      quota_[id].max_amount.assign(cons.size(), std::numeric_limits<double>::infinity());
      quota_use_[id].amount.assign(cons.size(), 0.0);
    }
    const Dictionary& names = credential_names(jobs_, policy_.process_type);
    for (const FbsngProcessType& pt : policy_.fbsng.process_types) {
      std::vector<double> amounts(cons.size(), std::numeric_limits<double>::infinity());
      for (const auto& [name, amount] : pt.max_amount) {
        size_t k = 0;
        while (k < cons.size() && catalog_.at(cons[k]).name != name) ++k;
        if (k == cons.size())
          throw PolicyError(
              fmt::format("FBSNG process type '{}': quota on '{}', which is not a consumable", pt.name, name));
        if (!(amount >= 0)) throw PolicyError(fmt::format("FBSNG process type '{}': quota < 0", pt.name));
        amounts[k] = amount;
      }
      const auto id = names.find(pt.name);
      if (!id) continue;  // no section of that type
      quota_[*id] = Quota{pt.max_sections, pt.max_slots, std::move(amounts), pt.name};
    }
    section_priority_.assign(jobs_.size(), 0.0);
    fb_set_.assign(fbsng_->size(), {});
    fb_by_cat_.assign(fbsng_->size(), {});
    fb_heap_.assign(fbsng_->size(), {});
    fb_head_.assign(fbsng_->size(), WaitQueue::kNoJob);
    fb_failed_.assign(cats_.size(), 0);
  }

  void fbsng_use(uint32_t j, int sign) {
    QuotaUse& u = quota_use_[process_type(j)];
    u.sections = static_cast<uint64_t>(static_cast<int64_t>(u.sections) + sign);
    u.slots += sign * static_cast<double>(jobs_.slots[j]);
    for_each_charge(j, [&](size_t k, uint32_t, double amount) { u.amount[k] += sign * amount; });
  }

  // P1: the quota job j's start would break ("" if none). What a start charges in all does not depend
  // on where it is placed ($pe_slots: the category's charge on one tasker; $fill_up: slots x the
  // per-slot charge plus the master's), so the quota is decided before a placement, and within a run
  // a section it stops stays stopped (usage only grows until the next run).
  std::string quota_broken(uint32_t j) const {
    const uint32_t type = process_type(j);
    const Quota& q = quota_[type];
    const QuotaUse& u = quota_use_[type];
    if (u.sections + 1 > q.max_sections) return fmt::format("process type {} max_sections {}", q.name, q.max_sections);
    if (u.slots + jobs_.slots[j] > q.max_slots) return fmt::format("process type {} max_slots {}", q.name, q.max_slots);
    const uint32_t c = cats_.of_job[j];
    const auto& cons = catalog_.consumables();
    for (size_t k = 0; k < cats_.unit_charge[c].size(); ++k) {
      const double charge = cats_.job_charge(c, k, jobs_.slots[j]);
      if (charge > 0 && u.amount[k] + charge > q.max_amount[k])
        return fmt::format("process type {} max {} {}", q.name, catalog_.at(cons[k]).name, q.max_amount[k]);
    }
    return {};
  }

  // A ready section in its queue's order (S1): section priority descending, then submit time, then index.
  struct SectionKey {
    double neg_priority, submit;
    uint32_t job;
    bool operator<(const SectionKey& o) const noexcept {
      if (neg_priority != o.neg_priority) return neg_priority < o.neg_priority;
      if (submit != o.submit) return submit < o.submit;
      return job < o.job;
    }
  };
  SectionKey key_of(uint32_t j) const { return {-section_priority_[j], jobs_.submit[j], j}; }

  // A waiting section goes where its state says: held, waiting for a dependency, never able to run (its
  // reason set once), or ready (its queue's ordered set). A hold's end is an event (wakes_).
  void fbsng_classify(uint32_t j, double t) {
    if (jobs_.hold_until[j] > t) {
      parked_[j] = Parked::Held;
      res_.reason[j] = SimReason::Held;
      res_.was_held[j] = 1;
      if (std::isfinite(jobs_.hold_until[j])) wakes_.emplace(jobs_.hold_until[j], j);
      return;
    }
    parked_[j] = Parked::No;
    const uint32_t c = cats_.of_job[j];
    if (!fits_idle_[c]) {
      res_.reason[j] = eligible_[c].eligible.count() == 0 ? SimReason::NoEligibleTasker : SimReason::TooLarge;
      return;
    }
    for (uint32_t d : jobs_.depends[j])
      if (!ended_[d]) {
        parked_[j] = Parked::Dependency;
        res_.reason[j] = SimReason::Dependency;
        dependents_[d].push_back(j);
        return;
      }
    res_.reason[j] = SimReason::NoFreeCapacity;
    fb_set_[jobs_.queue[j]].insert(key_of(j));
    fb_by_cat_[jobs_.queue[j]][cats_.of_job[j]].insert(key_of(j));
  }

  enum class QueueTry : uint8_t { Started, Stuck, Idle };

  // Queue q's ready sections merged from its categories: a cursor per category on its first section not
  // yet passed over in this run, the earliest (in S1's order) on top. A category whose placement failed
  // in this run is dropped once the queue has a head: none of its sections can start before the next
  // run (capacity only shrinks within one), so the walk jumps over them instead of visiting each.
  struct Cursor {
    SectionKey key;
    uint32_t category;
    std::set<SectionKey>::iterator it;
  };
  static bool later(const Cursor& a, const Cursor& b) noexcept { return b.key < a.key; }

  void build_heap(uint32_t q) {
    std::vector<Cursor>& h = fb_heap_[q];
    h.clear();
    for (auto& [c, set] : fb_by_cat_[q])
      if (!set.empty()) h.push_back({*set.begin(), c, set.begin()});
    std::make_heap(h.begin(), h.end(), later);
  }

  // S1, S2, P1: the walk of queue q's ready sections in S1's order, resumed where it stopped in this run.
  // Started: a section started; Stuck: the queue has a head (a section waiting for capacity) and started
  // nothing; Idle: nothing started and nothing waits for capacity. Reasons: cycle_fbsng's last pass.
  QueueTry fbsng_try_queue(uint32_t q, double t) {
    std::vector<Cursor>& h = fb_heap_[q];
    uint32_t& head = fb_head_[q];
    const double spg = fbsng_->params(q).spg;
    // A start elsewhere in this run may have put the head over a credential limit or its quota: it no
    // longer waits for capacity, and the queue is walked again from the start (rare: limits that bind)
    if (head != WaitQueue::kNoJob && (creds_.violation(head) || !quota_broken(head).empty())) {
      head = WaitQueue::kNoJob;
      build_heap(q);
    }
    auto drop = [&] {  // the top category, for the rest of this run
      std::pop_heap(h.begin(), h.end(), later);
      h.pop_back();
    };
    auto advance = [&] {  // the top category's next section
      std::pop_heap(h.begin(), h.end(), later);
      Cursor& cur = h.back();
      if (++cur.it == fb_by_cat_[q][cur.category].end()) {
        h.pop_back();
        return;
      }
      cur.key = *cur.it;
      std::push_heap(h.begin(), h.end(), later);
    };
    while (!h.empty()) {
      const uint32_t x = h.front().key.job, c = h.front().category;
      // S2: x and every section after it (SP descending) wait for the head
      if (head != WaitQueue::kNoJob && fbsng_gap_blocks(section_priority_[head], section_priority_[x], spg))
        return QueueTry::Stuck;
      if (fb_failed_[c] == fb_run_ && head != WaitQueue::kNoJob) {
        drop();
        continue;
      }
      if (creds_.violation(x) || !quota_broken(x).empty()) {
        res_.was_throttled[x] = 1;
        advance();
        continue;
      }
      trial_.clear();
      if (fb_failed_[c] == fb_run_ || !placer(c).try_place(x, policy_.allocation, trial_)) {
        fb_failed_[c] = fb_run_;
        if (head == WaitQueue::kNoJob) head = x;
        drop();
        continue;
      }
      cap_.commit();
      const auto at = h.front().it;
      advance();
      std::set<SectionKey>& of_cat = fb_by_cat_[q][c];
      of_cat.erase(at);
      if (of_cat.empty()) fb_by_cat_[q].erase(c);
      fb_set_[q].erase(key_of(x));
      start(x, t, trial_, false);
      // S1: a start passes the head if submitted after it. The head's category left the merge when
      // it became the head, so its new place in the order moves no cursor.
      if (head != WaitQueue::kNoJob &&
          (jobs_.submit[head] < jobs_.submit[x] || (jobs_.submit[head] == jobs_.submit[x] && head < x))) {
        std::set<SectionKey>& hs = fb_by_cat_[q][cats_.of_job[head]];
        hs.erase(key_of(head));
        fb_set_[q].erase(key_of(head));
        section_priority_[head] += 1;
        hs.insert(key_of(head));
        fb_set_[q].insert(key_of(head));
      }
      return QueueTry::Started;
    }
    return head != WaitQueue::kNoJob ? QueueTry::Stuck : QueueTry::Idle;
  }

  // One run of the FBSNG scheduler: steps 1 (choose the queue, Q3) and 2 (choose the section, S1) until
  // no section can start. `last` (the run's last cycle, or full_cycles): then every waiting section is
  // given its reason, which costs a visit of each.
  void cycle_fbsng(double t, bool last) {
    const auto t0 = std::chrono::steady_clock::now();
    ++res_.cycles;
    ++fb_run_;
    if (last) ++res_.full_cycles;
    cursors_.sync(cap_);
    fb_order_.clear();
    for (uint32_t q = 0; q < fb_set_.size(); ++q) {
      fb_head_[q] = WaitQueue::kNoJob;
      if (fb_set_[q].empty()) continue;
      fb_order_.push_back(q);
      build_heap(q);
    }
    std::vector<std::pair<uint32_t, uint32_t>>& held = fb_held_;  // (queue, the stuck queue holding it)
    while (true) {
      // Q3: queues by priority (ties: the queue whose first section in line was submitted first, then
      // its name); a stuck queue holds those below its priority minus its QPG
      auto next_submit = [&](uint32_t q) {
        return fb_set_[q].empty() ? std::numeric_limits<double>::infinity() : fb_set_[q].begin()->submit;
      };
      std::sort(fb_order_.begin(), fb_order_.end(), [&](uint32_t a, uint32_t b) {
        if (fbsng_->priority(a) != fbsng_->priority(b)) return fbsng_->priority(a) > fbsng_->priority(b);
        const double sa = next_submit(a), sb = next_submit(b);
        if (sa != sb) return sa < sb;
        return jobs_.queues.value(a) < jobs_.queues.value(b);
      });
      double holds_below = -std::numeric_limits<double>::infinity();
      uint32_t holder = kNone;
      bool any = false;
      held.clear();
      for (const uint32_t q : fb_order_) {
        if (fbsng_->priority(q) < holds_below) {
          held.emplace_back(q, holder);
          continue;
        }
        const QueueTry r = fbsng_try_queue(q, t);
        if (r == QueueTry::Started) {
          fbsng_->on_start(q);  // Q2
          any = true;
          break;
        }
        if (r == QueueTry::Stuck && fbsng_->holds_below(q) > holds_below) {
          holds_below = fbsng_->holds_below(q);
          holder = q;
        }
      }
      if (!any) break;
    }
    if (last) fbsng_reasons(held);
    end_cycle(t, t0);
  }

  // Every ready section's reason as the run left it: its queue held by a stuck queue (Q3), behind its
  // queue's head by the section gap (S2), over a credential limit or its process type's quota (P1), or
  // waiting for capacity.
  void fbsng_reasons(const std::vector<std::pair<uint32_t, uint32_t>>& held) {
    std::vector<uint32_t> held_by(fb_set_.size(), kNone);
    for (const auto& [q, by] : held) held_by[q] = by;
    for (const uint32_t q : fb_order_) {
      const uint32_t head = fb_head_[q], by = held_by[q];
      for (const SectionKey& k : fb_set_[q]) {
        const uint32_t x = k.job;
        std::string& detail = res_.detail[x];
        detail.clear();
        if (by != kNone) {
          res_.reason[x] = SimReason::PriorityGap;
          detail = fmt::format("queue {} (priority {}) is stuck", jobs_.queues.value(by), fbsng_->priority(by));
        } else if (head != WaitQueue::kNoJob && x != head &&
                   fbsng_gap_blocks(section_priority_[head], section_priority_[x], fbsng_->params(q).spg)) {
          res_.reason[x] = SimReason::PriorityGap;
          detail = fmt::format("section {} (priority {}) waits first", jobs_.id[head], section_priority_[head]);
        } else if (const auto v = creds_.violation(x)) {
          res_.reason[x] = SimReason::Throttled;
          detail = creds_.describe(v);
        } else if (std::string why = quota_broken(x); !why.empty()) {
          res_.reason[x] = SimReason::Throttled;
          detail = std::move(why);
        } else {
          res_.reason[x] = SimReason::NoFreeCapacity;
        }
      }
    }
  }

  const Catalog& catalog_;
  const TaskerTable& taskers_;
  const JobTable& jobs_;
  const SimPolicy& policy_;
  const kernels::KernelTable& k_;
  const FarmEvents& farm_;
  const SimProgress& progress_;
  uint64_t ended_count_ = 0;
  size_t next_farm_ = 0;  // the next farm event to apply
  Categories cats_;
  std::vector<CategoryEligibility> eligible_;
  std::vector<uint8_t> evaluated_;
  DispatchCursors cursors_;
  Capacity cap_;
  Placer placer_;
  Capacity idle_;  // configured capacity, never charged: can a category run at all?
  Placer idle_placer_;
  Capacity future_;  // EASY: the capacity as running jobs end (reserve), with its placer
  Placer future_placer_;
  std::vector<uint8_t> fits_idle_;
  std::vector<std::pair<uint64_t, size_t>> master_memo_;  // per category: (state_version_, fill_up master)
  std::vector<uint64_t> dead_;                       // per category: the Capacity epoch in which its placement failed
  std::vector<size_t> dead_since_;                   // per category, once failed: grown_ entries looked at since
  std::vector<uint32_t> revived_by_;                 // per category, once failed: a grown tasker that could take a job
  std::vector<size_t> cursor_seen_;                  // per category: grown_ entries its cursors account for
  std::vector<uint64_t> cursor_epoch_;               // per category charging a shared pool: its cursors' epoch
  std::vector<uint32_t> grown_;                      // taskers whose capacity grew (ends, taskers up, pools enlarged)
  std::vector<CandidateMemo> memo_;                  // per category: its backfill candidate in the current pass
  std::vector<std::pair<size_t, uint32_t>> bounds_;  // backfill: (rank bound, category)
  uint64_t backfill_pass_ = 0;
  uint64_t state_version_ = 0;  // advances whenever a job starts or ends (capacity changes)
  Credentials creds_;
  std::vector<double> cred_priority_;  // per job: its credentials' priorities summed
  bool static_order_;                  // no time-dependent priority factor: jobs ranked once (wq_)
  std::vector<uint8_t> ended_;
  std::vector<double> used_;
  std::vector<uint32_t> arrivals_;
  std::vector<uint32_t> queued_;  // time-dependent order: the waiting jobs (but those parked for a dependency)
  size_t dependency_parked_ = 0;  // time-dependent order: the waiting jobs parked for a dependency
  std::optional<WaitQueue> wq_;   // static order: the ready jobs
  RankSet queued_set_;            // static order: the ranks of the waiting jobs
  RankSet visible_set_;           // static order: those a full cycle visits (not waiting for a dependency)
  std::vector<Parked> parked_;
  std::vector<std::vector<uint32_t>> dependents_;  // per job: parked jobs waiting for it
  // Static order: per credential, the jobs parked on it (ranks, smallest first) and whether they are
  // being taken back (see activate()); heads_ holds each active stream's smallest rank.
  static constexpr uint32_t kNoHead = UINT32_MAX;
  struct ThrottleStream {
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> parked;
    std::vector<uint32_t> deferred;  // parked on its slot limit while active: wait for the next end
    uint32_t entry = kNoHead;        // its rank in heads_
    bool active = false;
  };
  std::array<std::vector<ThrottleStream>, kKinds> streams_;
  using Head = std::tuple<uint32_t, uint32_t, uint32_t>;  // (rank, kind, credential)
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads_;
  std::vector<std::pair<double, uint32_t>> ready_;
  std::vector<Allocation> trial_;
  Reservation resv_, no_reservation_;
  // FBSNG (scheduler = Fbsng)
  struct Quota {
    uint64_t max_sections = std::numeric_limits<uint64_t>::max();
    double max_slots = std::numeric_limits<double>::infinity();
    std::vector<double> max_amount;  // per consumable
    std::string name;
  };
  struct QuotaUse {
    uint64_t sections = 0;
    double slots = 0;
    std::vector<double> amount;  // per consumable
  };
  std::optional<FbsngQueuePriorities> fbsng_;
  std::vector<Quota> quota_;                  // per process type (credential id)
  std::vector<QuotaUse> quota_use_;           // per process type
  std::vector<double> section_priority_;      // per job (SP)
  std::vector<std::set<SectionKey>> fb_set_;  // per queue: its ready sections, in SP order (S1)
  std::vector<std::unordered_map<uint32_t, std::set<SectionKey>>> fb_by_cat_;  // per queue, per category
  std::vector<std::vector<Cursor>> fb_heap_;  // per queue: its categories' cursors in this run (a heap)
  uint64_t fb_waiting_ = 0;                   // submitted sections not started
  std::vector<uint32_t> fb_head_;             // per queue: its head (first section waiting for capacity)
  std::vector<uint64_t> fb_failed_;           // per category: the run its placement failed in
  std::vector<uint32_t> fb_order_;            // queues with ready sections, by priority
  std::vector<std::pair<uint32_t, uint32_t>> fb_held_;
  uint64_t fb_run_ = 0;
  std::array<InstanceTotal, kInstanceTotals> totals_;
  std::vector<uint32_t> future_instances_;  // reserve(): per tasker, instances on future_
  // Utilized availability: per consumable, tracked (queue-only, policy not dedicated); per tasker, the
  // charges held there on tracked consumables, by (job, consumable); their copy in an EASY walk.
  std::vector<uint8_t> tracked_;
  std::vector<std::vector<HeldCharge>> held_, future_held_;
  std::vector<uint64_t> walk_of_;  // per tasker: the EASY walk that copied its held charges last
  uint64_t walk_ = 0;
  std::vector<std::pair<size_t, uint32_t>> touched_;
  uint64_t totals_clock_ = 0;
  uint32_t resv_job_ = WaitQueue::kNoJob;
  uint64_t resv_version_ = 0;  // state_version_ when resv_ was made
  using TimedJob = std::pair<double, uint32_t>;
  std::priority_queue<TimedJob, std::vector<TimedJob>, std::greater<>> ends_, wakes_;
  std::set<std::pair<double, uint32_t>> running_;  // (expected end, job)
  SimResult res_;
};

}  // namespace

SimResult simulate(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs, const SimPolicy& policy,
                   const kernels::KernelTable& k, const FarmEvents& farm, const SimProgress& progress) {
  try {
    if (policy.scheduler == Scheduler::Fbsng)  // P2: process types' default requirements
      if (std::optional<JobTable> with = fbsng_apply_requirements(policy.fbsng, policy.process_type, catalog, jobs))
        return Simulator(catalog, taskers, *with, policy, k, farm, progress).run();
    return Simulator(catalog, taskers, jobs, policy, k, farm, progress).run();
  } catch (const PolicyError& e) {
    if (policy.source.empty()) throw;
    throw PolicyError(policy.source + ": " + e.what());  // the file the policy was read from
  }
}

}  // namespace colmatch
