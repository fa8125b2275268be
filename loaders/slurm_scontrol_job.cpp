#include "loaders/slurm_scontrol_job.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"
#include "loaders/task_ranges.hpp"

namespace colmatch::loaders::slurm {
namespace {

// A value scontrol prints for nothing: empty, (null), N/A, None.
bool absent(const std::optional<std::string_view>& v) {
  return !v || v->empty() || *v == "(null)" || *v == "N/A" || *v == "None";
}

// A whole decimal number, or NaN.
double number(const std::optional<std::string_view>& v) {
  if (absent(v)) return std::nan("");
  double x = 0;
  const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), x);
  return ec == std::errc() && end == v->data() + v->size() ? x : std::nan("");
}

}  // namespace

bool is_scontrol_jobs(const std::string& path) {
  require_not_directory(path);
  LineReader in(path);
  for (std::string_view line; in.next(line);) {
    const size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) continue;
    return line.substr(b, 6) == "JobId=";
  }
  return false;
}

std::vector<QueuedJob> read_scontrol_jobs(const std::string& path, size_t& not_pending) {
  std::vector<QueuedJob> out;
  uint64_t tasks_in_all = 0;
  not_pending = 0;
  for (const Record& r : read_records(path, "JobId")) {
    QueuedJob q;
    q.id = r.get("JobId").value_or("");
    q.state = r.get("JobState").value_or("");
    if (q.state != "PENDING") {
      ++not_pending;
      continue;
    }
    auto text = [&](const char* key) {
      const auto v = r.get(key);
      return absent(v) ? std::string() : std::string(*v);
    };
    q.reason = text("Reason");
    q.user = text("UserId");
    if (const size_t p = q.user.find('('); p != std::string::npos) q.user.resize(p);  // root(0)
    q.account = text("Account");
    q.qos = text("QOS");
    q.priority = number(r.get("Priority"));
    if (std::isnan(q.priority)) q.priority = 0;
    try {
      q.submit = absent(r.get("SubmitTime")) ? 0 : parse_slurm_date(std::string(*r.get("SubmitTime")));
    } catch (const std::invalid_argument& e) {
      throw LoadError(path, r.line, "SubmitTime", e.what());
    }
    SbatchJob& job = q.request;
    job.line = r.line;
    auto& o = job.options;
    auto reject = [&](const std::string& why) {
      if (job.error.empty()) job.error = why;
    };
    const double nodes = absent(r.get("TRES")) ? std::nan("") : tres_count(std::string(*r.get("TRES")), "node");
    // -N 1 given shows as NumNodes=1-1 (a maximum), not NumNodes=1. NumTasks shows 1 without -n, and K for
    // -N K without -n: so one task a node is read as no -n (the two differ only in what a GRES job counts
    // on a node)
    const std::string num_nodes = text("NumNodes");
    // -N MIN-MAX shows as NumNodes=MIN-MAX (TRES node=MIN)
    const size_t dash = num_nodes.find('-');
    const double most = dash == std::string::npos ? std::nan("") : number(num_nodes.substr(dash + 1));
    if (!std::isnan(nodes) && most > nodes) o.emplace_back("nodes", fmt::format("{}-{}", nodes, most));
    else if (!std::isnan(nodes) && (nodes > 1 || (nodes == 1 && num_nodes == "1-1")))
      o.emplace_back("nodes", fmt::format("{}", nodes));
    const double tasks = number(r.get("NumTasks")), per_task = number(r.get("CPUs/Task"));
    if (!std::isnan(tasks) && tasks > 1 && !(tasks == nodes)) o.emplace_back("ntasks", fmt::format("{}", tasks));
    // NtasksPerN:B:S:C=2:0:*:* (--ntasks-per-node 2)
    if (const std::string n = text("NtasksPerN:B:S:C"); !n.empty()) {
      const double per_node = number(n.substr(0, n.find(':')));
      if (per_node >= 1) o.emplace_back("ntasks-per-node", fmt::format("{}", per_node));
    }
    if (!std::isnan(per_task) && per_task >= 1) o.emplace_back("cpus-per-task", fmt::format("{}", per_task));
    if (const std::string f = text("Features"); !f.empty()) o.emplace_back("constraint", f);
    if (const std::string f = text("Prefer"); !f.empty()) o.emplace_back("prefer", f);
    if (const std::string f = text("Partition"); !f.empty()) o.emplace_back("partition", f);
    for (const auto& [key, option] : {std::pair{"MinMemoryNode", "mem"}, std::pair{"MinMemoryCPU", "mem-per-cpu"}}) {
      const std::string m = text(key);
      if (m.empty()) continue;
      try {
        if (const double mib = parse_mebibytes(m); mib > 0) o.emplace_back(option, fmt::format("{}", mib));
      } catch (const std::invalid_argument& e) {
        reject(fmt::format("field '{}': {}", key, e.what()));
      }
    }
    if (const std::string g = text("TresPerNode"); !g.empty()) o.emplace_back("gres", gres_of_tres(g));
    if (const std::string g = text("TresPerJob"); !g.empty()) {
      if (const std::string gpus = gpus_of_tres(g); !gpus.empty()) o.emplace_back("gpus", gpus);
      else reject(fmt::format("field 'TresPerJob': '{}' is not read (only GPUs per job)", g));
    }
    // --cpus-per-gpu and --mem-per-gpu: CpusPerTres=gres:gpu:4, MemPerTres=gres:gpu:1000
    for (const auto& [key, option] :
         {std::pair{"CpusPerTres", "cpus-per-gpu"}, std::pair{"MemPerTres", "mem-per-gpu"}}) {
      const std::string g = text(key);
      if (g.empty()) continue;
      if (const std::string n = per_gpu_of_tres(g); !n.empty()) o.emplace_back(option, n);
      else reject(fmt::format("field '{}': '{}' is not read (only an amount per GPU)", key, g));
    }
    if (const std::string n = text("ReqNodeList"); !n.empty()) o.emplace_back("nodelist", n);
    if (const std::string n = text("ExcNodeList"); !n.empty()) o.emplace_back("exclude", n);
    if (const std::string t = text("TimeLimit"); !t.empty() && t != "UNLIMITED" && t != "Partition_Limit")
      o.emplace_back("time", t);
    if (text("OverSubscribe") == "NO") o.emplace_back("exclusive", "");
    const std::string array = text("ArrayTaskId");
    if (array.empty() || text("ArrayJobId").empty()) {
      out.push_back(std::move(q));
      continue;
    }
    try {
      q.tasks = expand_task_ranges(array, kMaxArrayTasks - tasks_in_all);
    } catch (const std::invalid_argument& e) {
      throw LoadError(
          path, r.line, "ArrayTaskId",
          fmt::format("job {}: {} (the file's arrays: at most {} tasks in all)", q.id, e.what(), kMaxArrayTasks));
    }
    tasks_in_all += q.tasks.size();
    q.id = text("ArrayJobId");  // the tasks are ARRAYJOB_TASK
    out.push_back(std::move(q));
  }
  return out;
}

}  // namespace colmatch::loaders::slurm
