// What the batch dispatch returns and the options it runs with (engine/batch/dispatch.hpp runs it): a job's
// status and pending reason, the allocations, and how the walk is run. Apart from dispatch.hpp so that the
// walk (engine/batch/walk.hpp) and Slurm's main pass read them without the dispatch's entry points.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/batch/queue_blocking.hpp"
#include "engine/model/capacity.hpp"
#include "engine/placement/placer.hpp"
#include "kernels/tasker_set.hpp"

namespace colmatch {

/// A job's state after dispatch: placed, waiting (with a PendingReason), or rejected (refused by its loader,
/// or removed when dispatched: DispatchResult::removed).
enum class JobStatus : uint8_t { Assigned, Pending, Rejected };
/// Why a job is pending after dispatch. The last two come from blocking queues (queue_blocking.hpp,
/// Slurm's main scheduling pass): BehindHigherPriority is Slurm's Reason `Priority` (a job before it in
/// its queue could not start), TaskersHeld is Slurm's `Resources` with "Nodes required for job are
/// DOWN, DRAINED or reserved for jobs in higher priority partitions" (every tasker of its queue is held
/// for a job of another queue that could not start), EligibleHeld Slurm's `ReqNodeNotAvail` (its queue
/// has taskers left, but every tasker eligible for the job is held: it waits without blocking its queue).
enum class PendingReason : uint8_t {
  None,
  NoEligibleTasker,
  NoFreeCapacity,
  BehindHigherPriority,
  TaskersHeld,
  EligibleHeld
};

/// What a dispatch gives: per job its status, tasker and pending reason, the allocations, and the capacity
/// left. Columns of jobs.size() (JobTable order).
struct DispatchResult {
  std::vector<JobStatus> status;  ///< per job
  std::vector<uint32_t> tasker;   ///< per job: tasker index (rank order; the master for $fill_up) or kNone
  /// Allocations of assigned jobs, job by job in dispatch order; job j's are
  /// allocations[alloc_first[j], alloc_first[j] + alloc_count[j]).
  std::vector<Allocation> allocations;
  std::vector<uint32_t> alloc_first, alloc_count;
  std::vector<PendingReason> reason;  ///< per job
  /// Jobs removed when dispatched (status Rejected though their input was good: an Accelerator job whose
  /// walk through the maps reached a cycle, JobTable::Choice::gate), with why, in dispatch order.
  std::vector<std::pair<uint32_t, std::string>> removed;
  /// Free capacity after dispatch (see Capacity).
  Capacity capacity;
  uint64_t assigned = 0, pending = 0, rejected = 0;
};

/// How the batch dispatch runs. The results are the same whichever it is, and for any number of threads
/// (issue 29).
struct DispatchOptions {
  enum class Parts : uint8_t {
    Auto,    ///< the parts side by side where it pays: more than one thread, and no part with 7/8 of the jobs
    Always,  ///< the parts side by side whenever there are several (the differential test)
    Never,   ///< one walk over every job
  };
  /// Whether the parts of the batch that cannot interfere (dispatch_parts.hpp) are walked side by side
  /// on the task scheduler's threads, each with its Capacity lane. Blocking queues walk once.
  Parts parts = Parts::Auto;
  /// How a job's tasker is chosen (seed 001's allocation policies; Slurm's ConsecutiveBestFit).
  AllocationPolicy allocation = AllocationPolicy::GreatestPower;
  /// The consumable ConsecutiveBestFit counts free units of (index in catalog.consumables()).
  size_t fit_consumable = 0;
  /// The consumable a job's JobTable::FitUnit limit is of (Slurm: memory, for --mem-per-cpu); SIZE_MAX: none.
  size_t fit_limit = SIZE_MAX;
  /// Slurm's main scheduling pass (queue_blocking.hpp): a job that cannot start blocks its queue and
  /// holds the queue's taskers from every later job. Null: no queue blocks.
  std::shared_ptr<const BlockingQueues> queues;
  /// With queues, Slurm's SchedulerParameters for every pass (job_scheduler.c _schedule): the walk stops once
  /// it has started `max_starts` jobs (sched_max_job_start), and tries at most `queue_depth` records of each
  /// queue (partition_job_depth); the jobs it does not try pend behind higher-priority ones (Slurm's
  /// Priority). 0: no limit.
  uint64_t max_starts = 0, queue_depth = 0;
  /// With queues->busy_consumable: per category its taskers by request alone (evaluate_category without
  /// charges), for QueueBlocks::any_busy. The dispatch that takes a Catalog computes it when null; the
  /// sequential one then reads it (null there: no tasker is busy).
  std::shared_ptr<const std::vector<kernels::TaskerSet>> requested;
  /// Grid Engine's load correction within the run (engine/placement/load_correction.hpp): the queue sort
  /// changes with every placement, so the batch is one walk (no parts) and its Placer orders the taskers
  /// by it (Placer::correct_loads). Null: the taskers' rank order throughout.
  std::shared_ptr<const LoadCorrection> load_correction;
};

}  // namespace colmatch
