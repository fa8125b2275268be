#include "tests/reference/naive_simulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "engine/batch/queue_blocking.hpp"

namespace colmatch::naive {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using Placement = std::vector<std::pair<uint32_t, uint32_t>>;

struct Sim {
  const Catalog& cat;
  const TaskerTable& tk;
  const JobTable& jobs;
  const SimConfig& pol;
  const FarmEvents& farm;
  Pools pools;
  SimOutcome out;
  std::vector<uint8_t> down;
  std::vector<std::vector<double>> configured;  // per consumable, per tasker
  size_t next_farm = 0;

  const Column& col(size_t k) const { return tk.columns[cat.consumables()[k]]; }

  double avail(const Pools& p, size_t k, uint32_t t) const {
    const Column& c = col(k);
    double a = kNaN;
    if (c.has(t)) a = p.queue[k][t];
    const uint32_t h = tk.host_of[t];
    if (h != kNone && c.by_host().has(h)) a = std::isnan(a) ? p.host[k][h] : std::min(a, p.host[k][h]);
    if (c.global().present) a = std::isnan(a) ? p.global[k] : std::min(a, p.global[k]);
    return a;
  }
  void add(Pools& p, size_t k, uint32_t t, double delta) const {
    const Column& c = col(k);
    if (c.has(t) || !c.multi_level()) p.queue[k][t] += delta;
    if (!c.multi_level()) return;
    const uint32_t h = tk.host_of[t];
    if (h != kNone && c.by_host().has(h)) p.host[k][h] += delta;
    if (c.global().present) p.global[k] += delta;
  }
  bool fits_all(const Pools& p, const std::vector<double>& need, uint32_t t) const {
    for (size_t k = 0; k < need.size(); ++k) {
      if (!(need[k] > 0)) continue;
      const Column& c = col(k);
      if (!c.multi_level()) {
        if (!(p.queue[k][t] >= need[k])) return false;
        continue;
      }
      if (c.has(t) && !(p.queue[k][t] >= need[k])) return false;
      const uint32_t h = tk.host_of[t];
      if (h != kNone && c.by_host().has(h) && !(p.host[k][h] >= need[k])) return false;
      if (c.global().present && !(p.global[k] >= need[k])) return false;
    }
    return true;
  }
  size_t violations(uint32_t j, uint32_t t) const {
    if (jobs.soft[j] == 0) return 0;
    size_t v = 0;
    for (const Request* term : soft_terms(jobs.requests[jobs.soft[j]])) v += satisfies(tk, t, *term) ? 0 : 1;
    return v;
  }

  // Every charge a placement takes: (consumable, tasker, amount), allocations in order, consumables ascending.
  std::vector<std::tuple<size_t, uint32_t, double>> charges(uint32_t j, const Placement& pl) const {
    std::vector<std::tuple<size_t, uint32_t, double>> list;
    const auto need = charge(cat, jobs, j), once = master_charge(cat, jobs, j);
    const bool fill = jobs.rule[j] != AllocationRule::PeSlots;
    for (size_t a = 0; a < pl.size(); ++a)
      for (size_t k = 0; k < need.size(); ++k) {
        const double amount = fill ? pl[a].second * need[k] + (a == 0 ? once[k] : 0.0) : need[k];
        if (amount > 0) list.emplace_back(k, pl[a].first, amount);
      }
    return list;
  }

  // Places job j on pools p (changing them) or returns an empty placement (p unchanged); with `only`, on
  // the taskers it marks.
  Placement place(Pools& p, uint32_t j, const std::vector<uint8_t>* only = nullptr) const {
    const auto need = charge(cat, jobs, j);
    std::vector<uint32_t> elig;
    for (uint32_t t = 0; t < tk.size(); ++t)
      if (!down[t] && eligible(cat, tk, jobs, t, j) && meets_type(j, t) && (only == nullptr || (*only)[t]))
        elig.push_back(t);
    Placement pl;
    auto fit_free = [&](uint32_t t) {  // Slurm's count of what tasker t offers job j
      const double a = avail(p, pol.fit_consumable, t);
      if (pol.fit_limit == SIZE_MAX) return slurm_offer(jobs, j, a >= 0 ? a : 0.0, kNaN);  // no limit
      const double limit = avail(p, pol.fit_limit, t);
      return slurm_offer(jobs, j, a >= 0 ? a : 0.0, limit >= 0 ? limit : 0.0);
    };
    if (jobs.rule[j] == AllocationRule::PeSlots && pol.allocation == AllocationPolicy::ConsecutiveBestFit) {
      // Slurm's node choice among the taskers with room and the fewest soft violations
      size_t fewest = SIZE_MAX;
      std::vector<uint32_t> level;
      for (uint32_t t : elig) {
        if (!fits_all(p, need, t)) continue;
        const size_t v = violations(j, t);
        if (v < fewest) fewest = v, level.clear();
        if (v == fewest) level.push_back(t);
      }
      if (level.empty()) return {};
      pl.emplace_back(slurm_pick(tk, level, fit_free, 1, 1)[0], jobs.slots[j]);
      for (const auto& [k, x, amount] : charges(j, pl)) add(p, k, x, -amount);
      return pl;
    }
    const bool slurm_nodes =
        jobs.rule[j] == AllocationRule::OnePerTasker && pol.allocation == AllocationPolicy::ConsecutiveBestFit;
    const bool slurm_tasks = jobs.rule[j] == AllocationRule::FillUp &&
                             pol.allocation == AllocationPolicy::ConsecutiveBestFit && jobs.fit_unit_of(j).fit > 0;
    if (slurm_nodes || slurm_tasks) {
      // one soft level at a time: Slurm's choice of the job's taskers, each its slot in order (-N K), or
      // its tasks spread by slurm_spread over the taskers with room for one, each its count in node order,
      // the first the master (-n N without -N)
      auto tasks_at = [&](uint32_t t) {
        double n = fit_free(t);
        for (size_t k = 0; k < need.size(); ++k)
          if (need[k] > 0) n = std::min(n, std::floor(avail(p, k, t) / need[k]));
        return n >= 0 ? static_cast<uint32_t>(n) : 0u;
      };
      std::vector<size_t> levels;
      for (uint32_t t : elig) levels.push_back(violations(j, t));
      std::sort(levels.begin(), levels.end());
      levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
      for (const size_t level : levels) {
        std::vector<uint32_t> fitting;
        for (uint32_t t : elig)
          if (violations(j, t) == level && (slurm_nodes ? fits_all(p, need, t) : tasks_at(t) > 0)) fitting.push_back(t);
        Placement got;
        if (slurm_nodes) {
          const std::vector<uint32_t> chosen = slurm_pick(tk, fitting, fit_free, jobs.slots[j], jobs.slots[j]);
          if (chosen.empty()) continue;
          got = place_each_once(cat, tk, jobs, j, chosen, p);
        } else {
          const auto spread = slurm_spread(tk, fitting, tasks_at, jobs.slots[j]);
          if (spread.empty()) continue;
          std::vector<uint32_t> order, counts;
          for (const auto& [t, k] : spread) order.push_back(t), counts.push_back(k);
          got = place_fill_up(cat, tk, jobs, j, order, p, &counts);
        }
        if (!got.empty()) return got;
      }
      return {};
    }
    if (jobs.rule[j] == AllocationRule::PeSlots) {
      bool found = false;
      std::tuple<size_t, double, uint32_t> best{};
      for (uint32_t t : elig) {
        if (!fits_all(p, need, t)) continue;
        double key = static_cast<double>(t);
        if (pol.allocation == AllocationPolicy::FirstAvailable) key = tk.input_index[t];
        if (pol.allocation == AllocationPolicy::BestFit || pol.allocation == AllocationPolicy::WorstFit) {
          key = 0;
          for (size_t k = 0; k < need.size(); ++k)
            if (need[k] > 0) key += (avail(p, k, t) - need[k]) / need[k];
          if (pol.allocation == AllocationPolicy::WorstFit) key = -key;
        }
        const std::tuple<size_t, double, uint32_t> cand{violations(j, t), key, t};
        if (!found || cand < best) best = cand;
        found = true;
      }
      if (!found) return {};
      const uint32_t t = std::get<2>(best);
      pl.emplace_back(t, jobs.slots[j]);
      for (const auto& [k, x, amount] : charges(j, pl)) add(p, k, x, -amount);
      return pl;
    }
    // $fill_up: taskers by (violations, rank), placed by the naive matcher's own $fill_up (Grid Engine's
    // host rules by its place_by_host over the same order)
    std::vector<std::pair<size_t, uint32_t>> cand;
    for (uint32_t t : elig) cand.emplace_back(violations(j, t), t);
    std::sort(cand.begin(), cand.end());
    std::vector<uint32_t> order;
    for (const auto& [v, t] : cand) order.push_back(t);
    if (by_host(jobs.rule[j])) return place_by_host(cat, tk, jobs, j, order, p);
    return place_fill_up(cat, tk, jobs, j, order, p);
  }

  // FBSNG: tasker t meets the default requirements of job j's process type (those terms it does not name)
  bool meets_type(uint32_t j, uint32_t t) const {
    if (type_terms.empty()) return true;
    for (const Request& term : type_terms[j])
      if (!satisfies(tk, t, term)) return false;
    return true;
  }

  // Moab's utilized availability, again from its definition: on every queue-only consumable, each
  // tasker's free amount is MAX(0, configured - occupancy), the occupancy computed from scratch over the
  // jobs `holding` marks (job order): D = their charges there, U = the tasker's load + each charge times
  // its job's utilization; U under "utilized", MAX(D, U) under "combined".
  bool tracked(size_t k) const { return pol.availability != ResourceAvailability::Dedicated && !col(k).multi_level(); }
  void refresh(Pools& p, const std::vector<uint8_t>& holding) const {
    if (pol.availability == ResourceAvailability::Dedicated) return;
    for (size_t k = 0; k < cat.consumables().size(); ++k) {
      if (!tracked(k)) continue;
      for (uint32_t x = 0; x < tk.size(); ++x) {
        if (!col(k).has(x)) continue;
        double d = 0, u = k < farm.load.size() && !farm.load[k].empty() ? farm.load[k][x] : 0.0;
        for (uint32_t j = 0; j < jobs.size(); ++j) {
          if (!holding[j]) continue;
          for (const auto& [k2, x2, amount] : charges(j, out.allocations[j])) {
            if (k2 != k || x2 != x) continue;
            const double f = jobs.utilization.at(k, j);
            d += amount;
            u += (std::isnan(f) ? 1.0 : f) * amount;
          }
        }
        const double occupied = pol.availability == ResourceAvailability::Utilized ? u : std::max(d, u);
        p.queue[k][x] = std::max(0.0, configured[k][x] - occupied);
      }
    }
  }

  double estimate(uint32_t j) const { return jobs.walltime[j] >= 0 ? jobs.walltime[j] : duration(j); }
  double duration(uint32_t j) const {
    double d = jobs.runtime[j] > 0 ? jobs.runtime[j] : 0;
    if (jobs.walltime[j] >= 0 && jobs.walltime[j] < d) d = jobs.walltime[j];
    return d;
  }

  void run() {
    const size_t n = jobs.size();
    out.start.assign(n, kNaN);
    out.end.assign(n, kNaN);
    out.allocations.assign(n, {});
    out.reason.assign(n, SimReason::NotSubmitted);
    out.backfilled.assign(n, 0);
    out.reserved_at.assign(n, kNaN);
    for (size_t k = 0; k < cat.consumables().size(); ++k) {
      pools.queue.push_back(queue_values(col(k), tk.size()));
      pools.host.push_back(col(k).by_host().nums());
      pools.global.push_back(col(k).global().present ? col(k).global().num : kNaN);
    }
    for (size_t k = 0; k < cat.consumables().size(); ++k) configured.push_back(queue_values(col(k), tk.size()));
    std::vector<uint8_t> submitted(n, 0), ended(n, 0), running(n, 0);
    refresh(pools, running);  // the taskers' load
    const Pools idle = pools;
    if (pol.scheduler == SchedulerKind::Fbsng) init_fbsng();
    const std::vector<uint8_t> all_up(tk.size(), 0);
    down = farm.down_at_start.empty() ? all_up : farm.down_at_start;
    for (uint32_t j = 0; j < n; ++j)
      if (jobs.rejected(j)) out.reason[j] = SimReason::Rejected;
    double last = -std::numeric_limits<double>::infinity();
    while (true) {
      // the next event: a submit, an end, or a hold release after the last cycle
      double t = std::numeric_limits<double>::infinity();
      for (uint32_t j = 0; j < n; ++j) {
        if (jobs.rejected(j)) continue;
        if (!submitted[j]) t = std::min(t, jobs.submit[j]);
        if (running[j]) t = std::min(t, out.end[j]);
        if (submitted[j] && std::isnan(out.start[j]) && jobs.hold_until[j] > last &&
            std::isfinite(jobs.hold_until[j]) && jobs.hold_until[j] > jobs.submit[j])
          t = std::min(t, jobs.hold_until[j]);
      }
      if (next_farm < farm.events.size()) t = std::min(t, farm.events[next_farm].time);
      for (const double w : wake_times)
        if (w > last) t = std::min(t, w);
      // backfill_interval (Slurm's bf_interval): a backfill cycle when its time comes while a job waits
      if (slurm_backfill() && std::isfinite(next_bf) && since_bf)
        for (uint32_t j = 0; j < n; ++j)
          if (submitted[j] && std::isnan(out.start[j]) && !jobs.rejected(j)) {
            t = std::min(t, next_bf);
            break;
          }
      // a full main pass when one since the last stopped at default_queue_depth
      if ((depth_cut || part_skipped) && std::isfinite(next_full))
        for (uint32_t j = 0; j < n; ++j)
          if (submitted[j] && std::isnan(out.start[j]) && !jobs.rejected(j)) {
            t = std::min(t, next_full);
            break;
          }
      if (!std::isfinite(t)) break;
      if (pol.interval > 0) t = std::max(std::ceil(t / pol.interval) * pol.interval, last + pol.interval);
      if (pol.min_interval > 0) t = std::max(t, last + pol.min_interval);
      if (t > pol.until) break;
      std::vector<std::pair<double, uint32_t>> ends;
      for (uint32_t j = 0; j < n; ++j)
        if (running[j] && out.end[j] <= t) ends.emplace_back(out.end[j], j);
      std::sort(ends.begin(), ends.end());
      for (const auto& [e, j] : ends) {
        for (const auto& [k, x, amount] : charges(j, out.allocations[j])) add(pools, k, x, amount);
        running[j] = 0;
        ended[j] = 1;
        // before its walltime, with reservations kept: the next cycle compresses them
        if (pol.compression && !kept.empty() && out.end[j] < out.start[j] + estimate(j)) compress_due = true;
      }
      refresh(pools, running);
      for (; next_farm < farm.events.size() && farm.events[next_farm].time <= t; ++next_farm) {
        const TaskerEvent& e = farm.events[next_farm];
        if (e.kind == TaskerEvent::Kind::Configure) {
          pools.queue[e.consumable][e.tasker] += e.amount - configured[e.consumable][e.tasker];
          configured[e.consumable][e.tasker] = e.amount;
        } else {
          down[e.tasker] = e.kind == TaskerEvent::Kind::Down ? 1 : 0;
        }
      }
      refresh(pools, running);
      for (uint32_t j = 0; j < n; ++j)
        if (!jobs.rejected(j) && !submitted[j] && jobs.submit[j] <= t) {
          submitted[j] = 1;
          out.reason[j] = SimReason::NoFreeCapacity;
        }
      if (pol.scheduler == SchedulerKind::Fbsng) cycle_fbsng(t, submitted, ended, running, idle);
      else cycle(t, submitted, ended, running, idle);
      last = t;
    }
  }

  struct Booked {
    uint32_t job = 0;
    double shadow = 0, end = 0;
    Placement placement;
    Pools at;  // EASY: the pools at the shadow time (before the reserved job's placement)
  };

  void cycle(double t, const std::vector<uint8_t>& submitted, const std::vector<uint8_t>& ended,
             std::vector<uint8_t>& running, const Pools& idle) {
    const size_t n = jobs.size();
    // Slurm's sched_interval: whether this cycle's main pass tests the whole queue
    if (pol.main_pass_full_interval > 0 &&
        (pol.main_pass_depth > 0 || pol.main_pass_max_starts > 0 || pol.main_pass_partition_depth > 0)) {
      const double iv = pol.main_pass_full_interval, ph = std::fmod(pol.main_pass_full_phase, iv);
      if (!std::isfinite(next_full)) next_full = ph + std::ceil((t - ph) / iv) * iv;
      full_pass = t >= next_full;
      if (full_pass) next_full = ph + (std::floor((t - ph) / iv) + 1) * iv;
      if (full_pass) depth_cut = part_skipped = false;
    }
    std::vector<std::tuple<double, double, uint32_t>> ready;  // (-priority, submit, job)
    for (uint32_t j = 0; j < n; ++j) {
      if (!submitted[j] || !std::isnan(out.start[j])) continue;
      if (jobs.hold_until[j] > t) {
        out.reason[j] = SimReason::Held;
        continue;
      }
      bool deps = true;
      for (uint32_t d : jobs.depends[j]) deps = deps && ended[d];
      if (!deps) {
        out.reason[j] = SimReason::Dependency;
        continue;
      }
      bool any = false;
      for (uint32_t x = 0; x < tk.size() && !any; ++x) any = eligible(cat, tk, jobs, x, j);
      Pools empty = idle;  // on the whole farm, every tasker up
      const std::vector<uint8_t> now_down = std::exchange(down, std::vector<uint8_t>(tk.size(), 0));
      const bool fits_idle = any && !place(empty, j).empty();
      down = now_down;
      if (!fits_idle) {
        out.reason[j] = any ? SimReason::TooLarge : SimReason::NoEligibleTasker;
        continue;
      }
      const auto& w = pol.weights;
      const double wait = t - jobs.submit[j], est = std::max(estimate(j), 1.0);
      double cred_prio = 0;
      for (const CredentialPriority& cp : pol.credential_priorities)
        if (cred(static_cast<int>(cp.kind), j) == cp.name) cred_prio += cp.priority;
      const double prio = w.credential * (jobs.priority[j] + cred_prio) + w.queue_time * wait / 60.0 +
                          w.expansion * (wait + est) / est + w.size * jobs.slots[j];
      ready.emplace_back(-prio, jobs.submit[j], j);
    }
    std::sort(ready.begin(), ready.end());
    // backfill_interval: backfill only in the cycles at phase + k x interval, each planning afresh (no
    // reservation kept); the others are Slurm's main pass in strict order
    bool strict = false;
    if (slurm_backfill()) {
      const double bi = pol.backfill_interval, ph = pol.backfill_phase;
      // phase NaN: Slurm's backfill thread, bf_interval after its last run when something happened
      // meanwhile (a wake then), else 1 s after the event that comes next
      if (std::isnan(ph)) {
        if (!std::isfinite(next_bf) || (t > next_bf && !since_bf)) next_bf = std::floor(t) + 1;
      } else if (!std::isfinite(next_bf)) {
        next_bf = ph + std::ceil((t - ph) / bi) * bi;
      }
      strict = t < next_bf;
      since_bf = strict;
      if (!strict) {
        next_bf = std::isnan(ph) ? t + bi : ph + (std::floor((t - ph) / bi) + 1) * bi;
        kept.clear();
      }
    }
    const BackfillPolicy backfill = strict ? BackfillPolicy::None : pol.backfill;
    if (pol.depth() > 1 && !strict) {
      cycle_with_book(t, ready, running);
      return;
    }
    // none, greedy, EASY: one reservation at most, for the first job that cannot start, made anew
    if (backfill == BackfillPolicy::None && pol.partitions) {
      slurm_main_pass(t, ready, running);
      return;
    }
    bool blocked = false, reserved = false;
    Booked only;
    for (const auto& [negp, sub, j] : ready) {
      if (!throttle_ok(j, running)) {
        out.reason[j] = SimReason::Throttled;
        continue;
      }
      if (blocked && backfill == BackfillPolicy::None) {
        out.reason[j] = SimReason::Blocked;
        continue;
      }
      // under a reservation, a job that would not end by its time starts only if the reserved job still
      // fits at that time with this job's charges (and those of the jobs started so far under the
      // reservation) taken from the pools then; otherwise it waits for the reservation
      const bool must_avoid = reserved && !(t + estimate(j) <= only.shadow);
      Pools trial = pools;
      const Placement pl = place(trial, j);
      if (pl.empty()) {
        out.reason[j] = must_avoid ? SimReason::Reservation : SimReason::NoFreeCapacity;
        if (!blocked) {
          blocked = true;
          if (backfill == BackfillPolicy::Easy) reserved = reserve(j, running, {}, only);
        }
        continue;
      }
      if (must_avoid) {
        Pools then = only.at;
        for (const auto& [k, x, amount] : charges(j, pl)) add(then, k, x, -amount);
        Pools probe = then;
        if (place(probe, only.job).empty()) {
          out.reason[j] = SimReason::Reservation;
          continue;
        }
        only.at = std::move(then);
      }
      begin(j, t, pl, std::move(trial), running, backfill == BackfillPolicy::Greedy ? blocked : reserved);
    }
  }

  // Slurm's main pass by partition (job_scheduler.c _schedule), again from its rule: in priority order, a
  // job is tried in each of its partitions not failed in this pass (in the order written), on its eligible
  // taskers of that partition (of a job of several) that no failed partition holds; a failure fails the
  // partition (its taskers held for the rest of the pass) unless the job names its taskers (they are
  // held, nothing fails), is below bf_min_prio_reserve, or finds every eligible tasker held; a partition
  // whose taskers are held below the job's tasker count fails with it.
  void slurm_main_pass(double t, const std::vector<std::tuple<double, double, uint32_t>>& ready,
                       std::vector<uint8_t>& running) {
    const BlockingQueues& parts = *pol.partitions;
    std::vector<uint8_t> failed(parts.names.size(), 0), held(tk.size(), 0);
    bool any_held = false;
    auto fail = [&](uint32_t q) {
      failed[q] = 1;
      for (uint32_t x = 0; x < tk.size(); ++x)
        if (parts.taskers[q].contains(x)) held[x] = 1, any_held = true;
    };
    const double low = pol.backfill_min_priority_reserve;
    // default_queue_depth: a pass sched_interval did not start tests that many records and one more
    const uint64_t depth = full_pass ? 0 : pol.main_pass_depth;
    uint64_t records = 0;
    depth_cut = false;
    part_skipped = false;
    // partition_job_depth: a partition's records past that many are skipped, uncounted by the depth
    std::vector<uint64_t> reached(parts.names.size(), 0);
    uint64_t starts = 0;  // sched_max_job_start: the pass stops before its next record once it started that many
    for (const auto& [negp, sub, j] : ready) {
      if (depth_cut) {
        out.reason[j] = SimReason::Blocked;
        continue;
      }
      const double above_tier = -negp - std::floor(-negp / kPriorityTierScale) * kPriorityTierScale;
      const bool blocks = !(low > 0 && above_tier < low) &&
                          !(pol.backfill_min_age_reserve > 0 && t - jobs.submit[j] < pol.backfill_min_age_reserve);
      std::vector<uint32_t> queues(parts.queues_of(j).begin(), parts.queues_of(j).end());
      const bool several = !queues.empty();
      if (!several) queues.push_back(j < parts.queue_of_job.size() ? parts.queue_of_job[j] : kNone);
      const uint32_t need = fewest_taskers(jobs, j);
      bool started = false, behind = true, tested = false, throttled = false;
      for (size_t i = 0; i < queues.size(); ++i) {
        const uint32_t q = queues[i];
        if (pol.main_pass_max_starts > 0 && starts >= pol.main_pass_max_starts) {
          depth_cut = true;
          break;
        }
        if (q != kNone && pol.main_pass_partition_depth > 0 && reached[q]++ >= pol.main_pass_partition_depth) {
          part_skipped = true;
          continue;
        }
        if (depth > 0 && records++ > depth) {
          depth_cut = true;
          break;
        }
        if (!tested) {
          tested = true;
          if (!throttle_ok(j, running)) {
            throttled = true;
            break;
          }
        }
        if (q != kNone && failed[q]) continue;
        behind = false;
        if (q != kNone && any_held) {
          uint32_t up = 0;
          for (uint32_t x = 0; x < tk.size(); ++x) up += parts.taskers[q].contains(x) && !held[x] ? 1 : 0;
          if (up < need) {
            if (blocks) fail(q);
            continue;
          }
        }
        const bool within = several && q != kNone;
        std::vector<uint8_t> only(tk.size(), 0);
        for (uint32_t x = 0; x < tk.size(); ++x) only[x] = !held[x] && (!within || parts.taskers[q].contains(x));
        Pools trial = pools;
        const bool cut = (any_held || within) && jobs.choice_of(j) == kNone;
        const Placement pl = place(trial, j, cut ? &only : nullptr);
        if (!pl.empty()) {
          begin(j, t, pl, std::move(trial), running, false);
          started = true;
          ++starts;
          break;
        }
        if (j < parts.holds_own.size() && parts.holds_own[j]) {
          for (uint32_t x = 0; x < tk.size(); ++x)
            if (eligible(cat, tk, jobs, x, j)) held[x] = 1, any_held = true;
        } else if (q != kNone && blocks) {
          bool free = false;
          for (uint32_t x = 0; x < tk.size(); ++x) free = free || (only[x] && eligible(cat, tk, jobs, x, j));
          if (free) fail(q);
        }
      }
      if (throttled) out.reason[j] = SimReason::Throttled;
      else if (!started) out.reason[j] = behind || depth_cut ? SimReason::Blocked : SimReason::NoFreeCapacity;
    }
    if (full_pass && starts == 0) part_skipped = false;  // (the next full pass would skip the same)
  }

  void begin(uint32_t j, double t, const Placement& pl, Pools&& trial, std::vector<uint8_t>& running, bool backfilled) {
    pools = std::move(trial);
    out.start[j] = t;
    out.end[j] = t + duration(j);
    out.allocations[j] = pl;
    out.reason[j] = SimReason::None;
    out.backfilled[j] = backfilled ? 1 : 0;
    running[j] = 1;
    refresh(pools, running);
  }

  // A job on placement pl, expected to end at `end`, delays none of `others` (each starting before `end`
  // keeps its taskers, and no shared pool is charged while one does).
  bool leaves_alone(uint32_t j, const Placement& pl, const std::vector<Booked>& others, double end) const {
    bool any = false;
    for (const Booked& b : others) any = any || b.shadow < end;
    if (!any) return true;
    if (charges_shared(j)) return false;
    for (const Booked& b : others)
      if (b.shadow < end)
        for (const auto& [x, s] : pl)
          for (const auto& [y, s2] : b.placement)
            if (x == y) return false;
    return true;
  }

  // A pooled farm (engine/schedule/pool_profile.hpp, again from its definition): every job to schedule
  // spreads its slots ($fill_up) with no per-job charge, no choice and no fit unit, each slot taking one
  // unit of one and the same consumable held per tasker, and every one is eligible on the same taskers;
  // dedicated availability, no farm events, not Slurm's best fit. The book then holds counts of units over
  // time, not taskers.
  int pooled_state = 0;  // 0 not decided yet, 1 no, 2 yes
  size_t pool_k = 0;
  std::vector<uint32_t> pool_taskers;
  bool pooled() {
    if (pooled_state != 0) return pooled_state == 2;
    pooled_state = 1;
    if (pol.depth() <= 1 || pol.availability != ResourceAvailability::Dedicated || !farm.empty() ||
        pol.allocation == AllocationPolicy::ConsecutiveBestFit)
      return false;
    bool first = true;
    for (uint32_t j = 0; j < jobs.size(); ++j) {
      if (jobs.rejected(j)) continue;
      if (jobs.rule[j] != AllocationRule::FillUp || jobs.choice_of(j) != kNone ||
          !(jobs.fit_unit_of(j) == JobTable::FitUnit{}))
        return false;
      for (const double once : master_charge(cat, jobs, j))
        if (once > 0) return false;
      const auto need = charge(cat, jobs, j);
      size_t ks = 0, k = 0;
      for (size_t x = 0; x < need.size(); ++x)
        if (need[x] != 0) ++ks, k = x;
      if (ks != 1 || need[k] != 1.0 || col(k).multi_level() || (!first && k != pool_k)) return false;
      std::vector<uint32_t> set;
      for (uint32_t t = 0; t < tk.size(); ++t)
        if (eligible(cat, tk, jobs, t, j)) set.push_back(t);
      if (!first && set != pool_taskers) return false;
      for (const uint32_t t : set)
        if (!col(k).has(t)) return false;
      first = false;
      pool_k = k;
      pool_taskers = set;
    }
    pooled_state = first ? 1 : 2;
    return pooled_state == 2;
  }
  // Pooled: the units free at time `at` (>= now), counted from scratch: free now, the running jobs
  // ended by then (at their expected ends), less the booked reservations running then.
  double pool_free_at(double at, const std::vector<uint8_t>& running, const std::vector<Booked>& book) const {
    double free = 0;
    for (const uint32_t t : pool_taskers) free += std::floor(pools.queue[pool_k][t]);
    for (uint32_t j = 0; j < jobs.size(); ++j)
      if (running[j] && out.start[j] + estimate(j) <= at) free += jobs.slots[j];
    for (const Booked& b : book)
      if (b.shadow <= at && at < b.end) free -= jobs.slots[b.job];
    return free;
  }
  // Pooled: job j's slots are free at every time from `from` until `until` (the times the count changes).
  bool pool_free_throughout(uint32_t j, double now, double from, double until, const std::vector<uint8_t>& running,
                            const std::vector<Booked>& book) const {
    std::vector<double> times{from};
    for (uint32_t r = 0; r < jobs.size(); ++r)
      if (running[r]) times.push_back(out.start[r] + estimate(r));
    for (const Booked& b : book) times.push_back(b.shadow), times.push_back(b.end);
    for (const double at : times) {
      const double x = std::max(at, now);
      if (x >= from && x < until && pool_free_at(x, running, book) < jobs.slots[j]) return false;
    }
    return true;
  }
  // Pooled: the earliest time >= now, among now, the running jobs' expected ends and the booked ends,
  // from which job j's slots stay free for its estimate.
  bool pool_reserve(uint32_t j, double now, const std::vector<uint8_t>& running, const std::vector<Booked>& book,
                    Booked& out_b) {
    std::vector<double> times{now};
    for (uint32_t r = 0; r < jobs.size(); ++r)
      if (running[r]) times.push_back(std::max(now, out.start[r] + estimate(r)));
    for (const Booked& b : book) times.push_back(std::max(now, b.end));
    std::sort(times.begin(), times.end());
    const double est = estimate(j);
    for (const double at : times) {
      if (pool_free_at(at, running, book) < jobs.slots[j]) continue;
      if (!pool_free_throughout(j, now, at, at + est, running, book)) continue;
      out_b = Booked{j, at, at + est, {}, {}};
      if (std::isnan(out.reserved_at[j])) out.reserved_at[j] = at;
      return true;
    }
    return false;
  }

  // Reservation depth > 1 and conservative: reservations kept (per job) until their jobs start; a job
  // starts if it fits and delays no other job's; one that does not start gets one while fewer than the
  // depth are kept; one whose time has passed without its job starting is made again.
  std::map<uint32_t, Booked> kept;
  std::vector<double> wake_times;  // every reservation's start: the cycle times they add
  void cycle_with_book(double t, const std::vector<std::tuple<double, double, uint32_t>>& ready,
                       std::vector<uint8_t>& running) {
    // compression (Mu'alem and Feitelson): in priority order, each kept reservation made again beside all
    // the others, and taken if it starts earlier
    if (compress_due) {
      compress_due = false;
      for (const auto& [negp, sub, j] : ready) {
        if (!kept.count(j)) continue;
        const Booked old = kept[j];
        kept.erase(j);
        std::vector<Booked> all;
        for (const auto& [x, b] : kept) all.push_back(b);
        Booked b;
        const bool found = pooled() ? pool_reserve(j, t, running, all, b) : reserve(j, running, all, b);
        if (found && b.shadow < old.shadow) {
          kept[j] = b;
          wake_times.push_back(b.shadow);
        } else {
          kept[j] = old;
        }
      }
    }
    bool blocked = false;
    // Slurm's backfill (backfill_interval): no reservation past backfill_window; its node-space map: the
    // ends of its records, from one (now to the window's end, in resolution steps), split by each
    // reservation's start and end; a job about to reserve on a map of backfill_max_jobs records ends the
    // cycle. Jobs tried per user, per partition (its first), per user in a partition: over any limit, not
    // tried, counted for none.
    const bool slurm = pol.backfill_interval > 0;
    const double res = pol.backfill_resolution;
    auto step = [&](double x) { return res > 0 ? std::floor(x / res) * res : x; };
    const double map_begin = step(t);
    std::set<double> map_ends = {step(t + pol.backfill_window)};
    bool map_full = false;
    std::map<uint32_t, uint64_t> of_user, in_part;
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> of_user_in;
    // bf_max_job_assoc: per (account, owner), only where Slurm keeps associations (slurmdbd)
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> of_assoc;
    const bool per_assoc = pol.backfill_max_jobs_per_association > 0 && pol.slurm_priority.accounting;
    for (const auto& [negp, sub, j] : ready) {
      if (map_full) {
        out.reason[j] = SimReason::Blocked;
        continue;
      }
      if (slurm) {
        uint32_t q = kNone;
        if (pol.partitions) {
          const auto several = pol.partitions->queues_of(j);
          q = !several.empty() ? several[0] : pol.partitions->queue_of_job[j];
        }
        const uint32_t u = jobs.owner[j];
        const bool over = (q != kNone && pol.backfill_max_jobs_per_user_partition > 0 &&
                           of_user_in[{q, u}] >= pol.backfill_max_jobs_per_user_partition) ||
                          (q != kNone && pol.backfill_max_jobs_per_partition > 0 &&
                           in_part[q] >= pol.backfill_max_jobs_per_partition) ||
                          (per_assoc && of_assoc[{jobs.account[j], u}] >= pol.backfill_max_jobs_per_association) ||
                          (pol.backfill_max_jobs_per_user > 0 && of_user[u] >= pol.backfill_max_jobs_per_user);
        if (over) {
          out.reason[j] = SimReason::Blocked;
          continue;
        }
        if (q != kNone) ++of_user_in[{q, u}], ++in_part[q];
        if (per_assoc) ++of_assoc[{jobs.account[j], u}];
        ++of_user[u];
      }
      // backfill_min_priority_reserve: below it (above the tier), no reservation
      const double above_tier = -negp - std::floor(-negp / kPriorityTierScale) * kPriorityTierScale;
      const bool may_reserve =
          !(slurm && pol.backfill_min_priority_reserve > 0 && above_tier < pol.backfill_min_priority_reserve) &&
          !(slurm && pol.backfill_min_age_reserve > 0 && t - jobs.submit[j] < pol.backfill_min_age_reserve);
      if (!throttle_ok(j, running)) {
        out.reason[j] = SimReason::Throttled;
        kept.erase(j);
        continue;
      }
      const bool pool = pooled();
      // pooled: placed anew, when its time has come, or before if the others' slots stay free
      if (pool && kept.count(j)) {
        std::vector<Booked> others;
        for (const auto& [x, b] : kept)
          if (x != j) others.push_back(b);
        Pools trial = pools;
        const Placement pl = place(trial, j);
        const double end = t + estimate(j);
        bool alone = true;
        for (const Booked& b : others) alone = alone && !(b.shadow < end);
        if (!pl.empty() && (t >= kept[j].shadow || alone || pool_free_throughout(j, t, t, end, running, others))) {
          kept.erase(j);
          begin(j, t, pl, std::move(trial), running, blocked);
          continue;
        }
      }
      // on its reserved taskers, if they have room: when its time has come, or before if that delays
      // no other reservation
      if (!pool && kept.count(j)) {
        Pools trial = pools;
        bool room = true;
        for (const auto& [x, s] : kept[j].placement) room = room && !down[x];
        for (const auto& [k, x, amount] : charges(j, kept[j].placement)) {
          room = room && avail(trial, k, x) >= amount;
          add(trial, k, x, -amount);
        }
        std::vector<Booked> others;
        for (const auto& [x, b] : kept)
          if (x != j) others.push_back(b);
        if (room && (t >= kept[j].shadow || leaves_alone(j, kept[j].placement, others, t + estimate(j)))) {
          const Placement pl = kept[j].placement;
          kept.erase(j);
          begin(j, t, pl, std::move(trial), running, blocked);
          continue;
        }
      }
      std::vector<Booked> others;
      for (const auto& [x, b] : kept)
        if (x != j) others.push_back(b);
      const double end = t + estimate(j);
      bool must_avoid = false;
      for (const Booked& b : others) must_avoid = must_avoid || b.shadow < end;
      Pools trial = pools;
      // Slurm's backfill tries the job only on the taskers no other reservation starting before its end
      // holds (when some eligible one is held, it charges only its taskers' own pools and chooses nothing)
      std::vector<uint8_t> only;
      if (slurm && !pool && must_avoid && jobs.choice_of(j) == kNone && !charges_shared(j)) {
        only.assign(tk.size(), 1);
        bool any = false;
        for (const Booked& b : others)
          if (b.shadow < end)
            for (const auto& [x, s] : b.placement) {
              any = any || (eligible(cat, tk, jobs, x, j) && only[x]);
              only[x] = 0;
            }
        if (!any) only.clear();
      }
      const Placement pl = place(trial, j, only.empty() ? nullptr : &only);
      const bool fits = !pl.empty();
      const bool alone =
          pool ? !must_avoid || pool_free_throughout(j, t, t, end, running, others) : leaves_alone(j, pl, others, end);
      if (fits && alone) {
        kept.erase(j);
        begin(j, t, pl, std::move(trial), running, blocked);
        continue;
      }
      out.reason[j] = fits || must_avoid ? SimReason::Reservation : SimReason::NoFreeCapacity;
      blocked = true;
      if (kept.count(j) && t >= kept[j].shadow) kept.erase(j);
      if (!kept.count(j) && kept.size() < pol.depth() && may_reserve) {
        std::vector<Booked> all;
        for (const auto& [x, b] : kept) all.push_back(b);
        Booked b;
        if ((pool ? pool_reserve(j, t, running, all, b) : reserve(j, running, all, b, slurm)) &&
            !(slurm && b.shadow > t + pol.backfill_window)) {
          if (slurm && map_ends.size() >= pol.backfill_max_jobs) {  // a full map: the cycle ends here
            map_full = true;
            continue;
          }
          // Slurm: held from its start rounded down to bf_resolution to its end rounded down (one step at
          // least), and planned again in the next backfill cycle; else a cycle at its start
          if (slurm && pol.backfill_resolution > 0) {
            const double r = pol.backfill_resolution, s = std::floor(b.shadow / r) * r;
            b.end = std::max(std::floor(b.end / r) * r, s + r);
            b.shadow = s;
          }
          kept[j] = b;
          if (!slurm) wake_times.push_back(b.shadow);
          if (slurm) {
            map_ends.insert(std::max(b.shadow, map_begin));
            if (b.end < *map_ends.rbegin()) map_ends.insert(b.end);
          }
        }
      }
    }
  }

  bool charges_shared(uint32_t j) const {
    const auto need = charge(cat, jobs, j), once = master_charge(cat, jobs, j);
    for (size_t k = 0; k < need.size(); ++k)
      if ((need[k] > 0 || once[k] > 0) && col(k).multi_level()) return true;
    return false;
  }

  // The earliest time `head` fits: the running jobs end one at a time in order of their expected end
  // (start + estimate), and the booked reservations' ends pass, all in time order (at one time, the
  // running jobs' ends first); after each step the job is tried as a start then would be: a booked
  // reservation started by then holds its charges; one starting during the job's run must be left alone
  // (its taskers, and every shared pool).
  bool reserve(uint32_t head, const std::vector<uint8_t>& running, const std::vector<Booked>& book, Booked& out_b,
               bool slurm_map = false) {
    std::vector<std::tuple<double, int, uint32_t>> steps;  // (time, 0 running end / 1 booked end, job)
    for (uint32_t j = 0; j < jobs.size(); ++j)
      if (running[j]) steps.emplace_back(out.start[j] + estimate(j), 0, j);
    for (const Booked& b : book) steps.emplace_back(b.end, 1, b.job);
    std::sort(steps.begin(), steps.end());
    Pools future = pools;
    std::vector<uint8_t> holding = running;
    const double est = estimate(head);
    // the eligible taskers with nothing free now of some consumable head charges (or down); none when
    // every one has something free, or none has, or head chooses among solutions
    std::vector<uint8_t> busy_now;
    if (jobs.choice_of(head) == kNone) {
      busy_now.assign(tk.size(), 0);
      bool any_free = false, any_busy = false;
      const auto need = charge(cat, jobs, head);
      for (uint32_t x = 0; x < tk.size(); ++x) {
        if (!eligible(cat, tk, jobs, x, head)) continue;
        bool free_now = !down[x];
        for (size_t k = 0; k < need.size(); ++k) free_now = free_now && (!(need[k] > 0) || avail(pools, k, x) > 0);
        busy_now[x] = free_now ? 0 : 1;
        any_free = any_free || free_now;
        any_busy = any_busy || !free_now;
      }
      if (!any_free || !any_busy) busy_now.clear();
    }
    for (size_t step = 0; step < steps.size(); ++step) {
      const auto& [e, kind, j] = steps[step];
      if (kind == 0) {
        for (const auto& [k, x, amount] : charges(j, out.allocations[j])) add(future, k, x, amount);
        holding[j] = 0;
        refresh(future, holding);
        // every running job ending at e first, then one try
        if (step + 1 < steps.size() && std::get<0>(steps[step + 1]) == e && std::get<1>(steps[step + 1]) == 0) continue;
      }
      Pools trial = future;
      std::vector<uint8_t> pending(tk.size(), 0);  // the taskers of reservations that start during its run
      bool any_pending = false;
      for (const Booked& b : book) {
        if (b.end <= e) continue;
        if (b.shadow <= e) {  // running by then
          for (const auto& [k, x, amount] : charges(b.job, b.placement)) add(trial, k, x, -amount);
        } else if (b.shadow < e + est) {
          any_pending = true;
          for (const auto& [x, s] : b.placement) pending[x] = 1;
        }
      }
      if (any_pending && charges_shared(head)) continue;
      // Slurm's backfill (its node-space map): only on the taskers no booked reservation holds at any time
      // of the job's run, started or not
      if (slurm_map && jobs.choice_of(head) == kNone && !charges_shared(head)) {
        std::vector<uint8_t> only(tk.size(), 1);
        for (const Booked& b : book)
          if (b.end > e && b.shadow < e + est)
            for (const auto& [x, s] : b.placement) only[x] = 0;
        Placement pl = place(trial, head, &only);
        if (pl.empty()) continue;
        out_b = Booked{head, e, e + est, pl, future};
        if (std::isnan(out.reserved_at[head])) out.reserved_at[head] = e;
        return true;
      }
      // first on the taskers where the job has no room now (what is free now stays for backfill), then
      // anywhere it is eligible
      auto alone = [&](const Placement& pl) {
        if (pl.empty()) return false;
        for (const auto& [x, s] : pl)
          if (pending[x]) return false;
        return true;
      };
      Placement pl;
      if (!busy_now.empty()) {
        Pools busy_trial = trial;
        pl = place(busy_trial, head, &busy_now);
      }
      if (!alone(pl)) pl = place(trial, head);
      if (!alone(pl)) continue;
      out_b = Booked{head, e, e + est, pl, future};
      if (std::isnan(out.reserved_at[head])) out.reserved_at[head] = e;
      return true;
    }
    return false;
  }

  // ---- FBSNG (engine/schedule/fbsng.hpp's rules, written again from their text) ----
  std::vector<double> qprio;                     // per queue id
  std::vector<FbsngQueue> qparams;               // per queue id
  std::vector<double> sprio;                     // per job
  std::vector<std::vector<Request>> type_terms;  // per job: its process type's default requirement terms

  const FbsngProcessType* type_of(uint32_t j) const {
    const std::string name = cred(static_cast<int>(pol.process_type), j);
    for (const FbsngProcessType& pt : pol.fbsng.process_types)
      if (pt.name == name) return &pt;
    return nullptr;
  }

  void init_fbsng() {
    for (uint32_t q = 0; q < jobs.queues.size(); ++q) {
      FbsngQueue p = pol.fbsng.defaults;
      for (const FbsngQueue& x : pol.fbsng.queues)
        if (x.name == jobs.queues.value(q)) p = x;
      if (std::isnan(p.qp_max)) p.qp_max = p.qp_min + 100;
      qparams.push_back(p);
      qprio.push_back(p.qp_min);
    }
    sprio.assign(jobs.size(), 0.0);
    type_terms.assign(jobs.size(), {});
    for (uint32_t j = 0; j < jobs.size(); ++j) {
      const FbsngProcessType* pt = type_of(j);
      if (pt == nullptr || pt->requirements.empty()) continue;
      Request r = parse_request(pt->requirements, cat);
      std::vector<Request> terms = r.kind == Request::Kind::And ? r.kids : std::vector<Request>{r};
      const auto mine = mentioned_attributes(jobs.requests[jobs.request[j]]);
      for (const Request& term : terms) {
        bool named = false;
        for (uint32_t a : mentioned_attributes(term)) named = named || std::count(mine.begin(), mine.end(), a);
        if (!named) type_terms[j].push_back(term);
      }
    }
  }

  void queue_started(uint32_t q) { fbsng_queue_started(qprio, qparams, q); }

  // The process type's quotas on sections, slots and consumables hold with job j started.
  bool quota_ok(uint32_t j, const std::vector<uint8_t>& running) const {
    const FbsngProcessType* pt = type_of(j);
    if (pt == nullptr) return true;
    const std::string name = pt->name;
    uint64_t n = 0;
    double slots = 0;
    std::vector<double> amount(cat.consumables().size(), 0.0);
    for (uint32_t x = 0; x < jobs.size(); ++x)
      if (running[x] && cred(static_cast<int>(pol.process_type), x) == name) {
        ++n;
        slots += jobs.slots[x];
        for (const auto& [k, t, a] : charges(x, out.allocations[x])) amount[k] += a;
      }
    if (n + 1 > pt->max_sections || slots + jobs.slots[j] > pt->max_slots) return false;
    const auto need = charge(cat, jobs, j), once = master_charge(cat, jobs, j);
    for (size_t k = 0; k < amount.size(); ++k) {
      const double a = jobs.rule[j] != AllocationRule::PeSlots ? jobs.slots[j] * need[k] + once[k] : need[k];
      if (a > 0) amount[k] += a;
    }
    for (const auto& [cname, max] : pt->max_amount)
      for (size_t k = 0; k < amount.size(); ++k)
        if (cat.at(cat.consumables()[k]).name == cname && amount[k] > max) return false;
    return true;
  }

  void cycle_fbsng(double t, const std::vector<uint8_t>& submitted, const std::vector<uint8_t>& ended,
                   std::vector<uint8_t>& running, const Pools& idle) {
    std::vector<std::vector<uint32_t>> ready(qprio.size());
    for (uint32_t j = 0; j < jobs.size(); ++j) {
      if (!submitted[j] || !std::isnan(out.start[j]) || jobs.hold_until[j] > t) continue;
      bool deps = true;
      for (uint32_t d : jobs.depends[j]) deps = deps && ended[d];
      if (!deps) continue;
      Pools empty = idle;
      const std::vector<uint8_t> now_down = std::exchange(down, std::vector<uint8_t>(tk.size(), 0));
      const bool fits_idle = !place(empty, j).empty();
      down = now_down;
      if (fits_idle) ready[jobs.queue[j]].push_back(j);
    }
    auto in_line = [&](std::vector<uint32_t>& v) {
      std::erase_if(v, [&](uint32_t j) { return !std::isnan(out.start[j]); });
      std::sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) {
        return std::make_tuple(-sprio[a], jobs.submit[a], a) < std::make_tuple(-sprio[b], jobs.submit[b], b);
      });
    };
    while (true) {
      std::vector<uint32_t> order;
      for (uint32_t q = 0; q < ready.size(); ++q) {
        in_line(ready[q]);
        if (!ready[q].empty()) order.push_back(q);
      }
      std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return std::make_tuple(-qprio[a], jobs.submit[ready[a][0]], jobs.queues.value(a)) <
               std::make_tuple(-qprio[b], jobs.submit[ready[b][0]], jobs.queues.value(b));
      });
      double holds_below = -std::numeric_limits<double>::infinity();
      bool any = false;
      for (uint32_t q : order) {
        if (qprio[q] < holds_below) continue;
        long head = -1;
        for (uint32_t x : ready[q]) {
          if (head >= 0 && sprio[head] - sprio[x] >= qparams[q].spg) break;
          if (!throttle_ok(x, running) || !quota_ok(x, running)) continue;
          Pools trial = pools;
          const Placement pl = place(trial, x);
          if (pl.empty()) {
            if (head < 0) head = x;
            continue;
          }
          pools = std::move(trial);
          out.start[x] = t;
          out.end[x] = t + duration(x);
          out.allocations[x] = pl;
          out.reason[x] = SimReason::None;
          running[x] = 1;
          refresh(pools, running);
          if (head >= 0 &&
              std::make_pair(jobs.submit[head], static_cast<uint32_t>(head)) < std::make_pair(jobs.submit[x], x))
            sprio[head] += 1;
          any = true;
          break;
        }
        if (any) {
          queue_started(q);
          break;
        }
        if (head >= 0) holds_below = std::max(holds_below, qprio[q] - qparams[q].qpg);
      }
      if (!any) return;
    }
  }

  std::string cred(int kind, uint32_t x) const {
    switch (kind) {
      case 0: return jobs.owners.value(jobs.owner[x]);
      case 1: return jobs.groups.value(jobs.group[x]);
      case 2: return jobs.queues.value(jobs.queue[x]);
      case 3: return jobs.accounts.value(jobs.account[x]);
      default: return jobs.qos_names.value(jobs.qos[x]);
    }
  }

  bool throttle_ok(uint32_t j, const std::vector<uint8_t>& running) const {
    for (int kind = 0; kind < 5; ++kind) {
      const std::string mine = cred(kind, j);
      uint64_t max_jobs = std::numeric_limits<uint64_t>::max();
      double max_slots = std::numeric_limits<double>::infinity();
      for (const Throttle& th : pol.throttles)  // a default limit, then a named one wins
        if (static_cast<int>(th.kind) == kind && th.name.empty()) max_jobs = th.max_jobs, max_slots = th.max_slots;
      for (const Throttle& th : pol.throttles)
        if (static_cast<int>(th.kind) == kind && th.name == mine && !th.name.empty())
          max_jobs = th.max_jobs, max_slots = th.max_slots;
      uint64_t count = 0;
      double slots = 0;
      for (uint32_t x = 0; x < jobs.size(); ++x)
        if (running[x] && cred(kind, x) == mine) ++count, slots += jobs.slots[x];
      if (count + 1 > max_jobs || slots + jobs.slots[j] > max_slots) return false;
    }
    return true;
  }
  bool compress_due = false;  // a job ended before its walltime since the last cycle (compression)
  double next_bf = -std::numeric_limits<double>::infinity();    // backfill_interval: the next backfill cycle
  double next_full = -std::numeric_limits<double>::infinity();  // sched_interval: the next full main pass
  bool full_pass = false, depth_cut = false;  // this cycle's main pass is a full one; one stopped at the depth
  bool part_skipped = false;                  // the last main pass skipped a record by partition_job_depth
  bool since_bf = false;  // a main pass since the last backfill cycle (else the next one would start nothing)
  bool slurm_backfill() const { return pol.backfill_interval > 0 && pol.backfill != BackfillPolicy::None; }
};

}  // namespace

SimOutcome simulate(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs, const SimConfig& policy,
                    const FarmEvents& farm) {
  Sim s{catalog, taskers, jobs, policy, farm, {}, {}, {}, {}, 0, {}, {}, {}, {}, {}, {}, {}, {}, {}, false};
  s.run();
  return std::move(s.out);
}

void fbsng_queue_started(std::vector<double>& priority, const std::vector<FbsngQueue>& params, uint32_t q) {
  for (size_t i = 0; i < priority.size(); ++i) priority[i] = std::min(params[i].qp_max, priority[i] + params[i].qpi);
  priority[q] -= params[q].qpd;
  double m = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < priority.size(); ++i) m = std::min(m, priority[i] - params[i].qp_min);
  for (size_t i = 0; i < priority.size(); ++i) priority[i] = std::min(params[i].qp_max, priority[i] - m);
}

}  // namespace colmatch::naive
