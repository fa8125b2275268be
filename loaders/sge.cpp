#include "loaders/sge.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <unordered_set>

#include <fmt/format.h>

#include "engine/batch/admission.hpp"
#include "engine/model/wildcard.hpp"
#include "loaders/errors.hpp"
#include "loaders/sge_conf.hpp"
#include "loaders/sge_farm.hpp"
#include "loaders/sge_xml.hpp"

namespace colmatch::loaders {
namespace sge {

std::string dump_file(const std::string& dir, const char* name) {
  const std::string plain = (std::filesystem::path(dir) / name).string();
  return !std::filesystem::exists(plain) && std::filesystem::exists(plain + ".gz") ? plain + ".gz" : plain;
}

namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// A host name as Grid Engine compares it (case-insensitively: stored in lower case).
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool exists(const std::string& path) { return std::filesystem::exists(path); }

// The queue attributes that are complexes of the queue level (queue_conf(5) and the default complex
// list: each of these names is a complex whose queue-level value is the queue's setting).
const std::unordered_set<std::string_view> kQueueComplexes{
    "slots",   "tmpdir",  "seq_no", "rerun",           "calendar", "s_rt",    "h_rt",   "s_cpu",  "h_cpu",
    "s_fsize", "h_fsize", "s_data", "h_data",          "s_stack",  "h_stack", "s_core", "h_core", "s_rss",
    "h_rss",   "s_vmem",  "h_vmem", "min_cpu_interval"};

// Queue and host settings colmatch does not represent: named once in a warning when not NONE.
const char* const kAccessLists[] = {"user_lists", "xuser_lists", "projects", "xprojects"};

// Catalog from qconf -sc.
void read_catalog(FarmModel& f, const std::string& path) {
  f.catalog.reading = GridEngineReading::SoGE819;
  for (const Complex& c : read_complexes(path)) {
    AttributeDef d;
    d.name = c.name;
    d.shortcut = c.shortcut == c.name ? std::string() : c.shortcut;
    static const std::map<std::string, AttrType> kTypes{
        {"INT", AttrType::Int},           {"DOUBLE", AttrType::Double}, {"MEMORY", AttrType::Memory},
        {"TIME", AttrType::Time},         {"STRING", AttrType::String}, {"CSTRING", AttrType::CString},
        {"RESTRING", AttrType::ReString}, {"HOST", AttrType::Host},     {"BOOL", AttrType::Boolean}};
    const auto ty = kTypes.find(upper(c.type));
    if (ty == kTypes.end())
      throw LoadError(path, c.line, "type",
                      fmt::format("complex '{}': type '{}' is not one of Son of Grid Engine "
                                  "8.1.9's (INT DOUBLE MEMORY TIME STRING CSTRING RESTRING "
                                  "HOST BOOL)",
                                  c.name, c.type));
    d.type = ty->second;
    const auto relop = parse_relop(c.relop);
    if (!relop)
      throw LoadError(path, c.line, "relop", fmt::format("complex '{}': unknown relop '{}'", c.name, c.relop));
    d.relop = *relop;
    const std::string rq = upper(c.requestable);
    if (rq == "YES" || rq == "Y") d.requestable = Requestable::Yes;
    else if (rq == "NO" || rq == "N") d.requestable = Requestable::No;
    else if (rq == "FORCED" || rq == "F") d.requestable = Requestable::Forced;
    else
      throw LoadError(path, c.line, "requestable",
                      fmt::format("complex '{}': '{}' is not YES, NO or FORCED", c.name, c.requestable));
    const std::string cons = upper(c.consumable);
    if (cons == "YES" || cons == "Y") d.consumable = true;
    else if (cons == "JOB" || cons == "J") d.consumable = true, d.scope = ConsumeScope::PerJob;
    else if (cons != "NO" && cons != "N")
      throw LoadError(path, c.line, "consumable",
                      fmt::format("complex '{}': '{}' is not YES, NO or JOB", c.name, c.consumable));
    // A default means something for consumables only (complex(5)); for the others it is the list's filler.
    if (d.consumable && upper(c.default_value) != "NONE") {
      try {
        d.default_amount = parse_number(d.type, c.default_value);
      } catch (const ValueError& e) {
        throw LoadError(path, c.line, "default", fmt::format("complex '{}': {}", c.name, e.what()));
      }
    }
    uint32_t id = 0;
    try {
      id = f.catalog.add(std::move(d));
    } catch (const ValueError& e) {
      throw LoadError(path, c.line, c.name, e.what());
    }
    // the urgency column: an integer (centry_urgency_contribution reads it as INT; otherwise none)
    if (f.urgency.size() <= id) f.urgency.resize(id + 1, 0.0);
    try {
      f.urgency[id] = parse_number(AttrType::Int, c.urgency);
    } catch (const ValueError&) {
      f.urgency[id] = 0;
    }
  }
  if (f.catalog.find("pe_list"))
    throw LoadError(path, 0, "pe_list", "a complex named pe_list: colmatch keeps that name for the queues' pe_list");
  AttributeDef pe;
  pe.name = "pe_list";
  pe.type = AttrType::String;
  pe.multi_valued = true;
  f.pe_attr = f.catalog.add(std::move(pe));
  f.qname = f.catalog.find("qname").value_or(kNone);
  f.hostname = f.catalog.find("hostname").value_or(kNone);
  f.slots = f.catalog.find("slots").value_or(kNone);
}

// queue_conf(5) load_thresholds (`NAME=VALUE,...` or NONE) on numeric complexes: a name of no complex (the
// qmaster keeps such an instance in alarm: qstat -f's `a`, left out) or of a string one (compared as text,
// which no load correction moves) is skipped; a value not of the complex's type is an error.
std::vector<std::pair<uint32_t, double>> load_thresholds(const FarmModel& f, std::string_view text,
                                                         const std::string& path, size_t line) {
  static const std::string field = "load_thresholds";
  std::vector<std::pair<uint32_t, double>> out;
  for (const auto& [name, value] : split_values(text, {path, line, field})) {
    const auto a = f.complex(name);
    if (!a || !is_numeric(f.catalog.at(*a).type)) continue;
    const AttributeDef& def = f.catalog.at(*a);
    try {
      out.emplace_back(*a, parse_number(def.type, FarmModel::numeric_text(def, value)));
    } catch (const ValueError& e) {
      throw LoadError(path, line, field, fmt::format("{}={}: {}", name, value, e.what()));
    }
  }
  return out;
}

// name=value pairs of a complex_values or load_values field onto `level`; with `load`, names that are no
// complex are skipped (an execution daemon reports values Grid Engine ignores too).
void put_values(const FarmModel& f, std::map<uint32_t, LevelValue>& level, std::string_view text,
                const std::string& path, size_t line, const std::string& field, bool load) {
  for (auto& [name, value] : split_values(text, {path, line, field})) {
    const auto a = f.catalog.find(name);
    if (!a || *a == f.pe_attr) {
      if (load) continue;
      throw LoadError(path, line, field, fmt::format("'{}' is not a complex of qconf -sc", name));
    }
    level[*a] = {value, path, line};
  }
}

void warn_access(FarmModel& f, const Record& r, const std::string& what, std::set<std::string>& said) {
  for (const char* k : kAccessLists) {
    const std::string v = r.value(k);
    if (upper(v) != "NONE" && said.insert(fmt::format("{} {}", what, k)).second)
      f.warnings.push_back(fmt::format("{} {} (line {}): {} '{}' not represented: every user may run there", what,
                                       r.value(what == "host" ? "hostname" : "qname", "?"), r.line, k, v));
  }
}

void read_hosts(FarmModel& f, const std::string& path) {
  std::unordered_set<std::string> seen;
  std::set<std::string> said;
  for (const Record& r : read_records(path, "hostname")) {
    const std::string name = lower(r.fields[0].value);
    if (!seen.insert(name).second) throw LoadError(path, r.line, "hostname", fmt::format("host '{}' twice", name));
    std::map<uint32_t, LevelValue>* fixed = &f.global;
    std::map<uint32_t, LevelValue> load;
    if (name != "global") {
      f.hosts.push_back(name);
      f.host_fixed.emplace_back();
      fixed = &f.host_fixed.back();
    }
    if (const Field* cv = r.find("complex_values")) put_values(f, *fixed, cv->value, path, cv->line, cv->key, false);
    if (const Field* lv = r.find("load_values")) put_values(f, load, lv->value, path, lv->line, lv->key, true);
    if (name != "global") f.host_load.push_back(std::move(load));
    else if (!load.empty())
      f.warnings.push_back(fmt::format("{}:{}: the global host's load_values: not read", path, r.line));
    warn_access(f, r, "host", said);
  }
}

// Hosts from `qhost -F -xml` (where the administrator has that rather than qconf -se): hf values fixed,
// hl load values on the host level; gf/gc on the global level; hc, the amount of a host consumable free
// when qhost ran, taken as its capacity (a warning says so when jobs ran then).
void read_hosts_qhost(FarmModel& f, const std::string& path, bool jobs_running) {
  std::unordered_set<std::string> seen;
  size_t consumables = 0;
  for (const QhostHost& h : read_qhost(path)) {
    const std::string name = lower(h.name);
    if (!seen.insert(name).second) throw LoadError(path, h.line, "host", fmt::format("host '{}' twice", name));
    const bool global = name == "global";
    if (!global) {
      f.hosts.push_back(name);
      f.host_fixed.emplace_back();
      f.host_load.emplace_back();
    }
    for (const auto& v : h.values) {
      const auto a = f.complex(v.name);
      if (!a) continue;  // a value of no complex: Grid Engine ignores it too
      const char level = v.dominance[0], kind = v.dominance[1];
      std::string text = v.text;
      if (f.catalog.at(*a).type == AttrType::Boolean && (text == "0.000000" || text == "1.000000"))
        text = text.substr(0, 1);  // qhost prints a BOOL as a double
      if (level == 'g') {
        if (kind != 'l') f.global[*a] = {text, path, h.line};
      } else if (level == 'h' && !global) {
        auto& to = kind == 'l' ? f.host_load.back() : f.host_fixed.back();
        to[*a] = {text, path, h.line};
        consumables += kind == 'c';
      }
    }
  }
  if (consumables && jobs_running)
    f.warnings.push_back(
        fmt::format("{}: host consumables (hc) are what was free when qhost ran, taken as capacities", path));
}

// Host groups, nested groups expanded (a cycle is an error; depth is bounded by the number of groups).
void read_groups(FarmModel& f, const std::string& path) {
  std::map<std::string, std::pair<std::vector<std::string>, size_t>> raw;
  for (const Record& r : read_records(path, "group_name")) {
    const std::string& name = r.fields[0].value;
    if (name.empty() || name[0] != '@')
      throw LoadError(path, r.line, "group_name", fmt::format("'{}': a host group's name starts with @", name));
    if (!raw.emplace(name, std::pair{split_words(r.value("hostlist")), r.line}).second)
      throw LoadError(path, r.line, "group_name", fmt::format("host group '{}' twice", name));
    f.group_members[name] = raw.at(name).first;
  }
  // iterative expansion, in an order where a group's subgroups come first
  std::map<std::string, int> state;  // 1: being expanded, 2: done
  for (const auto& [root, unused] : raw) {
    std::vector<std::pair<std::string, size_t>> stack{{root, 0}};
    while (!stack.empty()) {
      auto& [g, next] = stack.back();
      const auto& [members, line] = raw.at(g);
      if (next == 0) {
        if (state[g] == 2) {
          stack.pop_back();
          continue;
        }
        state[g] = 1;
      }
      if (next < members.size()) {
        const std::string& m = members[next++];
        if (m.empty() || m[0] != '@') continue;
        if (!raw.count(m))
          throw LoadError(path, line, "hostlist", fmt::format("{} names unknown host group '{}'", g, m));
        if (state[m] == 1)
          throw LoadError(path, line, "hostlist", fmt::format("host groups {} and {} contain each other", g, m));
        if (state[m] == 0) stack.push_back({m, 0});
        continue;
      }
      // repeats dropped as they come, not after copying them (a group naming a 10,000-host subgroup
      // thousands of times: 160 KB of qconf made 521 MB of copies)
      std::vector<std::string> hosts;
      std::unordered_set<std::string_view> have_group;
      std::unordered_set<std::string> have_host;
      for (const std::string& m : members) {
        if (!m.empty() && m[0] == '@') {
          if (!have_group.insert(m).second) continue;
          for (const std::string& h : f.groups.at(m))
            if (have_host.insert(h).second) hosts.push_back(h);
        } else if (std::string h = lower(m); have_host.insert(h).second) {
          hosts.push_back(std::move(h));
        }
      }
      std::sort(hosts.begin(), hosts.end());
      f.groups[g] = std::move(hosts);
      state[g] = 2;
      stack.pop_back();
    }
  }
}

void read_pes(FarmModel& f, const std::string& path) {
  for (const Record& r : read_records(path, "pe_name")) {
    Pe pe;
    pe.name = r.fields[0].value;
    pe.allocation_rule = r.value("allocation_rule", "$pe_slots");
    pe.urgency_slots = r.value("urgency_slots", "min");
    pe.line = r.line;
    try {
      sge_urgency_slots(pe.urgency_slots, 1, 2);
    } catch (const std::invalid_argument& e) {
      throw LoadError(path, r.find("urgency_slots")->line, "urgency_slots", e.what());
    }
    const Field* s = r.find("slots");
    try {
      pe.slots = s ? parse_number(AttrType::Int, s->value) : 0;
    } catch (const ValueError& e) {
      throw LoadError(path, s->line, "slots", e.what());
    }
    f.pes.push_back(std::move(pe));
  }
}

// sched_conf(5)'s priority weights from qconf -ssconf (the ticket policies' settings: sge_shares.cpp).
void read_weights(FarmModel& f, const Record& conf, const std::string& path) {
  const std::pair<const char*, double*> weights[] = {{"weight_priority", &f.weights.weight_priority},
                                                     {"weight_urgency", &f.weights.weight_urgency},
                                                     {"weight_ticket", &f.weights.weight_ticket},
                                                     {"weight_waiting_time", &f.weights.weight_waiting_time},
                                                     {"weight_deadline", &f.weights.weight_deadline}};
  for (const auto& [key, to] : weights) {
    const Field* fd = conf.find(key);
    if (!fd) continue;
    try {
      *to = parse_number(AttrType::Double, fd->value);
    } catch (const ValueError& e) {
      throw LoadError(path, fd->line, key, e.what());
    }
  }
}

// qsub -w for --jobs lines (qsub(1); as Son of Grid Engine 8.1.9 answered): each job alone on the farm
// as configured (every pool full), placed as `match` places it. e: a job no queue could run is refused
// ("error: no suitable queues"); w: it is submitted with a warning; v: nothing is submitted, the verdict
// ("verification: found suitable queue(s)" or "no suitable queues") is the job's reason; p (the farm's
// state now in Grid Engine) is answered on the empty farm too, and says so.
void verdicts(FarmModel& f, const TaskerTable& taskers, const std::string& path, JobTable& jobs,
              const Catalog& catalog) {
  std::vector<EverCheck> check(jobs.size(), EverCheck::None);
  for (const FarmModel::Verify& v : f.verify) check[v.job] = EverCheck::Placed;
  const std::vector<uint8_t> never = never_runnable(catalog, taskers, jobs, check, kernels::active(), {});
  auto reject = [&](uint32_t j, const std::string& why) {
    jobs.reject.set(j, static_cast<uint32_t>(jobs.reject_reason.size()));
    jobs.reject_reason.push_back(why);
  };
  for (const FarmModel::Verify& v : f.verify) {
    const std::string at = fmt::format("{}:{}: job {}: qsub -w {}", path, v.line, jobs.id[v.job], v.level);
    const bool none = never[v.job] != 0;
    if (v.level == 'e' && none) reject(v.job, at + ": error: no suitable queues (qsub refuses the job)");
    if (v.level == 'w' && none) f.warnings.push_back(at + ": warning: no suitable queues (the job is submitted)");
    if (v.level == 'v' || v.level == 'p')
      reject(v.job, at + (none ? ": verification: no suitable queues" : ": verification: found suitable queue(s)") +
                        (v.level == 'p' ? " (on the farm empty: colmatch does not poke the state now)" : "") +
                        " (nothing is submitted)");
  }
}

// dump-time.txt: when the dump was taken, seconds since the epoch (one number; tools/sge-dump.sh writes it).
double read_dump_time(const std::string& path) {
  LineReader in(path);
  std::string_view line;
  double t = std::numeric_limits<double>::quiet_NaN();
  while (in.next(line)) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
    if (line.empty()) continue;
    if (!std::isnan(t)) throw LoadError(path, in.line(), "time", "more than one line");
    try {
      t = parse_number(AttrType::Int, line);
    } catch (const ValueError& e) {
      throw LoadError(path, in.line(), "time", e.what());
    }
  }
  return t;
}

// The value of a queue attribute for `host`: its own override, else a group's, else the default.
const std::string& for_host(const Overrides& o, const FarmModel& f, const std::string& host) {
  const std::string* group_value = nullptr;
  for (const auto& [who, value] : o.specific) {
    if (who == host) return value;
    if (!group_value && !who.empty() && who[0] == '@') {
      const auto g = f.groups.find(who);
      if (g != f.groups.end() && std::binary_search(g->second.begin(), g->second.end(), host)) group_value = &value;
    }
  }
  return group_value ? *group_value : o.fallback;
}

// The queue instances counted before any is made (kMaxQueueInstances): each queue's execution hosts,
// a group counted once per hostlist (an upper bound where two groups share hosts). Throws LoadError
// naming the queue that crosses the bound; an unknown group is left to read_queues to name.
void check_queue_instances(const FarmModel& f, const std::vector<Record>& records,
                           const std::unordered_map<std::string, uint32_t>& host_index, const std::string& path) {
  std::unordered_map<std::string, size_t> exec_in_group;
  size_t total = 0;
  for (const Record& r : records) {
    const Field* hl = r.find("hostlist");
    std::unordered_set<std::string> named;
    for (const std::string& m : split_words(hl ? hl->value : "NONE")) {
      if (!named.insert(m).second) continue;
      size_t n = 0;
      if (m[0] == '@') {
        const auto g = f.groups.find(m);
        if (g == f.groups.end()) continue;
        auto [it, fresh] = exec_in_group.try_emplace(m, 0);
        if (fresh)
          for (const std::string& h : g->second) it->second += host_index.count(h);
        n = it->second;
      } else {
        n = host_index.count(lower(m));
      }
      total += n;
      if (total > kMaxQueueInstances)
        throw LoadError(path, hl->line, "hostlist",
                        fmt::format("queue {} makes the farm more than {} queue instances (queues x their "
                                    "execution hosts): more than colmatch holds",
                                    r.fields[0].value, kMaxQueueInstances));
    }
  }
}

void read_queues(FarmModel& f, const std::string& path, const std::set<std::string>& not_dispatchable) {
  std::unordered_map<std::string, uint32_t> host_index;
  for (uint32_t h = 0; h < f.hosts.size(); ++h) host_index[f.hosts[h]] = h;
  std::unordered_set<std::string> queues;
  std::set<std::string> said;
  size_t skipped_state = 0, skipped_type = 0, not_exec = 0;
  const std::vector<Record> records = read_records(path, "qname");
  check_queue_instances(f, records, host_index, path);
  for (const Record& r : records) {
    const std::string& q = r.fields[0].value;
    if (!queues.insert(q).second) throw LoadError(path, r.line, "qname", fmt::format("queue '{}' twice", q));
    // the hosts of the queue in the order Grid Engine makes its queue instances (sge_href.c,
    // href_list_find_all_references): level by level, the hostlist's own hosts and its groups' direct
    // hosts first, then the hosts of those groups' subgroups, and so on. Equal in every sort key (seq_no,
    // load), instances go in this order (bench/peers: a `hostlist @gpuextra h0075 ...` group gave its
    // own hosts before @gpuextra's). A group is visited once: the levels are bounded by the groups.
    std::vector<std::string> hosts;
    const Field* hl = r.find("hostlist");
    std::unordered_set<std::string> have_group;  // a group named again adds nothing (and copies nothing)
    std::vector<std::string> level;
    for (const std::string& m : split_words(hl ? hl->value : "NONE")) {
      if (m[0] != '@') {
        hosts.push_back(lower(m));
      } else if (!f.group_members.count(m)) {
        throw LoadError(path, hl->line, "hostlist", fmt::format("queue {}: unknown host group '{}'", q, m));
      } else if (have_group.insert(m).second) {
        level.push_back(m);
      }
    }
    while (!level.empty()) {
      std::vector<std::string> next;
      for (const std::string& g : level)
        for (const std::string& m : f.group_members.at(g)) {
          if (m.empty()) continue;
          if (m[0] != '@') hosts.push_back(lower(m));
          else if (have_group.insert(m).second) next.push_back(m);
        }
      level = std::move(next);
    }
    std::unordered_set<std::string> once;
    std::map<std::string, Overrides> attrs;  // every field with its per-host values
    for (const Field& fd : r.fields) attrs[fd.key] = split_overrides(fd.value, {path, fd.line, fd.key});
    warn_access(f, r, "queue", said);
    for (const std::string& h : hosts) {
      if (!once.insert(h).second) continue;
      const auto hi = host_index.find(h);
      if (hi == host_index.end()) {  // a queue instance exists on execution hosts only
        ++not_exec;
        continue;
      }
      const std::string name = q + "@" + h;
      f.all_instances.emplace_back(q, h);
      if (not_dispatchable.count(name)) {
        ++skipped_state;
        continue;
      }
      const auto qt = attrs.find("qtype");
      if (qt != attrs.end() && upper(for_host(qt->second, f, h)).find("BATCH") == std::string::npos) {
        ++skipped_type;
        continue;
      }
      Instance in{q, h, hi->second, 0, {}, {}, {}};
      for (const Field& fd : r.fields) {
        const Overrides& o = attrs.at(fd.key);
        const std::string& v = for_host(o, f, h);
        if (fd.key == "seq_no") {
          try {
            in.seq_no = parse_number(AttrType::Int, v);
          } catch (const ValueError& e) {
            throw LoadError(path, fd.line, fd.key, e.what());
          }
        }
        if (fd.key == "complex_values") {
          put_values(f, in.values, v, path, fd.line, fd.key, false);
        } else if (fd.key == "pe_list") {
          in.pe_list = split_words(v);
        } else if (fd.key == "load_thresholds") {
          in.load_thresholds = load_thresholds(f, v, path, fd.line);
        } else if (kQueueComplexes.count(fd.key)) {
          if (const auto a = f.catalog.find(fd.key)) in.values[*a] = {v, path, fd.line};
        }
      }
      f.instance_index[name] = f.instances.size();
      f.instances.push_back(std::move(in));
    }
  }
  if (skipped_state)
    f.warnings.push_back(
        fmt::format("{} queue instances left out: disabled, suspended, in error or alarm, or "
                    "unknown (their state in qstat-f.xml)",
                    skipped_state));
  if (skipped_type)
    f.warnings.push_back(fmt::format("{} queue instances left out: their qtype has no BATCH", skipped_type));
  if (not_exec)
    f.warnings.push_back(
        fmt::format("{} hosts of queue hostlists are not execution hosts: no queue instance there", not_exec));
}

// The queue instances in the qmaster's own order, as `qselect` prints it (cluster queues in the order they
// were made, each one's instances as its hostlist resolved): Grid Engine's order among instances equal in
// every sort key (bench/peers: of aaa.q, short.q and zzz.q on one host, all seq_no 5, the qmaster took
// short.q, the oldest). Without the file, the order read (qconf -sql's, each hostlist resolved level by
// level, which is the qmaster's order within a queue). Instances qselect does not name keep their order
// after the others. Throws LoadError for a line that is no QUEUE@HOST, a name twice, or more than
// kMaxQueueInstances names.
void order_as_qmaster(FarmModel& f, const std::string& path) {
  std::unordered_map<std::string, size_t> position;
  LineReader in(path);
  for (std::string_view line; in.next(line);) {
    if (line.empty()) continue;
    if (line.find('@') == std::string_view::npos)
      throw LoadError(path, in.line(), "queue instance", fmt::format("'{}' is not QUEUE@HOST", line));
    if (!position.emplace(std::string(line), position.size()).second)
      throw LoadError(path, in.line(), "queue instance", fmt::format("'{}' twice", line));
    if (position.size() > kMaxQueueInstances)  // (qselect lists every instance, each once)
      throw LoadError(path, in.line(), "queue instance",
                      fmt::format("more than {} queue instances", kMaxQueueInstances));
  }
  // each instance's place once (by the names instance_index already holds), then a stable reorder
  const size_t n = f.instances.size();
  std::vector<size_t> place(n, position.size()), order(n), now(n);
  for (const auto& [name, i] : f.instance_index)
    if (const auto p = position.find(name); p != position.end()) place[i] = p->second;
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return place[a] < place[b]; });
  std::vector<Instance> sorted;
  sorted.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    now[order[k]] = k;
    sorted.push_back(std::move(f.instances[order[k]]));
  }
  f.instances = std::move(sorted);
  for (auto& [name, i] : f.instance_index) i = now[i];
}

std::set<std::string> not_dispatchable(const std::string& path) {
  std::set<std::string> out;
  if (!exists(path)) return out;
  for (const QueueInstanceState& s : read_queue_states(path))
    if (s.state.find_first_of("dsSECuaAD") != std::string::npos) out.insert(s.name);
  return out;
}

// PE slot totals smaller than the slots of the instances that list them: not represented.
// A PE's `slots` is the most slots its jobs may hold at once over the whole cluster (sge_pe(5)). Where it
// is below the slots of its queues it binds: a global consumable `pe_slots(NAME)` of that capacity, one a
// slot charged by each job of the PE (sge_jobs.cpp).
void pe_totals(FarmModel& f, const std::string& path) {
  for (const Pe& pe : f.pes) {
    double total = 0;
    for (const Instance& in : f.instances) {
      if (std::find(in.pe_list.begin(), in.pe_list.end(), pe.name) == in.pe_list.end()) continue;
      const auto s = in.values.find(f.slots);
      if (s != in.values.end()) total += std::strtod(s->second.text.c_str(), nullptr);
    }
    if (!(pe.slots < total)) continue;
    AttributeDef d;
    d.name = "pe_slots(" + pe.name + ")";
    d.type = AttrType::Int;
    d.consumable = true;
    d.requestable = Requestable::Yes;  // the loader sets each PE job's amount (FarmModel::complex hides it)
    d.default_amount = 0;
    d.relop = Relop::LE;
    uint32_t a = 0;
    try {
      a = f.catalog.add(std::move(d));
    } catch (const ValueError& e) {
      throw LoadError(path, pe.line, "slots", e.what());
    }
    f.urgency.resize(a + 1, 0.0);
    f.global[a] = {fmt::format("{}", pe.slots), path, pe.line};
    f.pe_total[pe.name] = a;
  }
}

void set_level(const FarmModel& f, const std::map<uint32_t, LevelValue>& values,
               const std::function<void(uint32_t, const std::string&)>& set) {
  for (const auto& [attr, v] : values) {
    const AttributeDef& def = f.catalog.at(attr);
    try {
      set(attr, is_numeric(def.type) ? FarmModel::numeric_text(def, v.text) : v.text);
    } catch (const ValueError& e) {
      throw LoadError(v.file, v.line, def.name, e.what());
    }
  }
}

TaskerTable build_taskers(const FarmModel& f, const LoadCorrection& formula) {
  TaskerBuilder b(f.catalog);
  const std::vector<double> power = queue_sort(f, formula);
  set_level(f, f.global, [&](uint32_t a, const std::string& t) { b.set_global(a, t); });
  for (uint32_t h = 0; h < f.hosts.size(); ++h) {
    const uint32_t id = b.add_host(f.hosts[h]);
    if (f.hostname != kNone) b.set_host(id, f.hostname, f.hosts[h]);
    set_level(f, f.host_fixed[h], [&](uint32_t a, const std::string& t) { b.set_host(id, a, t); });
    set_level(f, f.host_load[h], [&](uint32_t a, const std::string& t) { b.set_host(id, a, t, ValueKind::Load); });
  }
  for (size_t i = 0; i < f.instances.size(); ++i) {
    const Instance& in = f.instances[i];
    b.add(in.queue + "@" + in.host, power[i], in.host_index);
    if (f.qname != kNone) b.set(f.qname, in.queue);
    set_level(f, in.values, [&](uint32_t a, const std::string& t) { b.set(a, t); });
    if (!in.pe_list.empty()) b.set_list(f.pe_attr, in.pe_list);
  }
  try {
    return std::move(b).build();
  } catch (const ValueError& e) {
    throw LoadError(f.dir, 0, "", e.what());
  }
}

}  // namespace

std::optional<uint32_t> FarmModel::complex(std::string_view name) const {
  const auto a = catalog.find(name);
  if (!a || *a == pe_attr) return std::nullopt;
  for (const auto& [pe, total] : pe_total)
    if (*a == total) return std::nullopt;  // a PE's slot total: not a complex a job may name
  return a;
}

std::string FarmModel::numeric_text(const AttributeDef& def, const std::string& text) {
  if (upper(text) != "INFINITY") return text;
  // Grid Engine reads INFINITY as the largest double; an int column holds whole numbers up to 2^53
  return def.type == AttrType::Int ? "9007199254740992" : fmt::format("{}", std::numeric_limits<double>::max());
}

}  // namespace sge

Dataset load_sge(const std::string& dump_dir, const std::string& accounting, const ProgressFn& progress, LoadMode mode,
                 const std::string& jobs_path) {
  using namespace sge;
  if (!std::filesystem::is_directory(dump_dir))
    throw LoadError(dump_dir, 0, "--dump", "not a folder (tools/sge-dump.sh writes one)");
  FarmModel f;
  f.dir = dump_dir;
  for (const char* required : {"qconf-sc.txt", "qconf-sq.txt"})
    if (!exists(dump_file(dump_dir, required)))
      throw LoadError(dump_file(dump_dir, required), 0, "", "missing: tools/sge-dump.sh writes it");
  read_catalog(f, dump_file(dump_dir, "qconf-sc.txt"));
  if (exists(dump_file(dump_dir, "qconf-se.txt"))) {
    read_hosts(f, dump_file(dump_dir, "qconf-se.txt"));
  } else if (exists(dump_file(dump_dir, "qhost-F.xml"))) {
    read_hosts_qhost(f, dump_file(dump_dir, "qhost-F.xml"), exists(dump_file(dump_dir, "qstat-r.xml")));
  } else {
    throw LoadError(dump_file(dump_dir, "qconf-se.txt"), 0, "",
                    "missing (or qhost-F.xml instead): tools/sge-dump.sh writes it");
  }
  if (exists(dump_file(dump_dir, "qconf-shgrp.txt"))) read_groups(f, dump_file(dump_dir, "qconf-shgrp.txt"));
  if (exists(dump_file(dump_dir, "qconf-sp.txt"))) read_pes(f, dump_file(dump_dir, "qconf-sp.txt"));
  read_queues(f, dump_file(dump_dir, "qconf-sq.txt"), not_dispatchable(dump_file(dump_dir, "qstat-f.xml")));
  if (exists(dump_file(dump_dir, "qselect.txt"))) order_as_qmaster(f, dump_file(dump_dir, "qselect.txt"));
  if (exists(dump_file(dump_dir, "qconf-sp.txt"))) pe_totals(f, dump_file(dump_dir, "qconf-sp.txt"));
  f.host_rules = mode == LoadMode::Snapshot && accounting.empty();
  double slots = 0;
  for (const Instance& in : f.instances)
    if (const auto s = in.values.find(f.slots); s != in.values.end())
      slots += std::strtod(s->second.text.c_str(), nullptr);
  f.total_slots = static_cast<uint32_t>(std::clamp(slots, 1.0, 1e9));
  if (exists(dump_file(dump_dir, "qconf-ssconf.txt"))) {  // the scheduler's job and queue order
    const std::string path = dump_file(dump_dir, "qconf-ssconf.txt");
    const auto conf = read_records(path, "algorithm");
    if (!conf.empty()) {
      read_weights(f, conf[0], path);
      read_ticket_settings(f, conf[0], path);
      f.sort_method = conf[0].value("queue_sort_method", "load");
      f.load_formula = conf[0].value("load_formula", "np_load_avg");
      if (f.sort_method != "seqno" && f.sort_method != "load")
        throw LoadError(path, conf[0].find("queue_sort_method")->line, "queue_sort_method",
                        fmt::format("'{}' is not seqno or load", f.sort_method));
      f.load_adjustments = conf[0].value("job_load_adjustments");
      if (upper(f.load_adjustments) == "NONE") f.load_adjustments.clear();
      if (const auto* d = conf[0].find("load_adjustment_decay_time")) try {
          f.decay_time = parse_number(AttrType::Time, d->value);
        } catch (const ValueError& e) {
          throw LoadError(path, d->line, "load_adjustment_decay_time", e.what());
        }
    }
  }
  read_share_holders(f, dump_dir);
  if (exists(dump_file(dump_dir, "dump-time.txt"))) f.now = read_dump_time(dump_file(dump_dir, "dump-time.txt"));
  JobTable jobs = !accounting.empty() ? accounting_jobs(f, accounting)
                                      : qstat_jobs(f, mode == LoadMode::Snapshot, progress, jobs_path);
  Dataset ds;
  if (!f.priority_terms.empty())
    ds.explain_priority = [w = f.weights, terms = std::move(f.priority_terms),
                           of = std::move(f.priority_of_job)](uint32_t j) {
      return "Grid Engine priority (sge_priority(5)): " + sge_priority_text(w, terms[of[j]]);
    };
  const LoadCorrection formula = parse_load_formula(f);
  ds.taskers = build_taskers(f, formula);
  if (mode == LoadMode::Snapshot) ds.dispatch.load_correction = load_correction(f, formula, ds.taskers);
  else if (!f.load_adjustments.empty() && formula_reads_load(f, formula))
    f.warnings.push_back(
        fmt::format("job_load_adjustments {}: not applied over time (every job sees the "
                    "hosts' load as dumped; `match` applies them within its one run)",
                    f.load_adjustments));
  if (!f.running.empty()) {  // per instance (input order) -> per consumable, per tasker row
    const size_t nk = f.catalog.consumables().size();
    ds.in_use.amount.assign(nk, std::vector<double>(ds.taskers.size(), 0.0));
    for (uint32_t r = 0; r < ds.taskers.size(); ++r) {
      const auto& held = f.running[ds.taskers.input_index[r]];
      for (size_t k = 0; k < held.size(); ++k) ds.in_use.amount[k][r] = held[k];
    }
  }
  ds.jobs = std::move(jobs);
  if (!f.verify.empty()) verdicts(f, ds.taskers, jobs_path, ds.jobs, f.catalog);
  ds.catalog = std::move(f.catalog);
  ds.name = std::filesystem::path(dump_dir).filename().string();
  if (ds.name.empty()) ds.name = "sge";
  ds.taskers.warnings.insert(ds.taskers.warnings.begin(), f.warnings.begin(), f.warnings.end());
  return ds;
}

}  // namespace colmatch::loaders
