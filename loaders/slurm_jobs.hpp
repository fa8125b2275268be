// A Slurm cluster's jobs as colmatch jobs (loaders/slurm.cpp drives): where they come from (sacct records,
// scontrol show job -o, sbatch option lines, the dump's squeue --json or scontrol-job.txt) and what each
// request means on the cluster (Slurm 22.05's sbatch options, with the constraint language of
// loaders/slurm_constraint.hpp). Internal to the slurm loader.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/batch/queue_blocking.hpp"
#include "loaders/dataset.hpp"
#include "loaders/slurm_cluster.hpp"
#include "loaders/slurm_squeue.hpp"

namespace colmatch::loaders::slurm {

/// The jobs to load: `accounting`'s sacct records when given, else `jobs_path` (scontrol show job -o
/// output when its first line starts with JobId=, else sbatch lines), else the dump's squeue.json's pending
/// jobs, else its scontrol-job.txt's (none when neither is there). `source` is set to the file read;
/// `warnings` gets a line for the jobs of a queue that are not pending. Throws LoadError naming file,
/// line and field.
std::vector<QueuedJob> read_queue(const Cluster& cluster, const std::string& jobs_path, const std::string& accounting,
                                  std::string& source, std::vector<std::string>& warnings);

/// Some job of `queued` takes nodes whole (--exclusive, or a node's whole memory: Cluster::whole_memory).
bool takes_nodes_whole(const Cluster& cluster, const std::vector<QueuedJob>& queued);

/// Makes ds.jobs of `queued` against the farm build_farm made (its attributes `a`, its partitions'
/// blocking queues `queues` and their indices `queue_of`), and fills the queues' per-job fields. A request
/// colmatch cannot read, or Slurm refuses, is a rejected job whose reason names `source`, the line and the
/// job. Throws LoadError for a job id met twice.
void build_jobs(const Cluster& cluster, const FarmAttributes& a, const std::vector<QueuedJob>& queued,
                const std::string& source, const std::map<std::string, uint32_t>& queue_of, BlockingQueues& queues,
                Dataset& ds);

}  // namespace colmatch::loaders::slurm
