#include "engine/schedule/simulation.hpp"

#include <cmath>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "engine/batch/queue_blocking.hpp"
#include "engine/schedule/fbsng.hpp"
#include "engine/schedule/moab.hpp"
#include "engine/schedule/world.hpp"

namespace colmatch {

namespace {

// The event loop: the next cycle's time from the next event (rounded up to the interval, no sooner than
// min_interval after the last cycle), then ends, farm changes, submits and wake-ups due by then, then
// the policy's cycle.
SimResult run(SimWorld& w, Scheduler& policy, const SimProgress& progress) {
  const SimConfig& p = w.policy;
  size_t next = 0;  // next arrival
  double last_cycle = -std::numeric_limits<double>::infinity();
  while (true) {
    const double event = std::min(w.next_event(next), policy.next_wake());
    if (!std::isfinite(event)) break;
    double t = event;
    if (p.interval > 0) {  // the first multiple of the interval at or after the event
      const double n = std::ceil(event / p.interval);
      t = n * p.interval;
      if (t < event) t = (n + 1) * p.interval;  // event / interval rounded down to a whole number
      // never before the event, so that every cycle takes at least one and the loop advances whatever the
      // rounding (SimWorld refuses the intervals that would lean on this, as far as it can foresee)
      t = std::max({t, event, last_cycle + p.interval});
    }
    if (p.min_interval > 0) t = std::max(t, last_cycle + p.min_interval);
    if (t > p.until) break;
    while (!w.ends.empty() && w.ends.top().first <= t) {  // 1. capacity comes back
      const uint32_t j = w.ends.top().second;
      w.ends.pop();
      w.finish(j, t);
      policy.ended(j, t);
    }
    w.apply_farm_events(t);
    while (next < w.arrivals.size() && w.jobs.submit[w.arrivals[next]] <= t) {
      const uint32_t j = w.arrivals[next++];
      w.submit(j);
      policy.submitted(j, t);
    }
    while (!w.wakes.empty() && w.wakes.top().first <= t) {
      const uint32_t j = w.wakes.top().second;
      w.wakes.pop();
      policy.woke(j, t);
    }
    // A fast cycle decides the same starts as a full one but not every waiting job's reason; the last
    // cycle of the run, whose reasons are reported, is always a full one.
    policy.cycle(t, p.full_cycles || w.might_be_last(next, t));
    last_cycle = t;
    if (progress && (w.res.cycles & 1023) == 0) progress(t, w.ended_count, w.arrivals.size());
  }
  if (progress) progress(last_cycle, w.ended_count, w.arrivals.size());
  w.finish_removals();
  w.name_pool_waits();
  return std::move(w.res);
}

SimResult run(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs, const SimConfig& policy,
              const kernels::KernelTable& k, const FarmEvents& farm, const SimProgress& progress) {
  SimWorld w(catalog, taskers, jobs, policy, k, farm);
  std::unique_ptr<Scheduler> p;
  if (policy.scheduler == SchedulerKind::Fbsng) p = make_fbsng_scheduler(w);
  else p = std::make_unique<MoabScheduler>(w);
  w.set_policy(p.get());
  return run(w, *p, progress);
}

}  // namespace

SimResult simulate(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs, const SimConfig& policy,
                   const kernels::KernelTable& k, const FarmEvents& farm, const SimProgress& progress) {
  // Slurm's partitions name each job's (SimConfig::partitions): of these jobs and taskers, or none
  if (const BlockingQueues* parts = policy.partitions.get())
    if (parts->queue_of_job.size() != jobs.size() ||
        (!parts->several_first.empty() && parts->several_first.size() != jobs.size() + 1) ||
        (!parts->taskers.empty() && parts->taskers[0].universe() != taskers.size()))
      throw std::invalid_argument(
          fmt::format("the policy's Slurm partitions are of {} jobs, the run has {} (a policy loaded with other jobs)",
                      parts->queue_of_job.size(), jobs.size()));
  // Jobs of a shape only `match` places are rejected here, each naming why (SimReason::Rejected, SimResult::detail),
  // and the others simulated
  std::vector<std::pair<uint32_t, std::string>> refused;
  for (uint32_t j = 0; j < jobs.size(); ++j)
    if (!jobs.rejected(j) && by_host(jobs.rule[j]) && jobs.pe_shape_of(j).min_slots > 0)
      refused.emplace_back(j,
                           "a Grid Engine slot range (-pe NAME MIN-MAX) is `match`'s only; the simulator places a "
                           "parallel job of a fixed slot count");
    else if (!jobs.rejected(j) && by_host(jobs.rule[j]) && jobs.pe_shape_of(j).master != kNone)
      refused.emplace_back(j,
                           "Grid Engine's -masterq is `match`'s only; the simulator places a parallel job's "
                           "master where its host rule puts it");
    else if (!jobs.rejected(j) && jobs.rule[j] == AllocationRule::OnePerTasker && jobs.pe_shape_of(j).min_slots > 0)
      refused.emplace_back(j,
                           "a node count range (Slurm's -N MIN-MAX) is `match`'s only; the simulator places a job "
                           "of a fixed node count");
  if (!refused.empty()) {
    JobTable kept = jobs;
    for (const auto& [j, why] : refused) {
      kept.reject.set(j, static_cast<uint32_t>(kept.reject_reason.size()));
      kept.reject_reason.push_back(why);
    }
    SimResult r = simulate(catalog, taskers, kept, policy, k, farm, progress);
    for (const auto& [j, why] : refused) r.detail.set(j, why);
    return r;
  }
  try {
    if (policy.scheduler == SchedulerKind::Fbsng)  // P2: process types' default requirements
      if (std::optional<JobTable> with = fbsng_apply_requirements(policy.fbsng, policy.process_type, catalog, jobs))
        return run(catalog, taskers, *with, policy, k, farm, progress);
    return run(catalog, taskers, jobs, policy, k, farm, progress);
  } catch (const PolicyError& e) {
    if (policy.source.empty()) throw;
    throw PolicyError(policy.source + ": " + e.what());  // the file the policy was read from
  }
}

}  // namespace colmatch
