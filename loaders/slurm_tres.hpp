// priority/multifactor's TRES factors (slurmctld 22.05.8: priority_multifactor.c _get_tres_factors, job_mgr.c
// job_set_req_tres and job_get_tres_mem, partition_mgr.c _calc_part_tres, assoc_mgr.c assoc_mgr_tres_weighted):
// a pending job's count of each TRES (what `scontrol show job` prints as TRES=) over its partition's, which
// PriorityWeightTRES weighs. One concern: those counts and their ratios; the weighing is the engine's
// (engine/schedule/slurm_priority.hpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/schedule/policy.hpp"
#include "loaders/slurm_cluster.hpp"

namespace colmatch::loaders::slurm {

/// What one job asks as slurmctld counts it before it runs (tres_req_cnt). cpu: its min_cpus (tasks x CPUs a
/// task; -N K alone is K tasks, -N MIN-MAX one; --cpus-per-gpu adds none until it runs); node: its least node
/// count; mem: MB in all (--mem x nodes, --mem-per-cpu x CPUs), NaN when it asks none and no default applies
/// (then the first node of its partition's RealMemory x nodes); gres: in all, "gres/gpu" and "gres/gpu:a100".
struct TresAsked {
  double cpu = 0, node = 1, mem = 0;
  std::map<std::string, double> gres;
  const Partition* partition = nullptr;        ///< its first partition (squeue's), nullptr for none
  bool whole_node = false;                     ///< given its nodes whole (--exclusive, an exclusive partition)
  double mem_per_node = -1, mem_per_cpu = -1;  ///< MB, as asked (< 0: not so)
};

/// Fills mf.tres_names (cpu, mem, node, billing, then every GRES a node of the cluster has) and mf.tres_factor
/// (per job of `asked`, each TRES's count over its partition's: the sum over every node of the partition in
/// any state; billing by the partition's TRESBillingWeights, or the CPUs without them, each truncated to a
/// whole number as slurmctld keeps it). A job of no partition, or a TRES the partition has none of: 0. And
/// mf.billable: for a job of a partition with TRESBillingWeights, its billable TRES (the weighted sum, not
/// truncated), which fair share charges a second; none: empty (CPUs charged). And mf.whole_node_billing for
/// the jobs given their nodes whole in such a partition: their weights, how they asked memory, and the
/// rest of their TRES weighed (the engine bills what they are given at their start).
void tres_factors(const Cluster& cluster, const std::vector<TresAsked>& asked, SlurmMultifactor& mf);

}  // namespace colmatch::loaders::slurm
