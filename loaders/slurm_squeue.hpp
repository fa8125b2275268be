// The jobs of `squeue --json` (Slurm 22.05, data_parser v0.0.38): each pending job's request as the sbatch
// options it stands for, with its id, owner, priority and submit time. Read with simdjson; the jobs are
// made by loaders/slurm_jobs.cpp exactly as from sbatch lines.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "loaders/slurm_text.hpp"

namespace colmatch::loaders::slurm {

/// One job of squeue's list.
struct QueuedJob {
  SbatchJob request;  ///< its options (constraint, partition, ntasks/cpus-per-task, mem, gres, ...)
  std::string id;     ///< job_id, or ARRAY_TASK for a pending array task (`123_4`)
  std::string user, account, qos, state, reason;              ///< user_name, account, qos, job_state, state_reason
  double priority = 0, submit = 0;                            ///< priority; submit_time (seconds since the epoch)
  double runtime = std::numeric_limits<double>::quiet_NaN();  ///< what it ran (sacct), else NaN
  /// When it became eligible (sacct's Eligible: its --begin time, or when its dependencies were satisfied),
  /// else NaN
  double eligible = std::numeric_limits<double>::quiet_NaN();
  /// The jobs it waited for (sacct keeps no dependency: those that ended as it became eligible,
  /// infer_dependencies), empty for none
  std::vector<std::string> after;
  std::string note;  ///< a remark for the outputs ("" for none)
  /// A pending array's task ids: one job each, `ID_T`, all alike but for the id (a 1M-task array was a
  /// copy of the whole job per task: 712 MB). Empty: the one job `id`.
  std::vector<uint64_t> tasks;

  /// The jobs it stands for: 1, or one per task.
  size_t count() const noexcept { return tasks.empty() ? 1 : tasks.size(); }
  /// The id of its k-th job (k < count()).
  std::string job_id(size_t k) const { return tasks.empty() ? id : id + "_" + std::to_string(tasks[k]); }
};

/// The most array tasks one file's arrays expand to, all together: 10M jobs (about 1.6 GB once built).
inline constexpr uint64_t kMaxArrayTasks = uint64_t{10} << 20;

/// Reads `squeue --json`: pending jobs (a pending array's tasks as QueuedJob::tasks, from
/// array_task_string), and counts the others (running, completing, ...) in `not_pending`. Throws LoadError
/// for malformed JSON, a file without a `jobs` list, a job without job_id, or arrays of more than
/// kMaxArrayTasks tasks in all.
std::vector<QueuedJob> read_squeue_json(const std::string& path, size_t& not_pending);

}  // namespace colmatch::loaders::slurm
