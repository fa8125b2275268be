#include "loaders/slurm_cluster.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <tuple>

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/slurm_qos.hpp"
#include "loaders/slurm_settings.hpp"
#include "loaders/slurm_sshare.hpp"
#include "loaders/slurm_text.hpp"

namespace colmatch::loaders::slurm {
namespace fs = std::filesystem;

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

namespace {

std::string field(const Record& r, std::string_view key, std::string_view fallback = "") {
  const auto v = r.get(key);
  return std::string(v ? *v : fallback);
}

double num(const Record& r, std::string_view key, const std::string& path, double fallback = 0) {
  const auto v = r.get(key);
  if (!v || v->empty() || *v == "N/A") return fallback;
  const double d = slurm::parse_number(*v);
  if (!std::isfinite(d) || d < 0)
    throw LoadError(path, r.line, std::string(key), fmt::format("'{}' is not a number", *v));
  return d;
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
      const double c = slurm::parse_number(parts.back());
      if (!std::isnan(c) && !(std::isfinite(c) && c >= 0 && c == std::floor(c)))  // `gpu:-3` was type "-3"
        throw LoadError(path, line, key, fmt::format("'{}': '{}' is not a count", item, parts.back()));
      if (!std::isnan(c)) {
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
  std::set<std::string> seen;
  for (const Record& r : slurm::read_records(path, "PartitionName")) {
    Partition p;
    p.name = field(r, "PartitionName");
    p.line = r.line;
    if (!seen.insert(p.name).second)  // (the first one was used, the second dropped without a word)
      throw LoadError(path, r.line, "PartitionName", fmt::format("partition '{}' twice", p.name));
    p.up = field(r, "State", "UP") == "UP";
    p.is_default = field(r, "Default", "NO") == "YES";
    try {
      p.max_time = slurm::parse_slurm_time(field(r, "MaxTime", "UNLIMITED"));
    } catch (const std::invalid_argument& e) {
      throw LoadError(path, r.line, "MaxTime", e.what());
    }
    const std::tuple<const char*, double*, const char*> priorities[] = {
        {"PriorityTier", &p.tier, "tier"}, {"PriorityJobFactor", &p.job_factor, "job factor"}};
    for (const auto& [key, to, what] : priorities) {
      const std::string v = field(r, key, "1");
      char* end = nullptr;
      const double n = std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !(n >= 0 && n <= 65535) || n != std::floor(n))
        throw LoadError(path, r.line, key, fmt::format("'{}' is not a priority {} (0 to 65535)", v, what));
      *to = n;
    }
    try {
      p.billing_weights = parse_tres_weights(field(r, "TRESBillingWeights", ""));
    } catch (const std::invalid_argument& e) {
      throw LoadError(path, r.line, "TRESBillingWeights", e.what());
    }
    // OverSubscribe=NO, EXCLUSIVE, YES:N or FORCE:N (scontrol's spelling); only EXCLUSIVE changes a job's
    // placement here: YES lets only jobs that ask --oversubscribe share CPUs, FORCE every job (warned of)
    p.over_subscribe = field(r, "OverSubscribe", "NO");
    const std::string& over = p.over_subscribe;
    p.exclusive = over == "EXCLUSIVE";
    if (over != "NO" && over != "EXCLUSIVE" && over.rfind("YES", 0) != 0 && over.rfind("FORCE", 0) != 0)
      throw LoadError(path, r.line, "OverSubscribe",
                      fmt::format("'{}' is not NO, EXCLUSIVE, YES[:N] or FORCE[:N]", over));
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

// Every node of the file, those that take no job (their State) with up = false; a node left out whose
// fields cannot be read is dropped (it would take no job anyway).
std::vector<Node> read_nodes(const std::string& path, std::vector<std::string>& warnings) {
  std::vector<Node> out;
  std::set<std::string> seen;
  size_t left_out = 0;
  slurm::for_each_record(path, "NodeName", [&](const Record& r) {
    Node n;
    n.name = field(r, "NodeName");
    n.line = r.line;
    if (!seen.insert(n.name).second) throw LoadError(path, r.line, "NodeName", fmt::format("node '{}' twice", n.name));
    n.up = dispatchable(field(r, "State", "IDLE"));
    if (!n.up) ++left_out;
    try {
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
    } catch (const LoadError&) {
      if (n.up) throw;
      return;
    }
    out.push_back(std::move(n));
  });
  if (left_out)
    warnings.push_back(
        fmt::format("{} nodes left out: DOWN, DRAIN, FAIL, MAINT, FUTURE or not responding "
                    "(their State in {})",
                    left_out, path));
  return out;
}

// Node n as a tasker of `b`, its partition attribute holding those of `partitions` it is in.
void add_node(TaskerBuilder& b, const Node& n, const FarmAttributes& a, const std::set<std::string>& partitions,
              const std::string& node_path) {
  // Slurm (select/cons_tres) tries the lowest Weight first; within a weight, the dispatch's
  // ConsecutiveBestFit picks by free CPUs over runs of nodes in name (file) order
  b.add(n.name, -n.weight);
  try {
    if (!n.features.empty()) b.set_list(a.feature, n.features);
    std::vector<std::string> in;
    for (const std::string& p : n.partitions)
      if (partitions.count(p)) in.push_back(p);
    if (!in.empty()) b.set_list(a.partition, in);
    b.set(a.node, n.name);
    b.set_number(a.cpus, n.cpus);
    b.set_number(a.mem, n.mem * kMiB);
    for (const auto& [g, c] : n.gres) b.set_number(a.gres.at(g), c);
    if (a.jobs != kNone) b.set_number(a.jobs, a.node_jobs);
  } catch (const ValueError& e) {
    throw LoadError(node_path, n.line, "", e.what());
  }
}

}  // namespace

std::string dump_file(const std::string& dir, const char* name) {
  const std::string plain = (fs::path(dir) / name).string();
  return !fs::exists(plain) && fs::exists(plain + ".gz") ? plain + ".gz" : plain;
}

const Partition* Cluster::partition(const std::string& name) const {
  const auto it =
      std::find_if(partitions.begin(), partitions.end(), [&](const Partition& x) { return x.name == name; });
  return it == partitions.end() ? nullptr : &*it;
}

std::string Cluster::default_partition() const {
  std::string name;
  for (const Partition& p : partitions)
    if (p.is_default) name = p.name;
  return name;
}

bool Cluster::tiers_differ() const {
  for (const Partition& p : partitions)
    if (p.tier != partitions.front().tier) return true;
  return false;
}

bool Cluster::exclusive_partition(const SbatchJob& sj) const {
  std::string first = default_partition();
  for (const auto& [opt, v] : sj.options)
    if (opt == "partition") first = v.substr(0, v.find(','));
  const Partition* p = partition(first);
  return p != nullptr && p->exclusive;
}

double Cluster::tier_of(const std::string& name) const {
  const Partition* p = partition(name);
  return p == nullptr ? 0.0 : p->tier;
}

// The main pass walks the job list itself (fifo_sched: SchedulerType sched/builtin, PriorityType
// priority/basic and one tier; job_scheduler.c _schedule), or a queue of job records, where a job with
// --prefer has a record with it and then one with --constraint.
bool Cluster::job_records() const {
  return tiers_differ() || settings.scheduler != "sched/builtin" || settings.priority_type != "priority/basic";
}

bool Cluster::whole_memory(const SbatchJob& sj) const {
  if (!settings.memory_tracked || settings.def_mem_per_cpu > 0 || settings.def_mem_per_node > 0) return false;
  for (const auto& [opt, v] : sj.options)
    if (opt == "mem" || opt == "mem-per-cpu" || opt == "mem-per-gpu") return false;
  return true;
}

Cluster read_cluster(const std::string& dir) {
  if (!fs::is_directory(dir)) throw LoadError(dir, 0, "--dump", "not a folder (tools/slurm-dump.sh writes one)");
  const std::string node_path = dump_file(dir, "scontrol-node.txt"),
                    part_path = dump_file(dir, "scontrol-partition.txt");
  for (const std::string& p : {node_path, part_path})
    if (!fs::exists(p)) throw LoadError(p, 0, "", "missing: tools/slurm-dump.sh writes it");
  Cluster c;
  c.dir = dir;
  c.partitions = read_partitions(part_path);
  c.every_node = read_nodes(node_path, c.warnings);
  for (const Node& n : c.every_node)
    if (n.up) c.nodes.push_back(n);
  for (const Partition& p : c.partitions)
    if (!p.up) c.warnings.push_back(fmt::format("partition {} is not UP: its nodes take none of its jobs", p.name));
  for (const Partition& p : c.partitions)  // jobs sharing CPUs: colmatch gives each job CPUs of its own
    if (p.over_subscribe.rfind("FORCE", 0) == 0)
      c.warnings.push_back(
          fmt::format("{}:{}: partition {} OverSubscribe={}: jobs sharing CPUs are not modelled "
                      "(each job's CPUs are its own)",
                      part_path, p.line, p.name, p.over_subscribe));
  // The cluster's settings: the scheduler and priority plugins (job records, Cluster::job_records), and
  // memory: with CR_*_Memory a job without --mem or --mem-per-cpu gets DefMemPerCPU or DefMemPerNode, and
  // with neither set (UNLIMITED) the node's whole memory.
  std::string select_params = "CR_Core_Memory";
  Settings& s = c.settings;
  if (const std::string config = dump_file(dir, "scontrol-config.txt"); fs::exists(config))
    for (const ConfigSetting& setting : read_config(config)) {
      const std::string &k = setting.key, &v = setting.value;
      auto mebibytes = [&] {
        try {
          return v == "UNLIMITED" || v == "0" ? -1.0 : parse_mebibytes(v);
        } catch (const std::invalid_argument&) {
          throw LoadError(config, setting.line, k, "not a memory size: " + v);
        }
      };
      if (is_setting(k)) try {
          if (std::string w = apply_setting(k, v, s.scheduling); !w.empty())
            c.warnings.push_back(fmt::format("{}:{}: {}", config, setting.line, w));
        } catch (const std::invalid_argument& e) {
          throw LoadError(config, setting.line, k, e.what());
        }
      if (k == "SchedulerType") s.scheduler = v;
      if (k == "PriorityType") s.priority_type = v;
      if (k == "SelectTypeParameters") select_params = v;
      if (k == "DefMemPerCPU") s.def_mem_per_cpu = mebibytes();
      if (k == "DefMemPerNode") s.def_mem_per_node = mebibytes();
    }
  if (const std::string sshare = dump_file(dir, "sshare.txt"); fs::exists(sshare))
    s.scheduling.slurm_priority.associations = read_sshare(sshare, c.warnings);
  if (const std::string qos = dump_file(dir, "sacctmgr-qos.txt"); fs::exists(qos))
    s.qos_priority = read_qos(qos, &s.qos_usage_factor);
  if (const std::string assoc = dump_file(dir, "sacctmgr-assoc.txt"); fs::exists(assoc))
    s.assoc_priority = read_assoc_priorities(assoc);
  if (const SlurmMultifactor& mf = s.scheduling.slurm_priority;
      mf.enabled && !mf.accounting &&
      (mf.weight_age > 0 || mf.weight_fairshare > 0 || mf.weight_qos > 0 || mf.weight_assoc > 0))
    c.warnings.push_back(
        fmt::format("{}: PriorityWeightAge, PriorityWeightFairshare, PriorityWeightQOS and PriorityWeightAssoc count "
                    "only with slurmdbd "
                    "(AccountingStorageType); slurmctld ignores them here, as colmatch does",
                    dump_file(dir, "scontrol-config.txt")));
  for (char& ch : select_params) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  s.memory_tracked = select_params.find("MEMORY") != std::string::npos;
  return c;
}

FarmAttributes build_farm(const Cluster& cluster, bool exclusive, Dataset& ds, std::shared_ptr<BlockingQueues>& queues,
                          std::map<std::string, uint32_t>& queue_of) {
  const std::vector<Node>& nodes = cluster.nodes;
  const std::string node_path = dump_file(cluster.dir, "scontrol-node.txt");
  std::set<std::string> up;
  for (const Partition& p : cluster.partitions)
    if (p.up) up.insert(p.name);
  FarmAttributes a;
  // the catalog: sets, the name, then the consumables (cpus, mem, every GRES and GRES type seen)
  AttributeDef feature;
  feature.name = "feature";
  feature.multi_valued = true;
  a.feature = ds.catalog.add(feature);
  AttributeDef part;
  part.name = "partition";
  part.multi_valued = true;
  a.partition = ds.catalog.add(part);
  AttributeDef nodename;
  nodename.name = "NodeName";
  a.node = ds.catalog.add(nodename);
  // every request is per node: a job of -N K nodes is K slots (AllocationRule::OnePerTasker), each
  // charged the per-node amounts
  a.cpus = ds.catalog.add(consumable_attribute("cpus", AttrType::Int, ConsumeScope::PerSlot));
  a.mem = ds.catalog.add(consumable_attribute("mem", AttrType::Memory, ConsumeScope::PerSlot));
  // (the GRES, features and names of every node, as Slurm's checks of a request know them: a job asking
  // what only a node that is down has waits for it, it is not refused)
  std::set<std::string> gres_names;
  for (const Node& n : cluster.every_node) {
    for (const auto& [g, c] : n.gres) gres_names.insert(g);
    a.names.insert(n.name);
    a.features.insert(n.features.begin(), n.features.end());
  }
  for (const std::string& g : gres_names)
    a.gres[g] = ds.catalog.add(consumable_attribute(g, AttrType::Int, ConsumeScope::PerSlot));
  // --exclusive: a node that runs the job runs no other. A consumable `jobs` whose capacity on every node
  // is the cluster's largest CPU count (no node runs more jobs than CPUs, each taking one at least): a job
  // charges 1 of it, an exclusive job all of it, so it fits only on a node with no job and keeps others out.
  // A job taking a node's whole memory charges all of it too: it needs a node where no job holds memory
  // (every job holds some) and leaves none (seen in slurmctld 22.05.8: `-c 2` without --mem took the idle
  // n024 with Mem=256000, not n009 where a job held 1000 MiB: datasets/slurm/c100-nomem).
  if (exclusive) a.jobs = ds.catalog.add(consumable_attribute("jobs", AttrType::Int, ConsumeScope::PerSlot));

  TaskerBuilder b(ds.catalog);
  double most_cpus = 0;
  for (const Node& n : nodes) most_cpus = std::max(most_cpus, n.cpus);
  a.node_jobs = std::max(1.0, most_cpus);
  for (const Node& n : nodes) add_node(b, n, a, up, node_path);
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
    put(a.cpus, n.cpus_used);
    if (a.jobs != kNone && n.cpus_used > 0) put(a.jobs, 1);  // a job runs there: no exclusive one fits
    put(a.mem, n.mem_used * kMiB);
    for (const auto& [g, c] : n.gres_used)
      if (a.gres.count(g)) put(a.gres.at(g), c);
  }
  if (any_used) ds.in_use.amount = std::move(used);

  // Slurm's main scheduling pass: its node selection, and partitions as blocking queues
  // (engine/batch/queue_blocking.hpp), each holding its nodes' rows
  queues = std::make_shared<BlockingQueues>();
  // a node an --exclusive job runs on is busy: a job whose eligible nodes are all held is then Slurm's
  // Resources (blocking its partition) rather than ReqNodeNotAvail, if such a node is among its own
  if (a.jobs != kNone) queues->busy_consumable = static_cast<uint32_t>(ds.catalog.consumable_slot(a.jobs));
  for (const Partition& p : cluster.partitions)
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
  ds.dispatch.fit_consumable = static_cast<size_t>(ds.catalog.consumable_slot(a.cpus));
  // simulate: slurmctld's scheduling settings, and Slurm's node selection (its partitions do not block
  // there: Moab's cycle runs)
  ds.policy_defaults = cluster.settings.scheduling;
  ds.policy_defaults.allocation = ds.dispatch.allocation;
  ds.policy_defaults.fit_consumable = ds.dispatch.fit_consumable;
  ds.dispatch.fit_limit = ds.policy_defaults.fit_limit = static_cast<size_t>(ds.catalog.consumable_slot(a.mem));
  ds.policy = ds.policy_defaults;
  return a;
}

TaskerTable configured_farm(const Cluster& cluster, const FarmAttributes& a, const Catalog& catalog) {
  std::set<std::string> every_partition;
  for (const Partition& p : cluster.partitions) every_partition.insert(p.name);
  TaskerBuilder b(catalog);
  const std::string node_path = dump_file(cluster.dir, "scontrol-node.txt");
  for (const Node& n : cluster.every_node) add_node(b, n, a, every_partition, node_path);
  return std::move(b).build();
}

}  // namespace colmatch::loaders::slurm
