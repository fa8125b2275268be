// Slurm's accounting as `sacct -a -P` prints it (Slurm 22.05, sacct(1)): a header line naming the fields,
// then one line a job, step or array task, fields separated by `|`. Each job's request as the sbatch
// options it stands for, and its submit, start and end; made into jobs by loaders/slurm_jobs.cpp.
//
// Fields read (by their header names; others are kept out): JobID (else JobIDRaw), Submit, Eligible, Start,
// End (ISO times, `Unknown`/`None` when absent), Timelimit, NNodes, NCPUS, ReqMem (the job's whole memory
// request since 21.08, `-N 2 --mem=500` prints `1000M`; older `4000Mc` per CPU and `8000Mn` per node),
// Constraints, ReqTRES (the job's totals: `cpu=6`, `gres/gpu=2`, `gres/gpu:a100=1`), Partition, User,
// Account, QOS, State. The request is per node: NNodes nodes, each a share of the job's CPUs, memory and
// GRES (rounded up). A step (`123.batch`, `123.extern`, `123.0`) is part of its job, not a job: skipped.
// -P leaves a `|` inside a field unescaped: the extra fields of a line are rejoined into Constraints.
#pragma once

#include <string>
#include <vector>

#include "loaders/slurm_squeue.hpp"

namespace colmatch::loaders::slurm {

/// One job of sacct's list: its request, id, user, account, qos and state, and its times in seconds
/// since the epoch (NaN when sacct says Unknown or None).
struct AccountedJob {
  QueuedJob job;  ///< id, request (options), user, account, qos, state, submit
  double start = 0, end = 0;
};

/// Slurm sets a job's begin time, which sacct prints as Eligible, when the job becomes independent
/// (job_mgr.c job_independent: its --begin time, else the pass that finds its dependencies satisfied or its
/// hold released); sacct keeps no dependency. A job whose Eligible is after its Submit and within a second
/// after the End of jobs of the list submitted no later than it (and ended after its submit) is taken to
/// have waited for them: QueuedJob::after lists them (all that ended then, at most 64: more, and it is taken
/// to wait until its Eligible), so that a replay starts it when they end there, as Slurm did; any other
/// Eligible after the Submit is a time it waited for (--begin, a hold released at that time).
/// O(jobs log jobs).
void infer_dependencies(std::vector<AccountedJob>& jobs);

/// Reads `sacct -a -P` text (plain or gzip). Throws LoadError naming file, line and field for a first
/// line that is not a header with JobID or JobIDRaw and Submit, a line with fewer fields than the header
/// (or more without a Constraints field to rejoin them into), a ReqMem that is not a size, or a time that
/// is not ISO 8601. Steps are skipped; at most 100M jobs.
std::vector<AccountedJob> read_sacct(const std::string& path);

}  // namespace colmatch::loaders::slurm
