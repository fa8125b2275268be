#include "loaders/slurm_sacct.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"
#include "loaders/slurm_text.hpp"

namespace colmatch::loaders::slurm {
namespace {

constexpr size_t kMaxJobs = size_t{100} << 20;

// The fields of `line` between `sep`s, empty ones kept.
std::vector<std::string> fields_of(std::string_view line, char sep = '|') {
  const std::vector<std::string_view> views = split_fields(line, sep);
  return {views.begin(), views.end()};
}

// An ISO time as sacct prints it (the cluster's local time; dump with TZ=UTC), or NaN for Unknown/None.
double iso(const std::string& text, const std::string& path, size_t line, const char* field) {
  if (text.empty() || text == "Unknown" || text == "None") return std::numeric_limits<double>::quiet_NaN();
  try {
    return parse_slurm_date(text);
  } catch (const std::invalid_argument& e) {
    throw LoadError(path, line, field, e.what());
  }
}

}  // namespace

std::vector<AccountedJob> read_sacct(const std::string& path) {
  require_not_directory(path);
  LineReader in(path);
  std::string_view line;
  std::map<std::string, size_t> col;
  size_t width = 0;
  std::vector<AccountedJob> out;
  while (in.next(line)) {
    if (line.empty()) continue;
    const size_t ln = in.line();
    std::vector<std::string> f = fields_of(line);
    if (col.empty()) {  // the header
      for (size_t i = 0; i < f.size(); ++i) col[f[i]] = i;
      width = f.size();
      if ((!col.count("JobID") && !col.count("JobIDRaw")) || !col.count("Submit"))
        throw LoadError(path, ln, "", "expected sacct -P's header line naming JobID (or JobIDRaw) and Submit");
      continue;
    }
    // -P does not escape a `|` inside a field: a constraint such as `intel|amd` splits its line into more
    // fields than the header names. The extra ones are the Constraints field's (the one field of a job's
    // request that holds `|`), rejoined.
    if (f.size() > width && col.count("Constraints")) {
      const size_t c = col.at("Constraints"), extra = f.size() - width;
      for (size_t i = 1; i <= extra; ++i) f[c] += "|" + f[c + i];
      f.erase(f.begin() + static_cast<std::ptrdiff_t>(c + 1), f.begin() + static_cast<std::ptrdiff_t>(c + 1 + extra));
    }
    if (f.size() != width)
      throw LoadError(path, ln, "",
                      fmt::format("{} fields, the header names {} (a field holding '|' other than Constraints: "
                                  "write sacct's output with --delimiter and a character no field holds)",
                                  f.size(), width));
    auto get = [&](const char* name) -> std::string {
      const auto it = col.find(name);
      return it == col.end() ? std::string() : f[it->second];
    };
    const std::string id = col.count("JobID") ? get("JobID") : get("JobIDRaw");
    if (id.empty()) throw LoadError(path, ln, "JobID", "empty");
    if (id.find('.') != std::string::npos) continue;  // a step: part of its job
    if (out.size() >= kMaxJobs) throw LoadError(path, ln, "", "more than 100M jobs");
    AccountedJob a;
    QueuedJob& q = a.job;
    q.id = id;
    q.user = get("User");
    q.account = get("Account");
    q.qos = get("QOS");
    q.state = get("State");
    q.submit = iso(get("Submit"), path, ln, "Submit");
    if (std::isnan(q.submit)) throw LoadError(path, ln, "Submit", "a job without a submit time");
    q.eligible = iso(get("Eligible"), path, ln, "Eligible");  // (an older dump's sacct lines have none)
    a.start = iso(get("Start"), path, ln, "Start");
    a.end = iso(get("End"), path, ln, "End");
    auto& o = q.request.options;
    q.request.line = ln;
    // The request per node, rebuilt from what sacct records (sacct/print.c, 22.05): NNodes nodes; the
    // CPUs the job asked (ReqTRES cpu=, else NCPUS, what it got), spread evenly over its nodes (an uneven
    // count rounded up: the replay gives each node the most any node had); ReqMem is the job's whole
    // memory request (the mem of its ReqTRES, no suffix since 21.08: `-N 2 --mem=500` prints 1000M), a
    // node's share of it, or per node (`8000Mn`) or per CPU (`4000Mc`) as older sacct printed it; the GRES
    // of ReqTRES are the job's too, a node's share each.
    const std::string nodes = get("NNodes");
    char* nodes_end = nullptr;
    const unsigned long k = nodes.empty() ? 1 : std::strtoul(nodes.c_str(), &nodes_end, 10);
    const bool several = k > 1 && nodes_end != nullptr && *nodes_end == '\0';
    if (!nodes.empty() && nodes != "1") o.emplace_back("nodes", nodes);
    const std::string tres = get("ReqTRES");  // billing=4,cpu=4,gres/gpu=1,gres/gpu:a100=1,mem=8G,node=1
    std::string cpus_text;
    for (const std::string& item : fields_of(tres, ','))
      if (item.rfind("cpu=", 0) == 0) cpus_text = item.substr(4);
    if (cpus_text.empty()) cpus_text = get("NCPUS");
    if (const unsigned long cpus = std::strtoul(cpus_text.c_str(), nullptr, 10); cpus > 0) {
      o.emplace_back("ntasks", several ? nodes : "1");
      o.emplace_back("cpus-per-task", std::to_string(several ? (cpus + k - 1) / k : cpus));
    }
    if (std::string m = get("ReqMem"); !m.empty() && m != "0") {
      const char last = m.back();
      if (last == 'c') {
        o.emplace_back("mem-per-cpu", m.substr(0, m.size() - 1));  // 4000Mc: per CPU
      } else if (last == 'n' || !several) {
        o.emplace_back("mem", last == 'n' ? m.substr(0, m.size() - 1) : m);  // 8000Mn, or one node's all
      } else {
        try {
          const double per_node = std::ceil(parse_mebibytes(m) / static_cast<double>(k));
          o.emplace_back("mem", fmt::format("{}M", per_node));
        } catch (const std::invalid_argument& e) {
          throw LoadError(path, ln, "ReqMem", e.what());
        }
      }
    }
    if (const std::string c = get("Constraints"); !c.empty()) o.emplace_back("constraint", c);
    if (const std::string p = get("Partition"); !p.empty()) o.emplace_back("partition", p);
    // a recorded limit; UNLIMITED (as Partition_Limit) is the partition's, under which the job was accepted
    if (const std::string t = get("Timelimit");
        !t.empty() && t != "Partition_Limit" && t != "UNLIMITED" && t != "INFINITE")
      o.emplace_back("time", t);
    std::string gres;
    for (const std::string& item : fields_of(tres, ',')) {
      const size_t eq = item.find('=');
      if (item.rfind("gres/", 0) != 0 || eq == std::string::npos) continue;
      const std::string name = item.substr(5, eq - 5);
      std::string count = item.substr(eq + 1);
      // a typed count also appears untyped (gres/gpu=1 beside gres/gpu:a100=1): keep the typed one only
      if (name.find(':') == std::string::npos && tres.find("gres/" + name + ":") != std::string::npos) continue;
      // the job's whole count (a TRES), a node's share of it
      if (const unsigned long n = std::strtoul(count.c_str(), nullptr, 10); several && n > 0)
        count = std::to_string((n + k - 1) / k);
      gres += (gres.empty() ? "" : ",") + name + ":" + count;
    }
    if (!gres.empty()) o.emplace_back("gres", gres);
    if (std::isfinite(a.start) && std::isfinite(a.end) && a.start > 0 && a.end >= a.start) {
      q.runtime = a.end - a.start;
    } else {  // it never ran (cancelled while pending, or still pending): replayed as a job of no length
      q.runtime = 0;
      q.note = "not run in Slurm (" + (q.state.empty() ? std::string("no state") : q.state.substr(0, 40)) + ")";
    }
    out.push_back(std::move(a));
  }
  infer_dependencies(out);
  return out;
}

void infer_dependencies(std::vector<AccountedJob>& jobs) {
  // (more jobs than this ending in that second: no telling which it waited for, and the work per job stays
  // bounded whatever the log: two binary searches and at most this many looks)
  constexpr size_t kMaxInferredAfter = 64;
  std::vector<std::pair<double, size_t>> ends;  // (End, job) of the jobs that ran
  for (size_t i = 0; i < jobs.size(); ++i)
    if (std::isfinite(jobs[i].end) && jobs[i].end > 0 && jobs[i].job.note.empty()) ends.emplace_back(jobs[i].end, i);
  std::sort(ends.begin(), ends.end());
  for (size_t i = 0; i < jobs.size(); ++i) {
    QueuedJob& q = jobs[i].job;
    if (!(q.eligible > q.submit)) continue;
    // (whole seconds: the pass that finds a dependency satisfied runs at its end, or in the second after)
    const auto from = std::lower_bound(ends.begin(), ends.end(), std::make_pair(q.eligible - 1, size_t{0}));
    const auto to = std::upper_bound(from, ends.end(), std::make_pair(q.eligible, SIZE_MAX));
    if (to - from > static_cast<std::ptrdiff_t>(kMaxInferredAfter)) continue;  // too many to tell: until Eligible
    for (auto it = from; it != to; ++it) {
      const AccountedJob& p = jobs[it->second];
      if (it->second != i && p.job.submit <= q.submit && p.end > q.submit) q.after.push_back(p.job.id);
    }
  }
}

}  // namespace colmatch::loaders::slurm
