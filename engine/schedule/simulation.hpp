// Scheduling over time: jobs arrive, wait, start, run and end, and the scheduler runs cycle after
// cycle. The default scheduler is Moab's scheduling iteration (seed 001) in its order:
//   1. refresh resources: R.Available = R.Configured - R.Dedicated (what running jobs were charged;
//      Capacity::release gives a job's charge back when it ends), with the farm's own changes due by
//      then applied (FarmEvents: taskers down, up, reconfigured);
//   2. feasible jobs: submitted, not held, dependencies ended, some tasker eligible;
//   3. priority: a weighted sum of factors (credential priority, minutes queued, expansion factor, slots);
//   4. throttling per credential (user, group, class, account): running jobs and slots;
//   5. allocation: the job's taskers by the node allocation policy (Placer);
//   6. backfill: none (strict priority order: the first job that cannot start blocks the rest), greedy
//      (every job that fits starts), EASY (the first blocked job gets a reservation at the earliest time
//      it fits, from the running jobs' walltime estimates; a later job starts now only if it ends by
//      then or the reserved job still fits then beside it), or a deeper book of kept reservations
//      (reservation depth, conservative).
// FBSNG's dynamic priorities (seed 004) are the other scheduler (SimConfig::scheduler).
// Matching is the columnar engine's: job categories, their eligibility computed once (lazily, when a
// category's first job is submitted), dispatch cursors that live across cycles and are pulled back
// only to the taskers whose capacity grew (a job ended there, it came up or was enlarged).
//
// Where each part lives (engine/schedule/): result (the schedule a run returns), world (what every scheduler shares:
// capacity, the running set, ends and wake-ups, the farm's events, start and finish, eligibility on a category's first
// submit, the result), availability (step 1's R.Utilized), throttles (step 4, with lazy unparking),
// reservation (step 6's reservation), backfill (step 6's pass), moab (steps 2-6), fbsng (seed 004), and
// simulation.cpp (the event loop over the world and one policy, through Scheduler's hooks).
//
// Cost: when no priority factor depends on time, a cycle visits what can change the schedule (ready
// jobs up to the first that does not fit; with EASY, one candidate per category per start; parked
// held, dependency-waiting and throttled jobs only when their event comes; engine/schedule/waiting.hpp),
// not every waiting job, and gives the same schedule as the full cycle that does (SimConfig::
// full_cycles). The run's last cycle is a full one, which sets every waiting job's reason.
//
// Times are seconds (doubles). A job runs min(runtime, walltime) seconds: a scheduler ends a job at its
// walltime, which keeps EASY's reservations honest.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/schedule/events.hpp"
#include "engine/schedule/policy.hpp"
#include "engine/schedule/result.hpp"

namespace colmatch {

/// Progress of a run: the simulated time reached (seconds), the jobs that have ended, the jobs to
/// schedule (not rejected). Called every 1,024 cycles and once at the end, on the simulating thread.
using SimProgress = std::function<void(double time, uint64_t ended, uint64_t jobs)>;

/// Runs the simulation. `jobs` carry submit, runtime, walltime, holds, dependencies and credentials;
/// `farm` the taskers' changes over time (applied in a cycle before its submits, after its ends).
/// Deterministic; the result does not depend on the thread count. Allocates O(jobs + taskers). A job of a
/// shape only the batch dispatch places (a Grid Engine host rule, a Slurm node count range) is rejected
/// (SimReason::Rejected, SimResult::detail says why; the others run as if it were not there).
/// Throws PolicyError for a policy the farm cannot take (FBSNG: a queue's parameters, a quota on an
/// unknown consumable, process-type requirements), its message starting with SimConfig::source;
/// std::invalid_argument for a farm event naming a
/// tasker or consumable that does not exist, SimConfig::partitions of other jobs or taskers,
/// events out of time order, or a Configure on a consumable with a host or global pool.
SimResult simulate(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs, const SimConfig& policy,
                   const kernels::KernelTable& k, const FarmEvents& farm = {}, const SimProgress& progress = {});

}  // namespace colmatch
