#include "loaders/slurm_squeue.hpp"

#include <cmath>

#include <fmt/format.h>
#include <simdjson.h>

#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"
#include "loaders/task_ranges.hpp"

namespace colmatch::loaders::slurm {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// Slurm 23.02 and later (data_parser v0.0.39+) print a number that may be unset or unlimited as an object
// {"set": bool, "infinite": bool, "number": N}. Unset and unlimited are both "not given" here (an unlimited
// time limit is the partition's), as 22.05's null and its absent keys are.
bool unwrap_number(element& v) {
  if (!v.is_object()) return true;
  element set, infinite, number;
  if (v["number"].get(number)) return false;
  if (!v["set"].get(set) && set.is_bool() && !bool(set.get_bool().value_unsafe())) return false;
  if (!v["infinite"].get(infinite) && infinite.is_bool() && bool(infinite.get_bool().value_unsafe())) return false;
  v = number;
  return true;
}

std::string text_of(element v) {
  if (!unwrap_number(v)) return {};
  switch (v.type()) {
    case element_type::STRING: return std::string(std::string_view(v.get_string().value_unsafe()));
    case element_type::INT64: return fmt::format("{}", int64_t(v.get_int64().value_unsafe()));
    case element_type::UINT64: return fmt::format("{}", uint64_t(v.get_uint64().value_unsafe()));
    case element_type::DOUBLE: return fmt::format("{}", double(v.get_double().value_unsafe()));
    case element_type::BOOL: return v.get_bool().value_unsafe() ? "true" : "false";
    case element_type::ARRAY: {  // 23.02+: flag lists (`shared`: ["none"]); joined as 22.05 would print one
      std::string out;
      simdjson::dom::array list;
      if (v.get_array().get(list)) return {};
      for (element e : list) {
        if (!out.empty()) out += ',';
        out += text_of(e);
      }
      return out;
    }
    default: return {};
  }
}

double number_of(element v) {
  if (!unwrap_number(v)) return std::nan("");
  switch (v.type()) {
    case element_type::INT64: return static_cast<double>(int64_t(v.get_int64().value_unsafe()));
    case element_type::UINT64: return static_cast<double>(uint64_t(v.get_uint64().value_unsafe()));
    case element_type::DOUBLE: return v.get_double().value_unsafe();
    default: return std::nan("");
  }
}

// job_state: 22.05 prints the state ("PENDING"); 23.11 and later a list of the state and its flags
// (["PENDING", "REQUEUED"]). The base state is the one of Slurm's job_state_string() names.
std::string state_of(element v) {
  if (!v.is_array()) return text_of(v);
  static constexpr std::string_view kBase[] = {"PENDING",   "RUNNING",   "SUSPENDED", "COMPLETED",
                                               "CANCELLED", "FAILED",    "TIMEOUT",   "NODE_FAIL",
                                               "PREEMPTED", "BOOT_FAIL", "DEADLINE",  "OUT_OF_MEMORY"};
  std::string first;
  simdjson::dom::array list;
  if (v.get_array().get(list)) return {};
  for (element e : list) {
    const std::string s = text_of(e);
    for (std::string_view b : kBase)
      if (s == b) return s;
    if (first.empty()) first = s;
  }
  return first;
}

}  // namespace

std::vector<QueuedJob> read_squeue_json(const std::string& path, size_t& not_pending) {
  require_not_directory(path);
  std::string text;  // plain or gzip (LineReader), lines bounded
  {
    LineReader in(path);
    for (std::string_view line; in.next(line);) text.append(line).push_back('\n');
  }
  const simdjson::padded_string json(text);
  simdjson::dom::parser parser;
  element doc;
  if (auto err = parser.parse(json).get(doc))
    throw LoadError(path, 0, "", std::string("malformed JSON: ") + simdjson::error_message(err));
  simdjson::dom::array jobs;
  if (doc["jobs"].get_array().get(jobs)) throw LoadError(path, 0, "jobs", "expected a list of jobs");
  std::vector<QueuedJob> out;
  not_pending = 0;
  size_t index = 0;
  uint64_t tasks_in_all = 0;
  for (element j : jobs) {
    ++index;
    element v;
    if (j["job_id"].get(v)) throw LoadError(path, 0, fmt::format("jobs[{}].job_id", index - 1), "missing");
    QueuedJob q;
    q.id = text_of(v);
    if (q.id.empty() || !(v.is_string() || v.is_number()))
      throw LoadError(path, 0, fmt::format("jobs[{}].job_id", index - 1),
                      fmt::format("'{}' is not a job id (a number or a string)", simdjson::minify(v).substr(0, 80)));
    auto str = [&](const char* key) { return j[key].get(v) ? std::string() : text_of(v); };
    auto num = [&](const char* key) { return j[key].get(v) ? std::nan("") : number_of(v); };
    q.state = j["job_state"].get(v) ? std::string() : state_of(v);
    if (q.state != "PENDING") {
      ++not_pending;
      continue;
    }
    q.reason = str("state_reason");
    q.user = str("user_name");
    q.account = str("account");
    q.qos = str("qos");
    // not given: 0; given and not a number (a submit time "yesterday"): an error, not the epoch
    for (auto [key, to] : {std::pair{"priority", &q.priority}, {"submit_time", &q.submit}}) {
      *to = 0;
      if (j[key].get(v) || v.is_null() || !unwrap_number(v)) continue;
      *to = number_of(v);
      if (!std::isfinite(*to) || *to < 0)
        throw LoadError(path, 0, fmt::format("jobs[{}].{}", index - 1, key),
                        fmt::format("job {}: '{}' is not a number", q.id, simdjson::minify(v).substr(0, 80)));
    }
    auto& o = q.request.options;
    q.request.line = index;
    // the nodes asked for: tres_req_str's node=K (node_count is Slurm's estimate for a pending job: 2 for
    // `-n 4 -c 2`, 4 for `-N 3 -n 3 -c 4`)
    double nodes = tres_count(str("tres_req_str"), "node");
    if (std::isnan(nodes)) nodes = num("node_count");
    const double cpus = num("cpus"), tasks = num("tasks");
    // -N 1 given shows as max_nodes 1 (0 without -N). tasks shows 1 without -n, and K for -N K without -n:
    // so one task a node is read as no -n (the two differ only in what a GRES job counts on a node)
    // -N MIN-MAX shows as max_nodes MAX beside node=MIN, and cpus as one node's (minimum_cpus_per_node)
    const double most = num("max_nodes");
    const bool range = !std::isnan(nodes) && most > nodes;
    if (range) o.emplace_back("nodes", fmt::format("{}-{}", nodes, most));
    else if (!std::isnan(nodes) && (nodes > 1 || (nodes == 1 && most == 1)))
      o.emplace_back("nodes", fmt::format("{}", nodes));
    const double per_task = range && tasks == nodes                                 ? num("minimum_cpus_per_node")
                            : !std::isnan(cpus) && !std::isnan(tasks) && tasks >= 1 ? cpus / tasks
                                                                                    : std::nan("");
    if (!std::isnan(tasks) && tasks > 1 && !(tasks == nodes)) o.emplace_back("ntasks", fmt::format("{}", tasks));
    if (const double per_node = num("tasks_per_node"); per_node >= 1)
      o.emplace_back("ntasks-per-node", fmt::format("{}", per_node));
    if (!std::isnan(per_task) && per_task >= 1 && per_task == std::floor(per_task))
      o.emplace_back("cpus-per-task", fmt::format("{}", per_task));
    if (const std::string f = str("features"); !f.empty()) o.emplace_back("constraint", f);
    if (const std::string f = str("prefer"); !f.empty()) o.emplace_back("prefer", f);
    if (const std::string f = str("partition"); !f.empty()) o.emplace_back("partition", f);
    if (const double m = num("memory_per_node"); !std::isnan(m) && m > 0) o.emplace_back("mem", fmt::format("{}", m));
    if (const double m = num("memory_per_cpu"); !std::isnan(m) && m > 0)
      o.emplace_back("mem-per-cpu", fmt::format("{}", m));
    if (const std::string g = str("tres_per_node"); !g.empty()) o.emplace_back("gres", gres_of_tres(g));
    if (const std::string g = str("tres_per_job"); !g.empty()) {  // --gpus: GPUs for the whole job
      if (const std::string gpus = gpus_of_tres(g); !gpus.empty()) o.emplace_back("gpus", gpus);
      else if (q.request.error.empty())
        q.request.error = fmt::format("field 'tres_per_job': '{}' is not read (only GPUs per job)", g);
    }
    // --cpus-per-gpu and --mem-per-gpu: "gres:gpu:4"
    for (const auto& [key, option] :
         {std::pair{"cpus_per_tres", "cpus-per-gpu"}, std::pair{"memory_per_tres", "mem-per-gpu"}}) {
      const std::string g = str(key);
      if (g.empty()) continue;
      if (const std::string n = per_gpu_of_tres(g); !n.empty()) o.emplace_back(option, n);
      else if (q.request.error.empty())
        q.request.error = fmt::format("field '{}': '{}' is not read (only an amount per GPU)", key, g);
    }
    if (const std::string n = str("required_nodes"); !n.empty()) o.emplace_back("nodelist", n);
    if (const std::string n = str("excluded_nodes"); !n.empty()) o.emplace_back("exclude", n);
    if (const double t = num("time_limit"); !std::isnan(t) && t > 0) o.emplace_back("time", fmt::format("{}", t));
    if (str("shared") == "none") o.emplace_back("exclusive", "");
    const std::string array = str("array_task_string");
    if (array.empty()) {
      out.push_back(std::move(q));
      continue;
    }
    try {
      q.tasks = expand_task_ranges(array, kMaxArrayTasks - tasks_in_all);
    } catch (const std::invalid_argument& e) {
      throw LoadError(
          path, 0, fmt::format("jobs[{}].array_task_string", index - 1),
          fmt::format("job {}: {} (the file's arrays: at most {} tasks in all)", q.id, e.what(), kMaxArrayTasks));
    }
    tasks_in_all += q.tasks.size();
    out.push_back(std::move(q));
  }
  return out;
}

}  // namespace colmatch::loaders::slurm
