// `--format slurm` (issue 26): scontrol's text, sbatch options and the constraint language with Slurm's
// meaning. datasets/slurm/c100 is what tools/slurm-dump.sh wrote for the 100-node cluster that
// bench/peers/slurm_oracle.sh runs in real slurmctld 22.05.8; datasets/slurm/c100-answers.tsv.gz holds
// Slurm's answers (sbatch --test-only -N1-100: every node that could run the job on the empty cluster,
// or its refusal) to the requests of bench/peers/slurm_requests.py.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "engine/batch/matcher.hpp"
#include "engine/match/categories.hpp"
#include "engine/schedule/simulation.hpp"
#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"
#include "loaders/slurm.hpp"
#include "loaders/slurm_constraint.hpp"
#include "loaders/slurm_text.hpp"

using namespace colmatch;
namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(COLMATCH_SOURCE_DIR) + "/datasets/slurm/";

std::string temp_file(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("colmatch-slurm-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p) << text;
  return p.string();
}

// The c100 cluster with the jobs of `lines` (sbatch options, one job a line).
loaders::Dataset load_lines(const std::string& name, const std::string& lines) {
  const std::string p = temp_file(name, lines);
  loaders::Dataset ds = loaders::load_slurm(kData + "c100", p);
  fs::remove(p);
  return ds;
}

// Why job j was rejected ("" when it was not).
std::string why_rejected(const loaders::Dataset& ds, uint32_t j) {
  return ds.jobs.reject[j] == kNone ? std::string() : ds.jobs.reject_reason[ds.jobs.reject[j]];
}

struct Answer {
  std::string request, nodes, verdict;
};

std::vector<Answer> answers(const std::string& cluster) {
  loaders::LineReader in(kData + cluster + "-answers.tsv.gz");
  std::vector<Answer> out;
  for (std::string_view v; in.next(v);) {
    const std::string line(v);
    const size_t a = line.find('\t'), b = line.find('\t', a + 1);
    out.push_back({line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  return out;
}

// Slurm's host list as the oracle recorded it (`n[001-003,010]`; "-" for none).
std::set<std::string> split(const std::string& s) {
  if (s == "-") return {};
  const auto names = loaders::slurm::expand_hostlist(s);
  return {names.begin(), names.end()};
}

// The oracle asks `[..]` as `(..)` (bench/peers/slurm_oracle.sh ask: --test-only ignores a matching OR), so a
// request with brackets got the answer of its parenthesized form. What slurmctld says of each such request
// submitted as written (slurm_oracle.sh submit, 2026-11-29: datasets/slurm/c100-brackets-submit-slurm.tsv):
// `[ssd&gpu]` and `[ssd|gpu]&[ib|eth]` are refused ("Invalid feature specification"; job_scheduler.c
// build_feature_list and _valid_feature_list: one set of brackets, `&` in it with a count on every name),
// while `[(amd|gpu)]` and `([amd|gpu])`, asked as `((amd|gpu))` and refused for the nested parentheses, are
// accepted. Returns "" for a request without brackets, else the verdict as written.
std::string bracket_verdict(const std::string& request) {
  static const std::map<std::string, std::string> verdicts = [] {
    std::map<std::string, std::string> out;
    std::ifstream in(kData + "c100-brackets-submit-slurm.tsv");
    for (std::string line; std::getline(in, line);)
      out[line.substr(0, line.find('\t'))] = line.substr(line.find('\t') + 1);
    return out;
  }();
  if (request.find('[') == std::string::npos) return "";
  const auto it = verdicts.find(request);
  EXPECT_NE(it, verdicts.end()) << "no verdict as written for " << request;
  return it == verdicts.end() ? "" : it->second;
}
// (a refusal of the specification itself: not one of availability, which depends on the cluster)
bool refused_as_written(const std::string& request) {
  return bracket_verdict(request).find("Invalid") != std::string::npos;
}
// Asked in another form than written, and refused in it, but accepted as written: Slurm's nodes are unknown.
bool accepted_as_written_only(const std::string& request, const std::string& verdict) {
  return verdict.find("Invalid") != std::string::npos && bracket_verdict(request) == "accepted";
}

// Each request a job; colmatch must find Slurm's nodes and refuse what Slurm refuses: a specification
// Slurm calls invalid is a rejected job, and so is one it answers "Requested node configuration is not
// available" (refused at submit: no node could ever run it), with that message.
TEST(SlurmCluster100, EligibleNodesAndVerdictsAreRealSlurms) {
  const std::vector<Answer> as = answers("c100");
  ASSERT_GE(as.size(), 300u);
  std::string jobs;
  for (const Answer& a : as) jobs += a.request + "\n";
  const std::string path = temp_file("requests", jobs);
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100", path);
  fs::remove(path);
  ASSERT_EQ(ds.jobs.size(), as.size());
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  size_t invalid = 0, unavailable = 0, ok = 0, partial = 0;
  for (uint32_t j = 0; j < as.size(); ++j) {
    const Answer& a = as[j];
    SCOPED_TRACE(a.request + " (Slurm: " + a.verdict + ")");
    if (accepted_as_written_only(a.request, a.verdict)) {
      EXPECT_EQ(ds.jobs.reject[j], kNone) << ds.jobs.reject_reason[ds.jobs.reject[j]];
      continue;
    }
    const bool refused = a.verdict.find("Invalid") != std::string::npos || refused_as_written(a.request);
    if (refused) {
      EXPECT_NE(ds.jobs.reject[j], kNone) << "Slurm refuses it at submit";
      ++invalid;
      continue;
    }
    if (a.verdict.find("Requested node configuration is not available") != std::string::npos) {
      EXPECT_NE(why_rejected(ds, j).find("Requested node configuration is not available"), std::string::npos)
          << why_rejected(ds, j);
      ++unavailable;
      continue;
    }
    ASSERT_EQ(ds.jobs.reject[j], kNone) << ds.jobs.reject_reason[ds.jobs.reject[j]];
    std::set<std::string> got;
    for (uint32_t t : m.eligible[m.categories.of_job[j]].eligible.to_vector()) got.insert(ds.taskers.names[t]);
    // sbatch --test-only answers one partition of several (the first that can run the job) and cuts its
    // list to a partition's MaxNodes (big: 4): there Slurm's nodes are some of colmatch's
    const bool one_of_several = a.request.find("-p ") != std::string::npos &&
                                (a.request.find(',', a.request.find("-p ")) != std::string::npos ||
                                 a.request.find("-p big") != std::string::npos);
    if (one_of_several) {
      for (const std::string& n : split(a.nodes)) EXPECT_TRUE(got.count(n)) << n << " is Slurm's, not colmatch's";
      EXPECT_EQ(got.empty(), split(a.nodes).empty());
      ++partial;
    } else {
      EXPECT_EQ(got, split(a.nodes));
    }
    EXPECT_EQ(a.verdict, "ok");
    ++ok;
  }
  EXPECT_GT(invalid, 10u);
  EXPECT_GT(unavailable, 20u);
  EXPECT_GT(ok, 250u);
  EXPECT_LT(partial, as.size() / 4) << "most requests compare exactly";
}

// The per-GPU options (datasets/slurm/c100-gpus-answers.tsv: sbatch --test-only -N1-100, every node that
// could run the job): --gpus-per-node=[TYPE:]N as --gres, --cpus-per-gpu C and --mem-per-gpu M as C and M
// a GPU on each node (`--gpus-per-node=2 --cpus-per-gpu=16`: nodes of 2 GPUs and 32 CPUs).
TEST(SlurmCluster100, GpuOptionsAsSlurmCountsThem) {
  std::ifstream in(kData + "c100-gpus-answers.tsv");
  std::vector<Answer> as;
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find('\t'), b = line.find('\t', a + 1);
    as.push_back({line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  ASSERT_EQ(as.size(), 15u);
  std::string jobs;
  for (const Answer& a : as) jobs += a.request + "\n";
  const loaders::Dataset ds = load_lines("gpus", jobs);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  for (uint32_t j = 0; j < as.size(); ++j) {
    SCOPED_TRACE(as[j].request + " (Slurm: " + as[j].verdict + ")");
    if (as[j].verdict != "ok") {
      EXPECT_NE(why_rejected(ds, j).find("Requested node configuration is not available"), std::string::npos);
      continue;
    }
    ASSERT_FALSE(ds.jobs.rejected(j)) << why_rejected(ds, j);
    std::set<std::string> got;
    for (uint32_t t : m.eligible[m.categories.of_job[j]].eligible.to_vector()) got.insert(ds.taskers.names[t]);
    EXPECT_EQ(got, split(as[j].nodes));
  }
}

// The same requests on 10,000 nodes (bench/peers/slurm_oracle.sh setup 10000): Slurm's answers are kept
// as the number of nodes and the FNV-1a hash of their sorted names (bench/peers/slurm_digest.py).
TEST(SlurmCluster10k, EligibleNodesAndVerdictsAreRealSlurms) {
  loaders::LineReader in(kData + "c10k-answers.tsv.gz");
  std::vector<std::array<std::string, 4>> as;
  for (std::string_view v; in.next(v);) {
    std::array<std::string, 4> a;
    std::stringstream ss{std::string(v)};
    for (auto& f : a) std::getline(ss, f, '\t');
    as.push_back(a);
  }
  ASSERT_GE(as.size(), 300u);
  std::string jobs;
  for (const auto& a : as) jobs += a[0] + "\n";
  const std::string path = temp_file("requests10k", jobs);
  const loaders::Dataset ds = loaders::load_slurm(kData + "c10k", path);
  fs::remove(path);
  ASSERT_EQ(ds.taskers.size(), 10000u);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  size_t exact = 0, refused = 0;
  for (uint32_t j = 0; j < as.size(); ++j) {
    const auto& [request, count, hash, verdict] = as[j];
    SCOPED_TRACE(request + " (Slurm: " + verdict + ")");
    if (accepted_as_written_only(request, verdict)) {
      EXPECT_EQ(ds.jobs.reject[j], kNone) << ds.jobs.reject_reason[ds.jobs.reject[j]];
      continue;
    }
    if (verdict.find("Invalid") != std::string::npos || refused_as_written(request)) {
      EXPECT_NE(ds.jobs.reject[j], kNone);
      continue;
    }
    if (verdict.find("Requested node configuration is not available") != std::string::npos) {
      EXPECT_NE(why_rejected(ds, j).find("Requested node configuration is not available"), std::string::npos)
          << why_rejected(ds, j);
      ++refused;
      continue;
    }
    ASSERT_EQ(ds.jobs.reject[j], kNone) << ds.jobs.reject_reason[ds.jobs.reject[j]];
    std::vector<std::string> got;
    for (uint32_t t : m.eligible[m.categories.of_job[j]].eligible.to_vector()) got.push_back(ds.taskers.names[t]);
    std::sort(got.begin(), got.end());
    std::string joined;
    for (const std::string& n : got) joined += (joined.empty() ? "" : ",") + n;
    const bool one_of_several =
        request.find("-p ") != std::string::npos &&
        (request.find(',', request.find("-p ")) != std::string::npos || request.find("-p big") != std::string::npos);
    if (one_of_several) {  // Slurm answers one partition, cut to MaxNodes: at most colmatch's
      EXPECT_GE(got.size(), std::stoul(count));
      EXPECT_EQ(got.empty(), count == "0");
      continue;
    }
    EXPECT_EQ(got.size(), std::stoul(count));
    EXPECT_EQ(got.empty() ? std::string("-") : fmt::format("{:016x}", fnv1a(joined)), hash);
    ++exact;
  }
  EXPECT_GT(exact, 200u);
  EXPECT_GT(refused, 20u);
}

// Where Slurm starts one job alone on the idle cluster (salloc, the controller restarted before each
// question: bench/peers/slurm_oracle.sh place): lowest Weight, then the run of adjacent nodes with the
// fewest CPUs and its node with the fewest, and a matching OR's choices in the order written. colmatch's
// match of that job alone, with the format's dispatch (ConsecutiveBestFit), picks the same node.
TEST(SlurmCluster100, OneJobGoesWhereSlurmPutsIt) {
  std::ifstream in(kData + "c100-placements.tsv");
  size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    const std::string request = line.substr(0, line.find('\t')), node = line.substr(line.find('\t') + 1);
    SCOPED_TRACE(request);
    const std::string path = temp_file("one", request + "\n");
    const loaders::Dataset ds = loaders::load_slurm(kData + "c100", path);
    fs::remove(path);
    const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, nullptr, ds.dispatch);
    ASSERT_EQ(m.dispatch.status[0], JobStatus::Assigned);
    EXPECT_EQ(ds.taskers.names[m.dispatch.tasker[0]], node);
    ++n;
  }
  EXPECT_GE(n, 30u);
}

// squeue --json's pending jobs (datasets/slurm/c100-batch: 150 held jobs submitted from c100-batch.jobs)
// are the jobs of their sbatch lines: the same ids, requests, charges and placements.
TEST(SlurmJobs, SqueueJsonIsTheJobsOfTheirSbatchLines) {
  const loaders::Dataset a = loaders::load_slurm(kData + "c100-batch", "");
  // (the lines as submitted: held, -H, so that none is refused at submit, as in the dumped queue)
  std::string held;
  {
    std::ifstream in(kData + "c100-batch.jobs");
    for (std::string line; std::getline(in, line);) held += "-H " + line + "\n";
  }
  const std::string path = temp_file("held", held);
  const loaders::Dataset b = loaders::load_slurm(kData + "c100-batch", path);
  fs::remove(path);
  ASSERT_EQ(a.jobs.size(), 150u);
  ASSERT_EQ(b.jobs.size(), 150u);
  const MatchOutcome ma = run_match(a.catalog, a.taskers, a.jobs, kernels::active());
  const MatchOutcome mb = run_match(b.catalog, b.taskers, b.jobs, kernels::active());
  ASSERT_EQ(ma.categories.size(), mb.categories.size());
  for (uint32_t j = 0; j < 150; ++j) {
    SCOPED_TRACE(std::string(a.jobs.id[j]));
    EXPECT_EQ(a.jobs.id[j], b.jobs.id[j]);
    EXPECT_EQ(a.jobs.reject[j], kNone);
    EXPECT_EQ(ma.categories.key[ma.categories.of_job[j]], mb.categories.key[mb.categories.of_job[j]]);
    EXPECT_EQ(ma.dispatch.tasker[j], mb.dispatch.tasker[j]);
  }
  EXPECT_EQ(a.jobs.notes.size(), 1u) << "held, as squeue said";
}

// squeue's pending array tasks are jobs of their own (`3_1`..), its throttle `%2` dropped; running jobs
// are not matched again (a warning counts them); a malformed task list names the field.
TEST(SlurmJobs, SqueueArraysAndRunningJobs) {
  const fs::path dir = fs::temp_directory_path() / ("colmatch-squeue-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(kData + "c100"))
    if (e.path().filename() != "squeue.json") fs::copy(e.path(), dir / e.path().filename());
  auto write = [&](const std::string& json) { std::ofstream(dir / "squeue.json") << json; };
  write(R"({"jobs": [{"job_id": 3, "job_state": "PENDING", "array_task_string": "1-3%2", "cpus": 2, "tasks": 1,
            "memory_per_node": 100, "partition": "all"},
           {"job_id": 4, "job_state": "RUNNING"}]})");
  const loaders::Dataset ds = loaders::load_slurm(dir.string(), "");
  ASSERT_EQ(ds.jobs.size(), 3u);
  EXPECT_EQ(ds.jobs.id[0], "3_1");
  EXPECT_EQ(ds.jobs.id[2], "3_3");
  bool said = false;
  for (const std::string& w : ds.taskers.warnings)
    said = said || w.find("1 jobs of squeue.json not pending") != std::string::npos;
  EXPECT_TRUE(said);
  write(R"({"jobs": [{"job_id": 5, "job_state": "PENDING", "array_task_string": "4-2"}]})");
  try {
    loaders::load_slurm(dir.string(), "");
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.field, "jobs[0].array_task_string");
  }
  write(R"({"jobs": [)");
  EXPECT_THROW(loaders::load_slurm(dir.string(), ""), loaders::LoadError);
  fs::remove_all(dir);
}

// --exclusive: the node that runs the job runs no other, whichever comes first; on an idle node an
// exclusive job goes where the same job would.
TEST(SlurmJobs, ExclusiveTakesAWholeNode) {
  const std::string p = temp_file("exclusive",
                                  "-w n005 -c 1 --mem=100\n"
                                  "-w n005 --exclusive --mem=100\n"
                                  "-w n006 --exclusive --mem=100\n"
                                  "-w n006 -c 1 --mem=100\n"
                                  "-C amd --exclusive --mem=1000\n");
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100", p);
  fs::remove(p);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  EXPECT_EQ(m.dispatch.status[0], JobStatus::Assigned);
  EXPECT_EQ(m.dispatch.status[1], JobStatus::Pending) << "n005 runs a job";
  EXPECT_EQ(m.dispatch.reason[1], PendingReason::NoFreeCapacity);
  EXPECT_EQ(m.dispatch.status[2], JobStatus::Assigned);
  EXPECT_EQ(m.dispatch.status[3], JobStatus::Pending) << "n006 is taken whole";
  ASSERT_EQ(m.dispatch.status[4], JobStatus::Assigned);
  EXPECT_EQ(ds.taskers.names[m.dispatch.tasker[4]], "n003") << "where -C amd --mem=1000 alone goes (salloc)";
  // without an exclusive job the cluster has no `jobs` consumable at all
  EXPECT_FALSE(loaders::load_slurm(kData + "c100", "").catalog.find("jobs").has_value());
}

// sacct -a -P (written in the format sacct(1) prints, no slurmdbd here): a job per JobID, its steps part of
// it, array tasks as Slurm names them, a job that never ran replayed with no length and noted, a job of
// two nodes rejected with the reason; simulate replays every job (none lost).
TEST(SlurmAccounting, SacctRecordsReplayWithNoJobLost) {
  const std::string p = temp_file(
      "sacct",
      "JobID|JobIDRaw|Submit|Start|End|Timelimit|NNodes|NCPUS|ReqMem|Constraints|ReqTRES|Partition|User|Account|QOS|"
      "State\n"
      "101|101|2026-11-20T10:00:00|2026-11-20T10:00:05|2026-11-20T10:10:05|01:00:00|1|4|8000M|amd&ssd|billing=4,cpu=4,"
      "mem=8000M,node=1|all|alice|p1|normal|COMPLETED\n"
      "101.batch|101.batch|2026-11-20T10:00:05|2026-11-20T10:00:05|2026-11-20T10:10:05||1|4|||cpu=4,mem=8000M,node=1|||"
      "||COMPLETED\n"
      "101.extern|101.extern|2026-11-20T10:00:05|2026-11-20T10:00:05|2026-11-20T10:10:05||1|4||||||||COMPLETED\n"
      "102_1|103|2026-11-20T10:01:00|2026-11-20T10:02:00|2026-11-20T10:03:00|UNLIMITED|1|2|1000Mc||billing=2,cpu=2,"
      "gres/gpu=1,gres/gpu:a100=1,node=1|gpu|bob|p2|normal|FAILED\n"
      "102_2|104|2026-11-20T10:01:00|None|None|UNLIMITED|1|2|1000Mc||billing=2,cpu=2,node=1|gpu|bob|p2|normal|"
      "CANCELLED by 0\n"
      "105|105|2026-11-20T10:05:00|2026-11-20T10:05:10|2026-11-20T11:05:10|2-00:00:00|2|64|100G|||all|carol|p1|normal|"
      "TIMEOUT\n");
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100", "", p);
  fs::remove(p);
  ASSERT_EQ(ds.jobs.size(), 4u) << "the steps are parts of job 101";
  EXPECT_EQ(ds.jobs.id[0], "101");
  EXPECT_EQ(ds.jobs.id[1], "102_1");
  EXPECT_EQ(ds.jobs.runtime[0], 600);
  EXPECT_EQ(ds.jobs.walltime[0], 3600);
  EXPECT_EQ(ds.jobs.runtime[2], 0) << "cancelled while pending: replayed with no length";
  EXPECT_EQ(ds.jobs.reject[3], kNone) << ds.jobs.reject_reason[ds.jobs.reject[3]];
  EXPECT_EQ(ds.jobs.slots[3], 2u) << "two nodes (-N 2): a slot each";
  EXPECT_EQ(ds.jobs.rule[3], AllocationRule::OnePerTasker);
  const size_t cpus = static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("cpus")));
  EXPECT_EQ(ds.jobs.amount.at(cpus, 3), 32.0) << "NCPUS 64 over 2 nodes";
  EXPECT_EQ(ds.policy.allocation, AllocationPolicy::ConsecutiveBestFit) << "simulate places as Slurm does";
  const size_t mem = static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("mem")));
  EXPECT_EQ(ds.jobs.amount.at(mem, 1), 2000.0 * 1024 * 1024) << "1000Mc: per CPU, 2 CPUs";
  const size_t a100 = static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("gres/gpu:a100")));
  EXPECT_EQ(ds.jobs.amount.at(a100, 1), 1.0);
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, SimConfig{}, kernels::active());
  for (uint32_t j = 0; j < 4; ++j) EXPECT_FALSE(std::isnan(r.start[j])) << ds.jobs.id[j];
  EXPECT_EQ(r.alloc_count[3], 2u) << "on two nodes";
  EXPECT_EQ(r.start[0], 1795168800);  // 2026-11-20T10:00:00 UTC: at its submit, on an idle cluster
  for (const std::string bad :
       {"JobID|Start\n1|2026-11-20T10:00:00\n", "JobID|Submit\n1|yesterday\n", "JobID|Submit\n1|2|3\n"}) {
    const std::string q = temp_file("bad", bad);
    EXPECT_THROW(loaders::load_slurm(kData + "c100", "", q), loaders::LoadError) << bad;
    fs::remove(q);
  }
}

// sacct 22.05's own output (sacct/print.c): -P leaves the `|` of a constraint unescaped (the line has
// more fields than the header: rejoined as the Constraints field's), ReqMem and ReqTRES are the job's
// totals (`-N 2 --mem=500` prints 1000M; two nodes of 2 GPUs each, gres/gpu=4), and the CPUs it asked are
// ReqTRES's cpu= (`-N 2 --ntasks-per-node=3`: 6), spread over its nodes, an uneven count rounded up
// (`-N 2 -n 3`: 2 a node) rather than refused: every job Slurm ran runs in the replay.
TEST(SlurmAccounting, SacctAsSlurm2205PrintsIt) {
  const std::string header =
      "JobIDRaw|Submit|Start|End|Timelimit|NNodes|NCPUS|ReqMem|Constraints|ReqTRES|Partition|User|Account|QOS|State\n";
  const std::string p = temp_file(
      "sacct2205", header +
                       "1|2026-11-20T10:00:00|2026-11-20T10:00:01|2026-11-20T10:05:01|00:10:00|1|2|1000M|intel|amd|"
                       "billing=2,cpu=2,mem=1000M,node=1|all|alice|a1|normal|COMPLETED\n"
                       "2|2026-11-20T10:00:00|2026-11-20T10:00:01|2026-11-20T10:05:01|00:10:00|2|6|1000M||"
                       "billing=6,cpu=6,mem=1000M,node=2|all|alice|a1|normal|COMPLETED\n"
                       "3|2026-11-20T10:00:00|2026-11-20T10:00:01|2026-11-20T10:05:01|00:10:00|2|4|2000M||"
                       "billing=3,cpu=3,mem=2000M,node=2|all|bob|a2|normal|COMPLETED\n"
                       "4|2026-11-20T10:00:00|2026-11-20T10:00:01|2026-11-20T10:05:01|00:10:00|2|2|4000M|[ib|eth]|"
                       "billing=2,cpu=2,gres/gpu=4,mem=4000M,node=2|gpu|bob|a2|normal|COMPLETED\n");
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100", "", p);
  fs::remove(p);
  ASSERT_EQ(ds.jobs.size(), 4u);
  for (uint32_t j = 0; j < 4; ++j) EXPECT_FALSE(ds.jobs.rejected(j)) << why_rejected(ds, j);
  const size_t cpus = static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("cpus")));
  const size_t mem = static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("mem")));
  const size_t gpu = static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("gres/gpu")));
  const double MiB = 1024.0 * 1024;
  const std::string& text = ds.jobs.request_text[ds.jobs.request[0]];
  EXPECT_TRUE(text.find("\"intel\"") != std::string::npos && text.find("\"amd\"") != std::string::npos) << text;
  EXPECT_EQ(ds.jobs.amount.at(cpus, 1), 3.0) << "6 CPUs over 2 nodes";
  EXPECT_EQ(ds.jobs.amount.at(mem, 1), 500 * MiB) << "1000M for the job: 500M a node";
  EXPECT_EQ(ds.jobs.slots[1], 2u);
  EXPECT_EQ(ds.jobs.amount.at(cpus, 2), 2.0) << "3 CPUs over 2 nodes: 2 a node";
  EXPECT_EQ(ds.jobs.amount.at(gpu, 3), 2.0) << "4 GPUs over 2 nodes";
  EXPECT_EQ(ds.jobs.amount.at(mem, 3), 2000 * MiB);
  // a `|` in a field other than Constraints cannot be told apart: refused, saying what to do
  const std::string q = temp_file("sacct-pipe", "JobIDRaw|Submit|User\n1|2026-11-20T10:00:00|a|b\n");
  try {
    loaders::load_slurm(kData + "c100", "", q);
    ADD_FAILURE() << "no error";
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 2u);
    EXPECT_NE(std::string(e.what()).find("--delimiter"), std::string::npos) << e.what();
  }
  fs::remove(q);
}

// The cluster as slurm_cluster.py configured it: features, CPUs, memory (MiB), GPUs by type, weight order.
TEST(SlurmCluster100, ImportedClusterIsTheConfiguredOne) {
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100", "");
  ASSERT_EQ(ds.taskers.size(), 100u);
  const int cpus[] = {16, 32, 64, 128}, weights[] = {1, 10, 100};
  const double mem[] = {64000, 128000, 256000, 512000};
  const char* gens[] = {"skylake", "icelake", "rome", "milan"};
  auto column = [&](const char* name) -> const Column& { return ds.taskers.columns[*ds.catalog.find(name)]; };
  for (uint32_t t = 0; t < ds.taskers.size(); ++t) {
    const int i = std::stoi(ds.taskers.names[t].substr(1));
    SCOPED_TRACE(ds.taskers.names[t]);
    EXPECT_EQ(column("cpus").queue().num(t), cpus[(i / 2) % 4]);
    EXPECT_EQ(column("mem").queue().num(t), mem[(i / 4) % 4] * 1024 * 1024);
    EXPECT_EQ(-ds.taskers.power[t], weights[i % 3]);
    const std::string feats(column("feature").dict.value(column("feature").queue().id(t)));
    EXPECT_NE(feats.find(gens[i % 4]), std::string::npos) << feats;
    EXPECT_EQ(feats.find("ssd") != std::string::npos, i % 5 == 0);
    const Column& a100 = column("gres/gpu:a100");
    const Column& v100 = column("gres/gpu:v100");
    EXPECT_EQ(a100.has(t) ? a100.queue().num(t) : 0, i % 10 == 0 ? 4 : 0);
    EXPECT_EQ(v100.has(t) ? v100.queue().num(t) : 0, i % 10 == 5 ? 2 : 0);
    EXPECT_EQ(column("gres/gpu").has(t) ? column("gres/gpu").queue().num(t) : 0, i % 10 == 0 ? 4 : i % 10 == 5 ? 2 : 0);
  }
  // Slurm tries the lowest weight first; within a weight, nodes in name order (its node table's)
  for (uint32_t t = 1; t < ds.taskers.size(); ++t) {
    const double w0 = -ds.taskers.power[t - 1], w1 = -ds.taskers.power[t];
    ASSERT_LE(w0, w1);
    if (w0 == w1) {
      EXPECT_LT(ds.taskers.names[t - 1], ds.taskers.names[t]);
      EXPECT_LT(ds.taskers.input_index[t - 1], ds.taskers.input_index[t]);
    }
  }
  EXPECT_EQ(ds.dispatch.allocation, AllocationPolicy::ConsecutiveBestFit);
  EXPECT_EQ(ds.catalog.consumables()[ds.dispatch.fit_consumable], *ds.catalog.find("cpus"));
  // the partitions as blocking queues, each with its nodes
  ASSERT_TRUE(ds.dispatch.queues);
  const BlockingQueues& q = *ds.dispatch.queues;
  ASSERT_EQ(q.names, (std::vector<std::string>{"all", "gpu", "amd", "short", "big"}));
  EXPECT_EQ(q.taskers[0].count(), 100u);
  EXPECT_EQ(q.taskers[1].count(), 20u);
  EXPECT_EQ(q.taskers[2].count(), 50u);
  EXPECT_EQ(q.taskers[3].count(), 50u);
  for (size_t t = q.taskers[3].next(0); t < q.taskers[3].universe(); t = q.taskers[3].next(t + 1))
    EXPECT_LE(std::stoi(ds.taskers.names[t].substr(1)), 50) << "short is n[001-050]";
  for (size_t t = q.taskers[1].next(0); t < q.taskers[1].universe(); t = q.taskers[1].next(t + 1))
    EXPECT_EQ(std::stoi(ds.taskers.names[t].substr(1)) % 5, 0) << "gpu is the node set of feature gpu";
}

// Slurm's main scheduling pass (src/slurmctld/job_scheduler.c): held jobs released at once on the c100
// cluster (bench/peers/slurm_oracle.sh batch), and what Slurm made of each (job, state, node, reason).
// colmatch's match must give every job the same outcome: node by node (ConsecutiveBestFit on the CPUs
// free at that moment) and reason by reason (blocking queues). Returns how many jobs had each outcome.
using Outcomes = std::map<std::string, size_t>;
const std::string kHeld = "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions";
// The dump `name` as its batch ran: `c100@builtin` is the c100 dump (taken under sched/backfill) with
// SchedulerType sched/builtin, the scheduler the oracle ran that batch under (SCHEDULER=sched/builtin,
// datasets/slurm/README.md), copied to a temporary folder; any other name is the dump as it is.
std::string dump_as_run(const std::string& name) {
  const size_t at = name.find('@');
  if (at == std::string::npos) return kData + name;
  const fs::path dir = fs::temp_directory_path() / ("colmatch-slurm-" + std::to_string(::getpid()) + "-" + name);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(kData + name.substr(0, at)))
    if (e.path().filename() != "scontrol-config.txt")
      fs::copy(e.path(), dir / e.path().filename(), fs::copy_options::overwrite_existing);
  std::ifstream in(kData + name.substr(0, at) + "/scontrol-config.txt");
  std::ofstream out(dir / "scontrol-config.txt");
  for (std::string line; std::getline(in, line);)
    out << (line.rfind("SchedulerType ", 0) == 0 ? "SchedulerType           = sched/" + name.substr(at + 1) : line)
        << "\n";
  return dir.string();
}

// What slurmctld said when each line of the job files was submitted as written, not held
// (bench/peers/slurm_oracle.sh submit; datasets/slurm/README.md): line -> "accepted" or "error: ...". The
// c100 clusters (flat and tiers differ in weights and tiers only, which no submit checks) and c10k.
const std::map<std::string, std::string>& submit_verdicts(const std::string& dump) {
  static std::map<std::string, std::map<std::string, std::string>> cache;
  const std::string cluster = dump.rfind("c10k", 0) == 0 ? "c10k" : "c100";
  auto& out = cache[cluster];
  if (out.empty()) {
    std::ifstream in(kData + cluster + "-jobs-submit-slurm.tsv");
    for (std::string line; std::getline(in, line);)
      out[line.substr(0, line.find('\t'))] = line.substr(line.find('\t') + 1);
  }
  return out;
}

// The oracle submits a batch held (sbatch -H) and releases it; colmatch reads the same lines as submitted
// without -H. A job whose line slurmctld refuses when submitted not held (submit_verdicts: "Requested node
// configuration is not available") is rejected with Slurm's message, whatever the released batch said of
// it (BadConstraints, or Priority behind a blocked partition); true then.
bool expect_refused_at_submit(const loaders::Dataset& ds, const MatchOutcome& m, uint32_t j, const std::string& line,
                              const std::string& dump) {
  if (line.empty()) return false;  // the dump's own queue: accepted jobs
  const auto& verdicts = submit_verdicts(dump);
  const auto v = verdicts.find(line);
  EXPECT_NE(v, verdicts.end()) << "no recorded submit verdict for " << line;
  if (v == verdicts.end() || v->second.find("not available") == std::string::npos) return false;
  EXPECT_EQ(m.dispatch.status[j], JobStatus::Rejected);
  EXPECT_NE(why_rejected(ds, j).find("Requested node configuration is not available"), std::string::npos);
  return true;
}

// `dump` (c100 by default; see dump_as_run) with `jobs` (sbatch lines; "": the dump's queue); rows of `answers`
// whose job is in `apart` are counted as "apart" instead of compared (a difference the test names), those
// refused at submit (expect_refused_at_submit: Slurm's BadConstraints, and jobs it left Priority behind a
// blocked partition that its submit would have refused) as "refused at submit".
Outcomes expect_main_pass(const std::string& jobs, const std::string& answers, const std::string& dump = "c100",
                          const std::set<std::string>& apart = {}) {
  const std::string dir = dump_as_run(dump);
  const loaders::Dataset ds = loaders::load_slurm(dir, jobs.empty() ? "" : kData + jobs);
  if (dir.rfind(kData, 0) != 0) fs::remove_all(dir);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, &ds.in_use, ds.dispatch);
  std::map<std::string, uint32_t> index;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) index.emplace(std::string(ds.jobs.id[j]), j);
  std::vector<std::string> lines;  // the job file's lines (job j on line j + 1)
  if (!jobs.empty()) {
    std::ifstream job_file(kData + jobs);
    for (std::string line; std::getline(job_file, line);) lines.push_back(line);
  }
  std::ifstream in(kData + answers);
  Outcomes outcomes;
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string id, state, node, reason;
    std::getline(f, id, '\t');
    std::getline(f, state, '\t');
    std::getline(f, node, '\t');
    std::getline(f, reason);
    if (apart.count(id)) {
      ++outcomes["apart"];
      continue;
    }
    if (const size_t b = id.find("_["); b != std::string::npos)  // a pending array: its first task
      id = id.substr(0, b + 1) + id.substr(b + 2, id.find_first_of(",-%]", b + 2) - b - 2);
    if (!index.count(id)) {
      ADD_FAILURE() << "no job " << id << ": " << line;
      continue;
    }
    const uint32_t j = index.at(id);
    SCOPED_TRACE(line);
    if (reason.rfind("ReqNodeNotAvail", 0) == 0) reason = "ReqNodeNotAvail";  // then the nodes it waits for
    if (expect_refused_at_submit(ds, m, j, j < lines.size() ? lines[j] : "", dump)) {
      ++outcomes["refused at submit"];
      continue;
    }
    if (state == "CONFIGURING") {
      EXPECT_EQ(m.dispatch.status[j], JobStatus::Assigned);
      std::set<std::string> got;  // every node of the job (-N K: K of them)
      for (uint32_t a = 0; a < m.dispatch.alloc_count[j]; ++a)
        got.insert(std::string(ds.taskers.names[m.dispatch.allocations[m.dispatch.alloc_first[j] + a].tasker]));
      EXPECT_EQ(got, split(node));
    } else {
      EXPECT_EQ(m.dispatch.status[j], JobStatus::Pending);
      const PendingReason want =
          reason == "BadConstraints" || reason == "PartitionTimeLimit" || reason == "PartitionNodeLimit"
              ? PendingReason::NoEligibleTasker
          : reason == "Resources"       ? PendingReason::NoFreeCapacity
          : reason == "Priority"        ? PendingReason::BehindHigherPriority
          : reason == "ReqNodeNotAvail" ? PendingReason::EligibleHeld
                                        : PendingReason::TaskersHeld;
      EXPECT_EQ(m.dispatch.reason[j], want);
    }
    ++outcomes[state == "CONFIGURING" ? "started" : reason];
  }
  return outcomes;
}

// 150 jobs (datasets/slurm/c100-batch.jobs; the queue dumped as c100-batch/): Slurm started 57 and left 4
// BadConstraints (no node could ever run them), 1 Resources (job 62: its partition `all` blocks, and
// every node with it), 85 Priority behind it, and 3 with "Nodes required for job are DOWN, DRAINED or
// reserved for jobs in higher priority partitions" (the first of partitions amd, short and gpu then).
TEST(SlurmMainPass, ABatchReleasedAtOnceIsPlacedAsSlurmDoes) {
  EXPECT_EQ(expect_main_pass("c100-batch.jobs", "c100-batch-slurm.tsv"),
            (Outcomes{{"started", 57}, {"Priority", 81}, {"Resources", 1}, {"refused at submit", 8}, {kHeld, 3}}));
}

// 300 jobs of one partition each, most in the smaller partitions (bench/peers/slurm_requests.py --batch
// 300 2611): partitions block one by one while the others go on starting jobs. Slurm started 114; 3
// Resources, 164 Priority, 3 BadConstraints, and 16 ReqNodeNotAvail: their partition has nodes left but
// every node eligible for them is held for a blocked partition (they wait without blocking theirs).
// Also --prefer as 22.05.8 does it: the preferred features tried instead of --constraint first (job 71,
// `-C skylake&ssd --prefer milan`, starts on a milan node).
TEST(SlurmMainPass, PartitionsBlockOneByOneAndReqNodeNotAvailBlocksNothing) {
  EXPECT_EQ(
      expect_main_pass("c100-batch2.jobs", "c100-batch2-slurm.tsv"),
      (Outcomes{
          {"started", 114}, {"Priority", 154}, {"ReqNodeNotAvail", 16}, {"Resources", 3}, {"refused at submit", 13}}));
}

// 120 jobs of 1 to 6 nodes (-N K; the generator is in the README of datasets/slurm): Slurm picks a job's
// K nodes as _eval_nodes does (runs of adjacent nodes with room, the best run by weight and sufficiency
// first, its first nodes). Slurm started 50 (their node lists), 55 Priority, 7 ReqNodeNotAvail, 4
// Resources, 4 BadConstraints (more nodes than the partition could ever give, or no such node).
TEST(SlurmMainPass, MultiNodeJobsGetSlurmsNodes) {
  EXPECT_EQ(
      expect_main_pass("c100-batch3.jobs", "c100-batch3-slurm.tsv"),
      (Outcomes{
          {"started", 50}, {"Priority", 50}, {"ReqNodeNotAvail", 7}, {"Resources", 4}, {"refused at submit", 9}}));
}

// The queue of datasets/slurm/c100-queue (123 jobs, two arrays; the dump's squeue.json) released at once.
// Jobs asking memory per CPU get the node Slurm counts most tightly: under --mem-per-cpu a node offers the
// CPUs its free memory pays for (job 109, `-n 3 --mem-per-cpu=500`: n054 and n087 both offer 6, and n054
// comes first; by free CPUs alone n087 wins and the jobs after it move). And Slurm says ReqNodeNotAvail
// only when none of the job's unheld nodes by partition and features is busy (node_scheduler.c
// _pick_best_nodes: `!runable_avail && !nodes_busy`): job 118 (`--gres=gpu:v100:1`, every v100 node held)
// is Resources and blocks partition all, for n096 runs the --exclusive job 107. Slurm started 100 and left
// 11 Priority, 5 ReqNodeNotAvail (the array 117 among them), 2 Resources, 5 BadConstraints, 1
// PartitionTimeLimit (`-t 2:30:00 -p short`, MaxTime 1 h) and 1 "Nodes required...". The queue ran under
// sched/backfill, whose main pass takes job records: job 102 (`--prefer ssd -p all`, every ssd node held)
// is ReqNodeNotAvail with its preferred features, which fails no partition, and its --constraint record
// then starts it on n024 (JobTable::Fallback), so job 103 takes n001 and job 115 (`-N 3
// [icelake|skylake]`) n[049,061,093].
TEST(SlurmMainPass, MemoryPerCpuAndBusyNodesAsSlurmCountsThem) {
  EXPECT_EQ(expect_main_pass("", "c100-queue-slurm.tsv", "c100-queue"), (Outcomes{{"started", 100},
                                                                                  {"Priority", 11},
                                                                                  {"ReqNodeNotAvail", 5},
                                                                                  {"Resources", 2},
                                                                                  {"BadConstraints", 5},
                                                                                  {"PartitionTimeLimit", 1},
                                                                                  {kHeld, 1}}));
}

// --prefer as slurmctld 22.05.8's main pass has it (datasets/slurm/c100-prefer.jobs: the 20 gpu nodes taken
// by --exclusive jobs, then 7 jobs; sched/builtin, so the main pass walks the job list): the job is
// scheduled by its preferred features instead of its --constraint, and its --constraint is not tried
// after (under job records it is once the preferred nodes are all held: MemoryPerCpuAndBusyNodesAsSlurmCountsThem,
// job 102): preferred features no node of its partition has
// leave it BadConstraints (jobs 21, `-C eth&bigmem --prefer intel -p amd`, and 24, `-c 2 --prefer intel -p
// amd`, while job 22, `-c 1 -p amd`, starts), preferred nodes all busy leave it Resources and block its
// partition (23 in short, 26 in all; 25 and 27 behind them are Priority).
TEST(SlurmMainPass, PreferIsTriedInsteadOfTheConstraint) {
  EXPECT_EQ(expect_main_pass("c100-prefer.jobs", "c100-prefer-slurm.tsv", "c100@builtin"),
            (Outcomes{{"started", 21}, {"refused at submit", 2}, {"Resources", 2}, {"Priority", 2}}));
}

// PriorityTier (datasets/slurm/c100-tiers: the 100-node cluster with short at PriorityTier 3 and gpu at 2,
// the others 1; 40 jobs): when partitions differ in tier, slurmctld 22.05.8's main pass sorts its queue by
// the partition's tier first (job_scheduler.c sort_job_queue2), so every short job goes before every gpu
// job, and those before the jobs of all, amd and big, whatever the order they came in: jobs 6-10 (`-N 6
// --exclusive -p short`) start before jobs 1-5 (`-N 12 --exclusive -p all`, submitted first), 34 blocks
// short, 13 gpu (short's exclusive jobs took gpu nodes below n050), 4 all; amd's and big's jobs then find
// every node held by all ("Nodes required..."); job 38 (`-p short,amd`) finds short blocked, and amd too
// where its record of tier 1 comes (Priority). Fails with the tier left out of the order (jobs 1-5 first).
TEST(SlurmMainPass, PartitionsOfAHigherPriorityTierGoFirst) {
  EXPECT_EQ(expect_main_pass("c100-tiers.jobs", "c100-tiers-slurm.tsv", "c100-tiers"),
            (Outcomes{{"started", 16}, {"Resources", 3}, {"Priority", 19}, {kHeld, 2}}));
}

// A job of partitions of different tiers has a queue record at each tier's place (datasets/slurm/
// c100-tiers2.jobs, on the c100-tiers cluster): job 3 (`-p short,amd`) is tried in short right after job 1
// filled it, and in amd only after job 2 (`-N 25 --exclusive -p amd`, submitted before it) failed amd, so it
// pends Priority; tried in both at its short place it would have started in amd. Job 6 (`-p gpu,amd`)
// starts in gpu at tier 2, before job 4 of all.
TEST(SlurmMainPass, AJobOfSeveralTiersIsTriedAtEachTiersPlace) {
  EXPECT_EQ(expect_main_pass("c100-tiers2.jobs", "c100-tiers2-slurm.tsv", "c100-tiers"),
            (Outcomes{{"started", 6}, {"Resources", 1}, {"Priority", 2}}));
}

// A PriorityTier that is not a tier (0 to 65535) is refused naming the file, line and field.
TEST(SlurmJobs, ABadPriorityTierIsRefusedWithItsLine) {
  const fs::path dir = fs::temp_directory_path() / "colmatch_slurm_tier";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(kData + "c100-tiers")) fs::copy(e.path(), dir / e.path().filename());
  std::ifstream in(dir / "scontrol-partition.txt");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const size_t at = text.find("PriorityTier=3");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 14, "PriorityTier=high");
  std::ofstream(dir / "scontrol-partition.txt") << text;
  try {
    loaders::load_slurm(dir.string(), kData + "c100-tiers.jobs");
    ADD_FAILURE() << "no error";
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.field, "PriorityTier");
    EXPECT_EQ(e.line, 4u);
    EXPECT_NE(std::string(e.what()).find("'high' is not a priority tier"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

// A matching OR over several nodes (datasets/slurm/c100-matching-or.jobs: 23 --exclusive jobs leave two
// milan nodes free, then 11 jobs of -N 2 to 30): every node of a job has the same choice, the choices
// tried in the order written (node_scheduler.c _pick_best_nodes: one select per choice of the XOR
// list). Job 24 (-N 3 [milan|rome]) gets three rome nodes, job 25 (-N 2 [milan|rome]) the two milan
// ones; job 30 (-N 5 [skylake|rome|icelake] -p short) five skylake ones. A job no single choice could
// hold (31: -N 30 [milan|rome], 25 nodes each; 33: -N 20 [skylake|icelake] -p short) is BadConstraints,
// though the choices together have enough, and blocks nothing (32 and 34 after them start).
TEST(SlurmMainPass, MatchingOrGivesEveryNodeOneChoice) {
  EXPECT_EQ(expect_main_pass("c100-matching-or.jobs", "c100-matching-or-slurm.tsv", "c100@builtin"),
            (Outcomes{{"started", 32}, {"refused at submit", 2}}));
}

// -n with --ntasks-per-node and no -N, and GPUs per task (datasets/slurm/c100-tasks-per-node.jobs,
// sched/builtin; scontrol show job -d): `-n 8 --ntasks-per-node=2` ran on 4 nodes of 2 CPUs, `-n 5
// --ntasks-per-node=2` on 3 nodes of 2 (6 tasks: Slurm rounds up), `-N 1 -n 3 --gpus-per-task=1` on an a100
// node (3 GPUs), `--gpus-per-node=2 --cpus-per-gpu=16 --mem-per-gpu=1000` took 32 CPUs and 2000 MiB.
TEST(SlurmMainPass, TasksPerNodeAndGpusPerTaskAsSlurmCountsThem) {
  // apart: job 5 (`-N 2 --ntasks-per-node=2 --gpus-per-task=1 -c 2`), two GPUs a node: Slurm took two a100
  // nodes of 4 GPUs (n060, n090), colmatch two v100 nodes of 2 (n015, n045), all of weight 1; how cons_tres
  // weighs a node's GPUs for --gpus-per-task is not modelled
  EXPECT_EQ(expect_main_pass("c100-tasks-per-node.jobs", "c100-tasks-per-node-slurm.tsv", "c100@builtin", {"5"}),
            (Outcomes{{"started", 6}, {"apart", 1}}));
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100", kData + "c100-tasks-per-node.jobs");
  const size_t cpus = static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("cpus")));
  const size_t mem = static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("mem")));
  const size_t gpu = static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("gres/gpu")));
  EXPECT_EQ(ds.jobs.slots[0], 4u);
  EXPECT_EQ(ds.jobs.amount.at(cpus, 0), 2.0);
  EXPECT_EQ(ds.jobs.slots[2], 3u);
  EXPECT_EQ(ds.jobs.amount.at(gpu, 3), 3.0);
  EXPECT_EQ(ds.jobs.amount.at(cpus, 5), 32.0);
  EXPECT_EQ(ds.jobs.amount.at(mem, 5), 2000.0 * 1024 * 1024);
}

// A matching OR of groups (datasets/slurm/c100-groups.jobs, sched/builtin): each choice in parentheses is
// one choice, every node of the job satisfies the same one, tried in the order written. `-N 12
// [(amd&ssd)|(intel&eth)]` takes 12 intel eth nodes (10 amd ssd ones are too few), `-N 2 [(intel&ib)|amd]&gpu`
// two intel ib gpu ones, `[(amd|gpu)|ssd]` amd ones, `-N 40 [(intel&ib)|(amd&eth)]` (34 and 17) never runs
// (refused at submit), `-N 20 [(amd&eth)|(intel&ib)]` twenty intel ib ones.
TEST(SlurmMainPass, MatchingOrOfGroupsGivesEveryNodeOneGroup) {
  EXPECT_EQ(expect_main_pass("c100-groups.jobs", "c100-groups-slurm.tsv", "c100@builtin"),
            (Outcomes{{"started", 13}, {"refused at submit", 1}}));
}

// -w (datasets/slurm/c100-nodelist.jobs): a job that names its nodes takes every one of them (job 4, -w
// n[020-022]: three nodes; job 5, -N 3 -w n[030-032]), and when it cannot run it holds them for the rest
// of the pass and blocks no partition (job_scheduler.c: req_node_bitmap covering min_nodes): job 2 (-w
// n010, busy with the --exclusive job 1) is Resources and job 3 after it starts; job 6 (-w n[010,011])
// finds n010 held (ReqNodeNotAvail) and holds n011, so job 7 (-w n011) is ReqNodeNotAvail too. Apart: job 9
// (-N 2 -w n040: n040 and one more, Slurm n[009,040]), which colmatch rejects.
TEST(SlurmMainPass, NamedNodesAreHeldNotThePartition) {
  EXPECT_EQ(expect_main_pass("c100-nodelist.jobs", "c100-nodelist-slurm.tsv", "c100@builtin"),
            (Outcomes{{"started", 7}, {"Resources", 1}, {"ReqNodeNotAvail", 2}}));
}

// Node counts in constraints and -w naming fewer nodes than -N (datasets/slurm/c100-counts.jobs, 40 jobs
// released at once): slurmctld 22.05.8 picks each count's nodes first (node_scheduler.c _get_req_features:
// `ssd*2` two ssd nodes by the node choice, `[amd*2&intel*2]` two amd then two intel apart from them), then
// the rest of -N with the picked nodes required (cons_tres _eval_nodes); the feature expression then filters
// no node (job 4, `ssd*2&ib`, runs on eth n015). -N below the counts is BadConstraints (jobs 3, 9), as is a
// count above the feature's nodes (13). A -w job of more nodes than it names takes them and others (17:
// n[040,090]) and, when it cannot run, blocks its partition as any job (36: Resources), where one naming
// all its nodes holds them (35). Job 39 (`ssd*2`, every ssd node held by gpu's block) is ReqNodeNotAvail.
TEST(SlurmMainPass, NodeCountsPickTheirNodesFirst) {
  EXPECT_EQ(
      expect_main_pass("c100-counts.jobs", "c100-counts-slurm.tsv", "c100@builtin", {"38"}),
      (Outcomes{{"started", 32}, {"apart", 1}, {"refused at submit", 4}, {"Resources", 2}, {"ReqNodeNotAvail", 1}}));
}

// -n N without -N (datasets/slurm/c100-tasks.jobs, 26 jobs released at once): slurmctld 22.05.8 spreads the
// tasks over as few nodes as its selection gives (cons_tres _eval_nodes with one node at least): the best
// run's best fit node when one holds every task left, else the run's nodes each with what it can take
// (job 1, `-n 200`: n006 with 128, then n015 with the other 72, where a best fit holds them); scontrol show
// job -d gave the CPUs per node of jobs 1-8, colmatch's tasks per node times -c equal them (README). Job 20
// (`-n 400`) takes 17 nodes. A job without --mem would take a node's whole memory (not modelled: every job
// here has --mem-per-cpu).
TEST(SlurmMainPass, TasksSpreadOverAsFewNodesAsSlurmGives) {
  EXPECT_EQ(expect_main_pass("c100-tasks.jobs", "c100-tasks-slurm.tsv", "c100@builtin"),
            (Outcomes{{"started", 21}, {"Resources", 1}, {"Priority", 4}}));
  // on the one-weight cluster runs are long: the best fit node of a run that holds every task left (job 2,
  // `-n 100`: n006 of 128 CPUs in the run n001-n010), else the run's nodes from its first (job 5, `-n 300`:
  // n002-n010)
  EXPECT_EQ(expect_main_pass("c100-flat-tasks.jobs", "c100-flat-tasks-slurm.tsv", "c100-flat"),
            (Outcomes{{"started", 15}}));
}

// A job without --mem or --mem-per-cpu under CR_Core_Memory with no DefMemPerCPU or DefMemPerNode takes a
// node's whole memory (datasets/slurm/c100-nomem.jobs, 15 jobs released at once; scontrol show job -d:
// MinMemoryNode=0, Mem=256000 on n024): it needs a node where no job holds memory, and leaves none to others
// (job 2, `-c 2`, takes the idle n024, not n009 where job 1 holds 1000 MiB; job 3 with --mem goes to n009).
TEST(SlurmMainPass, AJobWithoutMemoryTakesANodesWholeMemory) {
  EXPECT_EQ(expect_main_pass("c100-nomem.jobs", "c100-nomem-slurm.tsv", "c100@builtin"), (Outcomes{{"started", 15}}));
}

// With DefMemPerCPU (or DefMemPerNode) set, such a job gets that memory and shares nodes; with CR_Core (no
// memory tracked) it takes none. (scontrol-config.txt of the c100 dump, its setting changed in a copy.)
TEST(SlurmJobs, DefaultMemoryComesFromTheClusterConfiguration) {
  auto load_with = [&](const std::string& key, const std::string& value) {
    const fs::path dir = fs::temp_directory_path() / ("colmatch-slurm-" + std::to_string(::getpid()) + "-mem");
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (const auto& e : fs::directory_iterator(kData + "c100"))
      if (e.path().filename() != "scontrol-config.txt") fs::copy(e.path(), dir / e.path().filename());
    std::ifstream in(kData + "c100/scontrol-config.txt");
    std::ofstream out(dir / "scontrol-config.txt");
    bool set = false;
    for (std::string line; std::getline(in, line);) {
      const bool here = line.rfind(key + " ", 0) == 0;
      out << (here ? key + " = " + value : line) << "\n";
      set = set || here;
    }
    if (!set) out << key << " = " << value << "\n";  // (c100's shows no DefMemPerCPU)
    out.close();
    const std::string jobs = temp_file("mem-jobs", "-c 2\n-c 2 --mem=500\n");
    loaders::Dataset ds = loaders::load_slurm(dir.string(), jobs);
    fs::remove_all(dir);
    fs::remove(jobs);
    return ds;
  };
  auto mem_of = [](const loaders::Dataset& ds, uint32_t j) {
    return ds.jobs.amount.at(static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("mem"))), j) /
           (1024 * 1024);
  };
  const loaders::Dataset per_cpu = load_with("DefMemPerCPU", "300");
  EXPECT_EQ(mem_of(per_cpu, 0), 600.0) << "300 MiB a CPU, 2 CPUs";
  EXPECT_FALSE(per_cpu.catalog.find("jobs").has_value()) << "no job takes a whole node";
  const loaders::Dataset per_node = load_with("DefMemPerNode", "2G");
  EXPECT_EQ(mem_of(per_node, 0), 2048.0);
  const loaders::Dataset untracked = load_with("SelectTypeParameters", "CR_CORE");
  EXPECT_TRUE(std::isnan(mem_of(untracked, 0))) << "no memory asked, none taken";
  EXPECT_FALSE(untracked.catalog.find("jobs").has_value());
  const loaders::Dataset whole = load_with("DefMemPerCPU", "UNLIMITED");
  ASSERT_TRUE(whole.catalog.find("jobs").has_value());
  try {
    load_with("DefMemPerCPU", "lots");
    ADD_FAILURE() << "a DefMemPerCPU that is no size is refused";
  } catch (const loaders::LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("scontrol-config.txt:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("DefMemPerCPU"), std::string::npos) << e.what();
  }
}

// The same on a cluster of one weight (datasets/slurm/c100-flat: FLAT=1 for slurm_cluster.py), where runs of
// adjacent nodes are long: a job's other nodes come from the run holding its required ones, up from the
// first of them, then down (cons_tres _eval_nodes: job 1, `-N 3 -w n010`, n[010-012]; job 2, `-N 4 -w
// n[020,023]`, n[020-023]).
TEST(SlurmMainPass, RequiredNodesBringTheirRun) {
  EXPECT_EQ(expect_main_pass("c100-flat.jobs", "c100-flat-slurm.tsv", "c100-flat"),
            (Outcomes{{"started", 22}, {"refused at submit", 2}, {"Resources", 1}}));
}

// Jobs of several partitions (datasets/slurm/c100-partitions.jobs: the 20 gpu nodes taken by --exclusive
// jobs, then jobs of two or three partitions, then short filled): slurmctld queues one record per
// partition and tries them in the order written, each failure failing that partition. Job 21 (-p
// gpu,short) finds no room in gpu, blocks it and starts in short, so job 22 (-p gpu) is Priority; job 24
// (-p amd,short -C intel) can never run in amd and starts in short; job 25 (-p amd,gpu -C intel) stays
// BadConstraints (never in amd, gpu blocked); job 73 (-p short,amd) after short blocked starts in amd, job
// 74 (-p short,gpu) is Priority. Slurm started 65 and left 9 Priority, 1 Resources, 1 BadConstraints.
TEST(SlurmMainPass, JobsOfSeveralPartitionsTryEachInTurn) {
  EXPECT_EQ(expect_main_pass("c100-partitions.jobs", "c100-partitions-slurm.tsv", "c100@builtin"),
            (Outcomes{{"started", 65}, {"Priority", 9}, {"Resources", 1}, {"BadConstraints", 1}}));
}

// 520 held jobs released at once on the 10,000-node cluster (datasets/slurm/c10k-batch.jobs, with jobs of
// 500 to 3,000 nodes; the main pass allowed 50 s, bench/peers/slurm_oracle.sh). Every job as Slurm left it:
// - a job with GRES counts on a node only the CPUs of the tasks it may run there (cons_tres
//   gres_select_filter_sock_core): whole tasks of -c CPUs; job 30 (`-C [bigmem|ssd] -c 16
//   --gres=gpu:a100:1`) takes n00570 (24 free CPUs: one task of 16) before n03240 (16 free), both 16;
// - --prefer never runnable in the partition: BadConstraints (jobs 66, 162, 188);
// - a job of K nodes whose partition has fewer than K nodes left (the others held for blocked partitions) is
//   "Nodes required for job are DOWN, DRAINED or reserved..." and blocks it (job 260, -N 1500); one with
//   fewer than K of its eligible nodes unheld is ReqNodeNotAvail and blocks nothing (job 208, -N 1000);
// - more nodes than the partition has: PartitionNodeLimit (job 364, -N 3000 -p gpu).
// Slurm started 283 and left 178 Priority, 28 BadConstraints, 28 ReqNodeNotAvail, 1 Resources, 1 "Nodes
// required..." and 1 PartitionNodeLimit.
TEST(SlurmMainPass, TenThousandNodesReleasedAtOnce) {
  EXPECT_EQ(expect_main_pass("c10k-batch.jobs", "c10k-batch-slurm.tsv", "c10k@builtin"),
            (Outcomes{{"started", 283},
                      {"Priority", 170},
                      {"refused at submit", 36},
                      {"ReqNodeNotAvail", 28},
                      {"Resources", 1},
                      {kHeld, 1},
                      {"PartitionNodeLimit", 1}}));
}

// What Slurm's best fit counts on a node for a job (JobTable::FitUnit: whole tasks of -c CPUs, a limit per
// task, a cap on tasks): only jobs with GRES or --mem-per-cpu carry one (cons_tres job_test.c
// _select_cores: max_tasks_this_node; the MEM_PER_CPU branch). And partition node limits.
TEST(SlurmJobs, WhatTheBestFitCountsAndPartitionNodeLimits) {
  const loaders::Dataset ds = load_lines("fit",
                                         "-c 16 --gres=gpu:1\n"                          // 0: whole tasks
                                         "-c 16\n"                                       // 1: free CPUs
                                         "-N 1 -n 3 --gres=gpu:1\n"                      // 2: all 3 tasks
                                         "-n 3 --gres=gpu:1\n"                           // 3: no -N: what fits
                                         "-N 2 --ntasks-per-node=2 -c 4 --gres=gpu:1\n"  // 4: 2 a node
                                         "-n 1 -c 4 --gres=gpu:1\n"                      // 5: one task
                                         "-N 3 -n 3 -c 2 --gres=gpu:1\n"                 // 6: one a node
                                         "-c 4 --mem-per-cpu=100\n"                      // 7: memory per task
                                         "-N 5 -p big --mem=1000\n"                      // 8: over MaxNodes 4
                                         "-N 101 --mem=1000\n"                           // 9: over the 100 nodes
                                         "-N 4 -p big --mem=1000\n");                    // 10: within
  ASSERT_EQ(ds.jobs.size(), 11u);
  using F = JobTable::FitUnit;
  EXPECT_EQ(ds.jobs.fit_unit_of(0), (F{16, 0, 0}));
  EXPECT_EQ(ds.jobs.fit_unit_of(1), (F{}));
  EXPECT_EQ(ds.jobs.fit_unit_of(2), (F{1, 0, 3}));
  EXPECT_EQ(ds.jobs.fit_unit_of(3), (F{}));  // one CPU a task, no cap: its free CPUs
  EXPECT_EQ(ds.jobs.fit_unit_of(4), (F{4, 0, 2}));
  EXPECT_EQ(ds.jobs.fit_unit_of(5), (F{4, 0, 1}));
  EXPECT_EQ(ds.jobs.fit_unit_of(6), (F{2, 0, 1}));
  EXPECT_EQ(ds.jobs.fit_unit_of(7), (F{4, 400.0 * 1024 * 1024, 0}));
  auto note = [&](uint32_t j) {
    return ds.jobs.note[j] == kNone ? std::string() : ds.jobs.notes.value(ds.jobs.note[j]);
  };
  EXPECT_EQ(note(8), "PartitionNodeLimit");
  EXPECT_EQ(note(9), "PartitionNodeLimit");
  EXPECT_EQ(note(10), "");
  // jobs that ask no memory at all (0 to 6) take a node's whole memory under CR_Core_Memory with no
  // DefMemPerCPU (c100's config): all of `jobs`, as --exclusive does
  // (SlurmMainPass.AJobWithoutMemoryTakesANodesWholeMemory)
  ASSERT_TRUE(ds.catalog.find("jobs").has_value());
  const size_t jobs = static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("jobs")));
  for (uint32_t j = 0; j < 7; ++j) EXPECT_EQ(ds.jobs.amount.at(jobs, j), 128.0) << j;
  for (uint32_t j = 7; j < 11; ++j) EXPECT_EQ(ds.jobs.amount.at(jobs, j), 1.0) << j;
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  EXPECT_EQ(m.dispatch.reason[8], PendingReason::NoEligibleTasker);
  EXPECT_EQ(m.dispatch.reason[9], PendingReason::NoEligibleTasker);
  EXPECT_EQ(m.dispatch.status[10], JobStatus::Assigned);
}

TEST(SlurmConstraint, LeftToRightParenthesesBracketsAndRefusals) {
  const std::set<std::string> known{"a", "b", "c"};
  auto req = [&](const char* c) { return loaders::slurm::translate_constraint(c, known, "f").request; };
  auto refusal = [&](const char* c) { return loaders::slurm::translate_constraint(c, known, "f").refusal; };
  EXPECT_EQ(req("a"), "f==\"a\"");
  EXPECT_EQ(req("a|b&c"), "((f==\"a\" || f==\"b\") && f==\"c\")");  // strictly left to right
  EXPECT_EQ(req("a&b|c"), "((f==\"a\" && f==\"b\") || f==\"c\")");
  EXPECT_EQ(req("a,b"), "(f==\"a\" && f==\"b\")");
  EXPECT_EQ(req("a&(b|c)"), "(f==\"a\" && (f==\"b\" || f==\"c\"))");
  EXPECT_EQ(req("[a|b]&c"), "((f==\"a\" || f==\"b\") && f==\"c\")");
  EXPECT_EQ(req("a&"), "f==\"a\"");  // a trailing operator is ignored, as Slurm does
  // a matching OR's choices are tried in order: soft terms prefer a node of an earlier choice
  EXPECT_EQ(loaders::slurm::translate_constraint("[a|b|c]&x", {"a", "b", "c", "x"}, "f").preference,
            "f==\"a\" && (f==\"a\" || f==\"b\")");
  EXPECT_EQ(loaders::slurm::translate_constraint("a|b", known, "f").preference, "");
  // groups in brackets, each a choice (slurmctld 22.05.8 accepts them: c100-constraints-submit-slurm.tsv);
  // a first choice that is a group stays one soft term (its negation negated: `a && b` would be two)
  EXPECT_EQ(req("[(a&b)|c]"), "((f==\"a\" && f==\"b\") || f==\"c\")");
  EXPECT_EQ(loaders::slurm::translate_constraint("[(a&b)|(b&c)|a]", known, "f").preference,
            "!(!(f==\"a\") || !(f==\"b\")) && ((f==\"a\" && f==\"b\") || (f==\"b\" && f==\"c\"))");
  EXPECT_EQ(req("[(a|b)]"), "(f==\"a\" || f==\"b\")");
  EXPECT_EQ(req("([a|b])"), "(f==\"a\" || f==\"b\")");
  EXPECT_EQ(req("(a&[b|c])"), "(f==\"a\" && (f==\"b\" || f==\"c\"))");
  // refused by slurmctld 22.05.8 (sbatch, 2026-11-26 and 2026-11-29): `[a&b]` (& in brackets without
  // counts), two sets of brackets, | in brackets with a count, a count in parentheses (in brackets too),
  // parentheses in parentheses, `*` without a number or of 0, an operator before a closing bracket
  for (const char* bad : {"!a",
                          "A",
                          "x",
                          "a||b",
                          "a&&b",
                          "|a",
                          "()",
                          "[]",
                          "((a|b)&c)",
                          "((a))",
                          "[([a|b])]",
                          "([a*1&b*1])",
                          "[(a*2&b)|c]",
                          "[(a&b)&(b&c)]",
                          "[(a|b)&c]",
                          "[(a&b)|(b&c)]&[a|c]",
                          "",
                          "[a&b]",
                          "[a|b]&[b|c]",
                          "[a*2|b]",
                          "[a*1&b]",
                          "[a&b*1]",
                          "(a*2)",
                          "(a|b*1)",
                          "a*",
                          "a*0",
                          "a*-1",
                          "[a*1&b*1]&[c*1&a*1]",
                          "[a|]",
                          "(a&)",
                          "*2"})
    EXPECT_EQ(refusal(bad), "Invalid feature specification") << bad;
  // node counts: the expression filters nothing, each count is a pick (apart in brackets)
  using Count = loaders::slurm::Constraint::Count;
  auto counts = [&](const char* c) {
    const loaders::slurm::Constraint x = loaders::slurm::translate_constraint(c, known, "f");
    EXPECT_EQ(x.request, "") << c;
    EXPECT_EQ(x.refusal, "") << c;
    std::vector<std::tuple<std::string, uint32_t, bool>> out;
    for (const Count& n : x.counts) out.emplace_back(n.term, n.count, n.apart);
    return out;
  };
  using T = std::tuple<std::string, uint32_t, bool>;
  EXPECT_EQ(counts("a*2"), (std::vector<T>{{"f==\"a\"", 2, false}}));
  EXPECT_EQ(counts("b&a*3|c"), (std::vector<T>{{"f==\"a\"", 3, false}}));  // b and c filter nothing
  EXPECT_EQ(counts("[a*2]"), (std::vector<T>{{"f==\"a\"", 2, false}}));
  EXPECT_EQ(counts("a*+2x"), (std::vector<T>{{"f==\"a\"", 2, false}}));  // strtol's sign; the rest skipped
  EXPECT_EQ(counts("c&[a*1&b*2]"), (std::vector<T>{{"f==\"a\"", 1, true}, {"f==\"b\"", 2, true}}));
  // placed by Slurm in ways colmatch does not follow yet: its own reasons
  EXPECT_NE(refusal("a*1&b*1").find("several node counts"), std::string::npos);
  EXPECT_NE(refusal("a*1&[b*1&c*1]").find("several node counts"), std::string::npos);
  EXPECT_NE(refusal("[a|b]&c*2").find("matching OR"), std::string::npos);
  EXPECT_NE(refusal("a*1000001").find("1000000"), std::string::npos);
  EXPECT_NE(refusal(std::string(5000, 'a').c_str()).find("4096"), std::string::npos);
}

TEST(SlurmText, HostListsTimesMemoryAndRecords) {
  using loaders::slurm::expand_hostlist;
  EXPECT_EQ(expand_hostlist("n[001-003,010],gpu01"),
            (std::vector<std::string>{"n001", "n002", "n003", "n010", "gpu01"}));
  EXPECT_EQ(expand_hostlist("r[1-2]-n[01-02]"), (std::vector<std::string>{"r1-n01", "r1-n02", "r2-n01", "r2-n02"}));
  for (const char* bad : {"n[1-", "n[3-1]", "n[[1]]", "n1]", "n[a-b]"})
    EXPECT_THROW(expand_hostlist(bad), std::invalid_argument) << bad;
  EXPECT_THROW(expand_hostlist("n[0-99999999]"), std::invalid_argument);
  // a range of 2^64 numbers (its size wraps to 0) and a list longer than asked: refused before expanding
  EXPECT_THROW(expand_hostlist("n[0-18446744073709551615]"), std::invalid_argument);
  EXPECT_THROW(expand_hostlist("n[1-101]", 100), std::invalid_argument);
  EXPECT_EQ(expand_hostlist("n[1-100]", 100).size(), 100u);
  using loaders::slurm::parse_slurm_time;
  EXPECT_EQ(parse_slurm_time("90"), 5400);
  EXPECT_EQ(parse_slurm_time("10:30"), 630);
  EXPECT_EQ(parse_slurm_time("01:00:00"), 3600);
  EXPECT_EQ(parse_slurm_time("2-00:00:00"), 172800);
  EXPECT_EQ(parse_slurm_time("1-12"), 129600);
  EXPECT_TRUE(std::isinf(parse_slurm_time("UNLIMITED")));
  EXPECT_THROW(parse_slurm_time("soon"), std::invalid_argument);
  EXPECT_EQ(loaders::slurm::parse_mebibytes("16G"), 16384);
  EXPECT_EQ(loaders::slurm::parse_mebibytes("8000"), 8000);
  EXPECT_EQ(loaders::slurm::parse_mebibytes("1T"), 1048576);
  EXPECT_THROW(loaders::slurm::parse_mebibytes("-1"), std::invalid_argument);
  const std::string p = temp_file("nodes", "NodeName=a OS=Linux 6.1.0-9 #1 SMP Debian CPUTot=4 Weight=2\n");
  const auto recs = loaders::slurm::read_records(p, "NodeName");
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(*recs[0].get("OS"), "Linux 6.1.0-9 #1 SMP Debian");  // a value with blanks
  EXPECT_EQ(*recs[0].get("CPUTot"), "4");
  fs::remove(p);
}

// -N K: K slots of the per-node request (AllocationRule::OnePerTasker), each on a node of its own; -n
// spread evenly over them; a job that fewer than K nodes could run can never start; a matching OR gives
// all K nodes one choice. What is not placed yet is rejected with why: an uneven -n, --gpus for the whole
// job.
TEST(SlurmJobs, MultiNodeJobsTakeEachNodeOnce) {
  const loaders::Dataset ds = load_lines("multi",
                                         "-N 3 -C amd -c 16 --mem=8G -p amd\n"
                                         "-N 2 -n 8 -c 2 --mem=1000\n"
                                         "-N 21 -p gpu --mem=1000\n"
                                         "-N 2 -C [amd|gpu] --mem=1000\n"
                                         "-N 3 -n 4 --mem=1000\n"
                                         "-N 2 --gpus=2 --mem=1000\n"
                                         "-N 2 --exclusive --mem=1000 -p gpu\n"
                                         "-C amd --mem=1000\n");
  ASSERT_EQ(ds.jobs.size(), 8u);
  auto why = [&](uint32_t j) { return why_rejected(ds, j); };
  EXPECT_EQ(ds.jobs.slots[0], 3u);
  EXPECT_EQ(ds.jobs.rule[0], AllocationRule::OnePerTasker);
  EXPECT_EQ(why(3), "");
  EXPECT_NE(why(4).find("uneven"), std::string::npos) << why(4);
  EXPECT_NE(why(5).find("--gpus"), std::string::npos) << why(5);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, nullptr, ds.dispatch);
  const auto& cons = ds.catalog.consumables();
  const size_t k_cpus =
      static_cast<size_t>(std::find(cons.begin(), cons.end(), *ds.catalog.find("cpus")) - cons.begin());
  auto nodes_of = [&](uint32_t j) {
    std::vector<std::string> out;
    for (uint32_t a = 0; a < m.dispatch.alloc_count[j]; ++a) {
      const Allocation& x = m.dispatch.allocations[m.dispatch.alloc_first[j] + a];
      EXPECT_EQ(x.slots, 1u) << "one slot a node";
      out.push_back(ds.taskers.names[x.tasker]);
    }
    return out;
  };
  ASSERT_EQ(m.dispatch.status[0], JobStatus::Assigned);
  const std::vector<std::string> first = nodes_of(0);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(std::set<std::string>(first.begin(), first.end()).size(), 3u) << "three nodes";
  for (uint32_t t = 0; t < ds.taskers.size(); ++t) {
    const double cfg = ds.taskers.columns[cons[k_cpus]].queue().num(t);
    const double taken = cfg - m.dispatch.capacity.queue_free(k_cpus)[t];
    const auto n = ds.taskers.names[t];
    const bool by_first = std::find(first.begin(), first.end(), n) != first.end();
    const auto second = nodes_of(1);
    const bool by_second = std::find(second.begin(), second.end(), n) != second.end();
    double ones = 0;  // jobs 3, 6 and 7 take one CPU on each of their nodes
    for (const uint32_t j : {3u, 6u, 7u}) {
      const auto nodes = nodes_of(j);
      ones += static_cast<double>(std::count(nodes.begin(), nodes.end(), n));
    }
    EXPECT_EQ(taken, (by_first ? 16 : 0) + (by_second ? 8 : 0) + ones)
        << n << ": 16 CPUs on each node of the first job, 4 tasks x 2 on each of the second";
  }
  EXPECT_EQ(nodes_of(1).size(), 2u);
  EXPECT_EQ(m.eligible[m.categories.of_job[2]].eligible.count(), 0u) << "21 nodes of a 20-node partition";
  EXPECT_EQ(m.dispatch.reason[2], PendingReason::NoEligibleTasker);
  ASSERT_EQ(m.dispatch.status[6], JobStatus::Assigned);
  EXPECT_EQ(nodes_of(6).size(), 2u);
  ASSERT_EQ(m.dispatch.status[3], JobStatus::Assigned);  // [amd|gpu]: two amd nodes, the first choice
  const kernels::TaskerSet& amd = m.eligible[m.categories.of_job[7]].eligible;  // every amd node
  ASSERT_EQ(m.dispatch.alloc_count[3], 2u);
  for (uint32_t a = 0; a < 2; ++a)
    EXPECT_TRUE(amd.contains(m.dispatch.allocations[m.dispatch.alloc_first[3] + a].tasker));
}

TEST(SlurmJobs, SbatchLinesScriptsAndWhatIsNotPlacedYet) {
  const loaders::Dataset ds =
      load_lines("jobs",
                 "-C \"[amd|gpu]\" --mem=8G -c 4\n"
                 "#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH -c2\necho hi\n"
                 "-N 2-4 -C amd\n"
                 "--exclusive\n"
                 "--bogus 1\n"
                 "-p nosuch\n"
                 "-p short -t 2:00:00\n"
                 "-w n005\n"
                 "-x n[001-099]\n"
                 "--ntasks-per-node=4 -c 32 --mem=1000\n"
                 "--mem=0\n");
  ASSERT_EQ(ds.jobs.size(), 11u);
  auto why = [&](uint32_t j) { return why_rejected(ds, j); };
  EXPECT_EQ(ds.jobs.reject[0], kNone) << why(0);
  EXPECT_EQ(ds.jobs.reject[1], kNone) << why(1);  // the #SBATCH lines of one script
  EXPECT_NE(why(2).find("a range of node counts"), std::string::npos) << why(2);
  EXPECT_EQ(why(3), "") << "--exclusive: a whole node (SlurmJobs.ExclusiveTakesAWholeNode)";
  EXPECT_NE(why(4).find("--bogus"), std::string::npos);
  EXPECT_NE(why(5).find("invalid partition"), std::string::npos);
  EXPECT_NE(why(2).find(":7: job 3:"), std::string::npos) << "file, line and job";
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  auto eligible = [&](uint32_t j) { return m.eligible[m.categories.of_job[j]].eligible.count(); };
  EXPECT_EQ(eligible(1), 10u);  // gpu partition, a100 nodes
  EXPECT_EQ(eligible(6), 0u);   // over short's MaxTime: pends for ever (PartitionTimeLimit)
  EXPECT_EQ(eligible(7), 1u);
  EXPECT_EQ(eligible(8), 1u);   // n100 only
  EXPECT_EQ(eligible(9), 24u);  // 4 tasks x 32 CPUs on one node: the 24 nodes of 128 CPUs
  EXPECT_NE(why(10).find("--mem=0"), std::string::npos);
}

}  // namespace
