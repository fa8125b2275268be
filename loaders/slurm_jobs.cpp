#include "loaders/slurm_jobs.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <unordered_set>

#include <fmt/format.h>

#include "engine/batch/admission.hpp"
#include "engine/model/request.hpp"
#include "loaders/errors.hpp"
#include "loaders/slurm_constraint.hpp"
#include "loaders/slurm_sacct.hpp"
#include "loaders/slurm_scontrol_job.hpp"
#include "loaders/slurm_text.hpp"
#include "loaders/slurm_tres.hpp"

namespace colmatch::loaders::slurm {
namespace fs = std::filesystem;

namespace {

// The warning for jobs of the queue that are not pending: they are not matched again.
std::string not_pending_warning(size_t count, const std::string& path) {
  return fmt::format(
      "{} jobs of {} not pending (running, completing): what they hold is the nodes' CPUAlloc, "
      "AllocMem and GresUsed",
      count, fs::path(path).filename().string());
}

// What a job's sbatch options say (read_options). `why`, when not empty, is why the job is rejected.
struct Options {
  double ntasks = 0, per_node = 0, per_task = 1, mem = -1, mem_per_cpu = -1, cpus_per_gpu = 0, mem_per_gpu = -1,
         time = std::numeric_limits<double>::quiet_NaN();
  uint32_t node_count = 1, min_nodes = 0;  // -N MIN-MAX: node_count MAX, min_nodes MIN (0: no range)
  bool gpus_per_job = false, nodes_given = false, whole_node = false;
  std::string why, constraint, prefer, part_list, nodelist, exclude;
  std::map<std::string, double> gres;  // per node: gres/NAME and gres/NAME:TYPE
  std::string no_such_type;            // a GRES type no node has (the job never runs: Slurm's not available)
  std::string gpus_per_task;           // --gpus-per-task=[TYPE:]N, counted once the tasks per node are
};

// A count option's value: a whole number from 1 to 1e6.
double count_of(const std::string& opt, const std::string& v) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || !(d >= 1) || d != std::floor(d) || d > 1e6)
    throw std::invalid_argument(fmt::format("--{} {}: not a count", opt, v));
  return d;
}

// --gres=NAME[:TYPE][:N],... or --gpus=[TYPE:]N, added to o.gres (per node).
void read_gres(const std::string& opt, const std::string& v, const FarmAttributes& a, Options& o) {
  for (const std::string& item : split(v, ',')) {
    std::vector<std::string> p = split(item, ':');
    if (opt == "gpus" || opt == "gpus-per-node") p.insert(p.begin(), "gpu");
    if (opt == "gpus") o.gpus_per_job = true;
    if (p.empty() || p.size() > 3) throw std::invalid_argument("Invalid generic resource (gres) specification");
    double c = 1;
    std::string type;
    if (p.size() == 3) type = p[1], c = count_of(opt, p[2]);
    else if (p.size() == 2) {
      char* end = nullptr;
      (void)std::strtod(p[1].c_str(), &end);  // gpu:2 (a count) or gpu:a100 (a type, one of it)
      if (end == p[1].c_str() + p[1].size()) c = count_of(opt, p[1]);
      else type = p[1];
    }
    const std::string base = "gres/" + p[0], typed = type.empty() ? "" : base + ":" + type;
    if (!a.gres.count(base)) throw std::invalid_argument("Invalid generic resource (gres) specification");
    if (!typed.empty() && !a.gres.count(typed)) {  // a type no node has: never runs (Slurm: not available)
      o.no_such_type = typed;
      continue;
    }
    o.gres[base] += c;
    if (!typed.empty()) o.gres[typed] += c;
  }
}

// The options of one job, in the order written; the first that cannot be read sets `why` and ends it.
Options read_options(const SbatchJob& sj, const FarmAttributes& a) {
  Options o;
  o.why = sj.error;
  try {
    for (const auto& [opt, v] : sj.options) {
      if (!o.why.empty()) break;
      if (opt == "nodes") {  // -N K (or K-K): K nodes, each with the per-node request; -N MIN-MAX: a range
        const size_t dash = v.find('-');
        const std::string low = v.substr(0, dash);
        // (sbatch takes a MIN of 0 as 1: `-N 0-2` was accepted by slurmctld 22.05.8)
        const double lo = dash != std::string::npos && low == "0" ? 1 : count_of(opt, low);
        const double hi = dash == std::string::npos ? lo : count_of(opt, v.substr(dash + 1));
        if (hi < lo)  // sbatch's own words (slurmctld 22.05.8, datasets/slurm/c100-ranges-submit-slurm.tsv)
          o.why = fmt::format("Maximum node count {} is less than minimum node count {}", hi, lo);
        o.node_count = static_cast<uint32_t>(hi);
        if (lo < hi) o.min_nodes = static_cast<uint32_t>(lo);
        o.nodes_given = true;
      } else if (opt == "ntasks") {
        o.ntasks = count_of(opt, v);
      } else if (opt == "ntasks-per-node") {
        o.per_node = count_of(opt, v);
      } else if (opt == "cpus-per-task") {
        o.per_task = count_of(opt, v);
      } else if (opt == "mem") {
        o.mem = parse_mebibytes(v);
        if (o.mem == 0) o.why = "--mem=0 (all of a node's memory) is not represented by colmatch yet";
      } else if (opt == "mem-per-cpu") {
        o.mem_per_cpu = parse_mebibytes(v);
      } else if (opt == "constraint") {
        o.constraint = v;
      } else if (opt == "prefer") {
        o.prefer = v;
      } else if (opt == "gres" || opt == "gpus" || opt == "gpus-per-node") {
        read_gres(opt, v, a, o);
      } else if (opt == "gpus-per-task") {
        o.gpus_per_task = v;
      } else if (opt == "cpus-per-gpu") {
        o.cpus_per_gpu = count_of(opt, v);
      } else if (opt == "mem-per-gpu") {
        o.mem_per_gpu = parse_mebibytes(v);
      } else if (opt == "partition") {
        o.part_list = v;
      } else if (opt == "nodelist") {
        o.nodelist = v;
      } else if (opt == "exclude") {
        o.exclude = v;
      } else if (opt == "time") {
        o.time = parse_slurm_time(v);
      } else if (opt == "exclusive") {
        o.whole_node = true;
      } else if (opt == "job-name" || opt == "account" || opt == "qos" || opt == "hold" || opt == "wrap") {
        // credentials and names: no effect on where a job may run
      } else {
        o.why = fmt::format("sbatch option --{} is not one colmatch reads", opt);
      }
    }
  } catch (const std::invalid_argument& e) {
    if (o.why.empty()) o.why = e.what();
  }
  return o;
}

// One job's request on the cluster, worked out before the job is added (JobMaker::shape), and the
// clauses of its request expression as they are made.
struct Shape {
  Options o;
  std::vector<std::string> named;  // -w's nodes
  Constraint hard, scheduled;      // --constraint, and what is scheduled (--prefer's, else the same)
  uint32_t counted = 0;            // nodes the scheduled constraint's counts take
  bool all_memory = false, spread = false, picks = false;
  bool over_nodes = false;  // -n N -N K, N > K: N tasks over K nodes as Slurm gives them (FitUnit::total)
  double cpus = 0;          // per node (over_nodes: one task's)
  std::vector<std::string> clauses;
  size_t scheduled_at = 0;   // where the scheduled constraint's clause is (for --prefer's fallback)
  bool over_limits = false;  // every partition of it is one whose MaxTime or MaxNodes it passes
};

// Makes the jobs one by one into a JobBuilder.
class JobMaker {
 public:
  JobMaker(const Cluster& c, const FarmAttributes& a, const std::map<std::string, uint32_t>& queue_of,
           BlockingQueues& queues, const JobSource& source, JobBuilder& jb)
      : c_(c),
        a_(a),
        queue_of_(queue_of),
        queues_(queues),
        source_(source.path),
        submitted_(source.submitted),
        jb_(jb) {
    tiers_differ_ = c.tiers_differ();
    job_records_ = c.job_records();
    default_partition_ = c.default_partition();
  }

  // Per job added: how much of its chance to run Slurm's submit asks (build_jobs refuses the rest).
  const std::vector<EverCheck>& checks() const noexcept { return checks_; }
  // Per job added: its first partition's PriorityJobFactor (0 for a job of none).
  std::vector<double>& job_factors() noexcept { return job_factor_; }
  // Per job added: the TRES it asks (priority/multifactor's TRES factors).
  const std::vector<TresAsked>& tres_asked() const noexcept { return tres_; }
  // Per job added: 1 when it takes its nodes whole (--exclusive, an OverSubscribe=EXCLUSIVE partition).
  std::vector<uint8_t>& whole_nodes() noexcept { return whole_node_; }
  uint32_t memory_attribute() const noexcept { return a_.mem; }

  // Adds job q (rejected with its reason when its request cannot be made).
  void add(const QueuedJob& q, const std::string& id) {
    const SbatchJob& sj = q.request;
    ids_.add(source_, sj.line, "job_id", id);
    Shape s = shape(sj);
    std::string& why = s.o.why;
    double priority = q.priority;
    const std::vector<std::string> wanted =
        s.o.part_list.empty() ? std::vector<std::string>{default_partition_} : split(s.o.part_list, ',');
    if (tiers_differ_) {
      double tier = 0;
      for (const std::string& p : wanted) tier = std::max(tier, c_.tier_of(p));
      priority += tier * kPriorityTierScale;
    }
    const uint32_t j =
        jb_.add(id, q.user, "", priority, q.submit, s.spread ? static_cast<uint32_t>(s.o.ntasks) : s.o.node_count);
    if (s.spread) jb_.set_rule(AllocationRule::FillUp);
    else if (s.o.node_count > 1 || s.picks) jb_.set_rule(AllocationRule::OnePerTasker);
    if (why.empty() && s.o.min_nodes > 0) jb_.set_node_range(s.o.min_nodes);  // -N MIN-MAX
    queues_.queue_of_job.push_back(kNone);
    queues_.several_first.push_back(static_cast<uint32_t>(queues_.several.size()));
    if (q.reason == "JobHeldUser" || q.reason == "JobHeldAdmin") jb_.set_note(j, "held");
    if (!q.note.empty()) jb_.set_note(j, q.note);
    job_factor_.push_back(0);
    tres_.push_back(asks(s.o));
    whole_node_.push_back(s.o.whole_node ? 1 : 0);
    if (why.empty()) partitions(j, q, wanted, s);
    checks_.push_back(s.over_limits ? EverCheck::None : submit_check(sj, s));
    if (why.empty()) constraint_clauses(j, s);
    if (!why.empty()) {
      jb_.reject(j, fmt::format("{}:{}: job {}: {}", source_, sj.line, id, why));
      return;
    }
    if (!s.o.no_such_type.empty()) {
      s.clauses.push_back("false");
      jb_.set_note(j, "no node has " + s.o.no_such_type);
    }
    try {
      request(j, q, s);
    } catch (const std::exception& e) {
      jb_.reject(j, fmt::format("{}:{}: job {}: {}", source_, sj.line, id, e.what()));
    }
  }

 private:
  Shape shape(const SbatchJob& sj) const;
  void gpus_per_node(double tasks, Shape& s) const;
  EverCheck submit_check(const SbatchJob& sj, const Shape& s) const;
  static TresAsked asks(const Options& o);
  void partitions(uint32_t j, const QueuedJob& q, const std::vector<std::string>& wanted, Shape& s);
  void constraint_clauses(uint32_t j, Shape& s);
  void request(uint32_t j, const QueuedJob& q, Shape& s);

  const Cluster& c_;
  const FarmAttributes& a_;
  const std::map<std::string, uint32_t>& queue_of_;
  BlockingQueues& queues_;
  const std::string& source_;
  bool submitted_ = false;
  JobBuilder& jb_;
  std::vector<double> job_factor_;   // per job: its first partition's PriorityJobFactor
  std::vector<TresAsked> tres_;      // per job: the TRES it asks, and that partition
  std::vector<uint8_t> whole_node_;  // per job: it takes its nodes whole
  std::vector<EverCheck> checks_;    // per job: what Slurm's submit asks of it (build_jobs)
  JobIds ids_;
  bool tiers_differ_ = false, job_records_ = false;
  std::string default_partition_;
};

// The options read, -w's nodes, the constraints translated, the memory by default and how the tasks
// spread over nodes; `why` set at the first that Slurm or colmatch refuses.
Shape JobMaker::shape(const SbatchJob& sj) const {
  Shape s;
  s.o = read_options(sj, a_);
  Options& o = s.o;
  if (c_.exclusive_partition(sj)) o.whole_node = true;  // OverSubscribe=EXCLUSIVE: as --exclusive
  std::string& why = o.why;
  // -w: the nodes named (sbatch: -N is at least their number); a job of more nodes than it names takes
  // these and others (a node pick of them all, below)
  if (why.empty() && !o.nodelist.empty()) {
    try {
      s.named = expand_hostlist(o.nodelist, a_.names.size());  // (more than the cluster has: invalid)
      // a node named twice is one node (slurmctld reads the list into a node bitmap): `-w n001,n001`
      // is one node, not two that never both exist
      std::unordered_set<std::string> seen;
      s.named.erase(
          std::remove_if(s.named.begin(), s.named.end(), [&](const std::string& n) { return !seen.insert(n).second; }),
          s.named.end());
      for (const std::string& n : s.named)
        if (why.empty() && !a_.names.count(n)) why = "Invalid node name specified: " + n;
      o.node_count = std::max(o.node_count, static_cast<uint32_t>(s.named.size()));
      // a node both required and excluded: sbatch refuses the job (seen in slurmctld 22.05.8: `-w n001 -x
      // n001`, "Invalid node name specified")
      if (why.empty() && !o.exclude.empty())
        for (const std::string& x : expand_hostlist(o.exclude, a_.names.size()))
          if (why.empty() && std::find(s.named.begin(), s.named.end(), x) != s.named.end())
            why = "Invalid node name specified: " + x + " is both required (-w) and excluded (-x)";
    } catch (const std::invalid_argument& e) {
      why = e.what();
    }
  }
  // --constraint (and --prefer, which slurmctld 22.05.8 schedules instead of it: see request()); node
  // counts (`ssd*2`, `[a*1&b*2]`) make the job at least their nodes (node_scheduler.c _get_req_features:
  // min_nodes = MAX(min_nodes, the picked nodes)); a -N below them never runs (BadConstraints)
  if (why.empty() && !o.constraint.empty()) {
    s.hard = translate_constraint(o.constraint, a_.features);
    if (!s.hard.refusal.empty()) why = s.hard.refusal;
  }
  if (why.empty() && !o.prefer.empty()) {
    s.scheduled = translate_constraint(o.prefer, a_.features);
    if (!s.scheduled.refusal.empty()) why = "--prefer: " + s.scheduled.refusal;
    else if (!s.scheduled.counts.empty()) why = "--prefer with node counts: not placed by colmatch yet";
    else if (!s.hard.counts.empty()) why = "--prefer beside node counts in -C: not placed by colmatch yet";
  } else {
    s.scheduled = s.hard;
  }
  if (why.empty() && !s.scheduled.counts.empty()) {
    for (const Constraint::Count& x : s.scheduled.counts)
      s.counted = s.scheduled.counts.front().apart ? s.counted + x.count : std::max(s.counted, x.count);
    if (!s.named.empty()) why = "-w with node counts in the constraint: not placed by colmatch yet";
    else if (!o.nodes_given) o.node_count = std::max(o.node_count, s.counted);
  }
  // -n N with --ntasks-per-node P and no -N: ceil(N / P) nodes of P tasks each (Slurm takes P as the most
  // a node runs and rounds the tasks up: `-n 5 --ntasks-per-node=2` ran 6 tasks on 3 nodes; c100-tasks-per-node)
  if (why.empty() && o.per_node > 0 && o.ntasks > 0 && !o.nodes_given && s.named.empty() && s.counted == 0)
    o.node_count = static_cast<uint32_t>(std::ceil(o.ntasks / o.per_node));
  if (why.empty() && o.mem_per_gpu >= 0 && (o.mem >= 0 || o.mem_per_cpu >= 0))
    why = "--mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive";
  if (why.empty() && o.cpus_per_gpu > 0 && o.per_task > 1) why = "--cpus-per-gpu is incompatible with --cpus-per-task";
  // memory by default (DefMemPerCPU, DefMemPerNode), or the node's whole memory (Cluster::whole_memory)
  s.all_memory = why.empty() && c_.whole_memory(sj);
  if (o.mem < 0 && o.mem_per_cpu < 0 && o.mem_per_gpu < 0 && c_.settings.memory_tracked) {
    if (c_.settings.def_mem_per_cpu > 0) o.mem_per_cpu = c_.settings.def_mem_per_cpu;
    else if (c_.settings.def_mem_per_node > 0) o.mem = c_.settings.def_mem_per_node;
  }
  // -n N without -N: N tasks over as few nodes as Slurm's selection gives (cons_tres _eval_nodes with one
  // node at least; datasets/slurm/c100-tasks), a slot a task ($fill_up placed by place_tasks), when every
  // charge is per task: not with --mem (memory per node), GRES, --exclusive, -w or node counts
  s.spread = o.ntasks > 1 && !o.nodes_given && o.per_node == 0 && o.mem < 0 && o.gres.empty() &&
             o.no_such_type.empty() && !o.whole_node && !s.all_memory && o.nodelist.empty() && o.node_count == 1 &&
             !o.gpus_per_job && o.gpus_per_task.empty() && o.mem_per_gpu < 0 && o.cpus_per_gpu == 0;
  if (why.empty() && o.min_nodes > 0 &&
      (o.ntasks > 0 || o.per_node > 0 || !s.named.empty() || s.counted > 0 || o.gpus_per_job))
    why = fmt::format("-N {}-{} with -n, --ntasks-per-node, -w, node counts or --gpus: not placed by colmatch yet",
                      o.min_nodes, o.node_count);
  // -n N -N K with N > K and no --ntasks-per-node: Slurm does not split the tasks evenly; the node its
  // selection picks first takes all it may, leaving one for each other node (`-N 2 -n 4` ran 3 + 1,
  // `-n 5 -N 2` 4 + 1; datasets/slurm/c100-tasks-over-nodes, c100-uneven): the request per node is one
  // task, the others placed by place_tasks_on_nodes (an --exclusive job takes whole nodes: split evenly)
  s.over_nodes = why.empty() && o.nodes_given && o.per_node == 0 && o.ntasks > o.node_count && o.node_count > 1 &&
                 !o.whole_node && o.min_nodes == 0;
  if (s.over_nodes && (!s.named.empty() || s.counted > 0 || !o.gpus_per_task.empty() || o.gpus_per_job ||
                       o.cpus_per_gpu > 0 || o.mem_per_gpu >= 0))
    why = fmt::format("-n {} over -N {} nodes with -w, node counts or per-GPU options: not placed by colmatch yet",
                      o.ntasks, o.node_count);
  // tasks on each node: --ntasks-per-node, else -n spread evenly over the -N nodes (one node: all)
  double tasks = s.spread || s.over_nodes ? 1.0
                 : o.per_node > 0         ? o.per_node
                 : o.ntasks > 0           ? o.ntasks / o.node_count
                                          : 1;
  if (why.empty() && o.per_node == 0 && o.ntasks > 0 && tasks != std::floor(tasks))
    why = fmt::format("-n {} over -N {} nodes is uneven: not placed by colmatch yet", o.ntasks, o.node_count);
  if (why.empty() && o.node_count > 1 && o.gpus_per_job)
    why = "--gpus (GPUs for the whole job) over several nodes is not placed by colmatch yet: use --gres";
  tasks = std::max(1.0, std::floor(tasks));
  s.cpus = tasks * o.per_task;
  gpus_per_node(tasks, s);
  s.picks = !s.scheduled.counts.empty() || (!s.named.empty() && s.named.size() < o.node_count);
  return s;
}

// The options counted per GPU, once the tasks on a node are known (seen in slurmctld 22.05.8: `--gpus-per-node=2
// --cpus-per-gpu=16` runs on nodes of 2 GPUs and 32 CPUs, `--mem-per-gpu=100G` on those of 200G;
// datasets/slurm/c100-gpus-answers.tsv): --gpus-per-task=[TYPE:]N gives each node N GPUs a task,
// --cpus-per-gpu C its CPUs (C a GPU, instead of -c's), --mem-per-gpu M its memory (M a GPU).
void JobMaker::gpus_per_node(double tasks, Shape& s) const {
  Options& o = s.o;
  if (!o.why.empty()) return;
  if (!o.gpus_per_task.empty()) {
    const std::vector<std::string> p = split(o.gpus_per_task, ':');
    try {
      const double n = count_of("gpus-per-task", p.empty() ? "" : p.back());
      if (p.size() > 2) throw std::invalid_argument("Invalid generic resource (gres) specification");
      read_gres("gpus-per-node", (p.size() == 2 ? p[0] + ":" : "") + fmt::format("{}", n * tasks), a_, o);
    } catch (const std::invalid_argument& e) {
      o.why = e.what();
      return;
    }
  }
  const auto g = o.gres.find("gres/gpu");
  const double gpus = g == o.gres.end() ? 0 : g->second;
  if ((o.cpus_per_gpu > 0 || o.mem_per_gpu >= 0) && gpus == 0 && o.no_such_type.empty()) {
    o.why = "--cpus-per-gpu or --mem-per-gpu without GPUs";
    return;
  }
  if (o.cpus_per_gpu > 0) s.cpus = o.cpus_per_gpu * gpus;
  if (o.mem_per_gpu >= 0) o.mem = o.mem_per_gpu * gpus;
}

// The TRES a job asks before it runs, as job_set_req_tres counts them (TresAsked). Seen in slurmctld 22.05.8
// (datasets/slurm/c100-tres): `-N 2 -c 32` 64 CPUs, `-N 2-4 -c 2` 2, `--cpus-per-gpu=4 --gpus=2` 1,
// `-N 2 --mem=100` 200M, `--mem-per-gpu=1000 --gres=gpu:1` 1000M.
TresAsked JobMaker::asks(const Options& o) {
  TresAsked t;
  t.node = o.min_nodes > 0 ? o.min_nodes : o.node_count;
  const double tasks = o.ntasks > 0                        ? o.ntasks
                       : o.per_node > 0                    ? o.per_node * t.node
                       : o.nodes_given && o.min_nodes == 0 ? o.node_count
                                                           : 1;
  t.cpu = tasks * o.per_task;
  t.mem = o.mem >= 0           ? o.mem * t.node
          : o.mem_per_cpu >= 0 ? o.mem_per_cpu * t.cpu
                               : std::numeric_limits<double>::quiet_NaN();
  for (const auto& [name, count] : o.gres)  // per node, or the job's in all (--gpus)
    t.gres[name] = o.gpus_per_job ? count : count * t.node;
  t.whole_node = o.whole_node;
  t.mem_per_node = o.mem;
  t.mem_per_cpu = o.mem >= 0 ? -1 : o.mem_per_cpu;
  return t;
}

// What Slurm's submit asks of a job (seen in slurmctld 22.05.8: datasets/slurm/c100-submit-slurm.tsv): for a
// job submitted and not held (a held job's select_nodes returns ESLURM_JOB_HELD before any node is
// looked at), that it could run alone on the cluster as configured; for a spread job only that some node
// holds one task (-n 20000 over a cluster of 5,904 CPUs was accepted); nothing of a job Slurm may spread
// where colmatch does not (-n without -N, with --mem, GRES or --ntasks-per-node: `-n 130 --mem=1000`
// was accepted and runs over two nodes).
EverCheck JobMaker::submit_check(const SbatchJob& sj, const Shape& s) const {
  if (!submitted_) return EverCheck::None;
  for (const auto& [opt, v] : sj.options)
    if (opt == "hold") return EverCheck::None;
  if (s.spread) return EverCheck::Eligible;
  if (s.o.ntasks > 1 && !s.o.nodes_given && s.o.per_node == 0) return EverCheck::None;
  return EverCheck::Placed;
}

// The job's partitions: the ones it names (none: the Default=YES one), less those whose MaxTime it
// exceeds or whose MaxNodes (or node count) is below its -N (it would pend for ever there:
// job_limits_check -> _part_access_check); its blocking queue, or its queues in turn when it has several.
void JobMaker::partitions(uint32_t j, const QueuedJob& q, const std::vector<std::string>& wanted, Shape& s) {
  std::string& why = s.o.why;
  std::string allowed;
  std::vector<std::string> allowed_names;
  bool over_node_limit = false;
  for (const std::string& p : wanted) {
    const Partition* it = c_.partition(p);
    if (it == nullptr) {
      why = "invalid partition specified: " + p;
      break;
    }
    if (s.o.node_count > it->max_nodes) {
      over_node_limit = true;
      continue;
    }
    if (!std::isnan(s.o.time) && s.o.time > it->max_time) continue;
    allowed += (allowed.empty() ? "" : ", ") + quote_value(p);
    allowed_names.push_back(p);
    if (allowed_names.size() == 1) {  // (several: the first, as squeue shows)
      job_factor_.back() = it->job_factor;
      tres_.back().partition = it;
    }
  }
  // a job of one partition is in its blocking queue; one of several is tried in each in the order
  // written (Slurm: one queue record per partition; BlockingQueues::several)
  if (allowed_names.size() == 1 && queue_of_.count(allowed_names[0]))
    queues_.queue_of_job[j] = queue_of_.at(allowed_names[0]);
  else if (allowed_names.size() > 1 && why.empty()) {
    // (of different tiers: the highest tier's first, each tier's in the order written)
    if (tiers_differ_)
      std::stable_sort(allowed_names.begin(), allowed_names.end(),
                       [&](const std::string& x, const std::string& y) { return c_.tier_of(x) > c_.tier_of(y); });
    for (const std::string& p : allowed_names)
      if (queue_of_.count(p)) {
        queues_.several.push_back(queue_of_.at(p));
        if (tiers_differ_) queues_.several_priority.push_back(q.priority + c_.tier_of(p) * kPriorityTierScale);
      }
  }
  s.over_limits = allowed.empty();
  if (why.empty()) s.clauses.push_back(allowed.empty() ? "false" : "partition=={" + allowed + "}");
  if (why.empty() && allowed.empty()) jb_.set_note(j, over_node_limit ? "PartitionNodeLimit" : "PartitionTimeLimit");
}

// The scheduled constraint's clauses, -w's nodes and -x's.
//
// --prefer: slurmctld 22.05.8's main pass schedules the job with the preferred features *instead of*
// --constraint (job_scheduler.c: the queue record with use_prefer comes first; set_job_features_use),
// and the record with --constraint is not reached: preferred nodes never able to run it leave it
// BadConstraints, busy ones Resources (its partition blocks). Seen in slurmctld 22.05.8: `-C
// skylake&ssd --prefer milan` ran on a milan node (datasets/slurm/c100-batch2-slurm.tsv, job 71);
// `-c 2 --prefer intel -p amd` stayed BadConstraints while `-c 2 -p amd` started (no amd node is
// intel); `--prefer gpu -p all` with every gpu node busy was Resources and blocked partition all.
// --constraint is still checked: sbatch refuses what it refuses.
void JobMaker::constraint_clauses(uint32_t j, Shape& s) {
  std::string& why = s.o.why;
  s.scheduled_at = s.clauses.size();
  if (!s.scheduled.request.empty()) s.clauses.push_back(s.scheduled.request);
  if (!s.scheduled.counts.empty() && s.scheduled.counts.front().apart) {
    // counts in brackets: only nodes with one of their features (node_scheduler.c _build_node_list keeps
    // the node configurations _valid_features finds a bracket's feature on)
    std::string any;
    for (const Constraint::Count& x : s.scheduled.counts) any += (any.empty() ? "" : " || ") + x.term;
    s.clauses.push_back("(" + any + ")");
  }
  if (s.counted > s.o.node_count) {
    s.clauses.push_back("false");
    jb_.set_note(j, fmt::format("-N {} below the {} nodes its constraint counts", s.o.node_count, s.counted));
  }
  if (!s.named.empty() && s.named.size() == s.o.node_count) {
    // every node it names, one each; when it cannot run it holds them and blocks no partition
    // (job_scheduler.c: req_node_bitmap covering min_nodes)
    std::string set;
    for (const std::string& n : s.named) set += (set.empty() ? "" : ", ") + quote_value(n);
    s.clauses.push_back(s.named.size() == 1 ? "NodeName==" + quote_value(s.named[0]) : "NodeName=={" + set + "}");
    if (queues_.holds_own.size() <= j) queues_.holds_own.resize(j + 1, 0);
    queues_.holds_own[j] = 1;
  }
  if (!s.o.exclude.empty()) {
    try {
      for (const std::string& x : expand_hostlist(s.o.exclude, a_.names.size()))
        s.clauses.push_back("NodeName!=" + quote_value(x));
    } catch (const std::invalid_argument& e) {
      why = e.what();
    }
  }
}

// The request expression, node picks, --prefer's fallback and the per-node amounts. Throws what the
// builder throws for a request it cannot parse (the caller rejects the job with it).
void JobMaker::request(uint32_t j, const QueuedJob& q, Shape& s) {
  const Options& o = s.o;
  std::string request;
  for (const std::string& c : s.clauses) request += (request.empty() ? "" : " && ") + c;
  jb_.set_request(request);
  // node picks: each count's nodes, or the nodes -w names when the job has more, among those of its
  // own request (JobTable::NodePick)
  if (s.picks) {
    const std::string base = request.empty() ? "" : "(" + request + ") && ";
    std::vector<JobTable::NodePick> list;
    for (size_t k = 0; k < s.scheduled.counts.size(); ++k) {
      // in brackets, the k-th count's nodes are tried among those of each earlier bracket feature first
      // (_pick_best_nodes walks the feature positions), then alone
      const Constraint::Count& x = s.scheduled.counts[k];
      std::vector<uint32_t> tiers;
      for (size_t f = 0; x.apart && f < k; ++f)
        tiers.push_back(jb_.intern_text(base + x.term + " && " + s.scheduled.counts[f].term));
      tiers.push_back(jb_.intern_text(base + x.term));
      list.push_back({std::move(tiers), x.count, x.apart});
    }
    if (s.scheduled.counts.empty()) {
      std::string set;
      for (const std::string& n : s.named) set += (set.empty() ? "" : ", ") + quote_value(n);
      list.push_back({{jb_.intern_text(base + "NodeName=={" + set + "}")}, static_cast<uint32_t>(s.named.size())});
    }
    if (s.counted <= o.node_count) jb_.set_node_picks(std::move(list));
  }
  if (!s.scheduled.preference.empty()) jb_.set_soft(s.scheduled.preference);
  // --prefer, then --constraint: with job records, when the preferred nodes are all held (ReqNodeNotAvail,
  // which fails no partition), slurmctld 22.05.8 goes on to the job's record with --constraint in the
  // same pass (c100-queue, sched/backfill: job 102, `--prefer ssd -p all` with every ssd node held,
  // started on n024); walking the job list it tries --prefer alone (c10k-batch, sched/builtin: job 322
  // stayed ReqNodeNotAvail). For a job of one partition; one of several keeps the preferred request.
  if (!o.prefer.empty() && job_records_ && queues_.queue_of_job[j] != kNone) {
    std::vector<std::string> with = s.clauses;
    with.erase(with.begin() + static_cast<std::ptrdiff_t>(s.scheduled_at));
    if (!s.hard.request.empty())
      with.insert(with.begin() + static_cast<std::ptrdiff_t>(s.scheduled_at), s.hard.request);
    std::string text;
    for (const std::string& c : with) text += (text.empty() ? "" : " && ") + c;
    jb_.set_fallback(text, s.hard.preference);
  }
  jb_.set_amount(a_.cpus, s.cpus);
  if (o.mem >= 0 || o.mem_per_cpu >= 0) jb_.set_amount(a_.mem, (o.mem >= 0 ? o.mem : o.mem_per_cpu * s.cpus) * kMiB);
  // What Slurm's best fit counts on a node, in whole tasks (what fit_unit says): --mem-per-cpu limits
  // the CPUs to what the free memory pays for (cons_tres job_test.c, the MEM_PER_CPU branch); a job
  // with GRES counts only the CPUs of the tasks it may run there (_select_cores ->
  // gres_select_filter_sock_core: avail_cpus = MIN(avail_cpus, max_tasks_this_node x cpus_per_task)),
  // at most --ntasks-per-node, all -n of a -N 1 job, one for -n 1 or -N K -n K, else what fits.
  // Seen in slurmctld 22.05.8: `-c 16 --gres=gpu:a100:1` took a node with 24 free CPUs before one
  // with 16 (both offer one task of 16), where a job without GRES takes the one with 16.
  const double limit = o.mem < 0 && o.mem_per_cpu > 0 ? o.mem_per_cpu * o.per_task * kMiB : 0.0;
  const bool with_gres = !o.gres.empty() || !o.no_such_type.empty();
  double cap = 0;
  if (with_gres) {
    if (o.per_node > 0) cap = o.per_node;
    else if (o.ntasks > 0 && o.nodes_given && o.node_count == 1) cap = o.ntasks;
    else if (o.ntasks == 1 || (o.ntasks > 0 && o.nodes_given && o.ntasks == o.node_count)) cap = 1;
  }
  if (limit > 0 || s.spread || s.over_nodes || (with_gres && (o.per_task > 1 || cap > 0)))
    jb_.set_fit_unit(o.per_task, limit, cap, s.over_nodes ? o.ntasks : 0);
  for (const auto& [g, c] : o.gres) jb_.set_amount(a_.gres.at(g), c);
  if (a_.jobs != kNone) jb_.set_amount(a_.jobs, o.whole_node || s.all_memory ? a_.node_jobs : 1);
  jb_.set_times(q.runtime, std::isinf(o.time) ? std::numeric_limits<double>::quiet_NaN() : o.time);  // UNLIMITED
  // sacct's Eligible after its Submit: it waits for the jobs that ended then (infer_dependencies), else
  // until that time (--begin, a hold released); its age counts from then (SlurmMultifactor::accrue_always)
  if (!q.after.empty()) jb_.set_depends(q.after);
  else if (q.eligible > q.submit) jb_.set_hold(q.eligible);
  jb_.set_credentials("", q.account, q.qos);
}

}  // namespace

JobSource read_queue(const Cluster& cluster, const std::string& jobs_path, const std::string& accounting,
                     std::vector<std::string>& warnings) {
  JobSource src;
  std::vector<QueuedJob>& queued = src.jobs;
  src.path = jobs_path;
  if (!accounting.empty()) {  // sacct -a -P: what ran, replayed
    src.path = accounting;
    for (AccountedJob& a : read_sacct(accounting)) queued.push_back(std::move(a.job));
  } else if (!jobs_path.empty() && is_scontrol_jobs(jobs_path)) {  // scontrol show job -o
    size_t others = 0;
    queued = read_scontrol_jobs(jobs_path, others);
    if (others) warnings.push_back(not_pending_warning(others, jobs_path));
  } else if (!jobs_path.empty()) {
    size_t k = 0;
    for (SbatchJob& sj : read_sbatch_jobs(jobs_path)) {
      QueuedJob q;
      q.id = std::to_string(++k);
      for (const auto& [opt, v] : sj.options) {  // its credentials (-A, --qos): the fair-share and QOS factors'
        if (opt == "account") q.account = v;
        if (opt == "qos") q.qos = v;
      }
      q.request = std::move(sj);
      queued.push_back(std::move(q));
    }
    src.submitted = true;
  } else if (const std::string squeue = dump_file(cluster.dir, "squeue.json"); fs::exists(squeue)) {
    src.path = squeue;
    size_t others = 0;
    queued = read_squeue_json(squeue, others);
    if (others) warnings.push_back(not_pending_warning(others, squeue));
  } else if (const std::string scontrol = dump_file(cluster.dir, "scontrol-job.txt"); fs::exists(scontrol)) {
    src.path = scontrol;
    size_t others = 0;
    queued = read_scontrol_jobs(scontrol, others);
    if (others) warnings.push_back(not_pending_warning(others, scontrol));
  }
  return src;
}

bool takes_nodes_whole(const Cluster& cluster, const std::vector<QueuedJob>& queued) {
  for (const QueuedJob& q : queued) {
    for (const auto& [opt, v] : q.request.options)
      if (opt == "exclusive") return true;
    if (cluster.whole_memory(q.request) || cluster.exclusive_partition(q.request)) return true;
  }
  return false;
}

void build_jobs(const Cluster& cluster, const FarmAttributes& a, const JobSource& source,
                const std::map<std::string, uint32_t>& queue_of, BlockingQueues& queues, Dataset& ds) {
  JobBuilder jb(ds.catalog);
  JobMaker maker(cluster, a, queue_of, queues, source, jb);
  std::vector<std::pair<uint32_t, uint32_t>> row_of;  // per job row: (source job, its task)
  for (uint32_t i = 0; i < source.jobs.size(); ++i)
    for (size_t k = 0; k < source.jobs[i].count(); ++k) {
      maker.add(source.jobs[i], source.jobs[i].job_id(k));  // an array's tasks one at a time: no copy each
      row_of.emplace_back(i, static_cast<uint32_t>(k));
    }
  ds.jobs = std::move(jb).build();
  // priority/multifactor's partition factor: each job's PriorityJobFactor over the cluster's largest (as it is
  // under NO_NORMAL_PART)
  const SlurmMultifactor& flags = ds.policy.slurm_priority;
  double most = 0;
  for (const Partition& p : cluster.partitions) most = std::max(most, p.job_factor);
  std::vector<double>& factor = maker.job_factors();
  for (double& f : factor) f = flags.no_normal_part ? f : most > 0 ? f / most : 0.0;
  ds.policy_defaults.slurm_priority.partition_factor = factor;
  ds.policy.slurm_priority.partition_factor = std::move(factor);
  // and its association factor: its association's priority over the largest (assoc_mgr priority_norm; as it is
  // under NO_NORMAL_ASSOC): the
  // association of its account, user and first partition, else of its account and user, else (a job of no
  // user: sbatch lines) the account's own
  double top_assoc = 0;
  for (const auto& [key, p] : cluster.settings.assoc_priority) top_assoc = std::max(top_assoc, p);
  if (top_assoc > 0) {
    const std::vector<TresAsked>& asked = maker.tres_asked();
    std::vector<double> assoc(ds.jobs.size(), 0.0);
    for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
      const std::string& account = ds.jobs.accounts.value(ds.jobs.account[j]);
      const std::string& user = ds.jobs.owners.value(ds.jobs.owner[j]);
      const std::string part = asked[j].partition ? asked[j].partition->name : "";
      // (a job of no user finds the account's own row, user "", partition "")
      for (const auto& key : {std::tuple{account, user, part}, std::tuple{account, user, std::string()}}) {
        const auto it = cluster.settings.assoc_priority.find(key);
        if (it == cluster.settings.assoc_priority.end()) continue;
        assoc[j] = flags.no_normal_assoc ? it->second : it->second / top_assoc;
        break;
      }
    }
    ds.policy_defaults.slurm_priority.assoc_factor = assoc;
    ds.policy.slurm_priority.assoc_factor = std::move(assoc);
  }
  // and its TRES factors: what it asks over its partition's
  tres_factors(cluster, maker.tres_asked(), ds.policy.slurm_priority);
  ds.policy_defaults.slurm_priority.tres_names = ds.policy.slurm_priority.tres_names;
  ds.policy_defaults.slurm_priority.tres_factor = ds.policy.slurm_priority.tres_factor;
  ds.policy_defaults.slurm_priority.billable = ds.policy.slurm_priority.billable;
  if (const int slot = ds.catalog.consumable_slot(maker.memory_attribute()); slot >= 0)
    ds.policy.slurm_priority.mem_consumable = static_cast<size_t>(slot);
  ds.policy_defaults.slurm_priority.whole_node_billing = ds.policy.slurm_priority.whole_node_billing;
  ds.policy_defaults.slurm_priority.mem_consumable = ds.policy.slurm_priority.mem_consumable;
  // and the jobs given their nodes whole (billed for every CPU of them)
  std::vector<uint8_t>& given_whole = maker.whole_nodes();
  if (std::find(given_whole.begin(), given_whole.end(), 1) == given_whole.end()) given_whole.clear();
  ds.policy_defaults.slurm_priority.whole_node = given_whole;
  ds.policy.slurm_priority.whole_node = std::move(given_whole);
  // and its QOS factor: the QOS's Priority over the largest (a job of none: "normal", Slurm's default QOS; as it
  // is under NO_NORMAL_QOS)
  double top = 0;
  for (const auto& [name, p] : cluster.settings.qos_priority) top = std::max(top, p);
  if (top > 0) {
    std::vector<double> qos(ds.jobs.size(), 0.0);
    for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
      const std::string& name = ds.jobs.qos_names.value(ds.jobs.qos[j]);
      const auto it = cluster.settings.qos_priority.find(name.empty() ? "normal" : name);
      if (it != cluster.settings.qos_priority.end()) qos[j] = flags.no_normal_qos ? it->second : it->second / top;
    }
    ds.policy_defaults.slurm_priority.qos_factor = qos;
    ds.policy.slurm_priority.qos_factor = std::move(qos);
  }
  // and its QOS's UsageFactor (fair share multiplies its usage by it)
  const auto& factors = cluster.settings.qos_usage_factor;
  if (std::any_of(factors.begin(), factors.end(), [](const auto& f) { return f.second != 1; })) {
    std::vector<double> usage(ds.jobs.size(), 1.0);
    for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
      const std::string& name = ds.jobs.qos_names.value(ds.jobs.qos[j]);
      const auto it = factors.find(name.empty() ? "normal" : name);
      if (it != factors.end()) usage[j] = it->second;
    }
    ds.policy_defaults.slurm_priority.usage_factor = usage;
    ds.policy.slurm_priority.usage_factor = std::move(usage);
  }
  queues.several_first.push_back(static_cast<uint32_t>(queues.several.size()));
  if (queues.several.empty()) queues.several_first.clear();
  // refused at submit: what no node in any state could run (the farm as configured: the taskers
  // themselves when every node is up and every partition UP)
  const std::vector<EverCheck>& check = maker.checks();
  if (std::all_of(check.begin(), check.end(), [](EverCheck c) { return c == EverCheck::None; })) return;
  bool whole = cluster.every_node.size() == cluster.nodes.size();
  for (const Partition& p : cluster.partitions) whole = whole && p.up;
  std::optional<TaskerTable> configured;
  if (!whole) configured = configured_farm(cluster, a, ds.catalog);
  const std::vector<uint8_t> never =
      never_runnable(ds.catalog, configured ? *configured : ds.taskers, ds.jobs, check, kernels::active(), ds.dispatch);
  for (uint32_t j = 0; j < never.size(); ++j)
    if (never[j]) {
      const QueuedJob& q = source.jobs[row_of[j].first];
      ds.jobs.reject.set(j, static_cast<uint32_t>(ds.jobs.reject_reason.size()));
      ds.jobs.reject_reason.push_back(
          fmt::format("{}:{}: job {}: Requested node configuration is not available (sbatch refuses it: no node of "
                      "its partitions, in any state, could ever run it)",
                      source.path, q.request.line, q.job_id(row_of[j].second)));
    }
}

}  // namespace colmatch::loaders::slurm
