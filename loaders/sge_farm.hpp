// The Grid Engine farm between reading and building (loaders/sge.cpp reads it, loaders/sge_jobs.cpp
// turns requests into jobs against it). Internal to the sge loader.
#pragma once

#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/model/jobs.hpp"
#include "engine/model/taskers.hpp"
#include "engine/placement/load_correction.hpp"
#include "engine/schedule/sge_priority.hpp"
#include "loaders/line_reader.hpp"
#include "loaders/sge_conf.hpp"

namespace colmatch::loaders::sge {

/// A parallel environment (sge_pe(5)).
struct Pe {
  std::string name, allocation_rule;
  std::string urgency_slots = "min";  ///< the slot count a range counts as in the urgency
  double slots = 0;
  size_t line = 0;
};

/// A value on one level, as text, with where it was written (for errors).
struct LevelValue {
  std::string text;
  std::string file;
  size_t line = 0;
};

/// The most queue instances (queues x their execution hosts) a farm may have (about 1 KB of memory each
/// while read): a real farm's count is thousands to a few hundred thousand; 1,500 queues on 10,000 hosts
/// (600 KB of qconf) made 15M and ran out of memory after minutes. Counted over every queue before any
/// instance is made; past it, a LoadError naming the queue that crosses it.
inline constexpr size_t kMaxQueueInstances = size_t{1} << 20;

/// One queue instance QUEUE@HOST.
struct Instance {
  std::string queue, host;
  uint32_t host_index = 0;
  double seq_no = 0;
  std::map<uint32_t, LevelValue> values;  ///< queue level, by attribute
  std::vector<std::string> pe_list;
  /// queue_conf(5) load_thresholds on numeric complexes: (attribute, limit in the value's unit). The load
  /// correction within a run puts the instance in alarm by them (load_correction.hpp).
  std::vector<std::pair<uint32_t, double>> load_thresholds;
};

struct FarmModel {
  std::string dir;
  Catalog catalog;
  uint32_t pe_attr = 0;  ///< the set-valued attribute pe_list (not a complex: no request may name it)
  uint32_t qname = kNone, hostname = kNone, slots = kNone;
  std::map<std::string, std::vector<std::string>> groups;         ///< "@name" -> its hosts, nested groups expanded
  std::map<std::string, std::vector<std::string>> group_members;  ///< "@name" -> its hostlist as written
  std::vector<Pe> pes;
  /// Parallel jobs placed by Grid Engine's host rules (AllocationRule::HostPeSlots ...; slot ranges
  /// taken): loaded for `match`. Over time (`simulate`, accounting) the simulator's rules instead.
  bool host_rules = false;
  /// The slots of every queue instance together (an open slot range `2-` asks at most this many).
  uint32_t total_slots = 0;
  /// --jobs lines with qsub's -w e, w, v or p: the job, the level, the line (load_sge answers them once the
  /// taskers are built).
  struct Verify {
    uint32_t job;
    char level;
    size_t line;
  };
  std::vector<Verify> verify;
  /// sched_conf(5)'s queue sort (qconf-ssconf.txt; empty without one: seq_no alone): "seqno" or "load",
  /// and the load formula.
  std::string sort_method, load_formula = "np_load_avg";
  /// sched_conf(5)'s job_load_adjustments (`NAME=VALUE,...`; empty or NONE: none) and
  /// load_adjustment_decay_time in seconds (0: no correction).
  std::string load_adjustments;
  double decay_time = 450;
  /// The PEs whose slot total binds (below their queues' slots) -> the global consumable holding it.
  std::map<std::string, uint32_t> pe_total;
  /// Per attribute: its urgency, the last column of qconf -sc (0 for pe_list and unparsable ones).
  std::vector<double> urgency;
  /// sched_conf(5)'s priority weights (qconf-ssconf.txt, else the manual's defaults).
  SgePriorityWeights weights;
  /// The ticket policies: sched_conf(5)'s settings and the users, projects and departments with their
  /// functional shares and override tickets (qconf-suser.txt, qconf-sprj.txt, qconf-su.txt).
  SgeTicketConfig ticket_config;
  SgeShareHolders holders;
  std::unordered_map<std::string, int32_t> user_holder, project_holder;  ///< name -> holders index
  /// A DEPT userset's entry (a user, or @group) -> its first department (holders.departments index), and
  /// defaultdepartment's index (-1 when the dump has none).
  std::unordered_map<std::string, int32_t> department_of;
  int32_t default_department = -1;
  /// The dump's time (dump-time.txt: seconds since the epoch), NaN when it has none.
  double now = std::numeric_limits<double>::quiet_NaN();
  /// The jobs' priority terms (one per qstat job_list element) and each job's element, for explain.
  std::vector<SgePriorityTerms> priority_terms;
  std::vector<uint32_t> priority_of_job;
  std::map<uint32_t, LevelValue> global;
  std::vector<std::string> hosts;  ///< execution hosts (not global), in file order
  std::vector<std::map<uint32_t, LevelValue>> host_fixed, host_load;
  /// Every queue instance Grid Engine has, (queue, host), also those left out of the farm (disabled,
  /// interactive only): a -q that names none of them is refused, as qsub does.
  std::vector<std::pair<std::string, std::string>> all_instances;
  std::vector<Instance> instances;
  std::unordered_map<std::string, size_t> instance_index;  ///< "QUEUE@HOST" -> instances
  /// What running jobs hold: per instance (instances order), per consumable; empty when none run.
  std::vector<std::vector<double>> running;
  /// A running job's slots on a host and its start (JAT_start_time, seconds since the epoch): the load
  /// correction it still carries into the run (load_correction.c correct_load). Snapshot only.
  struct RunningStart {
    uint32_t host;
    double slots, start;
  };
  std::vector<RunningStart> running_starts;
  std::vector<std::string> warnings;

  /// The attribute a request may name (by name or shortcut, a complex of qconf -sc), or nullopt.
  std::optional<uint32_t> complex(std::string_view name) const;
  /// A numeric value's text as the builder reads it: INFINITY is the largest value of the type.
  static std::string numeric_text(const AttributeDef& def, const std::string& text);
};

/// sched_conf(5)'s ticket settings from the qconf -ssconf record (loaders/sge_shares.cpp), the share tree's
/// weight_tickets_share and compensation_factor among them. Throws LoadError for a value that is not a
/// number or a policy_hierarchy Grid Engine would refuse.
void read_ticket_settings(FarmModel& farm, const Record& conf, const std::string& path);

/// The ticket holders of DIR (qconf-suser.txt, qconf-sprj.txt, qconf-su.txt) and the share tree
/// (qconf-sstree.txt: share_tree(5)) with its usage (sge-share-mon.txt: `sge_share_mon -c 1 -h`; without
/// it a warning says the usage is taken as 0); each optional. Throws LoadError naming file, line and field for an
/// fshare or oticket that is not a whole number
/// >= 0, and for a share tree that is not one (read_share_tree's refusals: an id twice, a child no node
/// has or of two parents, deeper than kMaxShareTreeDepth, more than 2^20 nodes).
void read_share_holders(FarmModel& farm, const std::string& dir);

/// A job as the ticket policies see it: its owner's user object, its project's, its department (the first
/// DEPT userset naming the owner, else its group as @group, else defaultdepartment, as the qmaster sets
/// JB_department at submit), its -js and -ot.
SgeTicketJob ticket_job(const FarmModel& farm, const std::string& owner, const std::string& group,
                        const std::string& project, double jobshare, double override_tickets);

/// sched_conf(5)'s load_formula parsed as Son of Grid Engine 8.1.9 reads it (loaders/sge_queue_sort.cpp), with
/// each host's values (NaN where it lacks one: load 9999) and no load correction.
LoadCorrection parse_load_formula(const FarmModel& farm);

/// Whether `formula` reads a load value some host reports (job_load_adjustments move only those).
bool formula_reads_load(const FarmModel& farm, const LoadCorrection& formula);

/// Grid Engine's queue sort: per queue instance (farm.instances order) its power, higher first, by seq_no and
/// its host's place by the load formula (the host sort a parallel job's hosts follow too).
std::vector<double> queue_sort(const FarmModel& farm, const LoadCorrection& formula);

/// The load correction `match` applies within its one run (engine/placement/load_correction.hpp), or null when
/// the queue sort reads no value job_load_adjustments moves, or load_adjustment_decay_time is 0: each host
/// starts the run with the decayed correction of the jobs running on it (farm.running_starts, at farm.now,
/// else at the latest start). `taskers`: the farm's, for each tasker's seq_no.
std::shared_ptr<const LoadCorrection> load_correction(const FarmModel& farm, LoadCorrection formula,
                                                      const TaskerTable& taskers);

/// DIR/name, or DIR/name.gz when only that exists.
std::string dump_file(const std::string& dir, const char* name);

/// Jobs from DIR/qstat-r.xml (and qstat-j.xml); running ones charge `farm`'s levels under Snapshot. With
/// `jobs_path`, the pending jobs are that file's instead (qsub options, one job a line).
JobTable qstat_jobs(FarmModel& farm, bool snapshot, const ProgressFn& progress, const std::string& jobs_path = "");

/// Jobs from an accounting file: one per record.
JobTable accounting_jobs(const FarmModel& farm, const std::string& path);

}  // namespace colmatch::loaders::sge
