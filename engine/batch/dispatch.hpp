// The batch dispatch (colmatch match): a greedy pass in priority order that consumes capacity.
//
// Order: priority descending, then submit time ascending, then input order (Moab's prioritized
// feasible-job list, seed 001). Each job gets the eligible tasker with the greatest effective power
// (Altair Accelerator, seed 000) that has free capacity >= its charge for every consumable, all of its
// slots on that one tasker; ties go to the lowest input index (taskers are stored in that rank order).
// A $fill_up job (seed 002, example E2) instead fills taskers in the same order, each with as many of its
// slots as its free capacity takes, the per-job charges on the first (master) tasker; if its slots do
// not all fit, nothing is placed (the tentative charges are undone from saved values, exactly).
// A consumable defined on several levels is a pool on each (Grid Engine: global, host, queue); a job
// takes its charge from every pool above its tasker and fits only where all of them have room.
//
// Cost: capacity only decreases within one Capacity epoch (no release), and every job of a category has
// the same charge, so a tasker that cannot fit a category's job now never will; each category keeps a
// cursor into its eligibility set that only moves forward while the epoch lasts (DispatchCursors). Total O(sum over
// categories of eligible taskers visited + jobs), with next() over dense words skipping 64 taskers a step and O(log)
// over Roaring sets, and whole blocks of 64 taskers skipped where the largest free amount of a charged consumable is
// too small. A category settles (every later job of it pends, for one reason) once one of its jobs finds no
// room; the walk stops when every category with jobs left has settled, and the jobs after it pend in
// parallel. Categories that take from no common pool (dispatch_parts.hpp) are walked side by side, each
// part in dispatch order, with the same results as one walk (issue 29).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/batch/dispatch_result.hpp"
#include "engine/batch/queue_blocking.hpp"
#include "engine/match/categories.hpp"
#include "engine/match/eligibility.hpp"
#include "engine/model/capacity.hpp"
#include "engine/model/jobs.hpp"
#include "engine/model/taskers.hpp"
#include "engine/placement/placer.hpp"
#include "kernels/tasker_set.hpp"

namespace colmatch {
/// Text used in results.csv for a pending reason.
const char* reason_text(PendingReason r) noexcept;

/// Room on a category's eligible taskers for one consumable it charges, after dispatch (why a job that
/// has eligible taskers is pending): the charge, the largest amount free on an eligible tasker (every pool
/// above it counted, Capacity::available), and how many eligible taskers have the charge free.
struct Room {
  size_t consumable = 0;  ///< index in catalog.consumables()
  double charge = 0, largest_free = 0;
  uint64_t with_room = 0;
};

/// One Room per consumable with need[k] > 0, over the taskers of `eligible`. O(eligible x consumables).
std::vector<Room> room_on_eligible(const Capacity& capacity, const kernels::TaskerSet& eligible,
                                   const ChargeVector& need);

/// The order jobs are considered in: priority descending, then submit time ascending, then input order
/// (rejected jobs excluded). O(n) when the jobs are in that order already; with at most 256 priorities a
/// parallel counting sort by priority, each level sorted by submit time where it is not in order already;
/// else a parallel sort. Every pass is parallel over pieces of 64 Ki jobs (dispatch_order.cpp).
std::vector<uint32_t> dispatch_order(const JobTable& jobs);

/// Runs the greedy dispatch from configured capacity, less `in_use` when given (what the farm's running
/// jobs hold; eligibility stays the configured capacity's, so a job that waits for them is pending for
/// capacity, not ineligible). `eligible[c]` is category c's match result; where it has soft tiers, the
/// job goes to the first tier with a fitting tasker (fewest violations first, then effective power).
/// `options` choose the allocation policy and blocking queues (Slurm's main pass: one walk). Deterministic:
/// the result does not depend on options.parts or the number of threads (the parts are walked in
/// parallel, each in dispatch order). result.capacity is what is left (its queue totals
/// summed again from the pools after a parallel walk: Capacity::settle).
/// `k`: the kernels of the match (run_match's), for the evaluations the dispatch makes itself (blocking
/// queues' taskers by request alone).
DispatchResult dispatch(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                        const Categories& cats, const std::vector<CategoryEligibility>& eligible,
                        const kernels::KernelTable& k, const InUse* in_use = nullptr,
                        const DispatchOptions& options = {});

/// The sequential dispatch, one walk over every job, from a given Capacity (carried over from a previous
/// cycle), with cursors that live as long as the caller keeps them (synced to capacity's epoch here).
/// result.capacity is left empty; the charges are taken from `capacity` (taskers a blocked queue held
/// are given back at the end). `options.parts` is not read.
DispatchResult dispatch(const TaskerTable& taskers, const JobTable& jobs, const Categories& cats,
                        const std::vector<CategoryEligibility>& eligible, Capacity& capacity, DispatchCursors& cursors,
                        const DispatchOptions& options = {});

}  // namespace colmatch
