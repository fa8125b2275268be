// A Slurm cluster between reading and building (loaders/slurm.cpp drives; loaders/slurm_jobs.cpp turns
// requests into jobs against it): what tools/slurm-dump.sh's folder says of nodes, partitions and the
// controller's settings, with Slurm 22.05's meaning, and the farm colmatch builds of it (one tasker a node).
// Internal to the slurm loader.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "engine/batch/queue_blocking.hpp"
#include "loaders/dataset.hpp"
#include "loaders/slurm_text.hpp"

namespace colmatch::loaders::slurm {

/// One MiB in bytes (Slurm's memory sizes are MiB; colmatch's are bytes).
inline constexpr double kMiB = 1024.0 * 1024.0;

/// A partition of `scontrol show partition -o`.
struct Partition {
  std::string name;
  bool up = true, is_default = false;
  double max_time = std::numeric_limits<double>::infinity();  ///< MaxTime, seconds
  /// The most nodes a job of it may ask: MaxNodes, and no more than the partition has (TotalNodes).
  double max_nodes = std::numeric_limits<double>::infinity();
  double tier = 1;        ///< PriorityTier: the job queue is ordered by it first when partitions differ in it
  double job_factor = 1;  ///< PriorityJobFactor: priority/multifactor's partition factor (over the largest)
  /// TRESBillingWeights (parse_tres_weights): what its jobs' billing TRES counts; none: their CPUs
  std::vector<std::pair<std::string, double>> billing_weights;
  /// OverSubscribe=EXCLUSIVE: every job of it takes its nodes whole, as --exclusive does (slurm.conf(5));
  /// slurmctld records such a job as OverSubscribe=NO (squeue's `shared: none`) when it is its first partition.
  bool exclusive = false;
  std::string over_subscribe = "NO";  ///< OverSubscribe as scontrol prints it
  size_t line = 0;
};

/// A node of `scontrol show node -o`.
struct Node {
  std::string name;
  bool up = true;  ///< takes jobs (its State: not DOWN, DRAIN, FAIL, MAINT, FUTURE or not responding)
  double cpus = 0, mem = 0, weight = 1, cpus_used = 0, mem_used = 0;  ///< mem in MiB
  std::vector<std::string> features, partitions;
  std::map<std::string, double> gres, gres_used;  ///< "gres/gpu", "gres/gpu:a100" -> count
  size_t line = 0;
};

/// The controller's settings colmatch reads (scontrol-config.txt; Slurm's defaults without it).
struct Settings {
  std::string scheduler = "sched/backfill", priority_type = "priority/basic";
  bool memory_tracked = true;    ///< SelectTypeParameters with MEMORY (CR_Core_Memory by default)
  double def_mem_per_cpu = -1;   ///< DefMemPerCPU, MiB (-1: UNLIMITED, unset)
  double def_mem_per_node = -1;  ///< DefMemPerNode, MiB (-1: UNLIMITED, unset)
  /// What slurmctld's scheduling settings make of `simulate` (loaders/slurm_settings.hpp): sched/backfill
  /// every bf_interval (30 s unless the dump says otherwise), priority/basic or multifactor.
  SimConfig scheduling = slurm_scheduling_defaults();
  /// QOS name -> Priority (sacctmgr-qos.txt, loaders/slurm_qos.hpp); empty without it.
  std::map<std::string, double> qos_priority;
  /// QOS name -> UsageFactor (sacctmgr-qos.txt's column when dumped); empty without it: every QOS's is 1.
  std::map<std::string, double> qos_usage_factor;
  /// (account, user, partition) -> Priority (sacctmgr-assoc.txt, loaders/slurm_qos.hpp); empty without it.
  std::map<std::tuple<std::string, std::string, std::string>, double> assoc_priority;
  /// Slurm 22.05's defaults: SchedulerType=sched/backfill with bf_interval=30, bf_window=1440 (minutes),
  /// bf_max_job_test=500 and bf_resolution=60, default_queue_depth=100, sched_interval=60,
  /// PriorityType=priority/basic.
  static SimConfig slurm_scheduling_defaults() {
    SimConfig p;
    p.backfill = BackfillPolicy::Conservative;
    p.backfill_interval = 30;
    p.backfill_window = 86400;
    p.backfill_max_jobs = 500;
    p.backfill_resolution = 60;
    p.main_pass_depth = 100;
    p.main_pass_full_interval = 60;
    p.backfill_phase = std::numeric_limits<double>::quiet_NaN();
    return p;
  }
};

/// The dump as read: its partitions, the nodes that take jobs, and the settings.
struct Cluster {
  std::string dir;
  std::vector<Partition> partitions;
  std::vector<Node> nodes;       ///< the nodes that take jobs: the farm (the others are left out, warned of)
  std::vector<Node> every_node;  ///< every node, in any state: what Slurm checks a job against at submit
  Settings settings;
  std::vector<std::string> warnings;

  /// The partition named `name`, or nullptr.
  const Partition* partition(const std::string& name) const;
  /// The Default=YES partition's name ("" when none is).
  std::string default_partition() const;
  /// The partitions differ in PriorityTier.
  bool tiers_differ() const;
  /// PriorityTier of the partition named `name` (0 for an unknown one: it is refused, naming it).
  double tier_of(const std::string& name) const;
  /// A job of these options takes its nodes whole because of its partition: the first of its -p list (the
  /// default partition without one) is OverSubscribe=EXCLUSIVE. slurmctld judges a job of several
  /// partitions by the partition it tries; colmatch, as squeue reports the job (job_mgr.c
  /// _get_job_shared: "based upon latest partition info", the first), by its first.
  bool exclusive_partition(const SbatchJob& sj) const;
  /// slurmctld's main pass walks a queue of job records (job_scheduler.c build_job_queue), not the job
  /// list itself (fifo_sched: sched/builtin, priority/basic and one tier).
  bool job_records() const;
  /// A job of these options takes a node's whole memory: memory tracked (CR_*_Memory), no --mem, no
  /// --mem-per-cpu, no --mem-per-gpu and no DefMemPerCPU or DefMemPerNode.
  bool whole_memory(const SbatchJob& sj) const;
};

/// DIR/name, or DIR/name.gz when only that exists.
std::string dump_file(const std::string& dir, const char* name);

/// Reads DIR's scontrol-node.txt, scontrol-partition.txt (both required) and scontrol-config.txt (when
/// present). Throws LoadError naming file, line and field.
Cluster read_cluster(const std::string& dir);

/// The attributes of the farm built from a cluster (catalog indices; kNone when absent).
struct FarmAttributes {
  uint32_t feature = kNone, partition = kNone, node = kNone, cpus = kNone, mem = kNone, jobs = kNone;
  std::map<std::string, uint32_t> gres;   ///< "gres/gpu", "gres/gpu:a100" -> attribute
  double node_jobs = 1;                   ///< the capacity of `jobs` on every node
  std::set<std::string> features, names;  ///< every feature and node name of the cluster (any state)
};

/// Builds ds's catalog, taskers (one per node), what running jobs hold (ds.in_use) and the dispatch's
/// options (Slurm's node selection), and returns the partitions as blocking queues with every queue's
/// taskers (queue_of_job left empty for the jobs). `exclusive`: some job takes nodes whole (--exclusive, or
/// a node's whole memory), so the consumable `jobs` is made. Throws LoadError for a value the catalog refuses.
FarmAttributes build_farm(const Cluster& cluster, bool exclusive, Dataset& ds, std::shared_ptr<BlockingQueues>& queues,
                          std::map<std::string, uint32_t>& queue_of);

/// The cluster as configured, for Slurm's checks at submit: every node in any state (Cluster::every_node),
/// each in every partition that holds it, UP or not, with the attributes build_farm made in `catalog`.
/// Throws LoadError for a value the catalog refuses.
TaskerTable configured_farm(const Cluster& cluster, const FarmAttributes& a, const Catalog& catalog);

/// Splits `s` at `sep`, empty pieces dropped.
std::vector<std::string> split(const std::string& s, char sep);

}  // namespace colmatch::loaders::slurm
