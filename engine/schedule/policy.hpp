// The configuration of `colmatch simulate`, and nothing that runs it: which scheduler, Moab's priority
// factors, throttles, backfill, node allocation and resource availability (seed 001), FBSNG's queues and
// process types (seed 004). Read once (loaders/policy.hpp), immutable during a run: the run's state lives
// in the simulator's world (engine/schedule/world.hpp). Loaders include this header, never the simulator.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/jobs.hpp"
#include "engine/placement/placer.hpp"

namespace colmatch {

struct BlockingQueues;

/// The largest QPmin (in size), QPI and QPD accepted: priorities stay finite over any run.
inline constexpr double kFbsngMaxValue = 1e9;

/// One FBSNG queue's parameters (seed 004's names). Defaults: QPmax = QPmin + 100, QPI = QPD = 1,
/// no gaps (QPG, SPG infinite).
struct FbsngQueue {
  std::string name;  ///< the job class (queue) it configures
  double qp_min = 0;
  double qp_max = std::numeric_limits<double>::quiet_NaN();  ///< NaN: qp_min + 100
  double qpi = 1, qpd = 1;
  double qpg = std::numeric_limits<double>::infinity();
  double spg = std::numeric_limits<double>::infinity();
};

/// One FBSNG process type: its resource allocation quotas and default requirements.
struct FbsngProcessType {
  std::string name;
  uint64_t max_sections = std::numeric_limits<uint64_t>::max();  ///< running sections at once
  double max_slots = std::numeric_limits<double>::infinity();    ///< running slots at once
  /// At most this amount (base units: bytes, seconds, counts) of the named consumable held at once.
  std::vector<std::pair<std::string, double>> max_amount;
  /// Default resource requirements (request syntax), added for the attributes a section does not name.
  std::string requirements;
};

/// scheduler = "fbsng": the queues (unlisted ones take `defaults`) and the process types.
struct FbsngConfig {
  std::vector<FbsngQueue> queues;
  FbsngQueue defaults;
  std::vector<FbsngProcessType> process_types;
};

/// The largest SimConfig::reservation_depth a policy file may set.
inline constexpr uint32_t kMaxReservationDepth = 1000000;

/// Moab's BACKFILLPOLICY with its RESERVATIONDEPTH (seed 001, step 6), for scheduler = Moab.
/// None: strict priority order, the first job that cannot start blocks every later one.
/// Greedy: every job that fits starts, in priority order, and none waits for another (no reservation:
///   Moab with RESERVATIONDEPTH 0, Altair Accelerator's dispatcher going through its buckets).
/// Easy: the first SimConfig::reservation_depth jobs (in priority order) that cannot start now get a
///   reservation each, at the earliest time they fit after the running jobs' expected ends (walltimes)
///   and the reservations before them; a later job starts now only if it delays none of them (it ends
///   by a reservation's start, or leaves that reservation's taskers and every shared pool alone). Depth
///   1 is EASY (Lifka's ANL scheduler; Mu'alem and Feitelson).
/// Conservative: as Easy with no depth limit: every waiting job gets a reservation.
enum class BackfillPolicy : uint8_t { None, Easy, Conservative, Greedy };
/// Moab's RESOURCEAVAILABILITYPOLICY (seed 001: R.Available = R.Configured - MAX(R.Dedicated,
/// R.Utilized)), per consumable and tasker: Dedicated counts what running jobs were charged; Utilized
/// what is used there (FarmEvents::load plus each running job's charge times its JobTable::utilization);
/// Combined the larger of the two. A job fits where the available amount covers its charge; while one
/// job is placed its charges count in full (its load is known once it runs). Consumables with host or
/// global pools are always Dedicated.
enum class ResourceAvailability : uint8_t { Dedicated, Utilized, Combined };
/// Moab credentials: user, group, class (queue), account, quality of service.
enum class CredentialKind : uint8_t { User = 0, Group = 1, Class = 2, Account = 3, QoS = 4 };
/// A policy the farm or its jobs cannot take: an FBSNG queue's parameters out of range, a quota on a
/// name that is not a consumable, process-type requirements that do not parse or name a consumable.
/// what() names the queue or process type; the CLI adds the policy file's name.
class PolicyError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// How many kinds of credential there are (CredentialKind's values are 0 to this - 1).
inline constexpr size_t kCredentialKinds = 5;

/// The names of the credentials of `kind` in `jobs` (owners, groups, queues, accounts, QoS names).
inline const Dictionary& credential_names(const JobTable& jobs, CredentialKind kind) noexcept {
  switch (kind) {
    case CredentialKind::User: return jobs.owners;
    case CredentialKind::Group: return jobs.groups;
    case CredentialKind::Class: return jobs.queues;
    case CredentialKind::Account: return jobs.accounts;
    default: return jobs.qos_names;
  }
}

/// Job j's credential of `kind`: its id into credential_names.
inline uint32_t credential_id(const JobTable& jobs, CredentialKind kind, uint32_t j) noexcept {
  switch (kind) {
    case CredentialKind::User: return jobs.owner[j];
    case CredentialKind::Group: return jobs.group[j];
    case CredentialKind::Class: return jobs.queue[j];
    case CredentialKind::Account: return jobs.account[j];
    default: return jobs.qos[j];
  }
}

/// Moab throttling policy for one credential kind: a limit for one named credential, or for each
/// credential of that kind when `name` is empty (a named limit wins over the default one).
struct Throttle {
  CredentialKind kind = CredentialKind::User;
  std::string name;
  uint64_t max_jobs = std::numeric_limits<uint64_t>::max();    ///< running jobs at once
  double max_slots = std::numeric_limits<double>::infinity();  ///< running slots at once
};

/// Moab credential priority (USERCFG[alice] PRIORITY=10, QOSCFG[high] PRIORITY=1000, CLASSCFG, GROUPCFG,
/// ACCOUNTCFG): added to the credential factor of every job holding that credential.
struct CredentialPriority {
  CredentialKind kind = CredentialKind::User;
  std::string name;
  double priority = 0;
};

/// Moab priority factor weights: priority = credential x (the job's priority field + the priorities
/// of its user, group, class, account and QoS) + queue_time x (minutes queued) + expansion x
/// ((wait + walltime) / walltime) + size x (slots). Ties: earlier submit, then input order.
struct PriorityWeights {
  double credential = 1, queue_time = 0, expansion = 0, size = 0;
};

/// One association of Slurm's fair-share tree (sacctmgr; `sshare -a -P` prints them): an account under its
/// parent account, or a user in an account. The tree's root is the account "root" (root's own users hang
/// from it). RawShares as sacctmgr's Fairshare= (1 by default).
struct SlurmAssociation {
  std::string account;
  std::string user;    ///< empty: the account itself
  std::string parent;  ///< an account's parent account ("" or "root": the root); unused for a user
  double shares = 1;
  /// Its raw usage (sshare's RawUsage: CPU-seconds, decayed) when the replay starts: the usage at the dump's
  /// time for a replay of the dump's own queue; 0 for one of sacct's records, which began before it.
  double usage = 0;
};

/// The deepest association tree SlurmPriority takes (root at depth 0).
inline constexpr size_t kMaxSlurmTreeDepth = 64;

/// PriorityUsageResetPeriod (slurm.conf): when every association's fair-share usage is set to 0
/// (priority_multifactor.c _decay_thread, _next_reset, _reset_usage). Daily: at each midnight; Weekly: Sunday's;
/// Monthly, Quarterly, Yearly: the first of a month, of January/April/July/October, of January. The reset
/// comes at the first calculation at or after such a boundary, before that calculation charges the running
/// jobs. Boundaries are read on the replay's clock as UTC, which for a dump is slurmctld's local wall clock
/// (its times are read as written). Now: once, at slurmctld's start (a replay's usage starts at 0 anyway).
enum class SlurmUsageReset : uint8_t { None, Now, Daily, Weekly, Monthly, Quarterly, Yearly };

/// Slurm's priority/multifactor (slurm.conf's Priority* parameters; slurmctld 22.05's
/// plugins/priority/multifactor: priority_multifactor.c, fair_tree.c; engine/schedule/slurm_priority.hpp).
/// A job's priority is its tier (PriorityTier, above 2^32 in JobTable::priority) plus
/// floor(weight_age x age + weight_fairshare x fair share + weight_job_size x job size + weight_partition x
/// partition + weight_qos x QOS + weight_assoc x association + the TRES factors each by its weight), each factor in
/// [0, 1]: age = min(time since submit, max_age) / max_age; job size = (nodes / cluster nodes + CPUs /
/// cluster CPUs) / 2, or one minus each ratio with favor_small; fair share by Fair Tree (the default since
/// Slurm 19.05: users ranked by their accounts' and their own shares over usage, the first 1, the last
/// 1/users). Pending jobs' priorities are computed when they are submitted (age 0) and again every
/// calc_period (the decay thread, which also decays usage by decay_half_life and adds the CPU-seconds of
/// the jobs running then; slurmctld 22.05.8 charges nothing when a job ends). Ties: earlier submit, then input order
/// (Slurm: the lower job id).
/// How the billable TRES of a job given its nodes whole follows from what it is given, under its
/// partition's TRESBillingWeights (calc_job_billable_tres over tres_alloc_cnt; slurmctld 22.05.8,
/// datasets/slurm/c100-billing-excl: `-c 1` in an OverSubscribe=EXCLUSIVE partition weighed with CPU=1.0,
/// Mem=0.25G billed 78 = 16 CPUs + 250G x 0.25): every CPU of its nodes, and memory as asked per node x its
/// nodes, per CPU x every CPU it is given, or, asked none, every MB of its nodes.
struct SlurmWholeNodeBilling {
  bool given = false;                          ///< false: not such a job
  double cpu_weight = 0, mem_weight = 0;       ///< per CPU, per MB
  double mem_per_node = -1, mem_per_cpu = -1;  ///< MB asked; both < 0: its nodes' whole memory
  bool max_tres = false;                       ///< PriorityFlags=MAX_TRES: the largest node TRES weighed
  double others_max = 0;  ///< with max_tres: the largest of its other node TRES weighed (node count, GRES)
  double others = 0;      ///< the rest of its TRES weighed, summed (the node TRES too without max_tres)
};

struct SlurmMultifactor {
  bool enabled = false;                                              ///< PriorityType=priority/multifactor
  double weight_age = 0, weight_fairshare = 0, weight_job_size = 0;  ///< PriorityWeight*
  double weight_partition = 0;                                       ///< PriorityWeightPartition
  /// Per job (the dump's loader fills it): its partition's PriorityJobFactor over the largest of the cluster's
  /// partitions (Slurm's norm_priority); a job of several: its first's, as squeue shows; empty: 0 each.
  std::vector<double> partition_factor;
  double weight_qos = 0;    ///< PriorityWeightQOS
  double weight_assoc = 0;  ///< PriorityWeightAssoc
  /// Per job (the dump's loader fills it, from sacctmgr's association priorities): its association's Priority
  /// over the largest of any association (assoc_mgr's priority_norm); empty: 0 each. Counts only with
  /// slurmdbd (`accounting`), where associations exist.
  std::vector<double> assoc_factor;
  /// Per job (the dump's loader fills it, from sacctmgr's QOS priorities): its QOS's priority over the
  /// largest of any QOS (assoc_mgr's norm_priority; a job of no QOS: "normal"'s); empty: 0 each. Counts only
  /// with slurmdbd (`accounting`), where QOS exist.
  std::vector<double> qos_factor;
  /// PriorityWeightTRES: per TRES, its weight on the job's TRES factor, in the order written ("cpu", "mem",
  /// "node", "billing", "gres/gpu", "gres/gpu:a100": the type in lower case; a unit suffix already divided
  /// out as slurm_get_tres_weight_array does). A TRES no job counts (energy, fs/disk, vmem, pages) weighs 0.
  std::vector<std::pair<std::string, double>> weight_tres;
  /// The TRES `tres_factor` has a column for (the dump's loader fills both: cpu, mem, node, billing and each
  /// GRES a node has), and per job (job-major: job x tres_names.size() + column) its count of that TRES over
  /// its first partition's (priority_multifactor.c _get_tres_factors); a job beyond it: every TRES factor 0.
  std::vector<std::string> tres_names;
  std::vector<double> tres_factor;
  /// Per job (the dump's loader fills it for jobs of a partition with TRESBillingWeights): its billable TRES,
  /// what each second it runs adds to its association's usage (priority_multifactor.c _apply_new_usage,
  /// calc_job_billable_tres: the weighted TRES, not truncated); 0, or a job beyond it: its CPUs.
  std::vector<double> billable;
  /// Per job (the dump's loader fills it; empty: none): 1 for a job given its nodes whole (--exclusive, an
  /// OverSubscribe=EXCLUSIVE partition), whose total_cpus are every CPU of them ("#CPUs=16" for `-c 1` on a
  /// 16-CPU node, slurmctld's log of datasets/slurm/c100-excl): what fair share bills without
  /// TRESBillingWeights (calc_job_billable_tres); with them, whole_node_billing says what it is billed.
  std::vector<uint8_t> whole_node;
  /// Per job given its nodes whole in a partition with TRESBillingWeights (empty, or a job beyond it: none).
  std::vector<SlurmWholeNodeBilling> whole_node_billing;
  /// The memory consumable (bytes; the catalog's consumables), for whole_node_billing; SIZE_MAX: none.
  size_t mem_consumable = SIZE_MAX;
  /// Per job (the dump's loader fills it from sacctmgr's QOS UsageFactor; empty, or a job beyond it: 1): what
  /// its usage is multiplied by before it is charged (priority_multifactor.c _apply_new_usage; 0: never charged).
  std::vector<double> usage_factor;
  double max_age = 7 * 86400.0;  ///< PriorityMaxAge, s (> 0)
  double calc_period = 300;      ///< PriorityCalcPeriod, s (> 0)
  /// The calculations come at calc_phase + k x calc_period (seconds since the epoch): slurmctld runs them
  /// when it starts and every calc_period after.
  double calc_phase = 0;
  double decay_half_life = 7 * 86400.0;                 ///< PriorityDecayHalfLife, s (0: usage never decays)
  SlurmUsageReset usage_reset = SlurmUsageReset::None;  ///< PriorityUsageResetPeriod
  /// Fair Tree (22.05's default) ranks users; false (PriorityFlags=NO_FAIR_TREE) is the classic formula: a
  /// user's factor 2^(-(U / S) / D), S its shares normalised down the tree, U its effective usage (its own
  /// normalised usage moved toward its account's by its share of its siblings'), D `dampening`.
  bool fair_tree = true;
  /// PriorityFlags=DEPTH_OBLIVIOUS (the classic formula, fair_tree false): an association's effective usage is
  /// R x S, R = (its parent's effective usage over the parent's shares) x L^k, L its normalised usage over its
  /// shares relative to its siblings' usage over the parent's shares, k = 1 / (1 + (5 ln Rp)^2) when Rp and L
  /// lie on opposite sides of 1, else 1 (priority_multifactor.c _depth_oblivious_set_usage_efctv): an account's
  /// depth in the tree no longer lowers its users' factors. A sibling whose usage slurmctld never normalised (an
  /// association that runs nothing) counts its initial NO_VAL, 4294967294, as slurmctld sums it.
  bool depth_oblivious = false;
  double dampening = 1;  ///< FairShareDampeningFactor (>= 1; the classic formula only)
  /// PriorityFlags=SMALL_RELATIVE_TO_TIME: the job size factor is the job's CPUs (at least its nodes' share of
  /// the cluster's) per minute of its time limit, over the cluster's CPUs (PriorityFavorSmall: 1 minus it).
  bool size_relative_to_time = false;
  /// PriorityFlags=INCR_ONLY: a recalculation never lowers a pending job's priority.
  bool increase_only = false;
  /// PriorityFlags=ACCRUE_ALWAYS: a job's age counts from its submit. Else from when it became eligible
  /// (accrue_time is its begin time: --begin, or when a dependency was satisfied or a hold released;
  /// JobTable::hold_until when it is after the submit, as the loader sets it from sacct's Eligible).
  bool accrue_always = false;
  /// PriorityFlags=MAX_TRES: a billing TRES is the largest of the weighted node TRES (CPUs, memory, nodes,
  /// GRES) plus the sum of the others, not the sum of all (assoc_mgr_tres_weighted; the loader's to read).
  bool max_tres = false;
  /// PriorityFlags=NO_NORMAL_PART, _QOS, _ASSOC, _TRES (NO_NORMAL_ALL: the four): that factor is not normalised
  /// (priority_multifactor.c): the partition's PriorityJobFactor, the QOS's or association's Priority, the
  /// count of each TRES asked, as they are, not over the largest or the partition's. The loader's to read:
  /// partition_factor, qos_factor, assoc_factor and tres_factor hold the raw values then.
  bool no_normal_part = false, no_normal_qos = false, no_normal_assoc = false, no_normal_tres = false;
  bool favor_small = false;  ///< PriorityFavorSmall
  /// slurmctld keeps accounting in slurmdbd (AccountingStorageType=accounting_storage/slurmdbd). Without
  /// it the plugin ignores the age and fair-share weights and never runs its calculations: priorities
  /// stay as they were at submit (priority_multifactor.c init).
  bool accounting = true;
  /// The associations beyond those the jobs make (each job's account under root unless listed, its user
  /// in it, shares 1): accounts' places and shares, and users with no job, who count in Fair Tree's
  /// ranking (root's own user). In order: an account's parent before it.
  std::vector<SlurmAssociation> associations;
};

/// Which scheduler chooses the starts: Moab's scheduling iteration (priority order, throttles,
/// backfill) or FBSNG's dynamic queue and section priorities (engine/schedule/fbsng.hpp, seed 004).
enum class SchedulerKind : uint8_t { Moab, Fbsng };

struct SimConfig {
  double interval = 0;  ///< 0: a cycle at every event time (event driven); > 0: every `interval` s
  /// At least this many seconds between two cycles (FBSNG: the scheduler runs at most once per 5 s);
  /// a cycle due earlier waits for it.
  double min_interval = 0;
  SchedulerKind scheduler = SchedulerKind::Moab;
  FbsngConfig fbsng;  ///< scheduler = Fbsng: queues and process types
  CredentialKind process_type =
      CredentialKind::Account;  ///< scheduler = Fbsng: the credential naming a section's process type
  AllocationPolicy allocation = AllocationPolicy::GreatestPower;
  /// allocation = ConsecutiveBestFit: the consumable (index in catalog.consumables()) whose free units it
  /// counts; a format sets it (Slurm: cpus), else the first consumable.
  size_t fit_consumable = 0;
  /// The consumable a job's JobTable::FitUnit limit is of (Slurm: memory); SIZE_MAX: none.
  size_t fit_limit = SIZE_MAX;
  BackfillPolicy backfill = BackfillPolicy::None;
  /// backfill = Easy: how many waiting jobs get a reservation in a cycle (Moab RESERVATIONDEPTH, >= 1).
  uint32_t reservation_depth = 1;
  /// The reservations a cycle makes at most: 0 for None and Greedy, reservation_depth for Easy, no
  /// limit (SIZE_MAX) for Conservative.
  size_t depth() const noexcept {
    switch (backfill) {
      case BackfillPolicy::Easy: return reservation_depth;
      case BackfillPolicy::Conservative: return SIZE_MAX;
      default: return 0;
    }
  }
  /// With a book (depth > 1, conservative): when a running job ends before its walltime estimate, the
  /// next cycle compresses the schedule: each booked reservation, in priority order, is made again and
  /// kept if it starts earlier (Mu'alem and Feitelson; Alea's and CQSim's conservative). false (the
  /// default: compression asks every booked reservation again at each early end, and on a long queue
  /// that costs: RICC's first 80,000 jobs replay conservative in 187 s compressed against 2 s): a
  /// reservation stays where it was made until its job starts (never later either way), though its job
  /// may start earlier.
  bool compression = false;
  /// Slurm's bf_interval (seconds; 0, the default: backfill in every cycle): backfill runs only in the
  /// cycles `backfill_interval` apart, each planning its reservations afresh and keeping none; the cycles
  /// between them are Slurm's main pass, in strict priority order (the first job that cannot start
  /// stops it). With backfill = "none" it is not read; below 0 (Slurm's bf_interval=-1) it is as 0.
  double backfill_interval = 0;
  /// Backfill runs as Slurm's sched/backfill: every backfill_interval, the main pass between.
  bool slurm_backfill() const noexcept { return backfill_interval > 0 && backfill != BackfillPolicy::None; }
  /// Slurm's partitions (engine/batch/queue_blocking.hpp; the Slurm loader sets them, per job its
  /// partitions): the main pass (the cycles without backfill) blocks by partition as slurmctld's
  /// _schedule does (engine/schedule/slurm_main_pass.cpp) instead of stopping at the first job that cannot
  /// start. Null: one strict order.
  std::shared_ptr<const BlockingQueues> partitions;
  /// With partitions: Slurm's default_queue_depth (100): a main pass that sched_interval's clock did not
  /// start tests at most this many job records and one more (a job of several partitions: a record each),
  /// then stops, the rest untried ("already tested N jobs, breaking out", job_scheduler.c); 0: no limit.
  uint64_t main_pass_depth = 0;
  /// With partitions: Slurm's partition_job_depth (0: no limit): every main pass (full ones too) tests at
  /// most this many job records of each partition; a later record of a partition is skipped before it
  /// counts toward main_pass_depth (its job waits, Reason Priority, unless another of its partitions is
  /// tried), whether or not the partition has failed (job_scheduler.c, _schedule, 22.05: max_jobs_per_part).
  uint64_t main_pass_partition_depth = 0;
  /// With partitions: Slurm's sched_max_job_start (0: no limit): a main pass (full ones too) that has
  /// started this many jobs stops before its next job record, the rest untried as under main_pass_depth
  /// (Reason Priority; the next pass, or the full one on main_pass_full_interval's clock, goes on)
  /// (job_scheduler.c, _schedule, 22.05: "sched_max_job_start reached, breaking out").
  uint64_t main_pass_max_starts = 0;
  /// With partitions and main_pass_depth or main_pass_max_starts: Slurm's sched_interval (60 s): the main pass at
  /// main_pass_full_phase + k x this tests the whole queue (slurmctld's background thread, from its start);
  /// 0: never. Such a pass is run only when a pass since the last stopped short (nothing else changes).
  double main_pass_full_interval = 0;
  double main_pass_full_phase = 0;
  /// The backfill cycles come at times phase + k x backfill_interval (seconds since the epoch, as the jobs'
  /// times). NaN: as Slurm's backfill thread (sched/backfill's backfill_agent, 22.05) times them:
  /// backfill_interval after the last one when a main pass ran since, else on the 1 s tick after the next
  /// event (the first one likewise); the Slurm loader's default.
  double backfill_phase = 0;
  /// With backfill_interval and a book (conservative, or a depth above 1): a backfill cycle books no
  /// reservation starting later than its time plus this (seconds); such a job waits without one, and
  /// later jobs may start in its way (Slurm's bf_window, 1 day: "No reservation created").
  double backfill_window = std::numeric_limits<double>::infinity();
  /// With backfill_interval and a book: the records of Slurm's node-space map (bf_max_job_test, 500: it sizes
  /// the map, bf_node_space_size): the map starts as one record from the cycle's start to the window's end
  /// and each reservation splits it at its start and end (not at a time where a record already ends); a
  /// job that would book a reservation on a full map ends the backfill cycle, it and every later job
  /// untried (backfill.c, "table size limit ... reached").
  uint64_t backfill_max_jobs = std::numeric_limits<uint64_t>::max();
  /// With backfill_interval and a book: a backfill cycle tries at most this many ready jobs of one partition
  /// (SimConfig::partitions; a job of several counts in its first), and this many of one owner in one
  /// partition; the others wait for the next cycle (Slurm's bf_max_job_part, bf_max_job_user_part; 0: no
  /// limit).
  uint64_t backfill_max_jobs_per_partition = 0;
  uint64_t backfill_max_jobs_per_user_partition = 0;
  /// With backfill_interval and a book: a backfill cycle tries at most this many ready jobs of one owner;
  /// the owner's others wait for the next cycle (Slurm's bf_max_job_user, backfill.c
  /// _job_exceeds_max_bf_param: a job over any of these limits counts for none of them; 0: no limit).
  uint64_t backfill_max_jobs_per_user = 0;
  /// With backfill_interval and a book: a backfill cycle tries at most this many ready jobs of one
  /// association (an owner in an account: JobTable::owner and ::account); the others wait for the next cycle
  /// (Slurm's bf_max_job_assoc, counted with the limits above). Slurm keeps associations only with slurmdbd:
  /// without it (slurm_priority.accounting false) the limit counts for nothing. 0: no limit.
  uint64_t backfill_max_jobs_per_association = 0;
  /// With backfill_interval and a book: a job whose priority (above its tier) is below this books no
  /// reservation in a backfill cycle: it starts only if it fits now without delaying another's (Slurm's
  /// bf_min_prio_reserve, backfill.c TEST_NOW_ONLY; 0: every job may reserve).
  double backfill_min_priority_reserve = 0;
  /// With backfill_interval and a book: a job waiting less than this (seconds since its submit) books no
  /// reservation in a backfill cycle, and with partitions fails none in the main pass (Slurm's
  /// bf_min_age_reserve, backfill.c and job_scheduler.c; 0: none).
  double backfill_min_age_reserve = 0;
  /// With backfill_interval and a book: a reservation holds its taskers from its start rounded down to a
  /// multiple of this (seconds) to its end rounded down, at least one step (Slurm's bf_resolution, 60 s:
  /// backfill.c's node-space map); 0: exact times.
  double backfill_resolution = 0;
  ResourceAvailability availability = ResourceAvailability::Dedicated;
  PriorityWeights weights;
  std::vector<Throttle> throttles;
  std::vector<CredentialPriority> credential_priorities;
  /// Slurm's priority/multifactor instead of `weights` and `credential_priorities` (scheduler = Moab).
  SlurmMultifactor slurm_priority;
  double until = std::numeric_limits<double>::infinity();  ///< no cycle after this time
  /// Where the policy was read (a file name; loaders/policy.hpp sets it): a PolicyError names it. Empty:
  /// the defaults.
  std::string source;
  /// Every cycle visits every waiting job and makes its reservation anew (the full cycle the fast one
  /// must equal). For verification: same schedule, slower.
  bool full_cycles = false;
  /// Keep the timeline (SimResult::timeline, timeline_used) and the per-minute cycle statistics
  /// (SimResult::cycle_minutes); false leaves them empty (`simulate --write metrics|schedule` writes neither:
  /// a long run's rows are megabytes). The schedule, the metrics and cycle_seconds are the same either way.
  bool record_timeline = true;
};

}  // namespace colmatch
