#include "loaders/slurm.hpp"

#include <filesystem>
#include <map>
#include <memory>

#include "loaders/slurm_cluster.hpp"
#include "loaders/slurm_jobs.hpp"

namespace colmatch::loaders {
namespace fs = std::filesystem;

// The cluster (loaders/slurm_cluster.hpp), then its jobs (loaders/slurm_jobs.hpp): which ones, whether
// one takes nodes whole (the farm then has the consumable `jobs`), the farm, and the jobs on it.
Dataset load_slurm(const std::string& dump_dir, const std::string& jobs_path, const std::string& accounting,
                   const ProgressFn&, LoadMode) {
  const slurm::Cluster cluster = slurm::read_cluster(dump_dir);
  Dataset ds;
  ds.name = fs::path(dump_dir).filename().string();
  std::vector<std::string> warnings = cluster.warnings;
  const slurm::JobSource source = slurm::read_queue(cluster, jobs_path, accounting, warnings);
  std::shared_ptr<BlockingQueues> queues;
  std::map<std::string, uint32_t> queue_of;
  const slurm::FarmAttributes attributes =
      slurm::build_farm(cluster, slurm::takes_nodes_whole(cluster, source.jobs), ds, queues, queue_of);
  slurm::build_jobs(cluster, attributes, source, queue_of, *queues, ds);
  // the main pass over time blocks by partition as the batch one does (SimConfig::partitions)
  ds.policy.partitions = ds.policy_defaults.partitions = queues;
  ds.dispatch.queues = std::move(queues);
  // sshare's usage is the usage at the dump's time: where the replay starts for the dump's own queue or a jobs
  // file, not for sacct's records, which began before it
  if (!accounting.empty())
    for (SimConfig* p : {&ds.policy, &ds.policy_defaults})
      for (SlurmAssociation& a : p->slurm_priority.associations) a.usage = 0;
  // and the pass's limits, in `match` as in every pass over time
  ds.dispatch.max_starts = ds.policy_defaults.main_pass_max_starts;
  ds.dispatch.queue_depth = ds.policy_defaults.main_pass_partition_depth;
  ds.taskers.warnings.insert(ds.taskers.warnings.begin(), warnings.begin(), warnings.end());
  return ds;
}

}  // namespace colmatch::loaders
