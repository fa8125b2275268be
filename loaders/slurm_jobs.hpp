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

/// The jobs to load and where they come from.
struct JobSource {
  std::vector<QueuedJob> jobs;
  std::string path;        ///< the file read ("" when none)
  bool submitted = false;  ///< sbatch lines: jobs being submitted (refused as sbatch refuses), not a queue's
};

/// The jobs to load: `accounting`'s sacct records when given, else `jobs_path` (scontrol show job -o
/// output when its first line starts with JobId=, else sbatch lines), else the dump's squeue.json's pending
/// jobs, else its scontrol-job.txt's (none when neither is there). `warnings` gets a line for the jobs of a
/// queue that are not pending. Throws LoadError naming file, line and field.
JobSource read_queue(const Cluster& cluster, const std::string& jobs_path, const std::string& accounting,
                     std::vector<std::string>& warnings);

/// Some job of `queued` takes nodes whole (--exclusive, an OverSubscribe=EXCLUSIVE first partition, or a
/// node's whole memory: Cluster::whole_memory).
bool takes_nodes_whole(const Cluster& cluster, const std::vector<QueuedJob>& queued);

/// Makes ds.jobs of the source's jobs against the farm build_farm made (its attributes `a`, its
/// partitions' blocking queues `queues` and their indices `queue_of`), and fills the queues' per-job
/// fields. A request colmatch cannot read, or Slurm refuses, is a rejected job whose reason names the file,
/// the line and the job. Submitted jobs (JobSource::submitted) that are not held (-H) are refused as
/// slurmctld refuses them at submit (job_mgr.c job_allocate: engine/batch/admission.hpp) when no node of
/// their partitions, in any state (configured_farm), could ever run them: "Requested node configuration is
/// not available". Not asked of a job over its partitions' MaxTime or MaxNodes (Slurm checks those limits
/// first and, under EnforcePartLimits=NO, keeps it pending), nor of one whose tasks Slurm may spread over
/// nodes where colmatch keeps them on one (-n without -N, not a spread job). Throws LoadError for a job id
/// met twice.
void build_jobs(const Cluster& cluster, const FarmAttributes& a, const JobSource& source,
                const std::map<std::string, uint32_t>& queue_of, BlockingQueues& queues, Dataset& ds);

}  // namespace colmatch::loaders::slurm
