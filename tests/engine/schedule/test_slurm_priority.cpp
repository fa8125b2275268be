// Slurm's priority/multifactor (engine/schedule/slurm_priority.hpp; slurmctld 22.05.8's
// priority_multifactor.c and fair_tree.c): the job size and age factors, when priorities are computed,
// usage and its decay, and Fair Tree's ranking, worked by hand from the plugin's formulas. The priorities
// slurmctld itself gave a real run's jobs are checked in tests/loaders/test_slurm_run.cpp.
#include "engine/schedule/slurm_priority.hpp"

#include <cmath>
#include <ctime>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/model/catalog.hpp"
#include "engine/model/jobs.hpp"
#include "engine/model/taskers.hpp"

namespace colmatch {
namespace {

struct Job {
  std::string user, account;
  double submit = 0, cpus = 1, nodes = 1;
  double limit = NAN;  // the time limit, seconds
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
      jb.set_times(NAN, list[i].limit);
      cpus.push_back(list[i].cpus);
      nodes.push_back(list[i].nodes);
    }
    jobs = std::move(jb).build();
  }
  // 16 nodes of 4 CPUs, as the recorded run's cluster
  SlurmPriority priority(const SlurmMultifactor& config) const { return {jobs, config, cpus, nodes, 64, 16}; }
};

// Fair share alone (weight 1000), calculated every 10 s.
SlurmMultifactor fair_share_every_10s() {
  SlurmMultifactor c;
  c.enabled = true;
  c.weight_fairshare = 1000;
  c.calc_period = 10;
  return c;
}

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

// The age counts from the job's begin time (acct_policy_handle_accrue_time: accrue_time = begin_time without
// ACCRUE_ALWAYS; job_mgr.c job_independent sets begin_time when a dependency is satisfied or a hold ends):
// job 1, held until 100 (sacct's Eligible, a --begin), has 20 s of age at 120 where job 0, submitted with it
// at 0, has 120 s; job 2, depending on job 0, has none until job 0 ends at 150, then 30 s at 180. Under
// ACCRUE_ALWAYS each counts from its submit.
TEST(SlurmPriority, AgeCountsFromWhenTheJobBecameEligible) {
  Catalog cat;
  JobBuilder jb(cat);
  for (int i = 0; i < 3; ++i) {
    jb.add("j" + std::to_string(i), "u", "", 0, 0, 1);
    jb.set_credentials("", "a", "");
    if (i == 1) jb.set_hold(100);
  }
  jb.set_depends(2, {"j0"});
  const JobTable jobs = std::move(jb).build();
  SlurmMultifactor c;
  c.enabled = true;
  c.weight_age = 1000;
  c.max_age = 1000;
  c.calc_period = 60;
  for (const bool always : {false, true}) {
    c.accrue_always = always;
    SlurmPriority p(jobs, c, {1, 1, 1}, {1, 1, 1}, 64, 16);
    for (uint32_t j = 0; j < 3; ++j) p.submitted(j, 0);
    p.advance(121);  // the run at 120
    EXPECT_EQ(p.priority(0), 120) << always;
    EXPECT_EQ(p.priority(1), always ? 120 : 20);
    EXPECT_EQ(p.priority(2), always ? 120 : 1) << "age 0 while its dependency runs: Slurm's least priority";
    p.started(0, 121);
    p.ended(0, 150);
    p.advance(181);  // the run at 180
    EXPECT_EQ(p.priority(2), always ? 180 : 30) << always;
  }
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
  SlurmMultifactor c = fair_share_every_10s();
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

// A job that takes its nodes whole is given every CPU of them (slurmctld's total_cpus: "#CPUs=16" for `-c 1`
// in an OverSubscribe=EXCLUSIVE partition on a 16-CPU node, datasets/slurm/c100-excl) and, without
// TRESBillingWeights, billed for them (calc_job_billable_tres): u1's 1-CPU job given 4 CPUs ranks below u3's
// that holds 1; billed by what they ask they tie.
TEST(SlurmPriority, AJobGivenWholeNodesIsBilledForEveryCpu) {
  const Farm f({{"u1", "A"}, {"u3", "B"}});
  SlurmMultifactor c = fair_share_every_10s();
  for (const double given : {4.0, std::numeric_limits<double>::quiet_NaN()}) {
    SlurmPriority p = f.priority(c);
    p.advance(0);
    p.started(0, 0, given);
    p.started(1, 0);
    p.advance(20);
    if (std::isnan(given)) EXPECT_DOUBLE_EQ(p.factors(0, 20).fairshare, p.factors(1, 20).fairshare);
    else EXPECT_LT(p.factors(0, 20).fairshare, p.factors(1, 20).fairshare);
  }
}

// A QOS's UsageFactor multiplies what a job's run charges (_apply_new_usage): u1's job of a QOS of factor 0
// leaves A unused, so u1 ties with u3, whose B nothing charged either; of factor 2 u1 ranks below u3 that ran
// the same at factor 1.
TEST(SlurmPriority, QosUsageFactorMultipliesTheUsageCharged) {
  const Farm f({{"u1", "A"}, {"u3", "B"}});
  SlurmMultifactor c = fair_share_every_10s();
  for (const double factor : {0.0, 2.0}) {
    c.usage_factor = {factor, 1.0};
    SlurmPriority p = f.priority(c);
    p.advance(0);
    p.started(0, 0);
    if (factor > 0) p.started(1, 0);
    p.advance(20);
    if (factor == 0) EXPECT_DOUBLE_EQ(p.factors(0, 20).fairshare, p.factors(1, 20).fairshare);
    else EXPECT_LT(p.factors(0, 20).fairshare, p.factors(1, 20).fairshare);
  }
}

// slurm_whole_node_cpus: every CPU configured on the taskers a whole-node job holds, each once (taskers of
// 16 and 8 CPUs).
TEST(SlurmPriority, WholeNodeCpusAreEveryCpuOfTheJobsTaskers) {
  Catalog cat;
  const uint32_t cpu = cat.add(consumable_attribute("cpu", AttrType::Int, ConsumeScope::PerSlot));
  TaskerBuilder b(cat);
  for (const char* n : {"a", "b"}) {
    b.add(n, 0);
    b.set(cpu, n[0] == 'a' ? "16" : "8");
  }
  const TaskerTable t = std::move(b).build();
  const Capacity configured = Capacity::configured(cat, t);
  const auto kc = static_cast<size_t>(cat.consumable_slot(cpu));
  const uint32_t a = t.names[0] == "a" ? 0 : 1, other = 1 - a;
  const std::vector<Allocation> one = {{a, 1}}, both = {{a, 1}, {other, 2}}, twice = {{a, 1}, {a, 1}};
  EXPECT_EQ(slurm_whole_node_cpus(one, configured, kc), 16);
  EXPECT_EQ(slurm_whole_node_cpus(both, configured, kc), 16 + 8);
  EXPECT_EQ(slurm_whole_node_cpus(twice, configured, kc), 16);
}

// PriorityUsageResetPeriod's boundaries as priority_multifactor.c's _next_reset computes them from the last
// reset: the next midnight, Sunday's midnight (a Sunday's own: the next week's), the first of the next month,
// of April, July, October or January, of January. 2026-11-30 is a Monday.
TEST(SlurmPriority, UsageResetBoundariesAsSlurmctldComputesThem) {
  auto at = [](int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
    std::tm tm{};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    return static_cast<double>(timegm(&tm));
  };
  using R = SlurmUsageReset;
  const double monday = at(2026, 11, 30, 10);
  EXPECT_EQ(slurm_usage_reset_after(R::Daily, monday), at(2026, 12, 1));
  EXPECT_EQ(slurm_usage_reset_after(R::Daily, at(2026, 12, 1)), at(2026, 12, 2)) << "strictly after";
  EXPECT_EQ(slurm_usage_reset_after(R::Weekly, monday), at(2026, 12, 6));
  EXPECT_EQ(slurm_usage_reset_after(R::Weekly, at(2026, 12, 6)), at(2026, 12, 13));
  EXPECT_EQ(slurm_usage_reset_after(R::Weekly, at(2026, 12, 5, 23, 59, 59)), at(2026, 12, 6));
  EXPECT_EQ(slurm_usage_reset_after(R::Monthly, monday), at(2026, 12, 1));
  EXPECT_EQ(slurm_usage_reset_after(R::Monthly, at(2026, 12, 15)), at(2027, 1, 1));
  EXPECT_EQ(slurm_usage_reset_after(R::Quarterly, monday), at(2027, 1, 1));
  EXPECT_EQ(slurm_usage_reset_after(R::Quarterly, at(2026, 3, 31, 23, 59, 59)), at(2026, 4, 1));
  EXPECT_EQ(slurm_usage_reset_after(R::Quarterly, at(2026, 4, 1)), at(2026, 7, 1));
  EXPECT_EQ(slurm_usage_reset_after(R::Yearly, monday), at(2027, 1, 1));
  EXPECT_EQ(slurm_usage_reset_after(R::Yearly, at(2027, 1, 1)), at(2028, 1, 1));
  constexpr double kInf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(slurm_usage_reset_after(R::None, monday), kInf);
  EXPECT_EQ(slurm_usage_reset_after(R::Now, monday), kInf) << "once at slurmctld's start: before any usage";
  EXPECT_EQ(slurm_usage_reset_after(R::Daily, std::numeric_limits<double>::quiet_NaN()), kInf);
  EXPECT_EQ(slurm_usage_reset_after(R::Daily, 1e300), kInf);
}

// PriorityUsageResetPeriod=DAILY, calculations every 10 s, no decay, 30 s before midnight (base): u1 (A) runs
// [base, base + 25], u3 (B) from base + 15. By base + 20 A has been charged 20 s, B 5 s: B ranks first. The
// calculation at midnight (base + 30) sets both to 0 and then charges B's 10 s since the last one (_decay_thread:
// the reset, then the new usage), so A ranks first; without the reset B still would. The next calculation does
// not reset again: at base + 40 B has 20 s and A's second job (2 CPUs from base + 32) 16, so A stays first (a
// reset there would leave B 10 s and put it first).
TEST(SlurmPriority, UsageResetPeriodZeroesUsageAtTheFirstCalculationPastTheBoundary) {
  const Farm f({{"u1", "A"}, {"u3", "B"}, {"u1", "A", 0, 2}});
  SlurmMultifactor c = fair_share_every_10s();
  c.decay_half_life = 0;
  std::tm midnight{};
  midnight.tm_year = 2026 - 1900;
  midnight.tm_mon = 11;
  midnight.tm_mday = 1;
  const double base = static_cast<double>(timegm(&midnight)) - 30;
  for (const SlurmUsageReset period : {SlurmUsageReset::Daily, SlurmUsageReset::None}) {
    c.usage_reset = period;
    SlurmPriority p = f.priority(c);
    p.advance(base);
    p.started(0, base);
    p.started(1, base + 15);
    p.ended(0, base + 25);
    EXPECT_DOUBLE_EQ(p.factors(0, base + 25).fairshare, 0.5);
    EXPECT_DOUBLE_EQ(p.factors(1, base + 25).fairshare, 1.0);
    p.advance(base + 30);
    const bool reset = period == SlurmUsageReset::Daily;
    EXPECT_DOUBLE_EQ(p.factors(0, base + 30).fairshare, reset ? 1.0 : 0.5);
    EXPECT_DOUBLE_EQ(p.factors(1, base + 30).fairshare, reset ? 0.5 : 1.0);
    p.started(2, base + 32);
    p.advance(base + 40);
    if (reset) {
      EXPECT_DOUBLE_EQ(p.factors(0, base + 40).fairshare, 1.0) << "A 16 s, B 20 s: reset once";
      EXPECT_DOUBLE_EQ(p.factors(1, base + 40).fairshare, 0.5);
    }
  }
}

// The classic formula (PriorityFlags=NO_FAIR_TREE), fair share weighed 1000, a calculation every 100 s, no
// decay; accounts A (shares 2) and B (1) under root.
SlurmMultifactor classic_a2_b1() {
  SlurmMultifactor c;
  c.enabled = true;
  c.weight_fairshare = 1000;
  c.calc_period = 100;
  c.decay_half_life = 0;
  c.fair_tree = false;
  c.associations = {{"A", "", "", 2}, {"B", "", "", 1}};
  return c;
}

// PriorityFlags=NO_FAIR_TREE: the classic formula, 2^(-(U / S) / D). Accounts A (shares 2) and B (1) under
// root; u1 and u2 in A, u3 in B: S is 1/3 for each user (1/2 of A's 2/3; all of B's 1/3). u1 runs 1 CPU from 0;
// calculations every 100 s, no decay. At each calculation the accounts' effective usage comes from the usage
// before that calculation charges anything, and a user's when its first job in the job list asks (the list
// in id order: u1's pending job 0 before its running job 1). At 100: nothing was charged before, every factor
// 1. At 200: A's usage is all the root's (U_A 1); u1's own, taken before job 1 adds its second 100 s, is all
// the root's too (U 1: 2^-3); u2 used nothing, so U = 0 + (1 - 0) x 1/2 (its share of A's users): 2^-1.5;
// u3 in B, which used nothing: 1. FairShareDampeningFactor 2 halves each exponent.
TEST(SlurmPriority, ClassicFairShareAsPriorityMultifactorWeighsIt) {
  const Farm f({{"u1", "A"}, {"u1", "A"}, {"u2", "A"}, {"u3", "B"}});
  SlurmMultifactor c = classic_a2_b1();
  for (const double damp : {1.0, 2.0}) {
    c.dampening = damp;
    SlurmPriority p = f.priority(c);
    for (uint32_t j = 0; j < 4; ++j) p.submitted(j, 0);
    p.started(1, 0);
    p.advance(100);
    for (const uint32_t j : {0u, 2u, 3u}) EXPECT_EQ(p.priority(j), 1000) << "job " << j << " at 100";
    p.advance(200);
    EXPECT_EQ(p.priority(0), std::floor(1000 * std::pow(2.0, -3 / damp))) << "u1: all the usage, before job 1's";
    EXPECT_EQ(p.priority(2), std::floor(1000 * std::pow(2.0, -1.5 / damp))) << "u2: half of A's";
    EXPECT_EQ(p.priority(3), 1000) << "u3: B used nothing";
    EXPECT_DOUBLE_EQ(p.factors(2, 200).fairshare, std::pow(2.0, -1.5 / damp));
  }
  c.dampening = 0.5;
  EXPECT_THROW(f.priority(c), PolicyError);
}

// PriorityFlags=DEPTH_OBLIVIOUS (priority_multifactor.c _depth_oblivious_set_usage_efctv), worked by hand: A
// (shares 2: 2/3) holds u1 and u2, B (1: 1/3) holds u3; u1 and u3 run one CPU each from 0, so at 200 each has
// half the usage (A and B too). u1: Rp = A's 0.5 / (2/3) = 0.75 (under-used), its siblings' usage 0.5 over A's
// shares 0.75, L = (0.5 / (1/3)) / 0.75 = 2 (over-used): on opposite sides of 1, so k = 1 / (1 + (5 ln 0.75)^2)
// and R = 0.75 x 2^k = 0.94, factor 2^-R (the classic formula: 2^-1.5). u3: Rp = 1.5, L = 1, k = 1: 2^-1.5 as
// classically. u2 has no usage: its effective usage is its own 0, factor 1 (classically 2^-0.75: half of A's).
TEST(SlurmPriority, DepthObliviousFairShareAsPriorityMultifactorWeighsIt) {
  const Farm f({{"u1", "A"}, {"u1", "A"}, {"u3", "B"}, {"u3", "B"}, {"u2", "A"}});
  SlurmMultifactor c = classic_a2_b1();
  const double k = 1 / (1 + std::pow(5 * std::log(0.75), 2));
  for (const bool oblivious : {false, true}) {
    c.depth_oblivious = oblivious;
    SlurmPriority p = f.priority(c);
    for (uint32_t j = 0; j < 5; ++j) p.submitted(j, 0);
    p.started(1, 0);
    p.started(3, 0);
    p.advance(200);
    SCOPED_TRACE(oblivious ? "DEPTH_OBLIVIOUS" : "classic");
    EXPECT_EQ(p.priority(0), std::floor(1000 * std::pow(2.0, oblivious ? -0.75 * std::pow(2.0, k) : -1.5)));
    EXPECT_EQ(p.priority(2), std::floor(1000 * std::pow(2.0, -1.5)));
    EXPECT_EQ(p.priority(4), oblivious ? 1000 : std::floor(1000 * std::pow(2.0, -0.75)));
  }
  EXPECT_NEAR(0.75 * std::pow(2.0, k), 0.94, 0.001);
}

// PriorityFlags=SMALL_RELATIVE_TO_TIME (priority_multifactor.c set_priority_factors): the job's CPUs, at least its
// nodes' average share of the cluster's (4 a node here), per minute of its time limit, over the cluster's 64
// CPUs, times PriorityWeightJobSize 100000: 1 CPU for 10 minutes 4/10/64 -> 625; 8 CPUs for 2 minutes -> 6250;
// 4 nodes of 1 CPU for an hour 16/60/64 -> 416; no limit (INFINITE minutes) -> 1, the least priority.
// PriorityFavorSmall turns it round (1 minus it).
TEST(SlurmPriority, SizeRelativeToTimeAsTheMultifactorPluginComputesIt) {
  const Farm f({{"u", "A", 0, 1, 1, 600}, {"u", "A", 0, 8, 1, 120}, {"u", "A", 0, 4, 4, 3600}, {"u", "A", 0, 1, 1}});
  SlurmMultifactor c;
  c.enabled = true;
  c.weight_job_size = 100000;
  c.size_relative_to_time = true;
  SlurmPriority p = f.priority(c);
  for (uint32_t j = 0; j < 4; ++j) p.submitted(j, 0);
  EXPECT_EQ(p.priority(0), 625);
  EXPECT_EQ(p.priority(1), 6250);
  EXPECT_EQ(p.priority(2), 416);
  EXPECT_EQ(p.priority(3), 1);
  c.favor_small = true;
  SlurmPriority q = f.priority(c);
  q.submitted(0, 0);
  EXPECT_EQ(q.priority(0), 99375);
}

// PriorityFlags=INCR_ONLY: u1's job 1 waits with the fair share of no usage (1: priority 1000); once u1's job 0
// has been charged its fair share halves, and the recalculation would lower job 1 to 500, which INCR_ONLY keeps
// from happening.
TEST(SlurmPriority, IncrOnlyNeverLowersAPendingPriority) {
  const Farm f({{"u1", "A"}, {"u1", "A"}, {"u2", "B"}});
  SlurmMultifactor c;
  c.enabled = true;
  c.weight_fairshare = 1000;
  c.calc_period = 100;
  c.decay_half_life = 0;
  for (const bool incr : {false, true}) {
    c.increase_only = incr;
    SlurmPriority p = f.priority(c);
    p.submitted(0, 0);
    p.submitted(1, 0);
    p.started(0, 0);
    EXPECT_EQ(p.priority(1), 1000);
    p.advance(100);
    EXPECT_EQ(p.priority(1), incr ? 1000 : 500);
  }
}

}  // namespace
}  // namespace colmatch
