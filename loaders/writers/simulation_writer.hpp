// Outputs of `colmatch simulate`, written into one folder, each file to a temporary name and renamed:
//   schedule.csv  job,submit,start,end,wait,tasker,slots,queue,user,status,reason: one row per tasker a
//                 started job used (status started); a job that never started has one row with status
//                 pending (its last reason) or rejected (why), start/end/wait/tasker empty. Input order.
//   metrics.json  utilisation over the makespan: per consumable, what started jobs held (amount-seconds)
//                 over what the taskers' own pools offered while up (Dataset::farm); `utilisation` is
//                 that of "slots" (busy slot-seconds / offered slot-seconds), else of the first
//                 consumable, else jobs over taskers (`utilisation_of` says which); waits (mean,
//                 median, p95), mean bounded slowdown (tau = 10 s), makespan, starts and slot-share per
//                 queue, user and group, jobs held / throttled (held back by a limit when a cycle looked
//                 at them: see SimResult::was_throttled) / backfilled, cycles and per-cycle time.
//   timeline.csv  time,running,queued,used_<consumable>...,offered_<consumable>...: the last cycle of each
//                 simulated minute; used = what running jobs hold, offered = what the taskers that are up
//                 offer at that time (their own, queue-level amounts, the farm's events applied).
//   cycles.csv    time,cycles,scheduler_us,max_cycle_us: per simulated minute with cycles (time = its
//                 first cycle), the wall-clock time the scheduler spent in them. Measured, so it differs
//                 from run to run, unlike every other file.
//   summary.json  counts, categories evaluated, seconds (load, simulate), threads, instruction set.
#pragma once

#include <string>

#include "engine/schedule/simulation.hpp"
#include "loaders/dataset.hpp"

namespace colmatch::writers {

struct SimRunInfo {
  std::string format;
  unsigned threads = 1;
  double load_s = 0, simulate_s = 0;
  kernels::Isa isa = kernels::Isa::Scalar;
  bool huge_pages = false;  ///< the heap is mapped with transparent huge pages (summary.json's huge_pages)
};

/// Which files of a run are written (`simulate --write`): a study that reads only the figures need not
/// write a 135 MB schedule.csv per point (issue 46). metrics.json's and summary.json's bytes are the same
/// whatever is written (summary.json's timings aside).
enum class SimOutputs : uint8_t {
  All,       ///< the five files
  Schedule,  ///< schedule.csv, metrics.json, summary.json (what a sweep's report reads)
  Metrics,   ///< metrics.json and summary.json
};

/// Writes the files `which` asks for into `dir` (created if missing), as one set. Throws WriteError.
void write_simulation(const std::string& dir, const loaders::Dataset& ds, const SimResult& r, const SimRunInfo& info,
                      SimOutputs which = SimOutputs::All);

/// The text of summary.json (also printed by the CLI): counts, and what was measured on the wall clock
/// (seconds per phase, `cycle_ms`: p50/p99/max/mean of the scheduler's time per cycle), so it differs
/// from run to run.
std::string simulation_summary_json(const loaders::Dataset& ds, const SimResult& r, const SimRunInfo& info);

/// The text of metrics.json: the schedule's figures only (waits, slowdown, utilisation, shares), a
/// function of the inputs and the policy: the same bytes for the same run (sweeps compare it as such).
std::string simulation_metrics_json(const loaders::Dataset& ds, const SimResult& r);

/// The text of schedule.csv (see write_simulation; also the Python module's schedule frame).
std::string schedule_csv(const loaders::Dataset& ds, const SimResult& r);

/// The text of timeline.csv (see write_simulation).
std::string timeline_csv(const loaders::Dataset& ds, const SimResult& r);

/// The text of cycles.csv (see write_simulation).
std::string cycles_csv(const SimResult& r);

}  // namespace colmatch::writers
