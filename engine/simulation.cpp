#include "engine/simulation.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <queue>
#include <set>

#include <fmt/format.h>

#include "engine/matcher.hpp"

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
constexpr size_t kKinds = 4;

// Running jobs and slots per credential, with the limits that apply to each.
class Credentials {
 public:
  Credentials(const JobTable& jobs, const std::vector<Throttle>& throttles) : jobs_(jobs) {
    const std::array<const Dictionary*, kKinds> dicts{&jobs.owners, &jobs.groups, &jobs.queues, &jobs.accounts};
    for (size_t kind = 0; kind < kKinds; ++kind) {
      const size_t n = dicts[kind]->size();
      running_[kind].assign(n, 0);
      slots_[kind].assign(n, 0);
      max_jobs_[kind].assign(n, std::numeric_limits<uint64_t>::max());
      max_slots_[kind].assign(n, std::numeric_limits<double>::infinity());
      names_[kind] = dicts[kind];
    }
    for (bool named : {false, true})  // defaults first, then named limits override them
      for (const Throttle& th : throttles) {
        if (th.name.empty() == named) continue;
        const auto kind = static_cast<size_t>(th.kind);
        for (uint32_t id = 0; id < names_[kind]->size(); ++id) {
          if (named && names_[kind]->value(id) != th.name) continue;
          max_jobs_[kind][id] = th.max_jobs;
          max_slots_[kind][id] = th.max_slots;
        }
      }
  }

  // Empty when job j may start now, else which limit it would break.
  std::string check(uint32_t j) const {
    static const char* kind_name[kKinds] = {"user", "group", "class", "account"};
    for (size_t kind = 0; kind < kKinds; ++kind) {
      const uint32_t id = cred(kind, j);
      if (running_[kind][id] + 1 > max_jobs_[kind][id])
        return fmt::format("{} {} max_jobs {}", kind_name[kind], names_[kind]->value(id), max_jobs_[kind][id]);
      if (slots_[kind][id] + jobs_.slots[j] > max_slots_[kind][id])
        return fmt::format("{} {} max_slots {}", kind_name[kind], names_[kind]->value(id), max_slots_[kind][id]);
    }
    return {};
  }

  void add(uint32_t j, int sign) {
    for (size_t kind = 0; kind < kKinds; ++kind) {
      const uint32_t id = cred(kind, j);
      running_[kind][id] = static_cast<uint64_t>(static_cast<int64_t>(running_[kind][id]) + sign);
      slots_[kind][id] += sign * static_cast<double>(jobs_.slots[j]);
    }
  }

 private:
  uint32_t cred(size_t kind, uint32_t j) const {
    switch (kind) {
      case 0: return jobs_.owner[j];
      case 1: return jobs_.group[j];
      case 2: return jobs_.queue[j];
      default: return jobs_.account[j];
    }
  }
  const JobTable& jobs_;
  std::array<const Dictionary*, kKinds> names_{};
  std::array<std::vector<uint64_t>, kKinds> running_;
  std::array<std::vector<double>, kKinds> slots_;
  std::array<std::vector<uint64_t>, kKinds> max_jobs_;
  std::array<std::vector<double>, kKinds> max_slots_;
};

class Simulator {
 public:
  Simulator(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs, const SimPolicy& policy,
            const kernels::KernelTable& k)
      : catalog_(catalog),
        taskers_(taskers),
        jobs_(jobs),
        policy_(policy),
        k_(k),
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
        creds_(jobs, policy.throttles),
        static_order_(policy.weights.queue_time == 0 && policy.weights.expansion == 0),
        ended_(jobs.size(), 0),
        used_(catalog.consumables().size(), 0.0) {
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
    for (uint32_t j = 0; j < n; ++j) {
      if (jobs.rejected(j)) {
        res_.reason[j] = SimReason::Rejected;
        continue;
      }
      arrivals_.push_back(j);
    }
    std::stable_sort(arrivals_.begin(), arrivals_.end(),
                     [&](uint32_t a, uint32_t b) { return jobs.submit[a] < jobs.submit[b]; });
    for (uint32_t kk = 0; kk < catalog.consumables().size(); ++kk)
      shared_pool_.push_back(taskers.columns[catalog.consumables()[kk]].multi_level());
  }

  SimResult run() {
    size_t next = 0;  // next arrival
    double last_cycle = -std::numeric_limits<double>::infinity();
    while (true) {
      double t = std::numeric_limits<double>::infinity();
      if (next < arrivals_.size()) t = std::min(t, jobs_.submit[arrivals_[next]]);
      if (!ends_.empty()) t = std::min(t, ends_.top().first);
      while (!wakes_.empty() && wakes_.top() <= last_cycle) wakes_.pop();
      if (!wakes_.empty()) t = std::min(t, wakes_.top());
      if (!std::isfinite(t)) break;
      if (policy_.interval > 0)
        t = std::max(std::ceil(t / policy_.interval) * policy_.interval, last_cycle + policy_.interval);
      if (t > policy_.until) break;
      while (!ends_.empty() && ends_.top().first <= t) {  // 1. capacity comes back
        finish(ends_.top().second);
        ends_.pop();
      }
      while (next < arrivals_.size() && jobs_.submit[arrivals_[next]] <= t) submit(arrivals_[next++]);
      while (!wakes_.empty() && wakes_.top() <= t) wakes_.pop();
      cycle(t);
      last_cycle = t;
    }
    return std::move(res_);
  }

 private:
  void submit(uint32_t j) {
    const uint32_t c = cats_.of_job[j];
    if (!evaluated_[c]) {
      const Request* soft = cats_.soft[c] != 0 ? &jobs_.requests[cats_.soft[c]] : nullptr;
      eligible_[c] = evaluate_category(catalog_, taskers_, jobs_.requests[cats_.request[c]], soft, cats_.need[c], k_);
      cursors_.init(c, eligible_[c]);
      evaluated_[c] = 1;
      std::vector<Allocation> trial;  // can it run at all, on the idle farm?
      if (eligible_[c].eligible.count() > 0 && idle_placer_.try_place(j, policy_.allocation, trial)) {
        idle_.rollback();
        fits_idle_[c] = 1;
      }
      ++res_.categories_evaluated;
    }
    res_.reason[j] = SimReason::NoFreeCapacity;
    const double hold = jobs_.hold_until[j];
    if (hold > jobs_.submit[j] && std::isfinite(hold)) wakes_.push(hold);
    if (!static_order_) {
      queued_.push_back(j);
      return;
    }
    // priorities do not depend on time: keep the queue in priority order as jobs arrive
    const double p = priority(j, 0);
    const auto at = std::upper_bound(queued_.begin(), queued_.end(), j, [&](uint32_t a, uint32_t b) {
      const double pb = priority(b, 0);
      if (p != pb) return p > pb;
      if (jobs_.submit[a] != jobs_.submit[b]) return jobs_.submit[a] < jobs_.submit[b];
      return a < b;
    });
    queued_.insert(at, j);
  }

  // Calls f(consumable, tasker, amount) for every charge job j holds (the amounts Placer took).
  template <class F>
  void for_each_charge(uint32_t j, F&& f) const {
    const uint32_t c = cats_.of_job[j];
    const bool fill = cats_.rule[c] == AllocationRule::FillUp;
    for (uint32_t a = 0; a < res_.alloc_count[j]; ++a) {
      const Allocation& x = res_.allocations[res_.alloc_first[j] + a];
      for (size_t k = 0; k < cats_.need[c].size(); ++k) {
        const double amount =
            fill ? x.slots * cats_.need[c][k] + (a == 0 ? cats_.master_need[c][k] : 0.0) : cats_.need[c][k];
        if (amount > 0) f(k, x.tasker, amount);
      }
    }
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
    for_each_charge(j, [&](size_t k, uint32_t, double amount) { used_[k] += amount; });
    creds_.add(j, +1);
    ends_.emplace(res_.end[j], j);
    running_.insert({t + sim_estimate(jobs_, j), j});
  }

  void finish(uint32_t j) {
    for_each_charge(j, [&](size_t k, uint32_t x, double amount) {
      cap_.release(k, x, amount);
      used_[k] -= amount;
    });
    creds_.add(j, -1);
    ended_[j] = 1;
    running_.erase({res_.start[j] + sim_estimate(jobs_, j), j});
  }

  struct Reservation {
    bool active = false;
    double shadow = 0;
    std::vector<uint8_t> reserved;  // per tasker
  };

  // EASY: the earliest time job j fits, releasing the running jobs in order of their expected end on a
  // copy of the capacity; the taskers it would get then are reserved. A full placement is tried only
  // when a cheap test says it can succeed: for $pe_slots, one of the taskers the last release touched
  // has room (nothing else changed); for $fill_up, the eligible taskers together take enough slot
  // instances. Both tests are exact necessary conditions when the job charges no shared (host or
  // global) pool; with shared pools every release is followed by a full placement.
  Reservation reserve(uint32_t j) {
    Reservation r;
    const uint32_t c = cats_.of_job[j];
    const bool fill = cats_.rule[c] == AllocationRule::FillUp;
    bool shared = false;
    for (size_t k = 0; k < shared_pool_.size(); ++k)
      shared = shared || (shared_pool_[k] && (cats_.need[c][k] > 0 || cats_.master_need[c][k] > 0));
    const kernels::TaskerSet& elig = eligible_[c].eligible;
    future_ = cap_;  // the capacity as the running jobs end (storage reused across reservations)
    // slot instances tasker t takes then, capped at the job's slots: the capped sum reaches the slots
    // exactly when the uncapped one does
    auto instances = [&](uint32_t t) { return future_placer_.instances(c, t, false, jobs_.slots[j]); };
    uint64_t total = 0;  // $fill_up: instances over the eligible taskers
    if (fill && !shared)
      for (size_t t = elig.next(0); t < elig.universe(); t = elig.next(t + 1))
        total += instances(static_cast<uint32_t>(t));
    std::vector<Allocation> trial;
    for (const auto& [expected_end, rj] : running_) {
      bool worth = shared;
      for (uint32_t a = 0; a < res_.alloc_count[rj]; ++a) {
        const uint32_t x = res_.allocations[res_.alloc_first[rj] + a].tasker;
        if (!shared && fill && elig.contains(x)) total -= instances(x);
      }
      for_each_charge(rj, [&](size_t k, uint32_t x, double amount) { future_.release(k, x, amount); });
      for (uint32_t a = 0; a < res_.alloc_count[rj] && !shared; ++a) {
        const uint32_t x = res_.allocations[res_.alloc_first[rj] + a].tasker;
        if (!elig.contains(x)) continue;
        if (fill) total += instances(x);
        else worth = worth || future_.fits(placer_.charges(c), x);
      }
      if (fill && !shared) worth = total >= jobs_.slots[j];
      if (!worth) continue;
      trial.clear();
      if (!future_placer_.try_place(j, policy_.allocation, trial)) continue;
      future_.commit();
      r.active = true;
      r.shadow = expected_end;
      r.reserved.assign(taskers_.size(), 0);
      for (const Allocation& a : trial) r.reserved[a.tasker] = 1;
      return r;
    }
    return r;  // does not fit even once every running job has ended: no reservation
  }

  // A job placed on `allocs` leaves reservation r alone: none of its taskers is reserved and it
  // charges no pool shared between taskers (host or global).
  bool leaves_alone(uint32_t j, const std::vector<Allocation>& allocs, const Reservation& r) const {
    const uint32_t c = cats_.of_job[j];
    for (size_t k = 0; k < shared_pool_.size(); ++k)
      if (shared_pool_[k] && (cats_.need[c][k] > 0 || cats_.master_need[c][k] > 0)) return false;
    for (const Allocation& a : allocs)
      if (r.reserved[a.tasker]) return false;
    return true;
  }

  double priority(uint32_t j, double t) const {
    const PriorityWeights& w = policy_.weights;
    const double wait = t - jobs_.submit[j], est = std::max(sim_estimate(jobs_, j), 1.0);
    return w.credential * jobs_.priority[j] + w.queue_time * wait / 60.0 + w.expansion * (wait + est) / est +
           w.size * jobs_.slots[j];
  }

  bool dependencies_ended(uint32_t j) const {
    for (uint32_t d : jobs_.depends[j])
      if (!ended_[d]) return false;
    return true;
  }

  void cycle(double t) {
    const auto t0 = std::chrono::steady_clock::now();
    ++res_.cycles;
    ++capacity_gen_;  // capacity may have come back since the last cycle
    cursors_.sync(cap_);
    ready_.clear();
    for (uint32_t j : queued_) {
      if (jobs_.hold_until[j] > t) {
        res_.reason[j] = SimReason::Held;
        res_.was_held[j] = 1;
        continue;
      }
      if (!dependencies_ended(j)) {
        res_.reason[j] = SimReason::Dependency;
        continue;
      }
      if (!fits_idle_[cats_.of_job[j]]) {
        res_.reason[j] =
            eligible_[cats_.of_job[j]].eligible.count() == 0 ? SimReason::NoEligibleTasker : SimReason::TooLarge;
        continue;
      }
      ready_.push_back({priority(j, t), j});
    }
    if (!static_order_)  // with static priorities queued_ is kept in this order already
      std::sort(ready_.begin(), ready_.end(), [&](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first > b.first;
        if (jobs_.submit[a.second] != jobs_.submit[b.second]) return jobs_.submit[a.second] < jobs_.submit[b.second];
        return a.second < b.second;
      });
    bool blocked = false, started = false;
    Reservation r;
    std::vector<Allocation> trial;
    for (const auto& [prio, j] : ready_) {
      std::string why = creds_.check(j);
      if (!why.empty()) {
        res_.reason[j] = SimReason::Throttled;
        res_.detail[j] = std::move(why);
        res_.was_throttled[j] = 1;
        continue;
      }
      if (blocked && policy_.backfill == BackfillPolicy::None) {
        res_.reason[j] = SimReason::Blocked;
        continue;
      }
      // Under a reservation, a job that would not end by its time starts only if it has a placement that
      // leaves the reservation alone; else it waits for the reservation. Two cases are decided without
      // placing: a job charging a shared pool, and a $fill_up job whose master would be reserved.
      const uint32_t c = cats_.of_job[j];
      const bool must_avoid = r.active && !(t + sim_estimate(jobs_, j) <= r.shadow);
      if (must_avoid) {
        bool decided = !placer_.queue_only(c);
        if (!decided && cats_.rule[c] == AllocationRule::FillUp) {
          // the master depends on the category and the capacity only: one search per category until
          // a job starts (capacity changes)
          auto& [gen, master] = master_memo_[c];
          if (gen != capacity_gen_) {
            gen = capacity_gen_;
            master = placer_.fill_up_master(j);
          }
          decided = master >= taskers_.size() || r.reserved[master];
        }
        if (decided) {
          res_.reason[j] = SimReason::Reservation;
          continue;
        }
      }
      trial.clear();
      if (!placer_.try_place(j, policy_.allocation, trial)) {
        res_.reason[j] = must_avoid ? SimReason::Reservation : SimReason::NoFreeCapacity;
        if (!blocked) {
          blocked = true;
          if (policy_.backfill == BackfillPolicy::Easy) r = reserve(j);
        }
        continue;
      }
      if (must_avoid && !leaves_alone(j, trial, r)) {
        cap_.rollback();
        cursors_.reset(c);
        res_.reason[j] = SimReason::Reservation;
        continue;
      }
      cap_.commit();
      ++capacity_gen_;
      start(j, t, trial, r.active);
      started = true;
    }
    if (started) std::erase_if(queued_, [&](uint32_t j) { return res_.reason[j] == SimReason::None; });
    SimResult::Row row{t, running_.size(), queued_.size(), used_};
    if (!res_.timeline.empty() && std::floor(res_.timeline.back().time / 60) == std::floor(t / 60))
      res_.timeline.back() = std::move(row);
    else res_.timeline.push_back(std::move(row));
    res_.cycle_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }

  const Catalog& catalog_;
  const TaskerTable& taskers_;
  const JobTable& jobs_;
  const SimPolicy& policy_;
  const kernels::KernelTable& k_;
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
  std::vector<std::pair<uint64_t, size_t>> master_memo_;  // per category: (capacity_gen_, fill_up master)
  uint64_t capacity_gen_ = 0;                             // advances whenever capacity may have changed
  Credentials creds_;
  bool static_order_;  // no time-dependent priority factor: the queue is kept sorted on arrival
  std::vector<uint8_t> ended_;
  std::vector<double> used_;
  std::vector<uint8_t> shared_pool_;
  std::vector<uint32_t> arrivals_, queued_;
  std::vector<std::pair<double, uint32_t>> ready_;
  std::priority_queue<std::pair<double, uint32_t>, std::vector<std::pair<double, uint32_t>>, std::greater<>> ends_;
  std::priority_queue<double, std::vector<double>, std::greater<>> wakes_;
  std::set<std::pair<double, uint32_t>> running_;  // (expected end, job)
  SimResult res_;
};

}  // namespace

SimResult simulate(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs, const SimPolicy& policy,
                   const kernels::KernelTable& k) {
  return Simulator(catalog, taskers, jobs, policy, k).run();
}

}  // namespace colmatch
