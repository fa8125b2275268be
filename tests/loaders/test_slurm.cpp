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

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engine/batch/matcher.hpp"
#include "engine/match/categories.hpp"
#include "engine/schedule/simulation.hpp"
#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"
#include "loaders/slurm.hpp"
#include "loaders/slurm_constraint.hpp"
#include "loaders/slurm_text.hpp"
#include "loaders/writers/native_writer.hpp"
#include "tests/loaders/slurm_test_data.hpp"

using namespace colmatch;
using namespace colmatch::slurm_test;
namespace fs = std::filesystem;

namespace {

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

// The oracle asks `[..]` as `(..)` (bench/peers/slurm_oracle.sh ask: --test-only ignores a matching OR), so a
// request with brackets got the answer of its parenthesized form. What slurmctld says of each such request
// submitted as written (slurm_oracle.sh submit, 2026-11-29: datasets/slurm/c100-brackets-submit-slurm.tsv):
// `[ssd&gpu]` and `[ssd|gpu]&[ib|eth]` are refused ("Invalid feature specification"; job_scheduler.c
// build_feature_list and _valid_feature_list: one set of brackets, `&` in it with a count on every name),
// while `[(amd|gpu)]` and `([amd|gpu])`, asked as `((amd|gpu))` and refused for the nested parentheses, are
// accepted. Returns "" for a request without brackets, else the verdict as written.
std::string bracket_verdict(const std::string& request) {
  static const std::map<std::string, std::string> verdicts = read_verdicts("c100-brackets-submit-slurm.tsv");
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

// A matching OR with a '|' outside its brackets (`[ib|icelake]|ssd`): its parenthesized form, which the
// oracle asked, is another request, since Slurm takes the bracket's choices as the only ones and the terms
// beside it as a filter (SlurmCluster100.MatchingOrBesideOtherTermsAsSlurmReadsIt). For such a request the
// verdict as written decides (c100-brackets-submit-slurm.tsv): refused at submit, or accepted with nodes
// among the parenthesized answer's. True when `request` is one and was checked so here.
bool checked_as_written(const loaders::Dataset& ds, uint32_t j, const std::string& request,
                        const std::set<std::string>& got, const std::set<std::string>& asked) {
  const size_t c = request.find("-C ");
  if (c == std::string::npos) return false;
  const std::string constraint = request.substr(c + 3, request.find(' ', c + 3) - c - 3);
  const size_t open = constraint.find('['), close = constraint.find(']');
  if (open == std::string::npos || close == std::string::npos || constraint.find('[', open + 1) != std::string::npos)
    return false;  // (two sets of brackets: refused as invalid, checked as such below)
  if (constraint.substr(0, open).find('|') == std::string::npos &&
      constraint.substr(close).find('|') == std::string::npos)
    return false;
  const std::string verdict = bracket_verdict(request);
  if (verdict.find("Requested node configuration is not available") != std::string::npos) {
    EXPECT_NE(why_rejected(ds, j).find("Requested node configuration is not available"), std::string::npos);
    return true;
  }
  EXPECT_EQ(verdict, "accepted");
  EXPECT_EQ(ds.jobs.reject[j], kNone) << why_rejected(ds, j);
  EXPECT_FALSE(got.empty());
  for (const std::string& n : got) EXPECT_TRUE(asked.empty() || asked.count(n)) << n;
  return true;
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
  size_t invalid = 0, unavailable = 0, ok = 0, partial = 0, beside = 0;
  for (uint32_t j = 0; j < as.size(); ++j) {
    const Answer& a = as[j];
    SCOPED_TRACE(a.request + " (Slurm: " + a.verdict + ")");
    if (accepted_as_written_only(a.request, a.verdict)) {
      EXPECT_EQ(ds.jobs.reject[j], kNone) << ds.jobs.reject_reason[ds.jobs.reject[j]];
      continue;
    }
    {
      std::set<std::string> got;
      if (ds.jobs.reject[j] == kNone)
        for (uint32_t t : m.eligible[m.categories.of_job[j]].eligible.to_vector()) got.insert(ds.taskers.names[t]);
      if (checked_as_written(ds, j, a.request, got, split(a.nodes))) {
        ++beside;
        continue;
      }
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
  EXPECT_GE(beside, 4u);  // ([ib|icelake]|ssd and three more)
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
    {
      std::set<std::string> got;
      if (ds.jobs.reject[j] == kNone)
        for (uint32_t t : m.eligible[m.categories.of_job[j]].eligible.to_vector()) got.insert(ds.taskers.names[t]);
      if (checked_as_written(ds, j, request, got, {})) {  // (the answer is a digest: no nodes to compare)
        EXPECT_LE(got.size(), std::stoul(count));
        continue;
      }
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

// A matching OR beside other terms, as slurmctld 22.05.8 read it (datasets/slurm/c100-or-brackets: each
// line submitted as written, then alone on the restarted controller with salloc): the bracket's choices
// are the only choices, the other terms a filter folded left to right without the bracket (the operator
// before '[' dropped, the one after ']' joining what came before, or every node, to what follows):
// `[icelake|skylake]|amd -p amd` is refused (amd is no choice), `rome|[icelake|eth]` takes a rome eth node,
// `[icelake|gpu]|amd -p amd` a gpu node where the best fit amd node would be n003.
TEST(SlurmCluster100, MatchingOrBesideOtherTermsAsSlurmReadsIt) {
  std::ifstream in(kData + "c100-or-brackets-slurm.tsv");
  size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> f = tsv_fields(line, 3);
    const std::string &request = f[0], &verdict = f[1], &node = f[2];
    SCOPED_TRACE(line);
    const std::string path = temp_file("or-brackets", request + "\n");
    const loaders::Dataset ds = loaders::load_slurm(kData + "c100", path);
    fs::remove(path);
    const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, nullptr, ds.dispatch);
    if (verdict != "accepted") {
      EXPECT_NE(verdict.find("Requested node configuration is not available"), std::string::npos);
      EXPECT_EQ(m.dispatch.status[0], JobStatus::Rejected);
      EXPECT_NE(why_rejected(ds, 0).find("Requested node configuration is not available"), std::string::npos);
    } else {
      ASSERT_EQ(m.dispatch.status[0], JobStatus::Assigned);
      EXPECT_EQ(ds.taskers.names[m.dispatch.tasker[0]], node);
    }
    ++n;
  }
  EXPECT_EQ(n, 12u);
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

// sacct's Eligible (job_mgr.c job_independent's begin time): a job eligible in the second that jobs of the
// list ended waits for them in the replay; one eligible when no job ended, until that time; one eligible
// when more than 64 jobs ended in that second, until that time too (which it waited for cannot be told,
// and the work per job stays bounded). Fails with the bound removed (job 99 waits for the 70).
TEST(SlurmAccounting, EligibleAfterSubmitIsADependencyOrABeginTime) {
  std::string text =
      "JobIDRaw|Submit|Eligible|Start|End|Timelimit|NNodes|NCPUS|ReqMem|Constraints|ReqTRES|"
      "Partition|User|Account|QOS|State\n";
  auto line = [&](int id, const char* submit, const char* eligible, const char* start, const char* end) {
    text += fmt::format("{}|{}|{}|{}|{}|00:10:00|1|1|100M||cpu=1,mem=100M,node=1|all|root|||COMPLETED\n", id, submit,
                        eligible, start, end);
  };
  line(1, "2026-11-20T10:00:00", "2026-11-20T10:00:00", "2026-11-20T10:00:00", "2026-11-20T10:01:00");
  line(2, "2026-11-20T10:00:01", "2026-11-20T10:01:01", "2026-11-20T10:01:01", "2026-11-20T10:02:01");
  line(3, "2026-11-20T10:00:02", "2026-11-20T10:00:30", "2026-11-20T10:00:30", "2026-11-20T10:01:30");
  for (int k = 0; k < 70; ++k)
    line(10 + k, "2026-11-20T10:00:03", "2026-11-20T10:00:03", "2026-11-20T10:00:03", "2026-11-20T10:05:00");
  line(99, "2026-11-20T10:00:04", "2026-11-20T10:05:00", "2026-11-20T10:05:00", "2026-11-20T10:06:00");
  const std::string p = temp_file("sacct-eligible", text);
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100", "", p);
  fs::remove(p);
  ASSERT_EQ(ds.jobs.size(), 74u);
  auto deps = [&](uint32_t j) {
    std::vector<std::string> out;
    for (const uint32_t d : ds.jobs.depends[j]) out.emplace_back(ds.jobs.id[d]);
    return out;
  };
  EXPECT_EQ(deps(1), std::vector<std::string>{"1"}) << "job 2 became eligible as job 1 ended";
  EXPECT_FALSE(std::isfinite(ds.jobs.hold_until[1]));
  EXPECT_TRUE(deps(2).empty()) << "no job ended at 10:00:30: a --begin";
  EXPECT_EQ(ds.jobs.hold_until[2], loaders::slurm::parse_slurm_date("2026-11-20T10:00:30"));
  EXPECT_TRUE(deps(73).empty()) << "70 jobs ended in that second";
  EXPECT_EQ(ds.jobs.hold_until[73], loaders::slurm::parse_slurm_date("2026-11-20T10:05:00"));
  EXPECT_FALSE(std::isfinite(ds.jobs.hold_until[0]));
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
  EXPECT_NE(writers::native_cannot_hold(ds).find("queues that block"), std::string::npos)
      << "what import refuses: the native format has no such dispatch";
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

// Fields scontrol never prints are errors naming file, line and field (issue 45: `CPUTot=0x20` was 32
// CPUs, `Gres=gpu:-3` one GPU of type "-3", a partition listed twice took the first); so are squeue's
// numbers that are not numbers (a submit_time "yesterday" was the epoch).
TEST(SlurmCluster, FieldsScontrolNeverPrintsAreRefused) {
  const fs::path dir = fs::temp_directory_path() / ("colmatch-slurm-fields-" + std::to_string(::getpid()));
  auto load_with = [&](const std::string& file, const std::string& text) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "scontrol-node.txt") << "NodeName=a CPUTot=4 RealMemory=1000 State=IDLE Partitions=p1\n";
    std::ofstream(dir / "scontrol-partition.txt") << "PartitionName=p1 Nodes=a Default=YES State=UP\n";
    std::ofstream(dir / file) << text;
    std::string what = "accepted";
    try {
      loaders::load_slurm(dir.string(), "");
    } catch (const loaders::LoadError& e) {
      what = fmt::format("{}|{}|{}", fs::path(e.file).filename().string(), e.line, e.field);
    }
    fs::remove_all(dir);
    return what;
  };
  EXPECT_EQ(load_with("scontrol-node.txt", "NodeName=a CPUTot=0x20 RealMemory=1000 State=IDLE Partitions=p1\n"),
            "scontrol-node.txt|1|CPUTot");
  EXPECT_EQ(load_with("scontrol-node.txt", "NodeName=a CPUTot=4 RealMemory= 1000 State=IDLE Partitions=p1\n"),
            "scontrol-node.txt|1|RealMemory");
  EXPECT_EQ(load_with("scontrol-node.txt", "NodeName=a CPUTot=4 Gres=gpu:-3 State=IDLE Partitions=p1\n"),
            "scontrol-node.txt|1|Gres");
  EXPECT_EQ(load_with("scontrol-node.txt", "NodeName=a CPUTot=4 Gres=gpu:a100:1.5 State=IDLE Partitions=p1\n"),
            "scontrol-node.txt|1|Gres");
  EXPECT_EQ(load_with("scontrol-node.txt",
                      "NodeName=a CPUTot=4 Gres=gpu:a100:2(S:0-1),gpu:3g.20gb State=IDLE Partitions=p1\n"),
            "accepted")
      << "a type that starts with a digit is a type";
  EXPECT_EQ(load_with("scontrol-partition.txt",
                      "PartitionName=p1 Nodes=a Default=YES State=UP\nPartitionName=p1 Nodes=a State=DOWN\n"),
            "scontrol-partition.txt|2|PartitionName");
  EXPECT_EQ(load_with("scontrol-partition.txt", "PartitionName=p1 Nodes=a Default=YES OverSubscribe=SOMETIMES\n"),
            "scontrol-partition.txt|1|OverSubscribe");
  for (const std::string over : {"NO", "EXCLUSIVE", "YES:4", "FORCE:2"})
    EXPECT_EQ(load_with("scontrol-partition.txt", "PartitionName=p1 Nodes=a Default=YES OverSubscribe=" + over + "\n"),
              "accepted")
        << over;
  for (const std::string bad : {R"("yesterday")", "-5", R"({"set": true, "infinite": false, "number": "x"})"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(
        load_with("squeue.json", R"({"jobs": [{"job_id": 1, "job_state": "PENDING", "submit_time": )" + bad + "}]}"),
        "squeue.json|0|jobs[0].submit_time");
  }
  EXPECT_EQ(load_with("squeue.json", R"({"jobs": [{"job_id": 1, "job_state": "PENDING", "priority": "high"}]})"),
            "squeue.json|0|jobs[0].priority");
  EXPECT_EQ(load_with("squeue.json", R"({"jobs": [{"job_id": 1, "job_state": "PENDING", "submit_time": null}]})"),
            "accepted");
}

// A partition's OverSubscribe=FORCE (jobs share CPUs) is named in a warning: colmatch gives each job CPUs
// of its own. An EXCLUSIVE partition makes its jobs take nodes whole (the consumable `jobs`, all of it),
// judged by a job's first partition (SlurmMainPass.AnExclusivePartitionGivesItsJobsWholeNodes on slurmctld).
TEST(SlurmJobs, OverSubscribeOfAPartition) {
  const fs::path dir = fs::temp_directory_path() / ("colmatch-slurm-over-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "scontrol-node.txt") << "NodeName=a CPUTot=4 RealMemory=1000 State=IDLE Partitions=p1,p2\n";
  std::ofstream(dir / "scontrol-partition.txt")
      << "PartitionName=p1 Nodes=a Default=YES OverSubscribe=EXCLUSIVE\nPartitionName=p2 Nodes=a "
         "OverSubscribe=FORCE:4\n";
  const std::string jobs = temp_file("over-jobs", "-c 1 --mem=10\n-p p2 -c 1 --mem=10\n-p p2,p1 -c 1 --mem=10\n");
  const loaders::Dataset ds = loaders::load_slurm(dir.string(), jobs);
  fs::remove_all(dir);
  fs::remove(jobs);
  const auto w = std::find_if(ds.taskers.warnings.begin(), ds.taskers.warnings.end(), [](const std::string& x) {
    return x.find("OverSubscribe=FORCE:4") != std::string::npos;
  });
  ASSERT_NE(w, ds.taskers.warnings.end());
  EXPECT_NE(w->find("scontrol-partition.txt:2: partition p2"), std::string::npos) << *w;
  const auto k = ds.catalog.find("jobs");
  ASSERT_TRUE(k.has_value()) << "an exclusive partition's jobs take nodes whole";
  const auto kk = static_cast<size_t>(ds.catalog.consumable_slot(*k));
  EXPECT_EQ(ds.jobs.amount.at(kk, 0), 4.0) << "the default partition p1 is EXCLUSIVE";
  EXPECT_EQ(ds.jobs.amount.at(kk, 1), 1.0);
  EXPECT_EQ(ds.jobs.amount.at(kk, 2), 1.0) << "judged by its first partition, p2";
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
  // a run of one operator is one flat group (issue 45: 200 terms of `ib&ib&...` nested 200 deep and were
  // refused as "nested deeper than 128"); changes of operator still nest, left to right
  EXPECT_EQ(req("a&b&c|a|b&c"), "(((f==\"a\" && f==\"b\" && f==\"c\") || f==\"a\" || f==\"b\") && f==\"c\")");
  EXPECT_EQ(req("a,b&c"), "(f==\"a\" && f==\"b\" && f==\"c\")");
  {
    std::string flat = "a";
    for (int i = 0; i < 1000; ++i) flat += "&b";  // (a constraint is at most 4096 bytes)
    const auto t = loaders::slurm::translate_constraint(flat, known, "f");
    EXPECT_EQ(t.refusal, "");
    int depth = 0, deepest = 0;
    for (const char c : t.request) deepest = std::max(deepest, depth += c == '(' ? 1 : c == ')' ? -1 : 0);
    EXPECT_EQ(deepest, 1) << "one level, however long";
    std::string alternating = "a";
    for (int i = 0; i < 200; ++i) alternating += i % 2 ? "&b" : "|c";
    EXPECT_NE(refusal(alternating.c_str()).find("more than 100 changes between '&' and '|'"), std::string::npos)
        << refusal(alternating.c_str());
  }
  // a matching OR's choices are tried in order: soft terms prefer a node of an earlier choice
  EXPECT_EQ(loaders::slurm::translate_constraint("[a|b|c]&x", {"a", "b", "c", "x"}, "f").preference,
            "f==\"a\" && (f==\"a\" || f==\"b\")");
  EXPECT_EQ(loaders::slurm::translate_constraint("a|b", known, "f").preference, "");
  // issue 45: the soft terms grew as the square of the choices (2,000 jobs of 1,360 choices: > 300 s); the
  // first 64 distinct choices are ranked, the rest tie after them, and a repeated choice adds no term
  {
    std::set<std::string> many;
    std::string c = "[";
    for (int i = 0; i < 800; ++i) {
      many.insert(fmt::format("x{}", i));
      c += fmt::format("{}x{}", i ? "|" : "", i);
    }
    const auto t = loaders::slurm::translate_constraint(c + "]", many, "f");
    EXPECT_EQ(t.refusal, "");
    EXPECT_LT(t.preference.size(), 64u * 65 / 2 * 16) << "64 terms of at most 64 choices";
    EXPECT_NE(t.preference.find("f==\"x63\""), std::string::npos);
    EXPECT_EQ(t.preference.find("f==\"x64\""), std::string::npos);
    EXPECT_EQ(loaders::slurm::translate_constraint("[a|a|b|c]", known, "f").preference,
              loaders::slurm::translate_constraint("[a|b|c]", known, "f").preference);
  }
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
  // issue 45: bounded in total, not per range (`n[1-100,1-100,...]` of a 9 MB line ran out of memory)
  std::string many = "n[1-100";
  for (int i = 0; i < 2000; ++i) many += ",1-100";
  EXPECT_THROW(expand_hostlist(many + "]", 100000), std::invalid_argument);
  EXPECT_THROW(expand_hostlist("n[1-60,1-60]", 100), std::invalid_argument);
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

// -N K: K slots of the per-node request (AllocationRule::OnePerTasker), each on a node of its own; -n N
// over them as Slurm gives the tasks (more than one a node: the node picked first takes all it may, leaving
// one task for each other node; FitUnit::total, SlurmMainPass.TasksOverNodesAsSlurmGivesThem); a job that
// fewer than K nodes could run can never start; a matching OR gives all K nodes one choice. What is not
// placed yet is rejected with why: --gpus for the whole job.
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
  EXPECT_EQ(why(4), "") << "-N 3 -n 4: 2 + 1 + 1";
  EXPECT_EQ(ds.jobs.fit_unit_of(1).total, 8.0);
  EXPECT_NE(why(5).find("--gpus"), std::string::npos) << why(5);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, nullptr, ds.dispatch);
  const auto& cons = ds.catalog.consumables();
  const size_t k_cpus =
      static_cast<size_t>(std::find(cons.begin(), cons.end(), *ds.catalog.find("cpus")) - cons.begin());
  auto tasks_on = [&](uint32_t j, std::string_view node) {  // job j's slots (tasks) on a node
    uint32_t n = 0;
    for (uint32_t a = 0; a < m.dispatch.alloc_count[j]; ++a) {
      const Allocation& x = m.dispatch.allocations[m.dispatch.alloc_first[j] + a];
      if (ds.taskers.names[x.tasker] == node) n += x.slots;
    }
    return n;
  };
  auto nodes_of = [&](uint32_t j) {
    std::vector<std::string> out;
    for (uint32_t a = 0; a < m.dispatch.alloc_count[j]; ++a) {
      const Allocation& x = m.dispatch.allocations[m.dispatch.alloc_first[j] + a];
      if (j != 1 && j != 4) {
        EXPECT_EQ(x.slots, 1u) << "one slot a node";
      }
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
    double ones = 0;  // jobs 3, 6 and 7 take one CPU on each of their nodes
    for (const uint32_t j : {3u, 6u, 7u}) {
      const auto nodes = nodes_of(j);
      ones += static_cast<double>(std::count(nodes.begin(), nodes.end(), n));
    }
    EXPECT_EQ(taken, (by_first ? 16 : 0) + 2.0 * tasks_on(1, n) + tasks_on(4, n) + ones)
        << n << ": 16 CPUs on each node of the first job, 2 a task of the second, 1 a task of the fifth";
  }
  ASSERT_EQ(nodes_of(1).size(), 2u);
  std::vector<uint32_t> split;  // the second job's tasks on its nodes, in node order: 7 and 1 either way round
  for (const std::string& n : nodes_of(1)) split.push_back(tasks_on(1, n));
  std::sort(split.begin(), split.end());
  EXPECT_EQ(split, (std::vector<uint32_t>{1, 7}));
  ASSERT_EQ(m.dispatch.status[4], JobStatus::Assigned);
  split.clear();
  for (const std::string& n : nodes_of(4)) split.push_back(tasks_on(4, n));
  std::sort(split.begin(), split.end());
  EXPECT_EQ(split, (std::vector<uint32_t>{1, 1, 2}));
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

// A node named twice in -w is one node (issue 45: `-w n001,n001` pended for ever as two nodes).
TEST(SlurmJobs, ANodeNamedTwiceIsOneNode) {
  const loaders::Dataset ds = load_lines("twice", "-w n001,n001 --mem=1000\n-w n[001-002],n001 --mem=1000\n");
  ASSERT_EQ(ds.jobs.size(), 2u);
  EXPECT_EQ(why_rejected(ds, 0), "");
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, nullptr, ds.dispatch);
  ASSERT_EQ(m.dispatch.status[0], JobStatus::Assigned);
  ASSERT_EQ(m.dispatch.alloc_count[0], 1u);
  EXPECT_EQ(ds.taskers.names[m.dispatch.allocations[m.dispatch.alloc_first[0]].tasker], "n001");
  ASSERT_EQ(m.dispatch.status[1], JobStatus::Assigned);
  EXPECT_EQ(m.dispatch.alloc_count[1], 2u) << "two nodes: n001 and n002";
}

TEST(SlurmJobs, SbatchLinesScriptsAndWhatIsNotPlacedYet) {
  const loaders::Dataset ds =
      load_lines("jobs",
                 "-C \"[amd|gpu]\" --mem=8G -c 4\n"
                 "#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH -c2\necho hi\n"
                 "-N 2-4 -n 6 -C amd\n"
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
  EXPECT_EQ(ds.jobs.reject[1], kNone) << why(1);                          // the #SBATCH lines of one script
  EXPECT_NE(why(2).find("-N 2-4 with -n"), std::string::npos) << why(2);  // (a range alone: NodeCountRanges*)
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
