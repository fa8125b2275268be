// Slurm's refusals at submit (issue 48, item 2): what slurmctld 22.05.8 said when each line was submitted
// as written (bench/peers/slurm_oracle.sh submit: sbatch, neither held nor --test-only; the accepted jobs
// cancelled at once), and what colmatch's `--format slurm` makes of the same lines. A job no node of its
// partitions could ever run, in any state, is rejected with Slurm's message; one the cluster's state keeps
// out (nodes down), one over its partition's limits (EnforcePartLimits=NO) and a held one stay pending.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/batch/matcher.hpp"
#include "loaders/slurm.hpp"
#include "tests/loaders/slurm_test_data.hpp"

using namespace colmatch;
using namespace colmatch::slurm_test;
namespace fs = std::filesystem;

namespace {

constexpr const char* kUnavailable = "Requested node configuration is not available";

struct Verdict {
  std::string line, verdict;
};

std::vector<Verdict> verdicts(const std::string& name) {
  std::ifstream in(kData + name);
  std::vector<Verdict> out;
  for (std::string line; std::getline(in, line);)
    out.push_back({line.substr(0, line.find('\t')), line.substr(line.find('\t') + 1)});
  return out;
}

// The lines of `jobs` loaded on `dump`, job by job against `answers`: an accepted line is a job that is
// not rejected (and that the match does not reject either); a refused one is rejected, with Slurm's
// message when it is "Requested node configuration is not available". Returns how many were refused.
size_t expect_submit_verdicts(const std::string& dump, const std::string& jobs, const std::string& answers) {
  const std::vector<Verdict> vs = verdicts(answers);
  const loaders::Dataset ds = loaders::load_slurm(kData + dump, kData + jobs);
  EXPECT_EQ(ds.jobs.size(), vs.size());
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, &ds.in_use, ds.dispatch);
  size_t refused = 0;
  for (uint32_t j = 0; j < vs.size() && j < ds.jobs.size(); ++j) {
    SCOPED_TRACE(vs[j].line + " (Slurm: " + vs[j].verdict + ")");
    if (vs[j].verdict == "accepted") {
      EXPECT_FALSE(ds.jobs.rejected(j)) << why_rejected(ds, j);
      EXPECT_NE(m.dispatch.status[j], JobStatus::Rejected);
      continue;
    }
    ++refused;
    EXPECT_TRUE(ds.jobs.rejected(j));
    if (vs[j].verdict.find(kUnavailable) != std::string::npos) {
      EXPECT_NE(why_rejected(ds, j).find(kUnavailable), std::string::npos) << why_rejected(ds, j);
    }
  }
  return refused;
}

}  // namespace

// datasets/slurm/c100-submit.jobs: each class the issue names, on the 100-node cluster with every node up
// (features no node has together, GRES counts and types, memory, CPUs per node, -w outside the partition,
// -w and -x naming one node, more nodes than its constraint has, node counts, a matching OR whose every
// choice is too small, --prefer that no node of the partition has), beside what Slurm accepts: a job over
// its partition's MaxTime or MaxNodes (pending, PartitionTimeLimit / PartitionNodeLimit, its nodes never
// looked at), a held one (-H), -n without -N (spread over nodes as Slurm may), -N 25 of one choice.
TEST(SlurmSubmit, RefusedAsSlurmctldRefuses) {
  EXPECT_EQ(expect_submit_verdicts("c100", "c100-submit.jobs", "c100-submit-slurm.tsv"), 25u);
}

// datasets/slurm/c100-down: the cluster with n001-n010 DOWN (scontrol update state=down, then dumped). A
// job only those nodes could run is accepted and waits (-w n001; -x of every other node, -N up to 10);
// one that no node could run even up is refused (-N 11 of them, -c 129, `amd&intel`). The left-out
// nodes count: colmatch's farm has 90 taskers, and -w n001 is not "Invalid node name specified".
TEST(SlurmSubmit, NodesDownAreWaitedForNotRefused) {
  EXPECT_EQ(expect_submit_verdicts("c100-down", "c100-down-submit.jobs", "c100-down-submit-slurm.tsv"), 3u);
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100-down", kData + "c100-down-submit.jobs");
  EXPECT_EQ(ds.taskers.size(), 90u);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, &ds.in_use, ds.dispatch);
  EXPECT_EQ(m.dispatch.status[0], JobStatus::Pending) << "-w n001: n001 is down";
  EXPECT_EQ(m.dispatch.reason[0], PendingReason::NoEligibleTasker);
}

// A queue's jobs were accepted: read from the dump (squeue.json), the c100-queue jobs Slurm left
// BadConstraints pend; none is refused.
TEST(SlurmSubmit, AQueuesJobsAreNeverRefused) {
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100-queue", "");
  size_t unavailable = 0;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j)
    unavailable += why_rejected(ds, j).find(kUnavailable) != std::string::npos;
  EXPECT_EQ(unavailable, 0u);
  // the same lines submitted (not held) are refused where Slurm's submit refuses them
  const loaders::Dataset lines = loaders::load_slurm(kData + "c100-queue", kData + "c100-queue.jobs");
  size_t refused = 0;
  for (uint32_t j = 0; j < lines.jobs.size(); ++j)
    refused += why_rejected(lines, j).find(kUnavailable) != std::string::npos;
  EXPECT_EQ(refused, 5u);
}

// The constraint language as slurmctld 22.05.8 takes it at submit (datasets/slurm/c100-constraints-submit):
// groups in brackets, each a choice (`[(intel&ib)|(amd&ssd)]`, `[(amd|gpu)|ssd]`), brackets in parentheses
// (`(intel&[ib|eth])`) are accepted; a count in a group, `&` between groups in brackets, parentheses in
// parentheses, two sets of brackets are "Invalid feature specification"; groups no node has together are
// "Requested node configuration is not available".
TEST(SlurmSubmit, ConstraintGroupsAsSlurmctldTakesThem) {
  EXPECT_EQ(expect_submit_verdicts("c100", "c100-constraints-submit.jobs", "c100-constraints-submit-slurm.tsv"), 9u);
}

// datasets/slurm/c100-ranges-submit.jobs: node count ranges (-N MIN-MAX) and counts above a partition's nodes.
// sbatch refuses a MAX below the MIN in its own words and a job no node could ever run (-c 129); it accepts a
// MIN of 0 (read as 1), a MAX over the partition's MaxNodes or the cluster's nodes, and even a MIN or a count
// above every node of the partition (EnforcePartLimits=NO: the job pends PartitionNodeLimit).
TEST(SlurmSubmit, NodeCountRangesAsSlurmctldTakesThem) {
  EXPECT_EQ(expect_submit_verdicts("c100", "c100-ranges-submit.jobs", "c100-ranges-submit-slurm.tsv"), 2u);
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100", kData + "c100-ranges-submit.jobs");
  EXPECT_NE(why_rejected(ds, 0).find("Maximum node count 2 is less than minimum node count 3"), std::string::npos);
}
