#include "loaders/slurm.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "engine/model/request.hpp"
#include "loaders/errors.hpp"
#include "loaders/slurm_constraint.hpp"
#include "loaders/slurm_sacct.hpp"
#include "loaders/slurm_scontrol_job.hpp"
#include "loaders/slurm_squeue.hpp"
#include "loaders/slurm_text.hpp"

namespace colmatch::loaders {
namespace fs = std::filesystem;

namespace {

using slurm::Record;

constexpr double kMiB = 1024.0 * 1024.0;

struct Partition {
  std::string name;
  bool up = true, is_default = false;
  double max_time = std::numeric_limits<double>::infinity();  // seconds
  // the most nodes a job of it may ask: MaxNodes, and no more than the partition has (TotalNodes)
  double max_nodes = std::numeric_limits<double>::infinity();
  double tier = 1;  // PriorityTier: the job queue is ordered by it first when partitions differ in it
  size_t line = 0;
};

struct Node {
  std::string name;
  double cpus = 0, mem = 0, weight = 1, cpus_used = 0, mem_used = 0;  // mem in MiB
  std::vector<std::string> features, partitions;
  std::map<std::string, double> gres, gres_used;  // "gres/gpu", "gres/gpu:a100" -> count
  size_t line = 0;
};

std::string field(const Record& r, std::string_view key, std::string_view fallback = "") {
  const auto v = r.get(key);
  return v ? *v : std::string(fallback);
}

double num(const Record& r, std::string_view key, const std::string& path, double fallback = 0) {
  const auto v = r.get(key);
  if (!v || v->empty() || *v == "N/A") return fallback;
  char* end = nullptr;
  const double d = std::strtod(v->c_str(), &end);
  if (end != v->c_str() + v->size() || !std::isfinite(d) || d < 0)
    throw LoadError(path, r.line, std::string(key), fmt::format("'{}' is not a number", *v));
  return d;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(sep, b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

// A node's Gres or GresUsed (`gpu:a100:4(S:0-1),gpu:v100:2,mps:100`, `(null)`): counts per gres/NAME and
// gres/NAME:TYPE. Commas inside parentheses belong to the item.
std::map<std::string, double> gres_of(const std::string& text, const std::string& path, size_t line, const char* key) {
  std::map<std::string, double> out;
  if (text.empty() || text == "(null)") return out;
  std::vector<std::string> items;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) items.push_back(cur), cur.clear();
    else cur += c;
  }
  items.push_back(cur);
  for (std::string item : items) {
    item = item.substr(0, item.find('('));
    const std::vector<std::string> parts = split(item, ':');
    if (parts.empty()) continue;
    double count = 1;
    std::string type;
    if (parts.size() >= 2) {
      char* end = nullptr;
      const double c = std::strtod(parts.back().c_str(), &end);
      if (end == parts.back().c_str() + parts.back().size() && std::isfinite(c) && c >= 0) {
        count = c;
        if (parts.size() == 3) type = parts[1];
      } else if (parts.size() == 2) {
        type = parts[1];
      } else {
        throw LoadError(path, line, key, fmt::format("'{}' is not NAME[:TYPE]:COUNT", item));
      }
    }
    out["gres/" + parts[0]] += count;
    if (!type.empty()) out["gres/" + parts[0] + ":" + type] += count;
  }
  return out;
}

// Node states that take no job (scontrol's State: a base state and +FLAGS).
bool dispatchable(const std::string& state) {
  const std::vector<std::string> parts = split(state, '+');
  const bool cloud = std::find(parts.begin(), parts.end(), "CLOUD") != parts.end();
  for (const std::string& p : parts) {
    if (p == "DOWN" || p == "DRAIN" || p == "DRAINED" || p == "DRAINING" || p == "FAIL" || p == "FAILING" ||
        p == "MAINT" || p == "FUTURE" || p == "INVAL" || p == "UNKNOWN")
      return false;
    if (p == "NOT_RESPONDING" && !cloud) return false;  // a CLOUD node powering up is schedulable
  }
  return true;
}

std::vector<Partition> read_partitions(const std::string& path) {
  std::vector<Partition> out;
  for (const Record& r : slurm::read_records(path, "PartitionName")) {
    Partition p;
    p.name = field(r, "PartitionName");
    p.line = r.line;
    p.up = field(r, "State", "UP") == "UP";
    p.is_default = field(r, "Default", "NO") == "YES";
    try {
      p.max_time = slurm::parse_slurm_time(field(r, "MaxTime", "UNLIMITED"));
    } catch (const std::invalid_argument& e) {
      throw LoadError(path, r.line, "MaxTime", e.what());
    }
    {
      const std::string v = field(r, "PriorityTier", "1");
      char* end = nullptr;
      const double n = std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !(n >= 0 && n <= 65535) || n != std::floor(n))
        throw LoadError(path, r.line, "PriorityTier", fmt::format("'{}' is not a priority tier (0 to 65535)", v));
      p.tier = n;
    }
    for (const char* key : {"MaxNodes", "TotalNodes"}) {
      const std::string v = field(r, key, "UNLIMITED");
      if (v == "UNLIMITED") continue;
      char* end = nullptr;
      const double n = std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !(n >= 0) || n != std::floor(n))
        throw LoadError(path, r.line, key, fmt::format("'{}' is not a node count", v));
      p.max_nodes = std::min(p.max_nodes, n);
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<Node> read_nodes(const std::string& path, std::vector<std::string>& warnings) {
  std::vector<Node> out;
  std::set<std::string> seen;
  size_t left_out = 0;
  for (const Record& r : slurm::read_records(path, "NodeName")) {
    Node n;
    n.name = field(r, "NodeName");
    n.line = r.line;
    if (!seen.insert(n.name).second) throw LoadError(path, r.line, "NodeName", fmt::format("node '{}' twice", n.name));
    if (!dispatchable(field(r, "State", "IDLE"))) {
      ++left_out;
      continue;
    }
    n.cpus = num(r, "CPUTot", path);
    n.mem = num(r, "RealMemory", path);
    n.weight = num(r, "Weight", path, 1);
    n.cpus_used = num(r, "CPUAlloc", path);
    n.mem_used = num(r, "AllocMem", path);
    const std::string feats = field(r, "AvailableFeatures", "(null)");
    if (feats != "(null)") n.features = split(feats, ',');
    const std::string parts = field(r, "Partitions");
    n.partitions = split(parts, ',');
    n.gres = gres_of(field(r, "Gres", "(null)"), path, r.line, "Gres");
    n.gres_used = gres_of(field(r, "GresUsed", "(null)"), path, r.line, "GresUsed");
    out.push_back(std::move(n));
  }
  if (left_out)
    warnings.push_back(
        fmt::format("{} nodes left out: DOWN, DRAIN, FAIL, MAINT, FUTURE or not responding "
                    "(their State in {})",
                    left_out, path));
  return out;
}

// The warning for jobs of the queue that are not pending: they are not matched again.
std::string not_pending_warning(size_t count, const std::string& path) {
  return fmt::format(
      "{} jobs of {} not pending (running, completing): what they hold is the nodes' CPUAlloc, "
      "AllocMem and GresUsed",
      count, fs::path(path).filename().string());
}

}  // namespace

// Long (550 lines): the cluster, its jobs, sacct and the constraint language in one function; issue 48
// splits it as loaders/sge.cpp is split (its first step).
Dataset load_slurm(const std::string& dump_dir, const std::string& jobs_path, const std::string& accounting,
                   const ProgressFn&, LoadMode) {
  if (!fs::is_directory(dump_dir))
    throw LoadError(dump_dir, 0, "--dump", "not a folder (tools/slurm-dump.sh writes one)");
  auto file = [&](const char* name) {  // NAME, or NAME.gz when only that exists
    const std::string plain = (fs::path(dump_dir) / name).string();
    return !fs::exists(plain) && fs::exists(plain + ".gz") ? plain + ".gz" : plain;
  };
  const std::string node_path = file("scontrol-node.txt"), part_path = file("scontrol-partition.txt");
  for (const std::string& p : {node_path, part_path})
    if (!fs::exists(p)) throw LoadError(p, 0, "", "missing: tools/slurm-dump.sh writes it");
  Dataset ds;
  ds.name = fs::path(dump_dir).filename().string();
  std::vector<std::string> warnings;
  const std::vector<Partition> partitions = read_partitions(part_path);
  const std::vector<Node> nodes = read_nodes(node_path, warnings);
  std::set<std::string> up;
  for (const Partition& p : partitions) {
    if (p.up) up.insert(p.name);
    else warnings.push_back(fmt::format("partition {} is not UP: its nodes take none of its jobs", p.name));
  }

  // the jobs: sbatch lines (--jobs), else the dump's squeue --json (its pending jobs)
  std::vector<slurm::QueuedJob> queued;
  std::string source = jobs_path;
  if (!accounting.empty()) {  // sacct -a -P: what ran, replayed
    source = accounting;
    for (slurm::AccountedJob& a : slurm::read_sacct(accounting)) queued.push_back(std::move(a.job));
  } else if (!jobs_path.empty() && slurm::is_scontrol_jobs(jobs_path)) {  // scontrol show job -o
    size_t others = 0;
    queued = slurm::read_scontrol_jobs(jobs_path, others);
    if (others) warnings.push_back(not_pending_warning(others, jobs_path));
  } else if (!jobs_path.empty()) {
    size_t k = 0;
    for (slurm::SbatchJob& sj : slurm::read_sbatch_jobs(jobs_path)) {
      slurm::QueuedJob q;
      q.id = std::to_string(++k);
      q.request = std::move(sj);
      queued.push_back(std::move(q));
    }
  } else if (fs::exists(file("squeue.json"))) {
    source = file("squeue.json");
    size_t others = 0;
    queued = slurm::read_squeue_json(source, others);
    if (others) warnings.push_back(not_pending_warning(others, source));
  } else if (fs::exists(file("scontrol-job.txt"))) {
    source = file("scontrol-job.txt");
    size_t others = 0;
    queued = slurm::read_scontrol_jobs(source, others);
    if (others) warnings.push_back(not_pending_warning(others, source));
  }
  // The cluster's settings (scontrol-config.txt; Slurm's defaults without it): the scheduler and priority
  // plugins (job records, below), and memory: with CR_*_Memory a job without --mem or --mem-per-cpu gets
  // DefMemPerCPU or DefMemPerNode, and with neither set (UNLIMITED) the node's whole memory.
  std::string scheduler = "sched/backfill", priority_type = "priority/basic", select_params = "CR_Core_Memory";
  double def_mem_per_cpu = -1, def_mem_per_node = -1;
  if (const std::string config = file("scontrol-config.txt"); fs::exists(config))
    for (const slurm::ConfigSetting& setting : slurm::read_config(config)) {
      const std::string &k = setting.key, &v = setting.value;
      auto mebibytes = [&] {
        try {
          return v == "UNLIMITED" || v == "0" ? -1.0 : slurm::parse_mebibytes(v);
        } catch (const std::invalid_argument&) {
          throw LoadError(config, setting.line, k, "not a memory size: " + v);
        }
      };
      if (k == "SchedulerType") scheduler = v;
      if (k == "PriorityType") priority_type = v;
      if (k == "SelectTypeParameters") select_params = v;
      if (k == "DefMemPerCPU") def_mem_per_cpu = mebibytes();
      if (k == "DefMemPerNode") def_mem_per_node = mebibytes();
    }
  std::string params_upper = select_params;
  for (char& ch : params_upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  const bool memory_tracked = params_upper.find("MEMORY") != std::string::npos;
  // A job that takes a node's whole memory: under CR_*_Memory, no --mem, no --mem-per-cpu and no default.
  auto whole_memory = [&](const slurm::SbatchJob& sj) {
    if (!memory_tracked || def_mem_per_cpu > 0 || def_mem_per_node > 0) return false;
    for (const auto& [opt, v] : sj.options)
      if (opt == "mem" || opt == "mem-per-cpu") return false;
    return true;
  };
  // --exclusive: a node that runs the job runs no other. A consumable `jobs` whose capacity on every node
  // is the cluster's largest CPU count (no node runs more jobs than CPUs, each taking one at least): a job
  // charges 1 of it, an exclusive job all of it, so it fits only on a node with no job and keeps others out.
  // A job taking a node's whole memory charges all of it too: it needs a node where no job holds memory
  // (every job holds some) and leaves none (seen in slurmctld 22.05.8: `-c 2` without --mem took the idle
  // n024 with Mem=256000, not n009 where a job held 1000 MiB: datasets/slurm/c100-nomem).
  bool exclusive = false;
  for (const slurm::QueuedJob& q : queued) {
    for (const auto& [opt, v] : q.request.options) exclusive = exclusive || opt == "exclusive";
    exclusive = exclusive || whole_memory(q.request);
  }

  // the catalog: sets, the name, then the consumables (cpus, mem, every GRES and GRES type seen)
  AttributeDef feature;
  feature.name = "feature";
  feature.multi_valued = true;
  const uint32_t a_feature = ds.catalog.add(feature);
  AttributeDef part;
  part.name = "partition";
  part.multi_valued = true;
  const uint32_t a_partition = ds.catalog.add(part);
  AttributeDef nodename;
  nodename.name = "NodeName";
  const uint32_t a_node = ds.catalog.add(nodename);
  // every request is per node: a job of -N K nodes is K slots (AllocationRule::OnePerTasker), each
  // charged the per-node amounts
  const uint32_t a_cpus = ds.catalog.add(consumable_attribute("cpus", AttrType::Int, ConsumeScope::PerSlot));
  const uint32_t a_mem = ds.catalog.add(consumable_attribute("mem", AttrType::Memory, ConsumeScope::PerSlot));
  std::set<std::string> gres_names;
  for (const Node& n : nodes)
    for (const auto& [g, c] : n.gres) gres_names.insert(g);
  std::map<std::string, uint32_t> a_gres;
  for (const std::string& g : gres_names)
    a_gres[g] = ds.catalog.add(consumable_attribute(g, AttrType::Int, ConsumeScope::PerSlot));
  const uint32_t a_jobs =
      exclusive ? ds.catalog.add(consumable_attribute("jobs", AttrType::Int, ConsumeScope::PerSlot)) : kNone;

  TaskerBuilder b(ds.catalog);
  std::set<std::string> features, names;
  double most_cpus = 0;
  for (const Node& n : nodes) most_cpus = std::max(most_cpus, n.cpus);
  const double node_jobs = std::max(1.0, most_cpus);  // the capacity of `jobs` on every node
  for (const Node& n : nodes) {
    // Slurm (select/cons_tres) tries the lowest Weight first; within a weight, the dispatch's
    // ConsecutiveBestFit picks by free CPUs over runs of nodes in name (file) order
    b.add(n.name, -n.weight);
    names.insert(n.name);
    try {
      if (!n.features.empty()) b.set_list(a_feature, n.features);
      std::vector<std::string> in;
      for (const std::string& p : n.partitions)
        if (up.count(p)) in.push_back(p);
      if (!in.empty()) b.set_list(a_partition, in);
      b.set(a_node, n.name);
      b.set_number(a_cpus, n.cpus);
      b.set_number(a_mem, n.mem * kMiB);
      for (const auto& [g, c] : n.gres) b.set_number(a_gres.at(g), c);
      if (a_jobs != kNone) b.set_number(a_jobs, node_jobs);
    } catch (const ValueError& e) {
      throw LoadError(node_path, n.line, "", e.what());
    }
    features.insert(n.features.begin(), n.features.end());
  }
  ds.taskers = std::move(b).build();
  // what running jobs hold, per tasker row
  const auto& cons = ds.catalog.consumables();
  bool any_used = false;
  std::vector<std::vector<double>> used(cons.size(), std::vector<double>(ds.taskers.size(), 0.0));
  for (uint32_t r = 0; r < ds.taskers.size(); ++r) {
    const Node& n = nodes[ds.taskers.input_index[r]];
    auto put = [&](uint32_t attr, double v) {
      if (v <= 0) return;
      used[static_cast<size_t>(ds.catalog.consumable_slot(attr))][r] = v;
      any_used = true;
    };
    put(a_cpus, n.cpus_used);
    if (a_jobs != kNone && n.cpus_used > 0) put(a_jobs, 1);  // a job runs there: no exclusive one fits
    put(a_mem, n.mem_used * kMiB);
    for (const auto& [g, c] : n.gres_used)
      if (a_gres.count(g)) put(a_gres.at(g), c);
  }
  if (any_used) ds.in_use.amount = std::move(used);

  // Slurm's main scheduling pass: its node selection, and partitions as blocking queues
  // (engine/batch/queue_blocking.hpp), each holding its nodes' rows
  auto queues = std::make_shared<BlockingQueues>();
  // a node an --exclusive job runs on is busy: a job whose eligible nodes are all held is then Slurm's
  // Resources (blocking its partition) rather than ReqNodeNotAvail, if such a node is among its own
  if (a_jobs != kNone) queues->busy_consumable = static_cast<uint32_t>(ds.catalog.consumable_slot(a_jobs));
  std::map<std::string, uint32_t> queue_of;
  for (const Partition& p : partitions)
    if (p.up) {
      queue_of.emplace(p.name, static_cast<uint32_t>(queues->names.size()));
      queues->names.push_back(p.name);
    }
  {
    const size_t rows = ds.taskers.size(), words = (rows + 63) / 64;
    std::vector<std::vector<uint64_t>> bits(queues->names.size(), std::vector<uint64_t>(words, 0));
    std::vector<uint64_t> count(queues->names.size(), 0);
    for (uint32_t r = 0; r < rows; ++r)
      for (const std::string& p : nodes[ds.taskers.input_index[r]].partitions)
        if (const auto it = queue_of.find(p); it != queue_of.end()) {
          bits[it->second][r >> 6] |= uint64_t{1} << (r & 63);
          ++count[it->second];
        }
    for (size_t q = 0; q < bits.size(); ++q)
      queues->taskers.push_back(kernels::TaskerSet::from_words(std::move(bits[q]), rows, count[q]));
  }
  ds.dispatch.allocation = AllocationPolicy::ConsecutiveBestFit;
  ds.dispatch.fit_consumable = static_cast<size_t>(ds.catalog.consumable_slot(a_cpus));
  // simulate: Slurm's node selection too (its partitions do not block there: Moab's cycle runs)
  ds.policy_defaults.allocation = ds.dispatch.allocation;
  ds.policy_defaults.fit_consumable = ds.dispatch.fit_consumable;
  ds.dispatch.fit_limit = ds.policy_defaults.fit_limit = static_cast<size_t>(ds.catalog.consumable_slot(a_mem));
  ds.policy = ds.policy_defaults;

  JobBuilder jb(ds.catalog);
  JobIds ids;
  {
    std::string default_partition;
    for (const Partition& p : partitions)
      if (p.is_default) default_partition = p.name;
    // PriorityTier (job_scheduler.c): when the partitions differ in it, slurmctld's main pass takes a
    // queue of job:partition records sorted by the partition's tier (highest first), then the job's
    // priority, submit time and id (sort_job_queue2); when they all share one, the job list in order
    // (fifo_sched, under sched/builtin and priority/basic). A job's tier leads its priority here: priority
    // + tier x 2^32 (Slurm's priorities are 32-bit, so the order is exact). A job of several partitions of
    // different tiers has a record at each tier's place: its priority is its highest tier's, and its queues
    // of a lower tier are tried where their records come (BlockingQueues::several_priority).
    bool tiers_differ = false;
    for (const Partition& p : partitions) tiers_differ = tiers_differ || p.tier != partitions.front().tier;
    // The main pass walks the job list itself (fifo_sched: SchedulerType sched/builtin, PriorityType
    // priority/basic and one tier; job_scheduler.c _schedule), or a queue of job records, where a job with
    // --prefer has a record with it and then one with --constraint. scontrol-config.txt says which (Slurm's
    // defaults, sched/backfill and priority/basic, without it).
    auto partition_named = [&](const std::string& name) -> const Partition* {
      const auto it =
          std::find_if(partitions.begin(), partitions.end(), [&](const Partition& x) { return x.name == name; });
      return it == partitions.end() ? nullptr : &*it;
    };
    auto tier_of = [&](const std::string& name) {  // (an unknown partition is refused, naming it)
      const Partition* p = partition_named(name);
      return p == nullptr ? 0.0 : p->tier;
    };
    const bool job_records = tiers_differ || scheduler != "sched/builtin" || priority_type != "priority/basic";
    std::vector<uint32_t>& job_queue = queues->queue_of_job;
    for (const slurm::QueuedJob& q : queued) {
      const slurm::SbatchJob& sj = q.request;
      const std::string& id = q.id;
      ids.add(source, sj.line, "job_id", id);
      double ntasks = 0, per_node = 0, per_task = 1, mem = -1, mem_per_cpu = -1,
             time = std::numeric_limits<double>::quiet_NaN();
      uint32_t node_count = 1;
      bool gpus_per_job = false, nodes_given = false;
      std::string why = sj.error, constraint, prefer, part_list, nodelist, exclude;
      std::map<std::string, double> gres;
      std::string no_such_type;
      bool whole_node = false;
      auto count = [&](const std::string& opt, const std::string& v) {
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        if (v.empty() || end != v.c_str() + v.size() || !(d >= 1) || d != std::floor(d) || d > 1e6)
          throw std::invalid_argument(fmt::format("--{} {}: not a count", opt, v));
        return d;
      };
      try {
        for (const auto& [opt, v] : sj.options) {
          if (!why.empty()) break;
          if (opt == "nodes") {  // -N K (or K-K): K nodes, each with the per-node request
            const size_t dash = v.find('-');
            const std::string low = v.substr(0, dash);
            if (dash != std::string::npos && v.substr(dash + 1) != low)
              why = fmt::format("-N {}: a range of node counts is not placed by colmatch yet", v);
            else node_count = static_cast<uint32_t>(count(opt, low));
            nodes_given = true;
          } else if (opt == "ntasks") {
            ntasks = count(opt, v);
          } else if (opt == "ntasks-per-node") {
            per_node = count(opt, v);
          } else if (opt == "cpus-per-task") {
            per_task = count(opt, v);
          } else if (opt == "mem") {
            mem = slurm::parse_mebibytes(v);
            if (mem == 0) why = "--mem=0 (all of a node's memory) is not represented by colmatch yet";
          } else if (opt == "mem-per-cpu") {
            mem_per_cpu = slurm::parse_mebibytes(v);
          } else if (opt == "constraint") {
            constraint = v;
          } else if (opt == "prefer") {
            prefer = v;
          } else if (opt == "gres" || opt == "gpus") {
            for (const std::string& item : split(v, ',')) {
              std::vector<std::string> p = split(item, ':');
              if (opt == "gpus") p.insert(p.begin(), "gpu"), gpus_per_job = true;
              if (p.empty() || p.size() > 3)
                throw std::invalid_argument("Invalid generic resource (gres) specification");
              double c = 1;
              std::string type;
              if (p.size() == 3) type = p[1], c = count(opt, p[2]);
              else if (p.size() == 2) {
                char* end = nullptr;
                (void)std::strtod(p[1].c_str(), &end);  // gpu:2 (a count) or gpu:a100 (a type, one of it)
                if (end == p[1].c_str() + p[1].size()) c = count(opt, p[1]);
                else type = p[1];
              }
              const std::string base = "gres/" + p[0], typed = type.empty() ? "" : base + ":" + type;
              if (!a_gres.count(base)) throw std::invalid_argument("Invalid generic resource (gres) specification");
              if (!typed.empty() && !a_gres.count(typed)) {  // a type no node has: never runs (Slurm: not available)
                no_such_type = typed;
                continue;
              }
              gres[base] += c;
              if (!typed.empty()) gres[typed] += c;
            }
          } else if (opt == "partition") {
            part_list = v;
          } else if (opt == "nodelist") {
            nodelist = v;
          } else if (opt == "exclude") {
            exclude = v;
          } else if (opt == "time") {
            time = slurm::parse_slurm_time(v);
          } else if (opt == "exclusive") {
            whole_node = true;
          } else if (opt == "job-name" || opt == "account" || opt == "qos" || opt == "hold" || opt == "wrap") {
            // credentials and names: no effect on where a job may run
          } else {
            why = fmt::format("sbatch option --{} is not one colmatch reads", opt);
          }
        }
      } catch (const std::invalid_argument& e) {
        if (why.empty()) why = e.what();
      }
      // -w: the nodes named (sbatch: -N is at least their number); a job of more nodes than it names takes
      // these and others (a node pick of them all, below)
      std::vector<std::string> named;
      if (why.empty() && !nodelist.empty()) {
        try {
          named = slurm::expand_hostlist(nodelist, names.size());  // (more than the cluster has: invalid)
          for (const std::string& n : named)
            if (why.empty() && !names.count(n)) why = "Invalid node name specified: " + n;
          node_count = std::max(node_count, static_cast<uint32_t>(named.size()));
        } catch (const std::invalid_argument& e) {
          why = e.what();
        }
      }
      // --constraint (and --prefer, which slurmctld 22.05.8 schedules instead of it: see below); node counts
      // (`ssd*2`, `[a*1&b*2]`) make the job at least their nodes (node_scheduler.c _get_req_features:
      // min_nodes = MAX(min_nodes, the picked nodes)); a -N below them never runs (BadConstraints)
      slurm::Constraint hard, scheduled;
      uint32_t counted = 0;
      if (why.empty() && !constraint.empty()) {
        hard = slurm::translate_constraint(constraint, features);
        if (!hard.refusal.empty()) why = hard.refusal;
      }
      if (why.empty() && !prefer.empty()) {
        scheduled = slurm::translate_constraint(prefer, features);
        if (!scheduled.refusal.empty()) why = "--prefer: " + scheduled.refusal;
        else if (!scheduled.counts.empty()) why = "--prefer with node counts: not placed by colmatch yet";
        else if (!hard.counts.empty()) why = "--prefer beside node counts in -C: not placed by colmatch yet";
      } else {
        scheduled = hard;
      }
      if (why.empty() && !scheduled.counts.empty()) {
        for (const slurm::Constraint::Count& x : scheduled.counts)
          counted = scheduled.counts.front().apart ? counted + x.count : std::max(counted, x.count);
        if (!named.empty()) why = "-w with node counts in the constraint: not placed by colmatch yet";
        else if (!nodes_given) node_count = std::max(node_count, counted);
      }
      // memory by default (DefMemPerCPU, DefMemPerNode), or the node's whole memory (whole_memory)
      const bool all_memory = why.empty() && whole_memory(sj);
      if (mem < 0 && mem_per_cpu < 0 && memory_tracked) {
        if (def_mem_per_cpu > 0) mem_per_cpu = def_mem_per_cpu;
        else if (def_mem_per_node > 0) mem = def_mem_per_node;
      }
      // -n N without -N: N tasks over as few nodes as Slurm's selection gives (cons_tres _eval_nodes with one
      // node at least; datasets/slurm/c100-tasks), a slot a task ($fill_up placed by place_tasks), when every
      // charge is per task: not with --mem (memory per node), GRES, --exclusive, -w or node counts
      const bool spread = ntasks > 1 && !nodes_given && per_node == 0 && mem < 0 && gres.empty() &&
                          no_such_type.empty() && !whole_node && !all_memory && nodelist.empty() && node_count == 1 &&
                          !gpus_per_job;
      // tasks on each node: --ntasks-per-node, else -n spread evenly over the -N nodes (one node: all)
      double tasks = spread ? 1.0 : per_node > 0 ? per_node : ntasks > 0 ? ntasks / node_count : 1;
      if (why.empty() && per_node == 0 && ntasks > 0 && tasks != std::floor(tasks))
        why = fmt::format("-n {} over -N {} nodes is uneven: not placed by colmatch yet", ntasks, node_count);
      if (why.empty() && node_count > 1 && gpus_per_job)
        why = "--gpus (GPUs for the whole job) over several nodes is not placed by colmatch yet: use --gres";
      tasks = std::max(1.0, std::floor(tasks));
      const double cpus = tasks * per_task;  // per node
      double priority = q.priority;
      const std::vector<std::string> wanted =
          part_list.empty() ? std::vector<std::string>{default_partition} : split(part_list, ',');
      if (tiers_differ) {
        double tier = 0;
        for (const std::string& p : wanted) tier = std::max(tier, tier_of(p));
        priority += tier * 4294967296.0;
      }
      const uint32_t j =
          jb.add(id, q.user, "", priority, q.submit, spread ? static_cast<uint32_t>(ntasks) : node_count);
      const bool picks = !scheduled.counts.empty() || (!named.empty() && named.size() < node_count);
      if (spread) jb.set_rule(AllocationRule::FillUp);
      else if (node_count > 1 || picks) jb.set_rule(AllocationRule::OnePerTasker);
      job_queue.push_back(kNone);
      queues->several_first.push_back(static_cast<uint32_t>(queues->several.size()));
      if (q.reason == "JobHeldUser" || q.reason == "JobHeldAdmin") jb.set_note(j, "held");
      if (!q.note.empty()) jb.set_note(j, q.note);
      std::vector<std::string> clauses;
      if (why.empty()) {
        // partitions: the job's, less those whose MaxTime it exceeds or whose MaxNodes (or node count) is
        // below its -N (it would pend for ever there: job_limits_check -> _part_access_check)
        std::string allowed;
        std::vector<std::string> allowed_names;
        bool over_node_limit = false;
        for (const std::string& p : wanted) {
          const Partition* it = partition_named(p);
          if (it == nullptr) {
            why = "invalid partition specified: " + p;
            break;
          }
          if (node_count > it->max_nodes) {
            over_node_limit = true;
            continue;
          }
          if (!std::isnan(time) && time > it->max_time) continue;
          allowed += (allowed.empty() ? "" : ", ") + quote_value(p);
          allowed_names.push_back(p);
        }
        // a job of one partition is in its blocking queue; one of several is tried in each in the order
        // written (Slurm: one queue record per partition; BlockingQueues::several)
        if (allowed_names.size() == 1 && queue_of.count(allowed_names[0])) job_queue[j] = queue_of.at(allowed_names[0]);
        else if (allowed_names.size() > 1 && why.empty()) {
          // (of different tiers: the highest tier's first, each tier's in the order written)
          if (tiers_differ)
            std::stable_sort(allowed_names.begin(), allowed_names.end(),
                             [&](const std::string& x, const std::string& y) { return tier_of(x) > tier_of(y); });
          for (const std::string& p : allowed_names)
            if (queue_of.count(p)) {
              queues->several.push_back(queue_of.at(p));
              if (tiers_differ) queues->several_priority.push_back(q.priority + tier_of(p) * 4294967296.0);
            }
        }
        if (why.empty()) clauses.push_back(allowed.empty() ? "false" : "partition=={" + allowed + "}");
        if (why.empty() && allowed.empty())
          jb.set_note(j, over_node_limit ? "PartitionNodeLimit" : "PartitionTimeLimit");
      }
      // --prefer: slurmctld 22.05.8's main pass schedules the job with the preferred features *instead of*
      // --constraint (job_scheduler.c: the queue record with use_prefer comes first; set_job_features_use),
      // and the record with --constraint is not reached: preferred nodes never able to run it leave it
      // BadConstraints, busy ones Resources (its partition blocks). Seen in slurmctld 22.05.8: `-C
      // skylake&ssd --prefer milan` ran on a milan node (datasets/slurm/c100-batch2-slurm.tsv, job 71);
      // `-c 2 --prefer intel -p amd` stayed BadConstraints while `-c 2 -p amd` started (no amd node is
      // intel); `--prefer gpu -p all` with every gpu node busy was Resources and blocked partition all.
      // --constraint is still checked: sbatch refuses what it refuses.
      std::string soft;
      const size_t scheduled_at = clauses.size();  // where the scheduled constraint's clause is (see fallback)
      if (why.empty() && !scheduled.request.empty()) clauses.push_back(scheduled.request);
      if (why.empty() && !scheduled.counts.empty() && scheduled.counts.front().apart) {
        // counts in brackets: only nodes with one of their features (node_scheduler.c _build_node_list keeps
        // the node configurations _valid_features finds a bracket's feature on)
        std::string any;
        for (const slurm::Constraint::Count& x : scheduled.counts) any += (any.empty() ? "" : " || ") + x.term;
        clauses.push_back("(" + any + ")");
      }
      soft = scheduled.preference;
      if (why.empty() && counted > node_count) {
        clauses.push_back("false");
        jb.set_note(j, fmt::format("-N {} below the {} nodes its constraint counts", node_count, counted));
      }
      if (why.empty() && !named.empty() && named.size() == node_count) {
        // every node it names, one each; when it cannot run it holds them and blocks no partition
        // (job_scheduler.c: req_node_bitmap covering min_nodes)
        std::string set;
        for (const std::string& n : named) set += (set.empty() ? "" : ", ") + quote_value(n);
        clauses.push_back(named.size() == 1 ? "NodeName==" + quote_value(named[0]) : "NodeName=={" + set + "}");
        if (queues->holds_own.size() <= j) queues->holds_own.resize(j + 1, 0);
        queues->holds_own[j] = 1;
      }
      if (why.empty() && !exclude.empty()) {
        try {
          for (const std::string& x : slurm::expand_hostlist(exclude, names.size()))
            clauses.push_back("NodeName!=" + quote_value(x));
        } catch (const std::invalid_argument& e) {
          why = e.what();
        }
      }
      if (!why.empty()) {
        jb.reject(j, fmt::format("{}:{}: job {}: {}", source, sj.line, id, why));
        continue;
      }
      if (!no_such_type.empty()) {
        clauses.push_back("false");
        jb.set_note(j, "no node has " + no_such_type);
      }
      std::string request;
      for (const std::string& c : clauses) request += (request.empty() ? "" : " && ") + c;
      try {
        jb.set_request(request);
        // node picks: each count's nodes, or the nodes -w names when the job has more, among those of its
        // own request (JobTable::NodePick)
        if (picks) {
          const std::string base = request.empty() ? "" : "(" + request + ") && ";
          std::vector<JobTable::NodePick> list;
          for (size_t k = 0; k < scheduled.counts.size(); ++k) {
            // in brackets, the k-th count's nodes are tried among those of each earlier bracket feature first
            // (_pick_best_nodes walks the feature positions), then alone
            const slurm::Constraint::Count& x = scheduled.counts[k];
            std::vector<uint32_t> tiers;
            for (size_t f = 0; x.apart && f < k; ++f)
              tiers.push_back(jb.intern_text(base + x.term + " && " + scheduled.counts[f].term));
            tiers.push_back(jb.intern_text(base + x.term));
            list.push_back({std::move(tiers), x.count, x.apart});
          }
          if (scheduled.counts.empty()) {
            std::string set;
            for (const std::string& n : named) set += (set.empty() ? "" : ", ") + quote_value(n);
            list.push_back({{jb.intern_text(base + "NodeName=={" + set + "}")}, static_cast<uint32_t>(named.size())});
          }
          if (counted <= node_count) jb.set_node_picks(std::move(list));
        }
        if (!soft.empty()) jb.set_soft(soft);
        // --prefer, then --constraint: with job records, when the preferred nodes are all held (ReqNodeNotAvail,
        // which fails no partition), slurmctld 22.05.8 goes on to the job's record with --constraint in the
        // same pass (c100-queue, sched/backfill: job 102, `--prefer ssd -p all` with every ssd node held,
        // started on n024); walking the job list it tries --prefer alone (c10k-batch, sched/builtin: job 322
        // stayed ReqNodeNotAvail). For a job of one partition; one of several keeps the preferred request.
        if (!prefer.empty() && job_records && job_queue[j] != kNone) {
          std::vector<std::string> with = clauses;
          with.erase(with.begin() + static_cast<std::ptrdiff_t>(scheduled_at));
          if (!hard.request.empty())
            with.insert(with.begin() + static_cast<std::ptrdiff_t>(scheduled_at), hard.request);
          std::string text;
          for (const std::string& c : with) text += (text.empty() ? "" : " && ") + c;
          jb.set_fallback(text, hard.preference);
        }
        jb.set_amount(a_cpus, cpus);
        if (mem >= 0 || mem_per_cpu >= 0) jb.set_amount(a_mem, (mem >= 0 ? mem : mem_per_cpu * cpus) * kMiB);
        // What Slurm's best fit counts on a node, in whole tasks (what fit_unit says): --mem-per-cpu limits
        // the CPUs to what the free memory pays for (cons_tres job_test.c, the MEM_PER_CPU branch); a job
        // with GRES counts only the CPUs of the tasks it may run there (_select_cores ->
        // gres_select_filter_sock_core: avail_cpus = MIN(avail_cpus, max_tasks_this_node x cpus_per_task)),
        // at most --ntasks-per-node, all -n of a -N 1 job, one for -n 1 or -N K -n K, else what fits.
        // Seen in slurmctld 22.05.8: `-c 16 --gres=gpu:a100:1` took a node with 24 free CPUs before one
        // with 16 (both offer one task of 16), where a job without GRES takes the one with 16.
        const double limit = mem < 0 && mem_per_cpu > 0 ? mem_per_cpu * per_task * kMiB : 0.0;
        const bool with_gres = !gres.empty() || !no_such_type.empty();
        double cap = 0;
        if (with_gres) {
          if (per_node > 0) cap = per_node;
          else if (ntasks > 0 && nodes_given && node_count == 1) cap = ntasks;
          else if (ntasks == 1 || (ntasks > 0 && nodes_given && ntasks == node_count)) cap = 1;
        }
        if (limit > 0 || spread || (with_gres && (per_task > 1 || cap > 0))) jb.set_fit_unit(per_task, limit, cap);
        for (const auto& [g, c] : gres) jb.set_amount(a_gres.at(g), c);
        if (a_jobs != kNone) jb.set_amount(a_jobs, whole_node || all_memory ? node_jobs : 1);
        jb.set_times(q.runtime, std::isinf(time) ? std::numeric_limits<double>::quiet_NaN() : time);  // UNLIMITED
        jb.set_credentials("", q.account, q.qos);
      } catch (const std::exception& e) {
        jb.reject(j, fmt::format("{}:{}: job {}: {}", source, sj.line, id, e.what()));
      }
    }
  }
  ds.jobs = std::move(jb).build();
  queues->several_first.push_back(static_cast<uint32_t>(queues->several.size()));
  if (queues->several.empty()) queues->several_first.clear();
  ds.dispatch.queues = std::move(queues);
  ds.taskers.warnings.insert(ds.taskers.warnings.begin(), warnings.begin(), warnings.end());
  return ds;
}

}  // namespace colmatch::loaders
