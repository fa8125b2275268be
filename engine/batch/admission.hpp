// Whether a job could ever run on a farm as configured: each job alone on every tasker, up and empty.
// The question a scheduler asks at submit to refuse what no state of the farm would ever run: Slurm's
// job_allocate (job_mgr.c) runs select_nodes on the submitted job, and a request whose node selection
// fails even over every node of its partitions in any state (node_scheduler.c _build_node_list: no node
// configuration satisfies its features, CPUs, memory, GRES, -w or -x; _pick_best_nodes: not enough such
// nodes for its node count, "runable_ever") is refused with ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE,
// "Requested node configuration is not available", where one the farm's state keeps out (down, drained,
// busy) stays pending.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/batch/dispatch.hpp"
#include "engine/model/jobs.hpp"
#include "engine/model/taskers.hpp"
#include "kernels/kernels.hpp"

namespace colmatch {

/// How much of a job's chance to run is asked (per job; never_runnable).
enum class EverCheck : uint8_t {
  None,      ///< not asked (the job is not refused, whatever its request)
  Eligible,  ///< some tasker is eligible (its configured capacity holds one slot's charges)
  Placed,    ///< the job alone has a placement on the empty farm (every slot, node picks, choices)
};

/// Per job (jobs.size()): 1 when job j, asked as check[j] says, could never run on `taskers` as
/// configured (Capacity::configured: every pool full), 0 otherwise and for rejected jobs. Placements are
/// tried as `options` place (its allocation policy and fit consumables; its blocking queues are not
/// read): under ConsecutiveBestFit a multi-tasker job takes every tasker from one soft tier (Slurm: one
/// choice of a matching OR). One job of each job category is tried (its jobs ask the same).
/// check.size() must equal jobs.size() (throws std::invalid_argument otherwise). O(categories x taskers /
/// 64) for eligibility and one placement per category.
std::vector<uint8_t> never_runnable(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                                    std::span<const EverCheck> check, const kernels::KernelTable& k,
                                    const DispatchOptions& options);

}  // namespace colmatch
