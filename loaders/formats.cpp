#include "loaders/formats.hpp"

#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "loaders/dirac.hpp"
#include "loaders/errors.hpp"
#include "loaders/native.hpp"
#include "loaders/policy.hpp"
#include "loaders/sge.hpp"
#include "loaders/slurm.hpp"
#include "loaders/swf.hpp"
#include "loaders/traces.hpp"
#include "loaders/vov.hpp"

namespace colmatch::loaders {
namespace {

std::string arg(const FormatArgs& a, const std::string& name) {
  auto it = a.find(name);
  return it == a.end() ? std::string() : it->second;
}

NativePaths native_paths(const FormatArgs& a) {
  return {arg(a, "farm"), arg(a, "hosts"), arg(a, "taskers"), arg(a, "jobs")};
}

std::optional<int64_t> int_arg(const FormatArgs& a, const std::string& name) {
  const std::string v = arg(a, name);
  if (v.empty()) return std::nullopt;
  int64_t x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p != v.data() + v.size())
    throw LoadError("--" + name, 0, "", fmt::format("'{}' is not a whole number", v));
  return x;
}

std::vector<InputFormat> make_formats() {
  std::vector<InputFormat> f;
  f.push_back({"native",
               "colmatch's own format: farm.toml, taskers.jsonl, jobs.jsonl",
               {{"farm", "farm.toml (attribute catalog, policy, global values)"},
                {"hosts", "hosts.jsonl[.gz] (host-level fixed and load values)", false},
                {"taskers", "taskers.jsonl[.gz]"},
                {"jobs", "jobs.jsonl[.gz]"}},
               [](const FormatArgs& a, const ProgressFn& p, LoadMode) {
                 return load_native(native_paths(a), p, arg(a, "policy"));
               },
               [](const FormatArgs& a, std::string_view id, const ProgressFn& p) {
                 return load_native_job(native_paths(a), id, p);
               }});
  f.push_back(
      {"google2011",
       "Google cluster-data 2011: machine and task events",
       {{"machines", "machine_events CSV[.gz]"},
        {"tasks", "task_events CSV[.gz]"},
        {"at",
         "machine state at this time in microseconds (simulate: machine events up to it); default: last task event",
         false}},
       [](const FormatArgs& a, const ProgressFn& p, LoadMode mode) {
         return load_google2011(arg(a, "machines"), arg(a, "tasks"), int_arg(a, "at"), p, mode);
       }});
  f.push_back({"openb",
               "Alibaba OpenB GPU cluster trace 2023: node and pod lists",
               {{"nodes", "node list CSV"}, {"pods", "pod list CSV"}},
               [](const FormatArgs& a, const ProgressFn& p, LoadMode) {
                 return load_openb(arg(a, "nodes"), arg(a, "pods"), p);
               }});
  f.push_back(
      {"dirac",
       "DIRAC: resource tree (Sites -> CEs -> Queues) and JDL job descriptions",
       {{"resources", "resource tree: JSON (Sites -> CEs -> Queues) or the Resources section as DIRAC CFG text"},
        {"jdl", "JDL job descriptions"}},
       [](const FormatArgs& a, const ProgressFn& p, LoadMode) {
         return load_dirac(arg(a, "resources"), arg(a, "jdl"), p);
       }});
  f.push_back({"vov",
               "Altair Accelerator: taskers.tcl and resources.tcl (a Tcl subset), jobs.jsonl with resource lists",
               {{"taskers", "vtk_tasker_define lines (Tcl subset)"},
                {"resources", "resources.tcl: vtk_resourcemap_set / vovresourcemgr set lines", false},
                {"jobs", "jobs.jsonl: id, resources, command, owner, group, priority, expected_duration"}},
               [](const FormatArgs& a, const ProgressFn& p, LoadMode) {
                 // `$` resources, wrappers and tasker symbols: the policy's [policy.vov] (--policy)
                 const std::string policy = arg(a, "policy");
                 return load_vov(arg(a, "taskers"), arg(a, "resources"), arg(a, "jobs"), p,
                                 policy.empty() ? VovOptions{} : read_vov_policy_toml(policy));
               }});
  f.push_back({"swf",
               "Standard Workload Format (Parallel Workloads Archive): one node per MaxNodes, slots per node",
               {{"log", "SWF log, plain or .gz"},
                {"machines",
                 "CERIT-SC machines file (cluster nodes ppn ... memory per line); with it the PBS node request "
                 "after the 18 fields is read",
                 false}},
               [](const FormatArgs& a, const ProgressFn& p, LoadMode) {
                 return load_swf(arg(a, "log"), p, arg(a, "machines"));
               }});
  f.push_back(
      {"sge",
       "Grid Engine: what qconf and qstat print on the master (tools/sge-dump.sh), and its accounting file",
       {{"dump", "folder written by tools/sge-dump.sh (qconf-sc.txt, qconf-se.txt, qconf-sq.txt, ...)"},
        {"jobs",
         "qsub options, one job a line (-l, -q, -pe, -hard, -soft, -p, -P, -h, -w): jobs instead of the dump's pending "
         "ones",
         false},
        {"accounting",
         "accounting file (accounting(5)): its jobs instead of --jobs or the dump's, each at its submission time",
         false}},
       [](const FormatArgs& a, const ProgressFn& p, LoadMode mode) {
         return load_sge(arg(a, "dump"), arg(a, "accounting"), p, mode, arg(a, "jobs"));
       }});
  f.push_back(
      {"slurm",
       "Slurm: what scontrol prints on a login node (tools/slurm-dump.sh), and jobs as sbatch options",
       {{"dump", "folder written by tools/slurm-dump.sh (scontrol-node.txt, scontrol-partition.txt)"},
        {"jobs", "sbatch options, one job a line (#SBATCH lines of one script together), or scontrol show job -o",
         false},
        {"accounting", "sacct -a -P output: its jobs instead of --jobs or the dump's, each at its Submit", false}},
       [](const FormatArgs& a, const ProgressFn& p, LoadMode mode) {
         return load_slurm(arg(a, "dump"), arg(a, "jobs"), arg(a, "accounting"), p, mode);
       }});
  f.back().not_importable =
      "a native farm cannot hold Slurm's main pass (partitions as queues that block, consecutive best fit, "
      "--mem-per-cpu limits) nor its scheduler's settings, so it would place the jobs differently; match or "
      "simulate the dump itself";
  return f;
}

}  // namespace

const std::vector<InputFormat>& input_formats() {
  static const std::vector<InputFormat> formats = make_formats();
  return formats;
}

const InputFormat* find_format(const std::string& name) {
  for (const auto& f : input_formats())
    if (f.name == name) return &f;
  return nullptr;
}

std::string foreign_option(const InputFormat& format, const FormatArgs& args) {
  for (const auto& [name, value] : args) {
    bool known = name == "policy";
    for (const auto& o : format.options) known = known || o.name == name;
    if (!known) return name;
  }
  return {};
}

std::string option_list(const InputFormat& format, bool dashes) {
  std::string list;
  for (const auto& o : format.options) list += (list.empty() ? "" : ", ") + std::string(dashes ? "--" : "") + o.name;
  return list;
}

namespace {
void require_options(const InputFormat& format, const FormatArgs& args) {
  // an option of another format is a mistake, not a default: `--format sge --jobs x` read no jobs from x
  if (const std::string name = foreign_option(format, args); !name.empty())
    throw LoadError("--" + name, 0, "",
                    fmt::format("is not an option of --format {} (its options: {})", format.name, option_list(format)));
  for (const auto& o : format.options)
    if (o.required && arg(args, o.name).empty())
      throw LoadError("--" + o.name, 0, "", fmt::format("is required with --format {}", format.name));
}
}  // namespace

Dataset load_format(const InputFormat& format, const FormatArgs& args, const ProgressFn& progress, LoadMode mode) {
  require_options(format, args);
  const ProgressScope scope(progress);  // every reader of the format reports, those not given it too
  return format.load(args, progress, mode);
}

std::optional<Dataset> load_format_job(const InputFormat& format, const FormatArgs& args, std::string_view id,
                                       const ProgressFn& progress) {
  if (!format.load_job) return std::nullopt;
  require_options(format, args);
  const ProgressScope scope(progress);
  return format.load_job(args, id, progress);
}

}  // namespace colmatch::loaders
