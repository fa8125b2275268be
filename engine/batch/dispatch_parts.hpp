// Which job categories can interfere in a batch dispatch, and which cannot: the parts the dispatch may
// walk side by side (issue 29).
//
// The batch dispatch (dispatch.hpp) takes capacity in priority order; two categories interfere when a job
// of one may take capacity from a pool a job of the other may take from. Categories in different parts
// never do, so each part walked alone in dispatch order, on its own thread, makes the same placements as
// the one walk over every job: the placements of a category depend only on the pools its part takes from.
// The pools a category may take from: the tasker-level pools of the consumables it charges (per slot
// instance or per job, a default included) on the taskers eligible for it; categories charging such pools
// on a common tasker are in one part (whichever consumables they charge there: simple, and each tasker's
// pools and block maxima belong to one walk). A consumable with a host or a global pool anywhere counts as
// one farm-wide pool (every category charging it is in one part: SGE's host-level consumables are few). A
// category that chooses (Altair Accelerator's solutions) is one with its solutions and with the farm-wide
// pools of its gate; one with a fallback (Slurm's --prefer) with the fallback's category.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/match/categories.hpp"
#include "engine/match/eligibility.hpp"
#include "engine/model/capacity.hpp"

namespace colmatch {

/// Categories grouped so that no two groups take from one pool.
struct DispatchParts {
  /// per category: its part (0 .. count - 1), or kNone for a category that takes from no pool in the
  /// dispatch (no eligible tasker and no gate: its jobs pend without a placement).
  std::vector<uint32_t> part_of;
  size_t count = 0;  ///< number of parts; numbered by their smallest category, ascending
};

/// The parts of `cats` over `eligible` (one match result per category) for the pools of `capacity`.
/// Work: O(sum over the categories charging tasker-level pools of their eligible taskers, and of the
/// 64-tasker words of the dense sets among them), bounded: when that sum would pass `budget`, every
/// category with a tasker is put in one part (the walk is then the sequential one).
DispatchParts dispatch_parts(const Categories& cats, const JobTable& jobs,
                             const std::vector<CategoryEligibility>& eligible, const Capacity& capacity,
                             uint64_t budget);

}  // namespace colmatch
