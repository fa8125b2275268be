// The jobs of `scontrol show job -o` (Slurm 22.05, scontrol(1)): one job a line, Key=Value fields, the same
// queue squeue --json prints, as text. Each pending job's request as the sbatch options it stands for (the
// same options read_squeue_json gives for the same job), with its id, owner, priority and submit time; the
// jobs are made by loaders/slurm_jobs.cpp exactly as from sbatch lines.
//
// Fields read: JobId, ArrayJobId/ArrayTaskId (a pending array's tasks, `1-3`, `1,5,7%2`), UserId
// (`root(0)`), Account, QOS, JobState, Reason, Priority, SubmitTime, TimeLimit, Partition, TRES (its
// `node=K`: the nodes asked for; NumNodes is Slurm's estimate for a pending job), NumTasks, CPUs/Task,
// MinMemoryNode/MinMemoryCPU, Features, Prefer, TresPerNode/TresPerJob (`gres:gpu:a100:1`),
// ReqNodeList, ExcNodeList, OverSubscribe (NO: --exclusive). `(null)` and `N/A` are absent values.
#pragma once

#include <string>
#include <vector>

#include "loaders/slurm_squeue.hpp"

namespace colmatch::loaders::slurm {

/// Reads `scontrol show job -o` (plain or gzip): the pending jobs (a pending array's tasks each a job,
/// `116_1`..), and counts the others (running, completing, ...) in `not_pending`. Throws LoadError naming
/// file, line and field for a line that does not start with JobId=, a malformed SubmitTime or task list,
/// or an array of more than 10M tasks. A field colmatch cannot read as Slurm means it (a TresPerJob other
/// than GPUs, a number that is not one) rejects that job, saying which.
std::vector<QueuedJob> read_scontrol_jobs(const std::string& path, size_t& not_pending);

/// The first line of `path` that is not blank starts with `JobId=`: the file is scontrol show job -o
/// output, not sbatch lines.
bool is_scontrol_jobs(const std::string& path);

}  // namespace colmatch::loaders::slurm
