// Slurm's priority/multifactor (engine/schedule/slurm_priority.hpp; slurmctld 22.05.8's
// priority_multifactor.c and fair_tree.c): the job size and age factors, when priorities are computed,
// usage and its decay, and Fair Tree's ranking, worked by hand from the plugin's formulas. The priorities
// slurmctld itself gave a real run's jobs are checked in tests/loaders/test_slurm_run.cpp.
#include "engine/schedule/slurm_priority.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/model/catalog.hpp"
#include "engine/model/jobs.hpp"

namespace colmatch {
namespace {

struct Job {
  std::string user, account;
  double submit = 0, cpus = 1, nodes = 1;
};

struct Farm {
  Catalog cat;
  JobTable jobs;
  std::vector<double> cpus, nodes;
  explicit Farm(const std::vector<Job>& list) {
    JobBuilder jb(cat);
    for (size_t i = 0; i < list.size(); ++i) {
      jb.add("j" + std::to_string(i), list[i].user, "", 0, list[i].submit, 1);
      jb.set_credentials("", list[i].account, "");
      cpus.push_back(list[i].cpus);
      nodes.push_back(list[i].nodes);
    }
    jobs = std::move(jb).build();
  }
  // 16 nodes of 4 CPUs, as the recorded run's cluster
  SlurmPriority priority(const SlurmMultifactor& config) const { return {jobs, config, cpus, nodes, 64, 16}; }
};

// set_priority_factors, favor large: (nodes / 16 + CPUs / 64) / 2, times PriorityWeightJobSize 2000 and
// truncated: -n 1 -c 1 -> 78, -c 2 -> 93, -c 4 -> 125, -N 2 with 2 tasks a node -> 187, -N 4 -c 2 -> 375
// (the InitPrio values slurmctld logged for such jobs). PriorityFavorSmall turns each ratio round.
TEST(SlurmPriority, JobSizeFactorAsTheMultifactorPluginComputesIt) {
  const Farm f(
      {{"u", "a", 0, 1, 1}, {"u", "a", 0, 2, 1}, {"u", "a", 0, 4, 1}, {"u", "a", 0, 4, 2}, {"u", "a", 0, 8, 4}});
  SlurmMultifactor c;
  c.enabled = true;
  c.weight_job_size = 2000;
  SlurmPriority p = f.priority(c);
  const double expected[] = {78, 93, 125, 187, 375};
  for (uint32_t j = 0; j < 5; ++j) {
    p.submitted(j, 0);
    EXPECT_EQ(p.priority(j), expected[j]) << j;
  }
  c.favor_small = true;  // ((16 - 1) / 16 + (64 - 1) / 64) / 2 x 2000 = 1921.875
  SlurmPriority small = f.priority(c);
  small.submitted(0, 0);
  EXPECT_EQ(small.priority(0), 1921);
}

// The age factor counts from submit up to PriorityMaxAge, but a pending job's priority changes only when
// the decay thread runs (every PriorityCalcPeriod from calc_phase): at submit it has no age.
TEST(SlurmPriority, AgeCountsOnlyWhenThePriorityCalculationRuns) {
  const Farm f({{"u", "a", 30}});
  SlurmMultifactor c;
  c.enabled = true;
  c.weight_age = 1000;
  c.max_age = 300;
  c.calc_period = 60;
  SlurmPriority p = f.priority(c);
  p.submitted(0, 30);
  EXPECT_EQ(p.priority(0), 1) << "no factor yet: Slurm's least priority, 1";
  p.advance(59);
  EXPECT_EQ(p.priority(0), 1);
  p.advance(90);  // the run at 60: 30 s of 300
  EXPECT_EQ(p.priority(0), 100);
  p.advance(500);  // the runs at 120 ... 480: capped at PriorityMaxAge
  EXPECT_EQ(p.priority(0), 1000);
  EXPECT_DOUBLE_EQ(p.factors(0, 180).age, 0.5);
  c.calc_phase = 50;  // runs at 50, 110, ...: the one at 110 saw 80 s
  SlurmPriority q = f.priority(c);
  q.submitted(0, 30);
  q.advance(120);
  EXPECT_EQ(q.priority(0), 266);
}

// Fair Tree by hand: account A (shares 2: users u1, u2) and B (shares 1: u3); u1 and u3 each used 100
// CPU-seconds. Level fair share A: (2/3) / (100/200) = 1.33, B: (1/3) / 0.5 = 0.67; in A u2 (no usage,
// infinite) before u1 (0.5 / 1). Ranks count down from the 3 users: u2 3/3, u1 2/3, u3 1/3.
TEST(SlurmPriority, FairTreeRanksUsersByTheirAccountsThenTheirOwnShareOverUsage) {
  const Farm f({{"u1", "A"}, {"u2", "A"}, {"u3", "B"}});
  SlurmMultifactor c;
  c.enabled = true;
  c.weight_fairshare = 3000;
  c.calc_period = 100;
  c.decay_half_life = 0;  // no decay
  c.associations = {{"A", "", "", 2}};
  SlurmPriority p = f.priority(c);
  p.advance(0);
  EXPECT_DOUBLE_EQ(p.factors(0, 0).fairshare, 1.0) << "no usage anywhere: every user ties at the top";
  EXPECT_DOUBLE_EQ(p.factors(2, 0).fairshare, 1.0);
  p.started(0, 0);
  p.started(2, 0);
  p.ended(0, 150);  // the run at 100 charges both jobs' 100 CPU-seconds; nothing is charged at the ends
  p.ended(2, 150);
  EXPECT_DOUBLE_EQ(p.factors(1, 100).fairshare, 1.0);
  EXPECT_DOUBLE_EQ(p.factors(0, 100).fairshare, 2.0 / 3);
  EXPECT_DOUBLE_EQ(p.factors(2, 100).fairshare, 1.0 / 3);
  p.submitted(1, 150);
  EXPECT_EQ(p.priority(1), 3000);
}

// Root's own user (sacctmgr makes root/root with the cluster) counts in the ranking though it runs nothing:
// with accounts phys (shares 2) and chem (1) each used by one user, phys's user is second of three (2/3)
// and chem's third (1/3), the factors slurmctld gave the recorded fair-share run's jobs (sprio: 1333 and
// 667 of PriorityWeightFairshare 2000). Without root's user they would be 1 and 1/2.
TEST(SlurmPriority, RootsOwnUserCountsInFairTreesRanking) {
  const Farm f({{"root", "phys"}, {"root", "chem"}});
  SlurmMultifactor c;
  c.enabled = true;
  c.weight_fairshare = 2000;
  c.calc_period = 60;
  c.associations = {{"root", "root", "", 1}, {"chem", "", "", 1}, {"phys", "", "", 2}};
  for (const bool with_root : {true, false}) {
    if (!with_root) c.associations.erase(c.associations.begin());
    SlurmPriority p = f.priority(c);
    p.started(0, 0);
    p.started(1, 0);
    p.advance(60);  // both ran 60 CPU-seconds by the calculation at 60
    // phys: shares 2/3 (2/4 with root's user), usage 1/2; chem: 1/3 (1/4), usage 1/2
    const double phys = p.factors(0, 60).fairshare, chem = p.factors(1, 60).fairshare;
    EXPECT_DOUBLE_EQ(phys, with_root ? 2.0 / 3 : 1.0);
    EXPECT_DOUBLE_EQ(chem, with_root ? 1.0 / 3 : 0.5);
    p.submitted(0, 60);
    EXPECT_EQ(p.priority(0), with_root ? 1333 : 2000);
  }
}

// Usage is charged at the calculations, by the jobs running then, and decays by PriorityDecayHalfLife
// (slurmctld's 1 - 0.693 / half-life a second): u1 (account A) used 10 CPU-seconds at the start, u3 (B)
// as many 50 s later. With a 10 s half-life A's usage has decayed away when B's is fresh, so u1 ranks above
// u3; with no decay they tie. A job that ends between two calculations is charged only up to the first.
TEST(SlurmPriority, UsageIsChargedAtTheCalculationsAndDecaysByTheHalfLife) {
  const Farm f({{"u1", "A"}, {"u3", "B"}});
  SlurmMultifactor c;
  c.enabled = true;
  c.weight_fairshare = 1000;
  c.calc_period = 10;
  for (const double half_life : {10.0, 0.0}) {
    c.decay_half_life = half_life;
    SlurmPriority p = f.priority(c);
    p.started(0, 0);
    p.ended(0, 15);  // charged [0, 10] at 10; (10, 15] never
    p.started(1, 50);
    p.ended(1, 65);  // charged [50, 60] at 60
    p.advance(70);
    if (half_life > 0) {
      EXPECT_DOUBLE_EQ(p.factors(0, 70).fairshare, 1.0);
      EXPECT_DOUBLE_EQ(p.factors(1, 70).fairshare, 0.5);
    } else {
      EXPECT_DOUBLE_EQ(p.factors(0, 70).fairshare, p.factors(1, 70).fairshare);
    }
  }
  // a job ending before the first calculation it would run through is never charged: still a tie at the top
  SlurmPriority q = f.priority(c);
  q.advance(0);
  q.started(0, 1);
  q.ended(0, 9);
  q.advance(20);
  EXPECT_DOUBLE_EQ(q.factors(0, 20).fairshare, 1.0);
  EXPECT_DOUBLE_EQ(q.factors(1, 20).fairshare, 1.0);
}

}  // namespace
}  // namespace colmatch
