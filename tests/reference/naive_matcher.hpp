// The reference matcher: deliberately naive, row by row. For each job in priority order it evaluates
// the job's request against every tasker directly from that tasker's values, then scans all taskers
// for the one with the greatest effective power (ties: lowest input index) that has free capacity.
// No categories, no bitmasks, no kernels, no cursors: the fast path is compared against this.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "engine/batch/dispatch.hpp"

namespace colmatch::naive {

/// Whether tasker row `t` satisfies request `r`, level by level (global, host, queue): a level with the
/// attribute that does not match rejects, a level without it defers, no level with it fails the clause.
bool satisfies(const TaskerTable& taskers, uint32_t t, const Request& r);

/// Column `col`'s queue-level numbers, one per tasker (0 where absent), read row by row.
std::vector<double> queue_values(const Column& col, size_t taskers);

/// The charge of job j per consumable (catalog.consumables() order), written out plainly: for a
/// $pe_slots job the whole job on one tasker; for a $fill_up job one slot instance.
std::vector<double> charge(const Catalog& catalog, const JobTable& jobs, uint32_t j);

/// For a $fill_up job: the per-job charges paid once on its master tasker (zeros otherwise).
std::vector<double> master_charge(const Catalog& catalog, const JobTable& jobs, uint32_t j);

/// Whether tasker t is eligible for job j: request satisfied and configured capacity >= charge.
bool eligible(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs, uint32_t t, uint32_t j);

/// Free amounts of every pool: per consumable, per tasker (queue level) and per host; global (NaN: none).
struct Pools {
  std::vector<std::vector<double>> queue, host;
  std::vector<double> global;
};

/// Places $fill_up job j over `order` (eligible taskers, most preferred first): a master that takes at
/// least one slot instance and pays the per-job charges, then the other taskers filled in turn, each
/// with as many instances as fit; with `exact`, each tasker of `order` exactly exact[i] instances (the
/// first the master; the counts are what is placed, whatever the job's slots). Returns the (tasker, slots)
/// list and charges `pools`, or returns nothing and leaves `pools` unchanged when the slots do not all fit.
std::vector<std::pair<uint32_t, uint32_t>> place_fill_up(const Catalog& catalog, const TaskerTable& taskers,
                                                         const JobTable& jobs, uint32_t j,
                                                         const std::vector<uint32_t>& order, Pools& pools,
                                                         const std::vector<uint32_t>* exact = nullptr);

/// Places a job of a Grid Engine host rule (AllocationRule::HostPeSlots ...) over `order`, from the rules'
/// definitions: hosts in the order of their first tasker in `order`, each host's taskers in that order;
/// $pe_slots the most slots one host takes (the range's most first) on the first host that takes them,
/// $fill_up each host filled in turn, $round_robin one slot a host a round, allocation_rule N exactly N a
/// host; at least the range's fewest. Charges `pools` and returns (tasker, slots), the master first, or
/// nothing with `pools` unchanged.
std::vector<std::pair<uint32_t, uint32_t>> place_by_host(const Catalog& catalog, const TaskerTable& taskers,
                                                         const JobTable& jobs, uint32_t j,
                                                         const std::vector<uint32_t>& order, Pools& pools);

/// Slurm's -n N without -N (cons_tres `_eval_nodes` with one node at least, as slurmctld 22.05.8 placed such
/// jobs), written from the observed rule: of `fitting` (taskers with room for a task), sets of consecutive
/// input indices and equal power, in input order; repeatedly the best set (slurm_pick's rule, with the
/// tasks it offers in sum), in it the tasker offering the fewest tasks that still holds every task left, or
/// else its taskers in input order, each taking what it offers of the tasks left. `offer(t)`: the whole
/// tasks tasker t offers. Returns (tasker, tasks) in input order, or nothing when they fall short.
std::vector<std::pair<uint32_t, uint32_t>> slurm_spread(const TaskerTable& taskers, std::vector<uint32_t> fitting,
                                                        const std::function<uint32_t(uint32_t)>& offer, uint32_t want);

/// Slurm's node choice (select/cons_tres `_eval_nodes`, 22.05), written from its text: of `fitting`
/// (taskers with room, any order), sets of consecutive input indices and equal power, in input order;
/// repeatedly the best set (greatest power; among equals the first with at least the taskers still
/// wanted, a later such one with less free, or one with fewer but more free), from it its first taskers
/// (its least free one when one is wanted), until `want`. `free(t)`: tasker t's free units of the fit
/// consumable. Returns the taskers in input order, or nothing when too few fit.
/// With `fewest` < `want` (Slurm's -N MIN-MAX: MIN and MAX): a set is sufficient with the taskers still
/// wanted less want - fewest (cons_tres _enough_nodes), and as many as the sets give up to `want` do, at
/// least `fewest`.
std::vector<uint32_t> slurm_pick(const TaskerTable& taskers, std::vector<uint32_t> fitting,
                                 const std::function<double(uint32_t)>& free, uint32_t want, uint32_t fewest);

/// Slurm's -n N -N K with N > K (JobTable::FitUnit::total: cons_tres `_eval_nodes` counting CPUs, then
/// `_cpus_to_use` and dist_tasks), written from the rule as slurmctld 22.05.8 showed it: of `fitting` (taskers
/// with room for one task), sets of consecutive input indices and equal power; repeatedly the best set (slurm_pick's
/// rule, sufficient when it has the CPUs and the nodes still wanted), in it, when one node is wanted, the one with
/// the fewest CPUs that holds all left, else its taskers in order, each taking its CPUs but no more than leaves
/// one for each node still wanted (and a task's at least), the last one only if it holds all left; then the tasks
/// a round at a time over them in input order, each up to the whole tasks of its CPUs. `cpus(t)`: the CPUs tasker
/// t offers. Returns (tasker, tasks) in input order, or nothing.
std::vector<std::pair<uint32_t, uint32_t>> slurm_tasks_on_nodes(const TaskerTable& taskers,
                                                                std::vector<uint32_t> fitting,
                                                                const std::function<double(uint32_t)>& cpus,
                                                                uint32_t nodes, uint32_t tasks, double per_task);

/// The fewest taskers job j runs on: its slots for a OnePerTasker job (Slurm's -N K), the low end of its
/// node count range (JobTable::PeShape::min_slots, -N MIN-MAX); 1 for any other job.
uint32_t fewest_taskers(const JobTable& jobs, uint32_t j);

/// What a tasker offers job j for slurm_pick, from its free amounts of the fit consumable (`fit_free`) and
/// of the fit limit (`limit_free`, NaN when none is configured): the first alone, or, when the job has a
/// JobTable::FitUnit (Slurm's
/// --mem-per-cpu), whole tasks: the fewer of fit_free / unit.fit and limit_free / unit.limit, floored.
double slurm_offer(const JobTable& jobs, uint32_t j, double fit_free, double limit_free);

/// Job j on `chosen` (a slot each, in that order, the first the master paying the per-job charges):
/// the placement, charged to `pools`; or nothing, `pools` unchanged, when any of them falls short.
std::vector<std::pair<uint32_t, uint32_t>> place_each_once(const Catalog& catalog, const TaskerTable& taskers,
                                                           const JobTable& jobs, uint32_t j,
                                                           const std::vector<uint32_t>& chosen, Pools& pools);

struct Result {
  std::vector<JobStatus> status;
  std::vector<uint32_t> tasker;  ///< tasker row (same indexing as TaskerTable) or kNone
  std::vector<PendingReason> reason;
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> allocations;  ///< per job: (tasker row, slots)
  std::vector<std::vector<double>> free;                                ///< per consumable, per tasker row
  std::vector<std::vector<double>> free_host;                           ///< per consumable, per host
  std::vector<double> free_global;                                      ///< per consumable (meaningful where defined)
};

/// Greedy dispatch, evaluated row by row. O(jobs x taskers x request size). `options`: the allocation
/// policy (GreatestPower or ConsecutiveBestFit) and blocking queues, each written from its definition.
Result run(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
           const DispatchOptions& options = {});

}  // namespace colmatch::naive
