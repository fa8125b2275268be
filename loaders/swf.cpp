#include "loaders/swf.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "engine/model/request.hpp"
#include "loaders/errors.hpp"

namespace colmatch::loaders {
namespace {

const char* const kFieldNames[18] = {"job number",
                                     "submit time",
                                     "wait time",
                                     "run time",
                                     "allocated processors",
                                     "average CPU time",
                                     "used memory",
                                     "requested processors",
                                     "requested time",
                                     "requested memory",
                                     "status",
                                     "user ID",
                                     "group ID",
                                     "executable number",
                                     "queue number",
                                     "partition number",
                                     "preceding job number",
                                     "think time"};

// The fields of one job line the jobs are built from (every field is checked as it is read); its id is
// ids[id_end of the job before, id_end) of the loader's id text (a RICC log: 447,794 of these).
struct SwfJob {
  // SWF field n is kept as f[kSlot[n]] (-1: checked, not kept): submit, run time, allocated processors,
  // requested processors, requested time, user, group, queue
  static constexpr int kSlot[18] = {-1, 0, -1, 1, 2, -1, -1, 3, 4, -1, -1, 5, 6, -1, 7, -1, -1, -1};
  double f[8];
  size_t line;
  size_t id_end;
  uint32_t extra = 0;  // CERIT-SC: into the queue names and PBS node requests after the 18 fields
  double submit() const { return f[0]; }
  double run_time() const { return f[1]; }
  double allocated_procs() const { return f[2]; }
  double requested_procs() const { return f[3]; }
  double requested_time() const { return f[4]; }
  double user() const { return f[5]; }
  double group() const { return f[6]; }
  double queue() const { return f[7]; }
};

// Job records in blocks of 65,536, appended without moving those stored (a vector copies and faults in
// twice its size as it doubles; a deque allocates once every three of these records).
class SwfJobs {
 public:
  static constexpr size_t kBlock = size_t{1} << 16;
  void push_back(const SwfJob& j) {
    if (blocks_.empty() || blocks_.back().size() == kBlock) blocks_.emplace_back().reserve(kBlock);
    blocks_.back().push_back(j);
    ++size_;
  }
  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  const std::vector<std::vector<SwfJob>>& blocks() const noexcept { return blocks_; }

 private:
  std::vector<std::vector<SwfJob>> blocks_;
  size_t size_ = 0;
};

// One CERIT-SC cluster of the machines file.
struct Cluster {
  std::string name;
  uint32_t nodes = 0, ppn = 0;
};

// The host name of node i (from 1) of cluster `name`, as CERIT-SC names its nodes.
std::string node_host(const std::string& name, uint32_t i) { return fmt::format("{}{}.cerit-sc.cz", name, i); }

std::vector<Cluster> read_machines(const std::string& path, const ProgressFn& progress) {
  LineReader in(path, progress);
  std::vector<Cluster> out;
  std::unordered_map<std::string, size_t> hosts;  // host name -> the line of its cluster
  uint64_t total = 0;
  std::string_view line;
  while (in.next(line)) {
    std::vector<std::string_view> f;
    for (size_t pos = line.find_first_not_of(" \t\r"); pos != std::string_view::npos;
         pos = line.find_first_not_of(" \t\r", pos)) {
      const size_t end = std::min(line.find_first_of(" \t\r", pos), line.size());
      f.push_back(line.substr(pos, end - pos));
      pos = end;
    }
    if (f.empty()) continue;
    if (f.size() < 4)
      throw LoadError(path, in.line(), "", fmt::format("expected id, cluster, nodes, ppn; found {} fields", f.size()));
    auto count = [&](std::string_view v, const char* field) {
      uint32_t n = 0;
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || p != v.data() + v.size() || n < 1 || n > 1000000)
        throw LoadError(path, in.line(), field, fmt::format("'{}' is not a count from 1 to 10^6", v));
      return n;
    };
    if (f[1].empty() || f[1].find_first_of("{}\"") != std::string_view::npos)
      throw LoadError(path, in.line(), "cluster", "expected a name");
    out.push_back({std::string(f[1]), count(f[2], "nodes"), count(f[3], "ppn")});
    total += out.back().nodes;
    // Each node is a tasker with a host name and eight properties (about 4 us each to load): the file as
    // a whole is bounded, not only each line. CERIT-SC's machines file has a few hundred nodes.
    if (total > 100000)
      throw LoadError(path, in.line(), "nodes", fmt::format("{} nodes in all, more than 10^5", total));
    // Every node's host name once: a cluster named twice, or names that run into each other (node 11 of
    // `zewura` and node 1 of `zewura1` are both zewura11), is this line's error, not the taskers'.
    for (uint32_t i = 1; i <= out.back().nodes; ++i) {
      const auto [at, fresh] = hosts.emplace(node_host(out.back().name, i), in.line());
      if (!fresh)
        throw LoadError(path, in.line(), "cluster",
                        fmt::format("node {} of cluster '{}' is host {}, which line {} names already", i,
                                    out.back().name, at->first, at->second));
    }
  }
  if (out.empty()) throw LoadError(path, 0, "", "no clusters");
  return out;
}

// A PBS node request (`1:ppn=64:x86_64:cl_zewura#excl`, `1:ppn=1+2:ppn=2`, `zewura19.cerit-sc.cz`).
struct PbsRequest {
  uint64_t nodes = 0, slots = 0;
  uint32_t ppn = 0;  // the largest of its parts
  std::vector<std::string> has, has_not;
  bool excl = false;
};

// Parses `spec`; returns an empty string or why it does not parse.
std::string parse_pbs(std::string_view spec, PbsRequest& r) {
  if (spec.empty()) return "an empty node request";
  for (size_t at = 0; at <= spec.size();) {
    const size_t plus = std::min(spec.find('+', at), spec.size());
    const std::string_view part = spec.substr(at, plus - at);
    at = plus + 1;
    if (part.empty()) return "an empty part";
    uint64_t count = 0;
    uint32_t ppn = 1;
    size_t i = 0;
    for (size_t from = 0; from <= part.size(); ++i) {
      const size_t colon = std::min(part.find(':', from), part.size());
      std::string_view item = part.substr(from, colon - from);
      from = colon + 1;
      if (item.size() >= 5 && item.substr(item.size() - 5) == "#excl") {
        r.excl = true;
        item.remove_suffix(5);
      }
      if (item.empty()) return "an empty item";
      if (i == 0) {  // a node count, or a host name for one node
        const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), count);
        if (ec == std::errc() && p == item.data() + item.size()) {
          if (count < 1 || count > 100000) return fmt::format("'{}' is not a node count from 1 to 10^5", item);
          continue;
        }
        if (item.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.-_") != std::string_view::npos ||
            item.find_first_of("abcdefghijklmnopqrstuvwxyz") == std::string_view::npos)
          return fmt::format("'{}' is neither a node count nor a host name", item);
        count = 1;
        r.has.emplace_back(item);
        continue;
      }
      if (item.substr(0, 4) == "ppn=") {
        const std::string_view v = item.substr(4);
        const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), ppn);
        if (ec != std::errc() || p != v.data() + v.size() || ppn < 1 || ppn > 100000)
          return fmt::format("'{}' is not a processor count from 1 to 10^5", item);
      } else if (item.substr(0, 4) == "mem=") {
        // memory per node: the machines file gives no per-node memory to match it against
      } else if (item[0] == '^') {
        if (item.size() == 1) return "'^' without a property";
        r.has_not.emplace_back(item.substr(1));
      } else if (item.find_first_of("#=\"{}") != std::string_view::npos) {
        return fmt::format("'{}' is not a property", item);
      } else {
        r.has.emplace_back(item);
      }
    }
    r.nodes += count;
    r.slots += count * ppn;
    r.ppn = std::max(r.ppn, ppn);
  }
  return "";
}

// The blanks between fields (string_view::find_first_of would call memchr on the set for every character).
bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

double number(std::string_view s, const std::string& path, size_t line, size_t field) {
  // most fields are whole numbers (-1 when unknown): read those digit by digit (up to 15 digits a double
  // holds exactly; from_chars would give the same value)
  const size_t sign = !s.empty() && s[0] == '-';
  if (s.size() > sign && s.size() - sign <= 15) {
    uint64_t whole = 0;
    size_t k = sign;
    for (; k < s.size() && s[k] >= '0' && s[k] <= '9'; ++k) whole = whole * 10 + static_cast<uint64_t>(s[k] - '0');
    if (k == s.size()) return sign ? -static_cast<double>(whole) : static_cast<double>(whole);
  }
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v))
    throw LoadError(path, line, kFieldNames[field], fmt::format("'{}' is not a number", s));
  return v;
}

}  // namespace

// Long (about 150 lines) on purpose: the header's fields, then the 18 SWF fields of a line one after
// another, each with its own check; split, each piece would carry the whole dataset under build.
Dataset load_swf(const std::string& path, const ProgressFn& progress, const std::string& machines) {
  const std::vector<Cluster> clusters = machines.empty() ? std::vector<Cluster>{} : read_machines(machines, progress);
  LineReader in(path, progress);
  double max_nodes = -1, max_procs = -1;
  SwfJobs raw;
  std::string id_text;     // the jobs' ids, one after another
  bool increasing = true;  // every id so far a canonical whole number above the one before it (SWF's rule)
  double last_id = 0;
  std::vector<std::pair<std::string, std::string>> extras{{}};  // CERIT-SC: (queue, node request); 0: none
  std::string_view line;
  while (in.next(line)) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    if (line[first] == ';') {  // header: "; Key: value"
      const std::string_view h = line.substr(first + 1);
      const size_t colon = h.find(':');
      if (colon == std::string_view::npos) continue;
      std::string_view key = h.substr(0, colon), value = h.substr(colon + 1);
      key.remove_prefix(std::min(key.find_first_not_of(' '), key.size()));
      value.remove_prefix(std::min(value.find_first_not_of(' '), value.size()));
      value = value.substr(0, value.find_first_of(" \t\r"));
      if (key == "MaxNodes" || key == "MaxProcs") {
        // Each node becomes a tasker: a header line must not ask for more than the largest machines
        // (the archive's largest logs have under 10^5 nodes; 10^7 nodes took 15 s and 1.8 GB for 60 jobs).
        const double bound = key == "MaxNodes" ? 1e6 : 1e7;
        double v = 0;
        const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        // the whole word a count (`12garbage` was read as 12, and an empty value, `; MaxNodes:`, as none)
        if (ec != std::errc() || p != value.data() + value.size() || !(v > 0) || v > bound || v != std::floor(v))
          throw LoadError(path, in.line(), std::string(key),
                          fmt::format("'{}' is not a count from 1 to 10^{}", value, key == "MaxNodes" ? 6 : 7));
        (key == "MaxNodes" ? max_nodes : max_procs) = v;
      }
      continue;
    }
    SwfJob j;
    j.line = in.line();
    size_t pos = first, n = 0;
    for (; n < 18; ++n) {
      while (pos < line.size() && blank(line[pos])) ++pos;
      if (pos == line.size()) break;
      size_t end = pos;
      while (end < line.size() && !blank(line[end])) ++end;
      const std::string_view tok = line.substr(pos, end - pos);
      const double v = number(tok, path, j.line, n);
      if (n == 0) {
        id_text.append(tok);
        j.id_end = id_text.size();
        // a whole number written as such, above the one before: no id can repeat yet
        increasing = increasing && tok.find_first_not_of("0123456789") == std::string_view::npos &&
                     (tok.size() == 1 || tok[0] != '0') && tok.size() <= 15 && (raw.empty() || v > last_id);
        last_id = v;
      }
      if (SwfJob::kSlot[n] >= 0) j.f[SwfJob::kSlot[n]] = v;
      pos = end;
    }
    if (n < 18) throw LoadError(path, j.line, "", fmt::format("expected 18 fields, found {}", n));
    if (!machines.empty()) {  // CERIT-SC: {allocated nodes} queue node-request
      std::vector<std::string_view> extra;
      for (pos = line.find_first_not_of(" \t\r", pos); pos != std::string_view::npos && extra.size() < 4;
           pos = line.find_first_not_of(" \t\r", pos)) {
        const size_t end = std::min(line.find_first_of(" \t\r", pos), line.size());
        extra.push_back(line.substr(pos, end - pos));
        pos = end;
      }
      if (extra.size() != 3)
        throw LoadError(path, j.line, "",
                        fmt::format("expected 21 fields with --machines (the node list, queue and node request), "
                                    "found {}",
                                    18 + extra.size()));
      j.extra = static_cast<uint32_t>(extras.size());
      extras.emplace_back(extra[1], extra[2]);
    }
    raw.push_back(j);
  }

  Dataset ds;
  ds.name = "swf";
  const uint32_t a_slots = ds.catalog.add(consumable_attribute("slots", AttrType::Int));
  auto procs_of = [](const SwfJob& j) { return j.allocated_procs() > 0 ? j.allocated_procs() : j.requested_procs(); };
  if (max_procs <= 0)
    for (const auto& block : raw.blocks())
      for (const SwfJob& j : block) max_procs = std::max(max_procs, procs_of(j));
  if (max_procs <= 0) max_procs = 1;
  if (max_nodes <= 0) max_nodes = 1;
  const double ppn = std::floor(max_procs / max_nodes);
  if (ppn < 1)
    throw LoadError(path, 0, "MaxProcs",
                    fmt::format("{} processors on {} nodes is less than one a node", max_procs, max_nodes));
  uint32_t a_props = 0;
  if (!clusters.empty()) {
    AttributeDef d;
    d.name = "properties";
    d.multi_valued = true;
    a_props = ds.catalog.add(std::move(d));
  }
  TaskerBuilder tb(ds.catalog);
  for (const Cluster& c : clusters)
    for (uint32_t i = 1; i <= c.nodes; ++i) {
      const std::string host = node_host(c.name, i);
      tb.add(host);
      tb.set_number(a_slots, c.ppn);
      tb.set_list(a_props, {host, "cl_" + c.name, fmt::format("nodecpus{}", c.ppn), "x86_64", "brno", "nfs4", "debian",
                            "linux"});
    }
  for (size_t i = 0; clusters.empty() && i < static_cast<size_t>(max_nodes); ++i) {
    tb.add(fmt::format("node{:04}", i + 1));
    tb.set_number(a_slots, ppn);
  }
  ds.taskers = std::move(tb).build();

  JobBuilder jb(ds.catalog);
  JobIds ids(increasing ? 0 : raw.size());
  jb.reserve(raw.size(), id_text.size());
  size_t id_begin = 0;
  for (const auto& block : raw.blocks())
    for (const SwfJob& j : block) {
      const std::string_view id = std::string_view(id_text).substr(id_begin, j.id_end - id_begin);
      id_begin = j.id_end;
      if (!increasing) ids.add(path, j.line, "job number", id);  // (increasing ids differ: nothing to look up)
      const double procs = procs_of(j);
      const auto cred = [](const char* prefix, double v) {
        return v < 0 ? std::string() : fmt::format("{}{}", prefix, v);
      };
      // What the format decides: the slots, the rule, the class, the request; or why the job is refused.
      uint64_t slots = procs >= 1 && procs <= 1e9 ? static_cast<uint64_t>(procs) : 1;
      bool fill_up = true;
      std::string queue = cred("q", j.queue()), request, why;
      if (clusters.empty()) {
        if (!(procs >= 1) || procs > 1e9) why = fmt::format("field 'allocated processors': no processors ({})", procs);
        else if (procs != std::floor(procs))  // a slot is whole: 1.5 processors is not 1 (issue 28)
          why = fmt::format("field 'allocated processors': {} is not a whole number of processors", procs);
      } else {  // CERIT-SC: the PBS node request decides slots, rule and properties
        PbsRequest pbs;
        why = parse_pbs(extras[j.extra].second, pbs);
        if (!why.empty()) why = "field 'node request': " + why;
        slots = pbs.nodes == 1 ? pbs.ppn : pbs.slots;
        if (why.empty() && pbs.excl && pbs.nodes == 1)  // the whole node, when the request names its cluster
          for (const Cluster& c : clusters)
            if (std::find(pbs.has.begin(), pbs.has.end(), "cl_" + c.name) != pbs.has.end()) slots = c.ppn;
        if (why.empty() && (slots < 1 || slots > 1000000000))  // not run as 1 slot (issue 28)
          why = fmt::format("field 'node request': {} slots, out of range (1 to 10^9)", slots);
        if (!why.empty()) slots = 1;
        fill_up = pbs.nodes > 1;
        queue = extras[j.extra].first;
        for (const std::string& p : pbs.has)
          request += (request.empty() ? "" : " && ") + ("properties==" + quote_value(p));
        for (const std::string& p : pbs.has_not)
          request += (request.empty() ? "" : " && ") + ("!(properties==" + quote_value(p) + ")");
      }
      const uint32_t k =
          jb.add(id, cred("u", j.user()), cred("g", j.group()), 0, j.submit(), static_cast<uint32_t>(slots));
      if (fill_up) jb.set_rule(AllocationRule::FillUp);
      jb.set_credentials(queue, "");
      if (why.empty() && !request.empty()) {
        try {
          jb.set_request(request);
        } catch (const RequestError& e) {
          why = std::string("field 'node request': ") + e.what();
        }
      }
      if (why.empty() && j.run_time() < 0) why = "field 'run time': unknown (-1)";
      if (why.empty() && j.submit() < 0) why = "field 'submit time': unknown (-1)";
      if (!why.empty()) {
        jb.reject(k, fmt::format("{}:{}: job {}: {}", path, j.line, id, why));
        continue;
      }
      jb.set_times(j.run_time(),
                   j.requested_time() > 0 ? j.requested_time() : std::numeric_limits<double>::quiet_NaN());
    }
  ds.jobs = std::move(jb).build();
  return ds;
}

}  // namespace colmatch::loaders
