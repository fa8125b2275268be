// colmatch: the command-line interface. Subcommands:
//   match     load a farm and its jobs, match, write results.csv / categories.csv / summary.json
//   import    load a farm (any format) and save it in the native format
//   generate  write a seeded synthetic farm in the native format
// Exit status: 0 success; 1 fatal error (bad input file, I/O), no output written; 2 the run completed
// but some jobs were rejected for invalid requests (listed on stderr and in results.csv).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <tbb/global_control.h>

#include "datasets/synth/synthetic.hpp"
#include "engine/matcher.hpp"
#include "loaders/dirac.hpp"
#include "loaders/errors.hpp"
#include "loaders/native.hpp"
#include "loaders/results.hpp"
#include "loaders/traces.hpp"

using namespace colmatch;

namespace {

struct Inputs {
  std::string format = "native";
  std::string farm, hosts, taskers, jobs;     // native
  std::string machines, tasks;                // google2011
  std::optional<int64_t> at_us;
  std::string nodes, pods;                    // openb
  std::string resources, jdl;                 // dirac
};

void add_input_options(CLI::App* cmd, Inputs& in) {
  cmd->add_option("--format", in.format, "Input format")
      ->check(CLI::IsMember({"native", "google2011", "openb", "dirac"}))
      ->capture_default_str();
  cmd->add_option("--farm", in.farm, "native: farm.toml (attribute catalog, policy)");
  cmd->add_option("--hosts", in.hosts, "native: hosts.jsonl[.gz] (optional: host-level fixed and load values)");
  cmd->add_option("--taskers", in.taskers, "native: taskers.jsonl[.gz]");
  cmd->add_option("--jobs", in.jobs, "native: jobs.jsonl[.gz]");
  cmd->add_option("--machines", in.machines, "google2011: machine_events CSV[.gz]");
  cmd->add_option("--tasks", in.tasks, "google2011: task_events CSV[.gz]");
  cmd->add_option("--at", in.at_us, "google2011: machine state at this time in microseconds (default: last task event)");
  cmd->add_option("--nodes", in.nodes, "openb: node list CSV");
  cmd->add_option("--pods", in.pods, "openb: pod list CSV");
  cmd->add_option("--resources", in.resources, "dirac: resource tree JSON (Sites -> CEs -> Queues)");
  cmd->add_option("--jdl", in.jdl, "dirac: JDL job descriptions");
}

loaders::ProgressFn progress_fn() {
  if (!isatty(STDERR_FILENO)) return {};
  return [last = std::chrono::steady_clock::time_point{}](const std::string& path, uint64_t, uint64_t bytes) mutable {
    const auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::milliseconds(200)) return;
    last = now;
    std::fprintf(stderr, "\rloading %s: %.1f MB", path.c_str(), static_cast<double>(bytes) / 1e6);
    std::fflush(stderr);
  };
}

void require(const std::string& v, const char* opt, const std::string& format) {
  if (v.empty()) throw CLI::ValidationError(opt, fmt::format("is required with --format {}", format));
}

loaders::Dataset load(const Inputs& in) {
  const auto progress = progress_fn();
  loaders::Dataset ds;
  if (in.format == "native") {
    require(in.farm, "--farm", in.format);
    require(in.taskers, "--taskers", in.format);
    require(in.jobs, "--jobs", in.format);
    loaders::read_farm_toml(in.farm, ds);
    loaders::read_taskers_jsonl(in.taskers, ds, progress, in.hosts);
    loaders::read_jobs_jsonl(in.jobs, ds, progress);
  } else if (in.format == "google2011") {
    require(in.machines, "--machines", in.format);
    require(in.tasks, "--tasks", in.format);
    ds = loaders::load_google2011(in.machines, in.tasks, in.at_us, progress);
  } else if (in.format == "dirac") {
    require(in.resources, "--resources", in.format);
    require(in.jdl, "--jdl", in.format);
    ds = loaders::load_dirac(in.resources, in.jdl, progress);
  } else {
    require(in.nodes, "--nodes", in.format);
    require(in.pods, "--pods", in.format);
    ds = loaders::load_openb(in.nodes, in.pods, progress);
  }
  if (progress) std::fprintf(stderr, "\r\033[K");
  return ds;
}

void save_native(const std::string& dir, const loaders::Dataset& ds) {
  std::filesystem::create_directories(dir);
  loaders::write_farm_toml(dir + "/farm.toml", ds);
  loaders::write_taskers_jsonl(dir + "/taskers.jsonl", ds);
  if (loaders::write_hosts_jsonl(dir + "/hosts.jsonl", ds))
    std::printf("hosts with values of their own: %s/hosts.jsonl (pass it with --hosts)\n", dir.c_str());
  loaders::write_jobs_jsonl(dir + "/jobs.jsonl", ds);
}

int report_rejections(const loaders::Dataset& ds) {
  if (ds.job_errors.empty()) return 0;
  const size_t shown = std::min<size_t>(ds.job_errors.size(), 20);
  for (size_t i = 0; i < shown; ++i) std::fprintf(stderr, "colmatch: rejected: %s\n", ds.job_errors[i].c_str());
  if (ds.job_errors.size() > shown)
    std::fprintf(stderr, "colmatch: ... and %zu more rejected jobs (see results.csv)\n", ds.job_errors.size() - shown);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"colmatch: columnar matching of batch jobs to taskers (Grid Engine, DIRAC, Altair Accelerator, Moab semantics)"};
  app.require_subcommand(1);
  app.footer(R"(Examples:
  colmatch match --farm farm.toml --taskers taskers.jsonl --jobs jobs.jsonl.gz --out out/
  colmatch match --format google2011 --machines machine_events.csv.gz --tasks task_events.csv.gz --out out/ --threads 2
  colmatch match --format openb --nodes openb_node_list_all_node.csv --pods openb_pod_list_default.csv --out out/
  colmatch match --format dirac --resources resources.json --jdl jobs.jdl --out out/
  colmatch import --format openb --nodes nodes.csv --pods pods.csv --save native/
  colmatch generate --taskers 10000 --jobs 20000 --categories 1000 --seed 42 --save synth/

Exit status: 0 success; 1 fatal error (no output written); 2 completed, some jobs rejected for bad requests.)");

  Inputs in;
  std::string out_dir, save_dir;
  unsigned threads = 0;
  std::string isa;

  auto* match = app.add_subcommand("match", "Match jobs to taskers and write results.csv, categories.csv, summary.json");
  add_input_options(match, in);
  match->add_option("--out", out_dir, "Output folder")->required();
  match->add_option("--threads", threads, "Worker threads (default: all cores)");
  bool pools = false;
  match->add_flag("--pools", pools, "Also write pools.csv: DIRAC submit pools with their eligible taskers (default with --format dirac)");
  match->add_option("--isa", isa, "Force an instruction set: scalar, sse2, avx2, avx512 (default: best available)");

  auto* import = app.add_subcommand("import", "Load any supported format and save it in the native format");
  add_input_options(import, in);
  import->add_option("--save", save_dir, "Folder for farm.toml, taskers.jsonl, jobs.jsonl")->required();

  synth::SynthSpec spec;
  auto* gen = app.add_subcommand("generate", "Write a seeded synthetic farm in the native format");
  gen->add_option("--taskers", spec.taskers, "Number of taskers")->capture_default_str();
  gen->add_option("--jobs", spec.jobs, "Number of jobs")->capture_default_str();
  gen->add_option("--categories", spec.categories, "Number of request templates")->capture_default_str();
  gen->add_option("--seed", spec.seed, "Random seed")->capture_default_str();
  gen->add_option("--save", save_dir, "Output folder")->required();

  CLI11_PARSE(app, argc, argv);

  try {
    if (*gen) {
      save_native(save_dir, synth::generate(spec));
      std::printf("wrote %s/{farm.toml,taskers.jsonl,jobs.jsonl}\n", save_dir.c_str());
      return 0;
    }
    if (*import) {
      auto ds = load(in);
      save_native(save_dir, ds);
      std::printf("imported %zu taskers, %zu jobs into %s\n", ds.taskers.size(), ds.jobs.size(), save_dir.c_str());
      return report_rejections(ds);
    }
    // match
    if (!isa.empty()) {
      kernels::Isa want;
      if (!kernels::parse_isa(isa, want)) throw CLI::ValidationError("--isa", "unknown instruction set " + isa);
      setenv("COLMATCH_ISA", isa.c_str(), 1);
    }
    const unsigned n = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, n);
    const auto t0 = std::chrono::steady_clock::now();
    auto ds = load(in);
    loaders::RunInfo info;
    info.format = in.format;
    info.threads = n;
    info.pools = pools || in.format == "dirac";
    info.load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs);
    loaders::write_results(out_dir, ds, m, info);
    std::fputs(loaders::summary_json(ds, m, info).c_str(), stdout);
    return report_rejections(ds);
  } catch (const CLI::Error& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "colmatch: error: %s\n", e.what());
    return 1;
  }
}
