// Grid Engine jobs: the requests of `qstat -r -xml` and of the accounting file's category, with
// qsub(1)'s meaning, turned into colmatch jobs against a FarmModel (loaders/sge_farm.hpp).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "engine/model/request.hpp"
#include "engine/model/wildcard.hpp"
#include "engine/schedule/sge_priority.hpp"
#include "loaders/errors.hpp"
#include "loaders/sge_accounting.hpp"
#include "loaders/sge_farm.hpp"
#include "loaders/sge_xml.hpp"
#include "loaders/task_ranges.hpp"

namespace colmatch::loaders::sge {
namespace {

/// The most jobs one dump or accounting file may expand to (array tasks included): 10M, about 1.6 GB once
/// built (160 bytes a job: 1M tasks of one array took 163 MB); `<tasks>1-100000000</tasks>` under the
/// 100M bound this was ran out of memory.
constexpr uint64_t kMaxJobs = uint64_t{10} << 20;

/// A request colmatch cannot represent or Grid Engine would refuse: the job is rejected with this.
struct Unrepresentable {
  std::string why;
  /// Grid Engine accepts and runs the job (a slot range, an allocation rule colmatch lacks); false: qsub
  /// refuses it (an unknown resource, queue or PE, a soft request on a consumable).
  bool grid_engine_runs_it = false;
};

/// A job's requests as qsub(1) options say them.
struct SgeRequest {
  std::vector<std::pair<std::string, std::string>> hard, soft;  ///< -l name=value
  std::vector<std::string> hard_queues, soft_queues;            ///< -q
  std::string pe, pe_range;                                     ///< -pe NAME RANGE
  std::vector<std::string> master_queues;                       ///< -masterq
};

// One clause `name=value` in colmatch's request syntax: string-like values quoted (they may hold Grid
// Engine's operators), numbers as qsub reads them.
std::string clause(const FarmModel& f, const std::string& name, const std::string& value) {
  const auto a = f.complex(name);
  if (!a) throw Unrepresentable{fmt::format("-l {}: unknown resource (not a complex of qconf -sc)", name)};
  const AttributeDef& def = f.catalog.at(*a);
  if (!is_numeric(def.type)) return def.name + "=" + quote_value(value);
  // A number is pasted as written (qsub's forms: 0x10, 1.5G, 1:00:00), so it must be one number and
  // nothing else: `cores=100000 || hostname==h0042` is a value Grid Engine refuses, not an expression.
  try {
    parse_request_number(def.type, value, f.catalog.reading);
  } catch (const ValueError& e) {
    throw Unrepresentable{fmt::format("-l {}={}: {}", name, value, e.what())};
  }
  return def.name + "=" + value;
}

// Whether `item` (QUEUE, QUEUE@HOST, QUEUE@@GROUP, wildcard expressions) names a queue instance of the
// farm: qsub refuses one that names none ("job requests unknown queue").
bool names_an_instance(const FarmModel& f, const std::string& item) {
  const size_t at = item.find('@');
  const std::string queue = item.substr(0, at), host = at == std::string::npos ? "" : item.substr(at + 1);
  try {
    const WildcardExpression q(queue.empty() ? "*" : queue);
    const std::vector<std::string>* group = nullptr;
    std::optional<WildcardExpression> h;
    if (!host.empty() && host[0] == '@') {
      const auto g = f.groups.find(host);
      if (g == f.groups.end()) return false;
      group = &g->second;
    } else if (!host.empty()) {
      std::string lower = host;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
      h.emplace(lower);
    }
    for (const auto& [iq, ih] : f.all_instances) {
      if (!q.matches(iq)) continue;
      if (group && !std::binary_search(group->begin(), group->end(), ih)) continue;
      if (h && !h->matches(ih)) continue;
      return true;
    }
  } catch (const WildcardError& e) {
    throw Unrepresentable{fmt::format("-q {}: {}", item, e.what())};
  }
  return false;
}

// -q's queue list as one clause: any of QUEUE, QUEUE@HOST, QUEUE@@GROUP (each part a wildcard expression).
std::string queue_clause(const FarmModel& f, const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& item : list) {
    if (!names_an_instance(f, item)) throw Unrepresentable{fmt::format("-q {}: unknown queue \"{}\"", item, item)};
    const size_t at = item.find('@');
    const std::string queue = item.substr(0, at);
    std::string part;
    if (!queue.empty() && queue != "*") {
      if (f.qname == kNone) throw Unrepresentable{"-q: the complex list has no qname"};
      part = "qname=" + quote_value(queue);
    }
    if (at != std::string::npos) {
      const std::string host = item.substr(at + 1);
      if (f.hostname == kNone) throw Unrepresentable{"-q: the complex list has no hostname"};
      std::string h;
      if (!host.empty() && host[0] == '@') {
        const auto g = f.groups.find(host);
        if (g == f.groups.end()) throw Unrepresentable{fmt::format("-q {}: unknown host group '{}'", item, host)};
        if (g->second.empty()) {
          h = "false";
        } else {
          h = "hostname={";
          for (size_t i = 0; i < g->second.size(); ++i) h += (i ? ", " : "") + quote_value(g->second[i]);
          h += "}";
        }
      } else {
        h = "hostname=" + quote_value(host);
      }
      part = part.empty() ? h : "(" + part + " && " + h + ")";
    }
    if (part.empty()) part = "true";
    out += (out.empty() ? "" : " || ") + part;
  }
  return list.size() > 1 ? "(" + out + ")" : out;
}

// -pe's slot range list as qsub takes it and qstat prints it (sge_types(1)): ranges apart by commas, each
// N, N-M, N- (open above: SGE's largest, 9999999) or -M (from 1); qstat prints 3-4 as `3,4`. The fewest
// and the most slots, and whether every count between them is in the list; nullopt when malformed.
struct SlotRange {
  uint32_t lo = 0, hi = 0;
  bool gaps = false;
};
std::optional<SlotRange> slot_range(std::string_view text) {
  constexpr uint32_t kOpen = 9999999;
  auto number = [](std::string_view t) -> std::optional<uint32_t> {
    uint32_t v = 0;
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size() || v < 1 || v > kOpen) return std::nullopt;
    return v;
  };
  std::vector<std::pair<uint32_t, uint32_t>> parts;
  for (size_t i = 0; i <= text.size();) {
    size_t e = text.find(',', i);
    if (e == std::string_view::npos) e = text.size();
    const std::string_view part = text.substr(i, e - i);
    const size_t dash = part.find('-');
    std::optional<uint32_t> lo, hi;
    if (dash == std::string_view::npos) lo = hi = number(part);
    else {
      lo = dash == 0 ? std::optional<uint32_t>(1) : number(part.substr(0, dash));
      hi = dash + 1 == part.size() ? std::optional<uint32_t>(kOpen) : number(part.substr(dash + 1));
    }
    if (!lo || !hi || *lo > *hi || parts.size() >= 64) return std::nullopt;
    parts.emplace_back(*lo, *hi);
    i = e + 1;
  }
  std::sort(parts.begin(), parts.end());
  SlotRange r{parts.front().first, parts.front().second, false};
  for (const auto& [lo, hi] : parts) {
    r.gaps = r.gaps || lo > r.hi + 1;
    r.hi = std::max(r.hi, hi);
  }
  return r;
}

// A job's PE as placed: its allocation rule, its slots (a range's most), a range's fewest (0: none) and
// allocation_rule N's slots a host.
struct PeJob {
  AllocationRule rule = AllocationRule::PeSlots;
  uint32_t slots = 1, min_slots = 0, per_host = 0;
};

// The allocation rule of the PEs `pattern` names, as text (one rule for all of them).
std::string pe_rule_text(const FarmModel& f, const std::string& pattern) {
  std::optional<std::string> rule;
  try {
    const WildcardExpression expr(pattern);
    for (const Pe& pe : f.pes) {
      if (!expr.matches(pe.name)) continue;
      if (rule && *rule != pe.allocation_rule)
        throw Unrepresentable{
            fmt::format("-pe {}: matches parallel environments of different allocation rules", pattern), true};
      rule = pe.allocation_rule;
    }
  } catch (const WildcardError& e) {
    throw Unrepresentable{fmt::format("-pe {}: {}", pattern, e.what())};
  }
  if (!rule) throw Unrepresentable{fmt::format("-pe {}: no such parallel environment (qconf-sp.txt)", pattern)};
  return *rule;
}

// -pe NAME RANGE as colmatch places it. Under the host rules (FarmModel::host_rules: `match`): the rule
// host by host, a range list (slot_range) without gaps as the most that fit, at least its fewest (open
// above: at most every slot of the farm); allocation_rule N takes multiples of N. Otherwise (`simulate`): one slot
// count, and only $pe_slots, $fill_up or 1. Throws Unrepresentable.
PeJob pe_job(const FarmModel& f, const std::string& pattern, const std::string& range) {
  const std::string rule = pe_rule_text(f, pattern);
  const std::optional<SlotRange> r = slot_range(range);
  if (!r) throw Unrepresentable{fmt::format("-pe {} {}: not a slot range", pattern, range)};
  if (r->gaps)
    throw Unrepresentable{
        fmt::format("-pe {} {}: a slot range with gaps (colmatch takes every count from its fewest to its most)",
                    pattern, range),
        true};
  PeJob out;
  uint32_t lo = r->lo, hi = r->hi == 9999999 ? std::max<uint32_t>(r->lo, f.total_slots) : r->hi;
  if (!f.host_rules) {
    if (lo != hi)
      throw Unrepresentable{fmt::format("-pe slot range '{}': colmatch needs one slot count over time", range), true};
    out.slots = hi;
    if (rule == "$pe_slots") out.rule = AllocationRule::PeSlots;
    else if (rule == "$fill_up") out.rule = AllocationRule::FillUp;
    else if (rule == "1") out.rule = AllocationRule::OnePerTasker;
    else
      throw Unrepresentable{
          fmt::format("-pe {}: allocation_rule {} is not one colmatch replays ($pe_slots, $fill_up, 1)", pattern, rule),
          true};
    return out;
  }
  if (rule == "$pe_slots") out.rule = AllocationRule::HostPeSlots;
  else if (rule == "$fill_up") out.rule = AllocationRule::HostFillUp;
  else if (rule == "$round_robin") out.rule = AllocationRule::HostRoundRobin;
  else {
    out.rule = AllocationRule::HostBlocks;
    const auto [p, ec] = std::from_chars(rule.data(), rule.data() + rule.size(), out.per_host);
    if (ec != std::errc() || p != rule.data() + rule.size() || out.per_host == 0)
      throw Unrepresentable{fmt::format("-pe {}: allocation_rule {} is not one Grid Engine has", pattern, rule)};
    // multiples of N only (sge_pe(5): the slots must divide by N)
    lo = (lo + out.per_host - 1) / out.per_host * out.per_host;
    hi = hi / out.per_host * out.per_host;
    if (lo > hi)
      throw Unrepresentable{
          fmt::format("-pe {} {}: no multiple of allocation_rule {} in the range", pattern, range, out.per_host), true};
  }
  out.slots = hi;
  out.min_slots = lo < hi ? lo : 0;
  return out;
}

// The global consumable holding the slot total of the PE `pattern` names (FarmModel::pe_total), if it
// has one. A pattern matching several PEs, one with a total, is not represented: the total charged
// depends on which of them Grid Engine picks.
std::optional<uint32_t> pe_total_of(const FarmModel& f, const std::string& pattern) {
  if (f.pe_total.empty()) return std::nullopt;
  std::optional<uint32_t> total;
  size_t matched = 0;
  try {
    const WildcardExpression expr(pattern);
    for (const Pe& pe : f.pes) {
      if (!expr.matches(pe.name)) continue;
      ++matched;
      if (const auto it = f.pe_total.find(pe.name); it != f.pe_total.end()) total = it->second;
    }
  } catch (const WildcardError&) {
    return std::nullopt;  // pe_rule refuses the pattern
  }
  if (total && matched > 1)
    throw Unrepresentable{
        fmt::format("-pe {}: matches several parallel environments, one with a slot total: the total charged "
                    "depends on which Grid Engine picks",
                    pattern),
        true};
  return total;
}

// Sets the last added job's requests; throws Unrepresentable. `pe`: r's PE as pe_job reads it, when the
// caller has it already (it needed the slots before adding the job).
void apply(const FarmModel& f, JobBuilder& b, const SgeRequest& r, const PeJob* pe = nullptr) {
  std::string hard, soft;
  auto add = [](std::string& to, const std::string& c) { to += (to.empty() ? "" : " && ") + c; };
  for (const auto& [name, value] : r.hard) {
    const auto a = f.complex(name);
    if (a && f.catalog.at(*a).consumable) {
      if (*a == f.slots) throw Unrepresentable{"-l slots: Grid Engine's slots are requested with -pe"};
      try {
        b.set_amount(*a, parse_request_number(f.catalog.at(*a).type, value, f.catalog.reading));
      } catch (const ValueError& e) {
        throw Unrepresentable{fmt::format("-l {}={}: {}", name, value, e.what())};
      }
      continue;
    }
    add(hard, clause(f, name, value));
  }
  for (const auto& [name, value] : r.soft) {
    if (const auto a = f.complex(name); a && f.catalog.at(*a).consumable)
      throw Unrepresentable{
          fmt::format("-soft -l {}: soft requests on consumables like \"{}\" are not supported (qsub refuses the job)",
                      name, f.catalog.at(*a).name)};
    add(soft, clause(f, name, value));
  }
  // -masterq beside -q (a parallel job): an instance of either list may be the job's (Son of Grid Engine 8.1.9,
  // sge_queue_match_static: a -masterq instance passes the -q test), one of -masterq alone holding the master's
  // slot only until a host has given the master (the placement's master-only request, below).
  const bool master_beside = !r.master_queues.empty() && !r.pe.empty() && !r.hard_queues.empty() && f.host_rules;
  if (master_beside) add(hard, "(" + queue_clause(f, r.hard_queues) + " || " + queue_clause(f, r.master_queues) + ")");
  else if (!r.hard_queues.empty()) add(hard, queue_clause(f, r.hard_queues));
  if (!r.soft_queues.empty()) add(soft, queue_clause(f, r.soft_queues));
  uint32_t range_min = 0;  // a slot range's fewest
  if (!r.pe.empty()) {
    add(hard, "pe_list=" + quote_value(r.pe));
    const PeJob read = pe != nullptr ? *pe : pe_job(f, r.pe, r.pe_range);
    range_min = read.min_slots;
    b.set_rule(read.rule);
    if (by_host(read.rule)) b.set_pe_shape(read.min_slots, read.per_host);
    if (const auto total = pe_total_of(f, r.pe)) b.set_amount(*total, 1);  // a slot of the PE's total each
  }
  try {
    if (!hard.empty()) b.set_request(hard);
  } catch (const RequestError& e) {
    throw Unrepresentable{fmt::format("hard request '{}': {}", hard, e.what())};
  }
  // -masterq: the queue instances the master task may take, which meet the job's other requests too
  // (for parallel jobs only: qsub refuses it for a sequential one, and the scheduler reads it for parallel ones)
  if (!r.master_queues.empty() && !r.pe.empty()) {
    if (!f.host_rules) throw Unrepresentable{"-masterq: the master apart is placed by match, not over time", true};
    if (range_min > 0) throw Unrepresentable{"-masterq with a slot range: not placed yet", true};
    std::string master = hard;
    add(master, queue_clause(f, r.master_queues));
    std::string master_only = master;
    if (master_beside) add(master_only, "!(" + queue_clause(f, r.hard_queues) + ")");
    try {
      b.set_master_request(master);
      if (master_beside) b.set_master_only_request(master_only);
    } catch (const RequestError& e) {
      throw Unrepresentable{fmt::format("-masterq request '{}': {}", master, e.what())};
    }
  }
  try {
    if (!soft.empty()) b.set_soft(soft);
  } catch (const RequestError& e) {
    throw Unrepresentable{fmt::format("soft request '{}': {}", soft, e.what())};
  }
}

// A pending array job's tasks (`1-10:2,15`, ids from 1), naming the qstat file and line when malformed.
std::vector<uint64_t> tasks_of(const std::string& text, uint64_t room, const std::string& path, size_t line) {
  try {
    return expand_task_ranges(text, room, 1);
  } catch (const std::invalid_argument& e) {
    throw LoadError(path, line, "tasks", e.what());
  }
}

// ISO 8601 local time as qstat prints it (the dump script runs qstat under TZ=UTC) -> seconds.
double iso_time(const std::string& text, const std::string& path, size_t line, const char* field) {
  std::tm tm{};
  int n = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &n) != 6 ||
      static_cast<size_t>(n) != text.size())
    throw LoadError(path, line, field, fmt::format("'{}' is not YYYY-MM-DDTHH:MM:SS", text));
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm));
}

// A comma-separated list (-l, -q), empty items dropped.
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= text.size()) {
    size_t e = text.find(',', i);
    if (e == std::string::npos) e = text.size();
    if (e > i) out.push_back(text.substr(i, e - i));
    i = e + 1;
  }
  return out;
}

// A number qstat printed in `field`, or `fallback` when it printed none; anything else is an error
// naming file, line and field (a submission time 'yesterday' read as 0, the epoch).
double number_field(const std::string& text, double fallback, const std::string& path, size_t line, const char* field) {
  if (text.empty()) return fallback;
  double v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v))
    throw LoadError(path, line, field, fmt::format("'{}' is not a number", text));
  return v;
}

// The job's time limit: its hard h_rt request in seconds, or NaN (a malformed one is refused with the
// request, naming the value).
double h_rt_of(const FarmModel& f, const std::vector<std::pair<std::string, std::string>>& hard) {
  for (const auto& [name, value] : hard)
    if (const auto a = f.complex(name); a && f.catalog.at(*a).name == "h_rt") try {
        return parse_request_number(AttrType::Time, value, f.catalog.reading);
      } catch (const ValueError&) {}
  return std::numeric_limits<double>::quiet_NaN();
}

// The slot count the urgency assumes (sge_job_slot_request): 1 without a PE, a fixed count, or for a
// range the urgency_slots of the first PE the request matches.
double urgency_slots(const FarmModel& f, const std::string& pe, const std::string& range) {
  if (pe.empty()) return 1;
  const std::optional<SlotRange> r = slot_range(range);
  if (!r) return 1;  // refused with the job
  try {
    const WildcardExpression expr(pe);
    for (const Pe& p : f.pes)
      if (expr.matches(p.name)) return sge_urgency_slots(p.urgency_slots, r->lo, r->hi);
  } catch (const std::exception&) {}
  return 1;  // no such PE: the job is refused anyway
}

// A job's weight in its share tree node (sge_sort_job_nodes' dilution): the least slot count of its -pe
// range, 1 without a PE.
uint32_t share_dilution(const std::string& pe, const std::string& range) {
  if (pe.empty()) return 1;
  const std::optional<SlotRange> r = slot_range(range);
  return r ? static_cast<uint32_t>(std::clamp<double>(r->lo, 1, 1e9)) : 1;
}

// rrcontr (sge_urgency.c): the slots' urgency for the assumed slot count plus each hard -l request's.
double resource_contribution(const FarmModel& f, const std::vector<std::pair<std::string, std::string>>& hard,
                             double slots) {
  if (f.slots == kNone) return 0;
  double rr = sge_request_urgency(true, f.urgency[f.slots], 1.0, slots);
  for (const auto& [name, value] : hard) {
    const auto a = f.complex(name);
    if (!a) continue;
    const AttributeDef& def = f.catalog.at(*a);
    double v = 0;
    if (is_numeric(def.type)) try {
        v = parse_request_number(def.type, value, f.catalog.reading);
      } catch (const ValueError&) {}
    rr += sge_request_urgency(is_numeric(def.type), f.urgency[*a], v, slots);
  }
  return rr;
}

// Under Snapshot, a running job's charges are held on its master queue instance: per slot or per job as
// the complex says, the request or the complex's default (dispatch takes them from every pool above it).
class RunningCharges {
 public:
  explicit RunningCharges(FarmModel& f) : f_(f) {}
  void charge(const QstatJob& j, const std::string& path) {
    const auto it = f_.instance_index.find(j.queue);
    if (it == f_.instance_index.end()) {
      ++elsewhere_;
      return;
    }
    const double slots = std::max(1.0, number_field(j.slots, 1, path, j.line, "slots"));
    uint32_t pe_total = kNone;  // the PE's slot total, where it binds (a pattern of several PEs: none)
    if (!j.pe.empty()) try {
        pe_total = pe_total_of(f_, j.pe).value_or(kNone);
      } catch (const Unrepresentable&) {}
    if (slots > 1 && !j.pe.empty()) ++parallel_;
    if (!j.started.empty())  // its load correction, on the master's host too
      f_.running_starts.push_back(
          {f_.instances[it->second].host_index, slots, iso_time(j.started, path, j.line, "JAT_start_time")});
    for (const uint32_t a : f_.catalog.consumables()) {
      const AttributeDef& def = f_.catalog.at(a);
      double amount = a == f_.slots ? 1 : def.default_amount.value_or(0);
      if (a == pe_total) amount = 1;  // a slot of its PE's total each
      for (const auto& [name, value] : j.hard)
        if (f_.complex(name) == a) {
          try {
            amount = parse_request_number(def.type, value, f_.catalog.reading);
          } catch (const ValueError& e) {
            throw LoadError(path, j.line, "hard_request", fmt::format("running job {}: {}", j.number, e.what()));
          }
        }
      const double total = def.scope == ConsumeScope::PerJob ? amount : amount * slots;
      if (!(total > 0)) continue;
      if (f_.running.empty()) f_.running.assign(f_.instances.size(), {});
      auto& held = f_.running[it->second];
      if (held.empty()) held.assign(f_.catalog.consumables().size(), 0.0);
      held[static_cast<size_t>(f_.catalog.consumable_slot(a))] += total;
    }
    ++charged_;
  }
  void warn() {
    if (charged_)
      f_.warnings.push_back(
          fmt::format("{} running jobs hold their charges on the queue instances they run on "
                      "(they are not matched again)",
                      charged_));
    if (parallel_)
      f_.warnings.push_back(
          fmt::format("{} running parallel jobs: every slot charged on the master queue instance "
                      "(qstat -r names no other)",
                      parallel_));
    if (elsewhere_)
      f_.warnings.push_back(
          fmt::format("{} running jobs on queue instances left out of the farm: not charged", elsewhere_));
  }

 private:
  FarmModel& f_;
  size_t charged_ = 0, elsewhere_ = 0, parallel_ = 0;
};

// Where qsub options come from: an accounting record's category (what Grid Engine wrote: -l, -q, -pe and
// credentials) or a line a user wrote for --jobs (qsub's options that say where and how a job runs).
enum class QsubWords : uint8_t { Category, Submitted };

// One job's qsub options (qsub(1)).
struct Qsub {
  SgeRequest request;
  double priority = 0;   ///< -p
  std::string project;   ///< -P
  double jobshare = 0;   ///< -js
  bool held = false;     ///< -h
  char verify = 'n';     ///< -w: e, w, n, v or p (qsub's default n)
  std::string why;       ///< what colmatch does not represent, or qsub refuses: the job is rejected with it
  bool refused = false;  ///< qsub refuses the job (why says so)
};

// Reads qsub options. Throws std::invalid_argument for an option without its value.
Qsub parse_qsub(const std::vector<std::string>& w, QsubWords from) {
  Qsub q;
  bool soft = false;
  const bool user = from == QsubWords::Submitted;
  for (size_t i = 0; i < w.size() && q.why.empty(); ++i) {
    auto arg = [&](size_t k) -> const std::string& {
      if (i + k >= w.size()) throw std::invalid_argument(fmt::format("'{}' without its value", w[i]));
      return w[i + k];
    };
    const std::string& o = w[i];
    if (o == "-hard") soft = false;
    else if (o == "-soft") soft = true;
    else if (o == "-l") {
      for (const std::string& item : split_list(arg(1))) {
        const size_t eq = item.find('=');
        // a BOOL complex requested by its name alone is requested TRUE (qsub(1))
        (soft ? q.request.soft : q.request.hard)
            .emplace_back(item.substr(0, eq), eq == std::string::npos ? "TRUE" : item.substr(eq + 1));
      }
      ++i;
    } else if (o == "-q") {
      for (const std::string& x : split_list(arg(1)))
        (soft ? q.request.soft_queues : q.request.hard_queues).push_back(x);
      ++i;
    } else if (o == "-pe") {
      q.request.pe = arg(1);
      q.request.pe_range = arg(2);
      i += 2;
    } else if (user && o == "-p") {
      // qsub: "-p option must be in range -1023 to 1024" (an integer)
      const std::string& v = arg(1);
      int p = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), p);
      if (ec != std::errc() || end != v.data() + v.size() || p < -1023 || p > 1024)
        q.why = fmt::format("-p {}: the priority must be a whole number from -1023 to 1024 (qsub)", v),
        q.refused = true;
      q.priority = p;
      ++i;
    } else if (o == "-P") {
      q.project = arg(1);
      ++i;
    } else if (o == "-js") {  // the job's functional shares (qsub(1): a whole number >= 0)
      const std::string& v = arg(1);
      if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 9)
        q.why = fmt::format("-js {}: not a job share (a whole number >= 0; qsub)", v), q.refused = true;
      else q.jobshare = std::stod(v);
      ++i;
    } else if (user && o == "-h") {
      q.held = true;
    } else if (user && (o == "-cwd" || o == "-V")) {
      // the environment and the working directory: not a match of taskers
    } else if (user && o == "-w") {
      const std::string& v = arg(1);
      if (v.size() != 1 || std::string_view("ewnvp").find(v[0]) == std::string_view::npos)
        q.why = fmt::format("-w {}: not a verification level (e, w, n, v, p; qsub)", v), q.refused = true;
      else q.verify = v[0];
      ++i;
    } else if (user && (o == "-N" || o == "-o" || o == "-e" || o == "-S" || o == "-M" || o == "-m" || o == "-b" ||
                        o == "-j" || o == "-wd" || o == "-r" || o == "-notify" || o == "-now")) {
      ++i;  // names, files, mail, shell: not a match of taskers
    } else if (o == "-U" || o == "-u" || o == "-A" || o == "-ckpt" || o == "-masterq" || o == "-ar" ||
               o == "-binding") {
      if (o == "-masterq" && user) q.request.master_queues = split_list(arg(1));
      else if (o == "-masterq") q.why = "-masterq: a master queue apart from the slaves' is not placed over time";
      if (user && o == "-ar") q.why = "-ar: advance reservations are not represented";
      ++i;  // users, accounts, checkpointing: not a match of taskers
    } else {
      q.why = user
                  ? fmt::format("option '{}' is not one colmatch reads (-l, -q, -pe, -hard, -soft, -p, -P, -js, -h)", o)
                  : fmt::format("category option '{}' is not read", o);
      q.refused = user && o.rfind("-", 0) != 0;  // a word that is no option: qsub takes it for the script
    }
  }
  if (user && !q.request.master_queues.empty() && q.request.pe.empty() && q.why.empty()) {  // checked: masterq-q
    q.why =
        "-masterq without -pe: qsub refuses it (\"specification of master queue is not allowed for non-parallel "
        "jobs\")";
    q.refused = true;
  }
  return q;
}

// One line of a --jobs file as qsub splits its arguments: words apart by blanks, '...' and "..." kept
// whole (the quotes removed). Throws std::invalid_argument for a quote left open.
std::vector<std::string> qsub_words(std::string_view line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i == line.size()) break;
    std::string w;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') {
      if (line[i] == '\'' || line[i] == '"') {
        const char quote = line[i];
        const size_t end = line.find(quote, i + 1);
        if (end == std::string_view::npos)
          throw std::invalid_argument(fmt::format("a {} quote left open at character {}", quote, i + 1));
        w.append(line.substr(i + 1, end - i - 1));
        i = end + 1;
      } else {
        w += line[i++];
      }
    }
    out.push_back(std::move(w));
  }
  return out;
}

// The time the priority is computed at: the dump's (dump-time.txt), else the latest submission of `inputs`
// (the waiting-time term's differences, all that the order sees, do not depend on it).
double now_of(const FarmModel& f, const std::vector<SgeUrgencyInput>& inputs) {
  if (!std::isnan(f.now)) return f.now;
  double now = 0;
  for (const SgeUrgencyInput& in : inputs) now = std::max(now, in.submit);
  return now;
}

// Every job's sge_priority(5) priority into jobs.priority, at now_of, with the tickets of `ticket_jobs`
// (one per input).
void set_priorities(FarmModel& f, JobTable& jobs, std::vector<SgeUrgencyInput>& inputs,
                    const std::vector<SgeTicketJob>& ticket_jobs, const std::vector<uint32_t>& job_input) {
  const std::vector<SgeTickets> tickets = sge_tickets(f.ticket_config, f.holders, ticket_jobs);
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i].tickets = tickets[i];
  std::vector<SgePriorityTerms> terms = sge_priorities(f.weights, inputs, now_of(f, inputs));
  for (uint32_t j = 0; j < jobs.size(); ++j) jobs.priority[j] = terms[job_input[j]].prio;
  f.priority_terms = std::move(terms);
  f.priority_of_job = job_input;
}

// The jobs of a --jobs file: one job a line of qsub options (blank and `#` lines skipped), ids 1, 2, ...
// in line order, submitted together when the dump was taken. A job qsub would refuse, or colmatch cannot
// represent, is rejected naming the file, the line and the reason.
void submitted_jobs(FarmModel& f, JobBuilder& b, const std::string& path, std::vector<SgeUrgencyInput>& inputs,
                    std::vector<SgeTicketJob>& ticket_jobs, std::vector<uint32_t>& job_input) {
  const double now = now_of(f, inputs);
  LineReader in(path);
  uint64_t k = 0;
  for (std::string_view raw; in.next(raw);) {
    std::string_view line = raw;
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.remove_prefix(1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    if (++k > kMaxJobs) throw LoadError(path, in.line(), "job", fmt::format("more than {} jobs", kMaxJobs));
    const std::string id = std::to_string(k);
    Qsub q;
    try {
      q = parse_qsub(qsub_words(line), QsubWords::Submitted);
    } catch (const std::invalid_argument& e) {
      throw LoadError(path, in.line(), "options", e.what());
    }
    std::string why = q.why;
    bool refused = q.refused;  // by qsub: the job would not exist in Grid Engine
    std::optional<PeJob> pe;
    try {
      if (why.empty() && !q.request.pe.empty()) pe = pe_job(f, q.request.pe, q.request.pe_range);
    } catch (const Unrepresentable& u) {
      why = u.why;
      refused = !u.grid_engine_runs_it;  // an unknown PE: qsub refuses the job, it widens no range
    }
    const uint32_t j = b.add(id, "", "", 0, now, pe ? pe->slots : 1);
    try {
      if (why.empty()) apply(f, b, q.request, pe ? &*pe : nullptr);
    } catch (const Unrepresentable& u) {
      why = u.why;
      refused = !u.grid_engine_runs_it;
    }
    if (!why.empty()) b.reject(j, fmt::format("{}:{}: job {}: {}", path, in.line(), id, why));
    if (q.held) b.set_note(j, "held");
    if (q.verify != 'n' && why.empty()) f.verify.push_back({j, q.verify, in.line()});
    if (!q.project.empty()) b.set_credentials("", q.project);
    b.set_times(std::numeric_limits<double>::quiet_NaN(), h_rt_of(f, q.request.hard));
    SgeUrgencyInput u;
    u.posix_priority = q.priority;
    u.rrcontr = resource_contribution(f, q.request.hard, urgency_slots(f, q.request.pe, q.request.pe_range));
    u.submit = now;
    u.ranged = !q.held && !refused;
    inputs.push_back(u);
    SgeTicketJob t = ticket_job(f, "", "", q.project, q.jobshare, 0);
    t.counted = u.ranged;
    t.submit = now;
    t.number = k;
    t.dilution = share_dilution(q.request.pe, q.request.pe_range);
    ticket_jobs.push_back(t);
    job_input.push_back(static_cast<uint32_t>(inputs.size() - 1));
  }
}

}  // namespace

// Long (about 130 lines): one pass over qstat's job_list elements that fills the job table, the priority
// inputs and the ticket jobs side by side (an element's tasks each an input, its PE read once for them all).
JobTable qstat_jobs(FarmModel& f, bool snapshot, const ProgressFn&, const std::string& jobs_path) {
  JobBuilder b(f.catalog);
  const std::string path = dump_file(f.dir, "qstat-r.xml");
  if (!std::filesystem::exists(path) && jobs_path.empty()) return std::move(b).build();
  std::map<std::string, JobDetail> details;
  const std::string jpath = dump_file(f.dir, "qstat-j.xml");
  if (std::filesystem::exists(jpath))
    for (JobDetail& d : read_job_details(jpath)) details[d.number] = std::move(d);
  RunningCharges running(f);
  JobIds ids;
  uint64_t count = 0;
  // sge_priority(5): one input per running job_list element and per pending job or array task (a task's
  // tickets are its own); running ones widen the ranges only; job_input[j]: job j's input
  std::vector<SgeUrgencyInput> inputs;
  std::vector<SgeTicketJob> ticket_jobs;  // one per input
  std::vector<uint32_t> job_input;
  // the job as the ticket policies see it (JB_jobshare, JB_override_tickets; JB_department is not in
  // qstat -j: the qmaster's rule finds it)
  auto ticket_of = [&](const QstatJob& q, const JobDetail* d, double submit, uint64_t task) {
    SgeTicketJob t;
    if (d) {
      t = ticket_job(f, d->owner.empty() ? q.owner : d->owner, d->group, d->project,
                     number_field(d->jobshare, 0, jpath, d->line, "JB_jobshare"),
                     number_field(d->override_tickets, 0, jpath, d->line, "JB_override_tickets"));
    } else {
      t = ticket_job(f, q.owner, "", "", 0, 0);
    }
    t.submit = submit;
    t.number = static_cast<uint64_t>(number_field(q.number, 0, path, q.line, "JB_job_number"));
    t.task = task;
    t.dilution = share_dilution(q.pe, q.pe_range);
    return t;
  };
  auto input_of = [&](const QstatJob& q, const JobDetail* d, double submit) {
    SgeUrgencyInput in;
    in.rrcontr = resource_contribution(f, q.hard, urgency_slots(f, q.pe, q.pe_range));
    in.submit = submit;
    if (d) {
      // JB_priority is the POSIX priority plus 1024; JB_deadline 0 for none
      in.posix_priority = number_field(d->priority, 1024, jpath, d->line, "JB_priority") - 1024;
      in.deadline = number_field(d->deadline, 0, jpath, d->line, "JB_deadline");
    }
    return in;
  };
  size_t replaced = 0;  // pending jobs of the dump that --jobs replaces
  const std::vector<QstatJob> listed = std::filesystem::exists(path) ? read_qstat_jobs(path) : std::vector<QstatJob>{};
  for (const QstatJob& q : listed) {
    const bool is_running = q.list_state == "running" || q.state.find_first_of("rtRs") != std::string::npos;
    if (is_running) {
      if (snapshot) running.charge(q, path);
      const auto d = details.find(q.number);
      const JobDetail* dp = d != details.end() ? &d->second : nullptr;
      const double submit = dp ? number_field(dp->submission, 0, jpath, dp->line, "JB_submission_time") : 0;
      inputs.push_back(input_of(q, dp, submit));
      inputs.back().ranged = dp != nullptr;  // without its submission time its waiting time is unknown
      ticket_jobs.push_back(
          ticket_of(q, dp, submit, q.tasks.empty() ? 0 : std::strtoull(q.tasks.c_str(), nullptr, 10)));
      ticket_jobs.back().running = true;
      continue;  // simulate replays what is waiting
    }
    if (!jobs_path.empty()) {
      ++replaced;
      continue;
    }
    SgeRequest r{q.hard, q.soft, q.hard_queues, q.soft_queues, q.pe, q.pe_range, q.master_queues};
    const auto d = details.find(q.number);
    const std::string group = d != details.end() ? d->second.group : "";
    const double submit = d != details.end() && !d->second.submission.empty()
                              ? number_field(d->second.submission, 0, jpath, d->second.line, "JB_submission_time")
                              : (q.submitted.empty() ? 0 : iso_time(q.submitted, path, q.line, "JB_submission_time"));
    const std::vector<uint64_t> tasks =
        q.tasks.empty() ? std::vector<uint64_t>{0} : tasks_of(q.tasks, kMaxJobs - count, path, q.line);
    // a held or failed job has no priority in Grid Engine (qstat prints 0): not in the range
    // one input a task: a task's tickets are its own (the functional policy counts each task as a job)
    const SgeUrgencyInput element = input_of(q, d != details.end() ? &d->second : nullptr, submit);
    const bool ranged = q.state.find_first_of("hE") == std::string::npos;
    number_field(q.prio, 0, path, q.line, "JAT_prio");  // checked; the priority is computed (set_priorities)
    std::optional<PeJob> pe;                            // the element's PE, read once for all its tasks
    std::string pe_why;
    try {
      if (!q.pe.empty()) pe = pe_job(f, q.pe, q.pe_range);
    } catch (const Unrepresentable& u) {
      pe_why = u.why;
    }
    // Grid Engine gives tickets to an array's first max_pending_tasks_per_job pending tasks only (sgeee.c;
    // also at most its free slots + 1: not modelled): each of those its own input, the rest one together,
    // with none (which also bounds the inputs of a huge array)
    const uint64_t ticketed = f.ticket_config.max_pending_tasks_per_job;
    for (size_t k = 0; k < tasks.size(); ++k) {
      const uint64_t t = tasks[k];
      const std::string id = t == 0 ? q.number : fmt::format("{}.{}", q.number, t);
      ids.add(path, q.line, "JB_job_number", id);
      ++count;
      std::string why = pe_why;
      const uint32_t j = b.add(id, q.owner, group, 0, submit, pe ? pe->slots : 1);
      if (k <= ticketed) {  // (k == ticketed: the input the rest share)
        inputs.push_back(element);
        inputs.back().ranged = ranged;
        ticket_jobs.push_back(ticket_of(q, d != details.end() ? &d->second : nullptr, submit, t));
        ticket_jobs.back().counted = ranged && k < ticketed;
      }
      job_input.push_back(static_cast<uint32_t>(inputs.size() - 1));
      try {
        if (why.empty()) apply(f, b, r, pe ? &*pe : nullptr);
      } catch (const Unrepresentable& u) {
        why = u.why;
      }
      if (!why.empty()) b.reject(j, fmt::format("{}:{}: job {}: {}", path, q.line, id, why));
      if (q.state.find('E') != std::string::npos)
        b.reject(j, fmt::format("{}:{}: job {}: in error state ({}): Grid Engine does not schedule it", path, q.line,
                                id, q.state));
      else if (q.state.find('h') != std::string::npos) b.set_note(j, "held");
      if (d != details.end() && !d->second.project.empty() && d->second.project != "NONE")
        b.set_credentials("", d->second.project);
      b.set_times(std::numeric_limits<double>::quiet_NaN(), h_rt_of(f, q.hard));  // runtime unknown until it runs
    }
  }
  running.warn();
  if (!jobs_path.empty()) {
    if (replaced)
      f.warnings.push_back(
          fmt::format("{} pending jobs of {} left out: the jobs are --jobs {}'s", replaced, path, jobs_path));
    submitted_jobs(f, b, jobs_path, inputs, ticket_jobs, job_input);
  }
  JobTable jobs = std::move(b).build();
  set_priorities(f, jobs, inputs, ticket_jobs, job_input);
  return jobs;
}

JobTable accounting_jobs(const FarmModel& f, const std::string& path) {
  JobBuilder b(f.catalog);
  std::map<std::string, uint32_t> attempts;
  for (const AccountingRecord& rec : read_accounting(path)) {
    std::string id = rec.task_number == 0 ? rec.job_number : fmt::format("{}.{}", rec.job_number, rec.task_number);
    if (const uint32_t n = ++attempts[id]; n > 1) id += fmt::format("~{}", n);  // a rerun: its own record
    const uint32_t j = b.add(id, rec.owner, rec.group, rec.priority, rec.submission, rec.slots);
    const double runtime = rec.start > 0 && rec.end >= rec.start ? rec.end - rec.start : rec.wallclock;
    Qsub q;
    try {
      q = parse_qsub(category_words(rec.category), QsubWords::Category);
    } catch (const std::invalid_argument& e) {
      throw LoadError(path, rec.line, "category", e.what());
    }
    std::string why = q.why;
    const double walltime = h_rt_of(f, q.request.hard);
    try {
      if (why.empty()) {
        q.request.pe_range = std::to_string(rec.slots);  // the slots granted from the range
        apply(f, b, q.request);
      }
    } catch (const Unrepresentable& u) {
      why = u.why;
    }
    if (!why.empty()) b.reject(j, fmt::format("{}:{}: job {}: {}", path, rec.line, id, why));
    try {
      b.set_times(runtime, walltime);
    } catch (const ValueError& e) {
      throw LoadError(path, rec.line, "ru_wallclock", e.what());
    }
    if (rec.project != "NONE") b.set_credentials("", rec.project);
  }
  return std::move(b).build();
}

}  // namespace colmatch::loaders::sge
