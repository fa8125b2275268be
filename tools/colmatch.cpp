// colmatch: the command-line interface. Subcommands:
//   match     load a farm and its jobs, match, write results.csv / categories.csv / summary.json
//   import    load a farm (any format) and save it in the native format
//   generate  write a seeded synthetic farm in the native format
//   report    report.html with figures from a match, simulate or sweep output folder (tools/report.py)
//   sweep     a grid of simulate (or match) runs on Dask distributed, one row per point (tools/sweep.py)
//   formats   the input formats and their options, from the registry (--markdown: the block docs/formats/ holds)
// Exit status: 0 success; 1 fatal error (bad input file, I/O), no output written; 2 the run completed
// but some jobs were rejected for invalid requests (listed on stderr and in results.csv).
#include <malloc.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <tbb/global_control.h>
#include <CLI/CLI.hpp>

#include "datasets/synth/synthetic.hpp"
#include "engine/batch/matcher.hpp"
#include "loaders/errors.hpp"
#include "loaders/formats.hpp"
#include "loaders/policy.hpp"
#include "loaders/writers/explain.hpp"
#include "loaders/writers/native_writer.hpp"
#include "loaders/writers/results.hpp"
#include "loaders/writers/simulation_writer.hpp"

using namespace colmatch;

namespace {

// Transparent huge pages for the heap. A run's loading and scheduling loop touch every page of their
// growing columns once, and a page fault is dear (several microseconds on the virtual machines measured
// here: a third of RICC's load). glibc maps its heap with huge pages when asked by the tunable
// glibc.malloc.hugetlb=1 (it then madvises MADV_HUGEPAGE what it maps), which the kernel honours when
// /sys/kernel/mm/transparent_hugepage/enabled is "madvise" (Debian's default; "always" needs no asking,
// "never" refuses). Tunables are read only as a process starts, so the CLI starts itself again with the
// tunable added (one exec, a few milliseconds) when the kernel says "madvise" and GLIBC_TUNABLES does not
// name the tunable already. COLMATCH_HUGEPAGES=0 keeps the process as it was started. RICC's EASY replay:
// page faults 29,000 -> 1,600, load 0.47 -> 0.28 s (BENCHMARKS.md).
constexpr const char* kHugetlb = "glibc.malloc.hugetlb";

// The kernel's transparent huge page mode: "always", "madvise", "never", or "" when it does not say.
std::string thp_mode() {
  std::FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (f == nullptr) return "";
  char line[128] = {0};
  const bool read = std::fgets(line, sizeof line, f) != nullptr;
  std::fclose(f);
  if (!read) return "";
  for (const char* mode : {"always", "madvise", "never"})
    if (std::strstr(line, fmt::format("[{}]", mode).c_str()) != nullptr) return mode;
  return "";
}

void restart_with_huge_pages(char** argv) {
  constexpr const char* kRestarted = "COLMATCH_HUGEPAGES_RESTARTED";
  if (std::getenv(kRestarted) != nullptr) {  // the second start: whatever glibc made of the tunable stands
    unsetenv(kRestarted);
    return;
  }
  if (const char* opt = std::getenv("COLMATCH_HUGEPAGES"); opt != nullptr && std::strcmp(opt, "0") == 0) return;
  const char* set = std::getenv("GLIBC_TUNABLES");
  const std::string tunables = set != nullptr ? set : "";
  if (tunables.find(kHugetlb) != std::string::npos || thp_mode() != "madvise") return;
  const std::string with = (tunables.empty() ? "" : tunables + ":") + kHugetlb + "=1";
  setenv("GLIBC_TUNABLES", with.c_str(), 1);
  setenv(kRestarted, "1", 1);
  // Exec the file /proc/self/exe points to, not the link itself: the kernel names a process after the last
  // part of the path it was exec'd by, and "exe" would hide colmatch from ps, top, pkill and the sweep's
  // test that kills a worker's run. The link is the fallback when the file has gone (replaced mid-run).
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) execv(self.c_str(), argv);
  execv("/proc/self/exe", argv);
  // the exec failed: go on as started, the environment as it was
  if (set != nullptr) setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
  else unsetenv("GLIBC_TUNABLES");
  unsetenv(kRestarted);
}

// Whether this process's heap gets transparent huge pages: the kernel gives them to every mapping
// ("always"), or to glibc's when the tunable asks for them (=1) and the kernel's mode is "madvise". (=2,
// hugetlbfs pages, depends on pages reserved beforehand: not counted.)
bool heap_huge_pages() {
  const std::string mode = thp_mode();
  if (mode == "always") return true;
  const char* set = std::getenv("GLIBC_TUNABLES");
  if (set == nullptr || mode != "madvise") return false;
  const std::string tunables = set;
  const size_t at = tunables.find(std::string(kHugetlb) + "=");
  return at != std::string::npos && tunables.c_str()[at + std::strlen(kHugetlb) + 1] == '1';
}

struct Inputs {
  std::string format = "native";
  loaders::FormatArgs args;  // option name -> value, for the chosen format
};

// Every option of every registered format, added once to `cmd` (formats share some, e.g. --resources).
void add_input_options(CLI::App* cmd, Inputs& in) {
  std::vector<std::string> names;
  for (const auto& f : loaders::input_formats()) names.push_back(f.name);
  cmd->add_option("--format", in.format, "Input format")->check(CLI::IsMember(names))->capture_default_str();
  std::map<std::string, std::string> help;  // option -> "format: help; format: help"
  std::vector<std::string> order;
  for (const auto& f : loaders::input_formats())
    for (const auto& o : f.options) {
      if (!help.count(o.name)) order.push_back(o.name);
      auto& h = help[o.name];
      h += fmt::format("{}{}: {}{}", h.empty() ? "" : "; ", f.name, o.help, o.required ? "" : " (optional)");
    }
  for (const auto& name : order)
    cmd->add_option_function<std::string>(
        "--" + name, [&in, name](const std::string& v) { in.args[name] = v; }, help[name]);
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

// On a terminal: the simulated time reached, the jobs done and the rate, redrawn at most every 200 ms.
SimProgress simulate_progress_fn() {
  if (!isatty(STDERR_FILENO)) return {};
  const auto start = std::chrono::steady_clock::now();
  return [start, last = std::chrono::steady_clock::time_point{}](double t, uint64_t ended, uint64_t jobs) mutable {
    const auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::milliseconds(200) && ended < jobs) return;
    last = now;
    const double s = std::chrono::duration<double>(now - start).count();
    std::fprintf(stderr, "\r\033[Ksimulating: t = %.0f s, %llu / %llu jobs done (%.0f%%), %.0f jobs/s", t,
                 static_cast<unsigned long long>(ended), static_cast<unsigned long long>(jobs),
                 jobs ? 100.0 * static_cast<double>(ended) / static_cast<double>(jobs) : 100.0,
                 s > 0 ? static_cast<double>(ended) / s : 0.0);
    std::fflush(stderr);
  };
}

loaders::Dataset load(const Inputs& in, loaders::LoadMode mode = loaders::LoadMode::Snapshot) {
  const auto progress = progress_fn();
  const loaders::InputFormat* format = loaders::find_format(in.format);
  loaders::Dataset ds = loaders::load_format(*format, in.args, progress, mode);
  if (progress) std::fprintf(stderr, "\r\033[K");
  for (const std::string& w : ds.taskers.warnings) std::fprintf(stderr, "colmatch: warning: %s\n", w.c_str());
  return ds;
}

// Lists the rejected jobs' reasons on stderr (the first 20); returns the exit status: 2 if any.
int report_rejections(const loaders::Dataset& ds, const char* file = "results.csv") {
  const auto& why = ds.jobs.reject_reason;
  if (why.empty()) return 0;
  const size_t shown = std::min<size_t>(why.size(), 20);
  for (size_t i = 0; i < shown; ++i) std::fprintf(stderr, "colmatch: rejected: %s\n", why[i].c_str());
  if (why.size() > shown)
    std::fprintf(stderr, "colmatch: ... and %zu more rejected jobs (see %s)\n", why.size() - shown, file);
  return 2;
}

// A script of tools/ (report.py, sweep.py): beside the executable (the build copies it there), else in
// the source tree.
std::string tool_script(const std::string& name) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = self.parent_path() / name;
    if (std::filesystem::exists(beside, ec)) return beside.string();
  }
  return (std::filesystem::path(COLMATCH_TOOLS_DIR) / name).string();
}

// Runs a script of tools/ with `args` under $COLMATCH_PYTHON, else Debian's /usr/bin/python3 (the one
// that has python3-matplotlib, -pandas and -distributed), else python3 on PATH, with COLMATCH_CLI set to
// this executable (the sweep runs it for each point); returns only if it cannot be started.
int run_script(const std::string& name, const std::vector<std::string>& args) {
  const std::string script = tool_script(name);
  std::string python = "python3";
  if (const char* env = std::getenv("COLMATCH_PYTHON"); env != nullptr && *env) python = env;
  else if (::access("/usr/bin/python3", X_OK) == 0) python = "/usr/bin/python3";
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) ::setenv("COLMATCH_CLI", self.c_str(), 1);
  std::fflush(stdout);
  std::vector<const char*> argv = {python.c_str(), script.c_str()};
  for (const std::string& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  ::execvp(argv[0], const_cast<char* const*>(argv.data()));
  std::fprintf(stderr, "colmatch: error: cannot run %s %s: %s\n", python.c_str(), script.c_str(), std::strerror(errno));
  return 1;
}

// An option's value placeholder: `machines` -> `MACHINES`.
std::string upper_name(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// What the run is doing, for a message when memory runs out ("loading", "matching", ...).
const char* g_phase = "starting";

// The input files' total size in bytes (those that exist), for that message.
uint64_t input_bytes(const Inputs& in) {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& [name, path] : in.args) {
    const auto n = std::filesystem::file_size(path, ec);
    if (!ec) total += n;
  }
  return total;
}

// Every option of every subcommand, as parsed.
struct Options {
  Inputs in;
  std::string out_dir, save_dir, isa, policy_path;
  unsigned threads = 0;
  bool pools = false;
  std::string write = "all";  // simulate --write: all, schedule or metrics
  double until = std::numeric_limits<double>::infinity();
  std::string explain_job_id, explain_hash;
  bool explain_simulate = false, explain_eligibility = false;
  synth::SynthSpec spec;
  std::string report_dir;
  std::string sweep_spec, scheduler;
  bool scheduler_given = false;  // --scheduler "" is an address to refuse, not no address
  unsigned sweep_workers = 0;
  bool ship_inputs = false;
  std::string format_name;
  bool markdown = false;
};

unsigned thread_count(const Options& o) {
  return o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
}

// --isa, else COLMATCH_ISA, else the best instruction set the CPU has.
const kernels::KernelTable& kernel_table(const Options& o) {
  if (o.isa.empty()) return kernels::active();
  kernels::Isa want;
  if (!kernels::parse_isa(o.isa, want)) throw CLI::ValidationError("--isa", "unknown instruction set " + o.isa);
  return kernels::best_at_most(want);
}

// Simulates with --policy (else the input's own [policy]) up to --until; a policy the farm cannot take
// is a PolicyError naming the file it came from.
SimConfig policy_of(const Options& o, const loaders::Dataset& ds) {
  SimConfig policy = o.policy_path.empty() ? ds.policy : loaders::read_policy_toml(o.policy_path, ds.policy_defaults);
  policy.until = o.until;
  return policy;
}

SimResult simulate_with_policy(const Options& o, const loaders::Dataset& ds, const kernels::KernelTable& table,
                               const SimProgress& progress = {}, bool timeline = true) {
  SimConfig policy = policy_of(o, ds);
  policy.record_timeline = timeline;
  return simulate(ds.catalog, ds.taskers, ds.jobs, policy, table, ds.farm, progress);
}

// One format's synopsis and option table in Markdown, from the registry: the block each page of
// docs/formats/ carries between its `colmatch formats NAME --markdown` markers (tests/tools/test_docs.py
// checks that the pages hold exactly this).
std::string format_markdown(const loaders::InputFormat& f) {
  std::string synopsis =
      f.not_importable.empty() ? "colmatch match|simulate|explain|import" : "colmatch match|simulate|explain";
  if (f.name != "native") synopsis += " --format " + f.name;
  for (const auto& opt : f.options)
    synopsis += opt.required ? fmt::format(" --{} {}", opt.name, upper_name(opt.name))
                             : fmt::format(" [--{} {}]", opt.name, upper_name(opt.name));
  std::string out = fmt::format("{}\n\n```\n{} ...\n```\n\n| option | required | what it names |\n|---|---|---|\n",
                                f.description, synopsis);
  for (const auto& opt : f.options) {
    std::string help = opt.help;
    for (size_t i = 0; (i = help.find('|', i)) != std::string::npos; i += 2) help.replace(i, 1, "\\|");
    out += fmt::format("| `--{}` | {} | {} |\n", opt.name, opt.required ? "yes" : "no", help);
  }
  return out;
}

int cmd_formats(const std::string& name, bool markdown) {
  if (name.empty()) {
    for (const auto& f : loaders::input_formats()) std::printf("%-11s %s\n", f.name.c_str(), f.description.c_str());
    return 0;
  }
  const loaders::InputFormat* f = loaders::find_format(name);
  if (f == nullptr)
    throw CLI::ValidationError("formats", "no input format '" + name + "' (colmatch formats lists them)");
  if (markdown) {
    std::fputs(format_markdown(*f).c_str(), stdout);
    return 0;
  }
  std::printf("%s: %s\n", f->name.c_str(), f->description.c_str());
  for (const auto& opt : f->options)
    std::printf("  --%-12s %s%s\n", opt.name.c_str(), opt.help.c_str(), opt.required ? "" : " (optional)");
  return 0;
}

int cmd_generate(const Options& o) {
  g_phase = "generating";
  loaders::Dataset ds = synth::generate(o.spec);
  g_phase = "saving";
  writers::save_native(o.save_dir, ds);
  std::printf("wrote %s/{farm.toml,taskers.jsonl,jobs.jsonl}\n", o.save_dir.c_str());
  return 0;
}

int cmd_sweep(const Options& o) {
  std::vector<std::string> args = {o.sweep_spec, "--out", o.out_dir};
  if (o.scheduler_given) args.insert(args.end(), {"--scheduler", o.scheduler});
  if (o.sweep_workers) args.insert(args.end(), {"--workers", std::to_string(o.sweep_workers)});
  if (o.ship_inputs) args.push_back("--ship-inputs");
  return run_script("sweep.py", args);
}

// explain --eligibility: the job's category's eligibility alone. A format that can read one job's line
// (the native one: load_native_job) reads only that; another, or a job its scan does not find, is read
// whole.
int explain_eligibility(const Options& o) {
  if (o.explain_job_id.empty() || o.explain_simulate)
    throw CLI::ValidationError("explain", "--eligibility explains a job of the batch: give --job ID, not --simulate");
  g_phase = "loading";
  std::optional<loaders::Dataset> one =
      loaders::load_format_job(*loaders::find_format(o.in.format), o.in.args, o.explain_job_id, progress_fn());
  const loaders::Dataset ds = one ? std::move(*one) : load(o.in);
  uint32_t j = 0;
  while (j < ds.jobs.size() && ds.jobs.id[j] != o.explain_job_id) ++j;
  if (j == ds.jobs.size()) throw std::runtime_error("no job '" + o.explain_job_id + "' in the input");
  g_phase = "matching";
  MatchOutcome m;
  m.categories = categorize(ds.catalog, ds.jobs);
  m.eligible = compute_eligibility(ds.catalog, ds.taskers, ds.jobs, m.categories, kernels::active());
  g_phase = "explaining";
  std::fputs(writers::explain_job_eligibility(ds, m, j).c_str(), stdout);
  return 0;
}

int cmd_explain(const Options& o) {
  if (o.explain_job_id.empty() == o.explain_hash.empty())
    throw CLI::ValidationError("explain", "give --job ID or --category HASH");
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, thread_count(o));
  if (o.explain_eligibility) return explain_eligibility(o);
  g_phase = "loading";
  auto ds = load(o.in, o.explain_simulate ? loaders::LoadMode::OverTime : loaders::LoadMode::Snapshot);
  g_phase = "matching";
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, &ds.in_use, ds.dispatch);
  g_phase = "explaining";
  if (o.explain_simulate) {
    if (o.explain_job_id.empty()) throw CLI::ValidationError("explain", "--simulate explains a job: give --job ID");
    uint32_t j = 0;
    while (j < ds.jobs.size() && ds.jobs.id[j] != o.explain_job_id) ++j;
    if (j == ds.jobs.size()) throw std::runtime_error("no job '" + o.explain_job_id + "' in the input");
    const SimConfig policy = policy_of(o, ds);
    const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, policy, kernels::active(), ds.farm);
    std::fputs(writers::explain_simulated_job(ds, r, m, j, policy).c_str(), stdout);
    return 0;
  }
  if (!o.explain_job_id.empty()) {
    for (uint32_t j = 0; j < ds.jobs.size(); ++j)
      if (ds.jobs.id[j] == o.explain_job_id) {
        std::fputs(writers::explain_job(ds, m, j).c_str(), stdout);
        return 0;
      }
    throw std::runtime_error("no job '" + o.explain_job_id + "' in the input");
  }
  for (size_t c = 0; c < m.categories.size(); ++c)
    if (fmt::format("{:016x}", m.categories.hash[c]) == o.explain_hash) {
      std::fputs(writers::explain_category(ds, m, c).c_str(), stdout);
      return 0;
    }
  throw std::runtime_error("no category '" + o.explain_hash + "' in the input (see categories.csv)");
}

int cmd_import(const Options& o) {
  if (const auto* f = loaders::find_format(o.in.format); f && !f->not_importable.empty())
    throw std::runtime_error(fmt::format("import --format {}: {}", f->name, f->not_importable));
  g_phase = "loading";
  auto ds = load(o.in);
  g_phase = "saving";
  if (const std::string why = writers::native_cannot_hold(ds); !why.empty())
    throw std::runtime_error(fmt::format("import --format {}: {}", o.in.format, why));
  if (!ds.in_use.empty())  // the native format has no running jobs: what they hold is not saved
    std::fprintf(stderr,
                 "colmatch: warning: the capacity the input's running jobs hold is not saved: the native farm is "
                 "the configured one (dump without jobs, or match the dump itself, to see them)\n");
  if (writers::save_native(o.save_dir, ds))
    std::printf("hosts with values of their own: %s/hosts.jsonl (pass it with --hosts)\n", o.save_dir.c_str());
  std::printf("imported %zu taskers, %zu jobs into %s\n", ds.taskers.size(), ds.jobs.size(), o.save_dir.c_str());
  return report_rejections(ds, "jobs.jsonl");
}

int cmd_simulate(const Options& o) {
  const kernels::KernelTable& table = kernel_table(o);
  const unsigned n = thread_count(o);
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, n);
  const auto t0 = std::chrono::steady_clock::now();
  g_phase = "loading";
  auto ds = load(o.in, loaders::LoadMode::OverTime);
  writers::SimRunInfo info;
  info.format = o.in.format;
  info.threads = n;
  info.isa = table.isa;
  info.huge_pages = heap_huge_pages();
  info.load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto t1 = std::chrono::steady_clock::now();
  const SimProgress progress = simulate_progress_fn();
  g_phase = "simulating";
  const writers::SimOutputs which = o.write == "metrics"    ? writers::SimOutputs::Metrics
                                    : o.write == "schedule" ? writers::SimOutputs::Schedule
                                                            : writers::SimOutputs::All;
  // (timeline.csv and cycles.csv are written only with every output)
  const SimResult r = simulate_with_policy(o, ds, table, progress, which == writers::SimOutputs::All);
  g_phase = "writing";
  if (progress) std::fputs("\r\033[K", stderr);
  info.simulate_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  writers::write_simulation(o.out_dir, ds, r, info, which);
  std::fputs(writers::simulation_summary_json(ds, r, info).c_str(), stdout);
  return report_rejections(ds, "schedule.csv");
}

int cmd_match(const Options& o) {
  const kernels::KernelTable& table = kernel_table(o);
  const unsigned n = thread_count(o);
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, n);
  const auto t0 = std::chrono::steady_clock::now();
  g_phase = "loading";
  auto ds = load(o.in);
  g_phase = "matching";
  writers::RunInfo info;
  info.format = o.in.format;
  info.threads = n;
  info.pools = o.pools || o.in.format == "dirac";
  info.huge_pages = heap_huge_pages();
  info.load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string categories;  // formatted while dispatch runs on the other core
  const MatchOutcome m = run_match(
      ds.catalog, ds.taskers, ds.jobs, table,
      [&](const MatchOutcome& so_far) { categories = writers::categories_csv(ds, so_far); }, &ds.in_use, ds.dispatch);
  g_phase = "writing";
  writers::write_results(o.out_dir, ds, m, info, std::move(categories));
  std::fputs(writers::summary_json(ds, m, info).c_str(), stdout);
  return report_rejections(ds);
}

}  // namespace

int main(int argc, char** argv) {
  restart_with_huge_pages(argv);
  // One allocator policy for the whole run, not glibc's sliding one: its mmap threshold rises with each
  // large block freed (a loader's), which moved the scheduling loop's growing vectors between fresh mmaps
  // and the heap from one input to the next (RICC's simulate 1.2-2.1 s on one build). Blocks below 64 MiB
  // come from the heap, and freed memory stays for the next allocation instead of faulting in again.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  CLI::App app{
      "colmatch: columnar matching of batch jobs to taskers (Grid Engine, DIRAC, Altair Accelerator, Moab semantics)"};
  app.require_subcommand(1);
  app.footer(R"(Examples:
  colmatch match --farm farm.toml --taskers taskers.jsonl --jobs jobs.jsonl.gz --out out/
  colmatch match --format google2011 --machines machine_events.csv.gz --tasks task_events.csv.gz --out out/ --threads 2
  colmatch match --format openb --nodes openb_node_list_all_node.csv --pods openb_pod_list_default.csv --out out/
  colmatch match --format dirac --resources resources.json --jdl jobs.jdl --out out/
  colmatch match --format vov --taskers taskers.tcl --resources resources.tcl --jobs jobs.jsonl --out out/
  colmatch explain --format google2011 --machines machine_events.csv.gz --tasks task_events.csv.gz --job 6251812952.0
  colmatch explain --simulate --format swf --log kth.swf.gz --policy policy.toml --until 864000 --job 1234
  colmatch explain --farm farm.toml --taskers taskers.jsonl --jobs jobs.jsonl.gz --job j42 --eligibility
  colmatch import --format openb --nodes nodes.csv --pods pods.csv --save native/
  colmatch generate --taskers 10000 --jobs 20000 --categories 1000 --seed 42 --save synth/
  colmatch report out/
  colmatch sweep sweep.toml --out sweep/ [--scheduler tcp://HOST:8786]
  colmatch formats slurm                            # a format's options (colmatch formats: every format)

Exit status: 0 success; 1 fatal error (no output written); 2 completed, some jobs rejected for bad requests.)");

  Options o;
  auto* match =
      app.add_subcommand("match", "Match jobs to taskers and write results.csv, categories.csv, summary.json");
  add_input_options(match, o.in);
  match->add_option("--out", o.out_dir, "Output folder")->required();
  match->add_option("--threads", o.threads, "Worker threads (default: all cores)")->check(CLI::Range(1, 4096));
  match->add_flag("--pools", o.pools,
                  "Also write pools.csv: DIRAC submit pools with their eligible taskers (default with --format dirac)");
  match->add_option("--isa", o.isa, "Force an instruction set: scalar, sse2, avx2, avx512 (default: best available)");
  match->add_option("--policy", o.policy_path,
                    "Policy TOML; match reads its [policy.vov] table with --format vov ($ resources, wrappers, "
                    "tasker symbols)");

  auto* sim = app.add_subcommand(
      "simulate",
      "Schedule over time (Moab's iteration, EASY backfill): write schedule.csv, metrics.json, timeline.csv");
  add_input_options(sim, o.in);
  sim->add_option("--out", o.out_dir, "Output folder")->required();
  sim->add_option("--policy", o.policy_path,
                  "Policy TOML: a [policy] table (default: farm.toml's [policy], else defaults)");
  sim->add_option("--until", o.until, "No scheduling cycle after this time (seconds)");
  sim->add_option("--write", o.write,
                  "Which files: all (schedule.csv, metrics.json, timeline.csv, cycles.csv, summary.json), schedule "
                  "(schedule.csv, metrics.json, summary.json) or metrics (metrics.json, summary.json)")
      ->check(CLI::IsMember({"all", "schedule", "metrics"}))
      ->capture_default_str();
  sim->add_option("--threads", o.threads, "Worker threads (default: all cores)")->check(CLI::Range(1, 4096));
  sim->add_option("--isa", o.isa, "Force an instruction set: scalar, sse2, avx2, avx512 (default: best available)");

  auto* explain = app.add_subcommand(
      "explain", "Why is a job pending (or where it went): run the match and explain one job or job category");
  add_input_options(explain, o.in);
  auto* job_opt = explain->add_option("--job", o.explain_job_id, "The job's id");
  explain->add_option("--category", o.explain_hash, "A category's hash (categories.csv)")->excludes(job_opt);
  explain->add_option("--threads", o.threads, "Worker threads (default: all cores)")->check(CLI::Range(1, 4096));
  auto* explain_sim = explain->add_flag(
      "--simulate", o.explain_simulate,
      "Explain the job in a simulation over time (simulate's inputs): its start, or its reason at the last cycle");
  explain->add_option("--policy", o.policy_path,
                      "The policy TOML (as simulate's --policy; without --simulate only its [policy.vov] is read)");
  explain->add_option("--until", o.until, "With --simulate: no scheduling cycle after this time (seconds)")
      ->needs(explain_sim);
  explain
      ->add_flag("--eligibility", o.explain_eligibility,
                 "The job's eligibility alone, without the batch's dispatch: the native format reads only the "
                 "job's line of jobs.jsonl (fast on millions of jobs; the other lines are not checked)")
      ->needs(job_opt)
      ->excludes(explain_sim);

  auto* import = app.add_subcommand("import", "Load any supported format and save it in the native format");
  add_input_options(import, o.in);
  import->add_option("--save", o.save_dir, "Folder for farm.toml, taskers.jsonl, jobs.jsonl")->required();
  import->add_option("--policy", o.policy_path,
                     "Policy TOML: with --format vov its [policy.vov] ($ resources, wrappers, symbols) shapes the "
                     "farm as match reads it, so the saved farm matches the same");

  auto* gen = app.add_subcommand("generate", "Write a seeded synthetic farm in the native format");
  gen->add_option("--taskers", o.spec.taskers, "Number of taskers (1 to 10^7)")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  gen->add_option("--jobs", o.spec.jobs, "Number of jobs (1 to 10^8)")
      ->check(CLI::Range(1, 100'000'000))
      ->capture_default_str();
  gen->add_option("--categories", o.spec.categories, "Number of request templates (1 to 10^6)")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  gen->add_option("--seed", o.spec.seed, "Random seed")->capture_default_str();
  gen->add_option("--save", o.save_dir, "Output folder")->required();

  auto* report = app.add_subcommand(
      "report",
      "Write report.html with PNG figures into a match, simulate or sweep output folder (python3, matplotlib)");
  report->add_option("OUT_DIR", o.report_dir, "A folder written by colmatch match, simulate or sweep")->required();

  auto* sweep = app.add_subcommand(
      "sweep",
      "Run a grid of simulate (or match) runs on Dask distributed: DIR/runs/<point>/ and DIR/sweep.csv "
      "(tools/sweep.py, python3-distributed; exit 2 when some point failed)");
  sweep->add_option("SWEEP_TOML", o.sweep_spec, "The sweep: inputs, a [grid] of policy keys, [[point]] tables")
      ->required();
  sweep->add_option("--out", o.out_dir, "Output folder")->required();
  auto* sched_opt =
      sweep->add_option("--scheduler", o.scheduler, "An existing Dask scheduler (default: an embedded LocalCluster)")
          ->each([&o](const std::string&) { o.scheduler_given = true; });
  sweep->add_option("--workers", o.sweep_workers, "Worker processes of the embedded cluster (default: one per core)")
      ->check(CLI::Range(1, 4096))
      ->excludes(sched_opt);
  sweep->add_flag("--ship-inputs", o.ship_inputs,
                  "Send the input files to the workers once each and their outputs back (no shared filesystem)");

  auto* formats = app.add_subcommand(
      "formats", "List the input formats, or one format's options (--markdown: the table docs/formats/ pages carry)");
  formats->add_option("NAME", o.format_name, "A format's name (native, sge, slurm, ...)");
  formats->add_flag("--markdown", o.markdown, "Print the format's synopsis and option table as Markdown");

  // Usage errors exit 1 like every other fatal error (CLI11's own codes are 100 and up); help exits 0.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  if (const char* env = std::getenv("COLMATCH_ISA"); env != nullptr) {
    kernels::Isa forced;
    if (!kernels::parse_isa(env, forced)) {
      std::fprintf(stderr, "colmatch: error: COLMATCH_ISA=%s: expected scalar, sse2, avx2 or avx512\n", env);
      return 1;
    }
  }

  try {
    if (!o.policy_path.empty()) {
      (void)loaders::read_policy_toml(o.policy_path);  // checked whatever reads it: a bad policy is an error
      o.in.args["policy"] = o.policy_path;             // --format vov reads its [policy.vov]
    }
    if (*formats) return cmd_formats(o.format_name, o.markdown);
    if (*report) return run_script("report.py", {o.report_dir});
    if (*sweep) return cmd_sweep(o);
    if (*gen) return cmd_generate(o);
    if (*explain) return cmd_explain(o);
    if (*import) return cmd_import(o);
    if (*sim) return cmd_simulate(o);
    return cmd_match(o);
  } catch (const CLI::Error& e) {
    return app.exit(e) == 0 ? 0 : 1;
  } catch (const std::bad_alloc&) {  // nothing written: the output set is published last
    if (*gen) {  // no input: what was asked for is the size (issue 45: "while starting (inputs 0.0 MB)")
      std::fprintf(stderr,
                   "colmatch: error: out of memory while %s %llu taskers and %llu jobs (see `ulimit -v` and the "
                   "machine's memory, or ask for fewer)\n",
                   g_phase, static_cast<unsigned long long>(o.spec.taskers),
                   static_cast<unsigned long long>(o.spec.jobs));
      return 1;
    }
    std::fprintf(stderr,
                 "colmatch: error: out of memory while %s (inputs %.1f MB; see `ulimit -v` and the machine's "
                 "memory, or split the input)\n",
                 g_phase, static_cast<double>(input_bytes(o.in)) / 1e6);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "colmatch: error: %s\n", e.what());
    return 1;
  }
}
