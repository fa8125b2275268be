// Slurm's own timeline (issue 48): a workload real Slurm ran on 16 virtual nodes (bench/peers/slurm_run.sh,
// slurmctld and 16 slurmd of Debian 12's 22.05.8, FIFO under sched/backfill; datasets/slurm/run16-fifo), its
// records as sacct prints them, replayed by `simulate --format slurm --accounting`. How close the replay's
// starts come to Slurm's is measured by bench/peers/slurm_compare.py (docs/formats/slurm.md), not asserted.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "engine/batch/matcher.hpp"
#include "engine/schedule/simulation.hpp"
#include "engine/schedule/slurm_priority.hpp"
#include "loaders/slurm.hpp"
#include "loaders/slurm_text.hpp"
#include "loaders/writers/explain.hpp"
#include "tests/loaders/slurm_test_data.hpp"

using namespace colmatch;
using namespace colmatch::slurm_test;

// Every job Slurm ran is a job of the replay, with the request Slurm recorded: `-N 2 --ntasks-per-node=2
// -c 1 --mem=1000` two slots of 2 CPUs and 1000 MiB (sacct's ReqMem, 2000M, is the job's), and each
// starts in the replay.
TEST(SlurmRun, AReplayOfSlurmsTimelineRunsEveryJobAsAsked) {
  const std::string run = kData + "run16-fifo/";
  const loaders::Dataset ds = loaders::load_slurm(run + "dump", "", run + "sacct.txt");
  ASSERT_EQ(ds.jobs.size(), 150u);
  ASSERT_EQ(ds.taskers.size(), 16u);
  std::map<std::string, std::string> asked;  // Slurm's job id -> the options it was submitted with
  std::ifstream in(run + "workload.txt");
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> f = tsv_fields(line, 4);  // id, offset, run time, options
    asked[f[0]] = f[3];
  }
  const size_t cpus = static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("cpus")));
  const size_t mem = static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("mem")));
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    const std::string id(ds.jobs.id[j]);
    SCOPED_TRACE(id + ": " + asked[id]);
    ASSERT_FALSE(ds.jobs.rejected(j)) << why_rejected(ds, j);
    // the options as the workload wrote them: -n 1 -c C --mem=M, or -N K --ntasks-per-node=P -c C --mem=M
    std::istringstream o(asked[id]);
    double nodes = 1, per_node = 1, c = 1, m = 0;
    for (std::string w; o >> w;) {
      if (w == "-N") o >> nodes;
      else if (w == "-c") o >> c;
      else if (w.rfind("--ntasks-per-node=", 0) == 0) per_node = std::stod(w.substr(18));
      else if (w.rfind("--mem=", 0) == 0) m = std::stod(w.substr(6));
    }
    EXPECT_EQ(ds.jobs.slots[j], nodes);
    EXPECT_EQ(ds.jobs.amount.at(cpus, j), per_node * c);
    EXPECT_EQ(ds.jobs.amount.at(mem, j), m * 1024 * 1024);
  }
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, ds.policy, kernels::active());
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) EXPECT_FALSE(std::isnan(r.start[j])) << ds.jobs.id[j];
}

namespace {

// How close a replay of `run`'s sacct records under `pol` (nullptr: as the dump configures it) comes to
// Slurm's own timeline: the share of jobs started within 5 s of their real start, and the replay's mean
// wait over Slurm's.
// `run`'s sacct.txt: job -> (submit, start) as Slurm recorded them.
std::map<std::string, std::pair<double, double>> sacct_times(const std::string& run) {
  std::map<std::string, std::pair<double, double>> real;
  std::ifstream in(run + "sacct.txt");
  std::string line;
  std::getline(in, line);  // JobIDRaw|Submit|Start|... (or with Eligible after Submit)
  const size_t start = line.find("|Eligible|") != std::string::npos ? 3 : 2;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = tsv_fields(line, 5, '|');  // JobIDRaw, Submit, (Eligible,) Start, the rest
    real[f[0]] = {loaders::slurm::parse_slurm_date(f[1]), loaders::slurm::parse_slurm_date(f[start])};
  }
  return real;
}

std::pair<double, double> timeline_agreement(const std::string& run, const SimConfig* pol = nullptr,
                                             const std::string& dump = "") {
  const loaders::Dataset ds = loaders::load_slurm(dump.empty() ? run + "dump" : dump, "", run + "sacct.txt");
  const std::map<std::string, std::pair<double, double>> real = sacct_times(run);
  EXPECT_EQ(real.size(), ds.jobs.size());
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, pol ? *pol : ds.policy, kernels::active());
  double ours = 0, theirs = 0;
  size_t close = 0;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    const auto& [submit, start] = real.at(std::string(ds.jobs.id[j]));
    theirs += start - submit;
    ours += r.start[j] - submit;
    close += std::abs(r.start[j] - start) <= 5;
  }
  return {static_cast<double>(close) / static_cast<double>(ds.jobs.size()), ours / theirs};
}

}  // namespace

// The replays as the dumps configure them (sched/backfill every bf_interval as Slurm's backfill thread
// times it, the main pass between, priority/basic or multifactor from scontrol-config.txt, the fair-share
// tree from sshare.txt; backfill on the nodes its node-space map leaves, in bf_resolution steps) against the
// runs themselves: FIFO 62.7% of the starts within 5 s of Slurm's, mean wait +1.3%; multifactor by job size
// alone 41.3%, +9.9%; with fair share and age 71.3%, -2.4%; FIFO with bf_max_job_user=2 77.3%, -2.4%; job
// size with bf_min_prio_reserve=150 76.7%, +1.5% (its low priorities fail no partition in the main pass
// either). (Slurm run
// twice on the same FIFO workload agreed with itself on 48.7%, docs/formats/slurm.md.) Backfill in every
// cycle (EASY) is not that close: its mean wait is 27% short of Slurm's on the FIFO run.
TEST(SlurmRun, ReplaysAsTheDumpsConfigureThemComeCloseToSlurmsTimelines) {
  const auto [fifo_close, fifo_wait] = timeline_agreement(kData + "run16-fifo/");
  EXPECT_GE(fifo_close, 0.62);
  EXPECT_NEAR(fifo_wait, 1.0, 0.05);
  const auto [size_close, size_wait] = timeline_agreement(kData + "run16-multifactor/");
  EXPECT_GE(size_close, 0.41);
  EXPECT_NEAR(size_wait, 1.0, 0.10);
  // the same workload and settings run again (run16-multifactor2, Slurm's backfill log kept): 66.0%, +1.8%;
  // Slurm's two runs agree with each other on 41.3% of the starts within 5 s (mean waits 118.2 and 119.5 s)
  const auto [again_close, again_wait] = timeline_agreement(kData + "run16-multifactor2/");
  EXPECT_GE(again_close, 0.66);
  EXPECT_NEAR(again_wait, 1.0, 0.05);
  const auto [fs_close, fs_wait] = timeline_agreement(kData + "run16-fairshare/");
  EXPECT_GE(fs_close, 0.71);
  EXPECT_NEAR(fs_wait, 1.0, 0.05);
  // the FIFO workload again under bf_max_job_user=2 (every job root's: two tried a backfill cycle): 77.3%
  // within 5 s, mean wait -2.4%; replayed without the limit the same run agrees on 30.7%, -10.0%
  const auto [user_close, user_wait] = timeline_agreement(kData + "run16-bf-user/");
  EXPECT_GE(user_close, 0.77);
  EXPECT_NEAR(user_wait, 1.0, 0.05);
  SimConfig unlimited = loaders::load_slurm(kData + "run16-bf-user/dump", "", kData + "run16-bf-user/sacct.txt").policy;
  ASSERT_EQ(unlimited.backfill_max_jobs_per_user, 2u);
  unlimited.backfill_max_jobs_per_user = 0;
  EXPECT_LT(timeline_agreement(kData + "run16-bf-user/", &unlimited).first, 0.5);
  // the FIFO workload's jobs over accounts phys and chem (slurmdbd) under bf_max_job_assoc=2: slurmctld's
  // backfill log (run16-bf-assoc/backfill.log) shows at most two jobs of each account acted on a cycle, and
  // more than two in 30 of 41 cycles. The replay: 55.3% within 5 s, mean wait -5.0%; without the limit
  // 44.0%, -8.3%. (As a per-user limit of 2, which the log rules out, it would be 59.3%, -1.1%: what else
  // differs is not known.)
  const auto [assoc_close, assoc_wait] = timeline_agreement(kData + "run16-bf-assoc/");
  EXPECT_GE(assoc_close, 0.55);
  EXPECT_NEAR(assoc_wait, 1.0, 0.06);
  SimConfig no_assoc_limit =
      loaders::load_slurm(kData + "run16-bf-assoc/dump", "", kData + "run16-bf-assoc/sacct.txt").policy;
  ASSERT_EQ(no_assoc_limit.backfill_max_jobs_per_association, 2u);
  no_assoc_limit.backfill_max_jobs_per_association = 0;
  EXPECT_LT(timeline_agreement(kData + "run16-bf-assoc/", &no_assoc_limit).first, assoc_close - 0.1);
  // the job-size workload again under bf_min_prio_reserve=150 (jobs of priority 78 to 125 reserve nothing):
  // 76.7% within 5 s, mean wait +1.5%; replayed as if every job reserved and blocked, 41.3%, +19.1%
  const auto [reserve_close, reserve_wait] = timeline_agreement(kData + "run16-prio-reserve/");
  EXPECT_GE(reserve_close, 0.76);
  EXPECT_NEAR(reserve_wait, 1.0, 0.05);
  SimConfig all_reserve =
      loaders::load_slurm(kData + "run16-prio-reserve/dump", "", kData + "run16-prio-reserve/sacct.txt").policy;
  ASSERT_EQ(all_reserve.backfill_min_priority_reserve, 150);
  all_reserve.backfill_min_priority_reserve = 0;
  EXPECT_GT(timeline_agreement(kData + "run16-prio-reserve/", &all_reserve).second, 1.15);
  SimConfig easy = loaders::load_slurm(kData + "run16-fifo/dump", "", kData + "run16-fifo/sacct.txt").policy;
  easy.backfill = BackfillPolicy::Easy;
  easy.backfill_interval = 0;
  EXPECT_LT(timeline_agreement(kData + "run16-fifo/", &easy).second, 0.95)
      << "backfill in every cycle starts jobs sooner than Slurm did";
}

namespace {

// `run`'s jobs in its workload's order (workload.txt: Slurm's id first): (submit, start) from sacct.txt, both
// from the workload's first submit.
std::vector<std::pair<double, double>> starts_in_workload_order(const std::string& run) {
  const std::map<std::string, std::pair<double, double>> real = sacct_times(run);
  std::ifstream in(run + "workload.txt");
  std::string line;
  std::vector<std::pair<double, double>> out;
  while (std::getline(in, line)) out.push_back(real.at(tsv_fields(line, 2)[0]));
  const double first = out.empty() ? 0 : out[0].first;
  for (auto& [submit, start] : out) {
    submit -= first;
    start -= first;
  }
  return out;
}

}  // namespace

// Slurm run twice on the same FIFO workload (run16-fifo, and its second-run/ on a fresh controller,
// 2026-12-02): its two timelines agree on 51.3% of the starts within 5 s of each other (84.0% within 10 s),
// mean waits 82.3 and 86.5 s (5.1% apart): a start's second of jitter and the backfill cycles' other seconds
// compound through the queue. The replay of each run comes closer to it than the other run does: 62.7% and
// 60.7% within 5 s, mean wait +1.3% and -3.3%. (Issue 48's ">= 90% within a few seconds" is past what Slurm
// reproduces of itself.)
TEST(SlurmRun, ReplaysComeCloserToEachRunThanSlurmsTwoRunsComeToEachOther) {
  const std::string first = kData + "run16-fifo/", second = first + "second-run/";
  const auto a = starts_in_workload_order(first), b = starts_in_workload_order(second);
  ASSERT_EQ(a.size(), 150u);
  ASSERT_EQ(b.size(), a.size());
  size_t close = 0;
  double wait_a = 0, wait_b = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    close += std::abs(a[i].second - b[i].second) <= 5;
    wait_a += a[i].second - a[i].first;
    wait_b += b[i].second - b[i].first;
  }
  const double self = static_cast<double>(close) / static_cast<double>(a.size());
  EXPECT_NEAR(self, 0.513, 0.001);
  EXPECT_NEAR(wait_b / wait_a, 1.051, 0.001);
  const auto [first_close, first_wait] = timeline_agreement(first);
  const auto [second_close, second_wait] = timeline_agreement(second, nullptr, first + "dump");
  EXPECT_GT(first_close, self + 0.05);
  EXPECT_GT(second_close, self + 0.05);
  EXPECT_NEAR(first_wait, 1.0, 0.05);
  EXPECT_NEAR(second_wait, 1.0, 0.05);
}

namespace {

// A recorded multifactor run (datasets/slurm/run16-multifactor, -fairshare): Slurm's real timeline (sacct's
// Submit, Start, End) replayed into priority/multifactor as the dump configures it, and the priorities it
// gives compared with slurmctld's own: InitPrio at submit (its log) and sprio's every 10 s while jobs waited.
// Returns (priorities compared, equal).
std::pair<size_t, size_t> replay_priorities(const std::string& run,
                                            const std::function<void(SimConfig&)>& change = nullptr) {
  const loaders::Dataset ds = loaders::load_slurm(run + "dump", "", run + "sacct.txt");
  EXPECT_TRUE(ds.policy_defaults.slurm_priority.enabled);
  SimConfig policy = ds.policy_defaults;
  if (change) change(policy);
  SlurmPriority prio = SlurmPriority::of_farm(ds.catalog, ds.taskers, ds.jobs, policy);
  std::map<std::string, uint32_t> job_of;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) job_of[std::string(ds.jobs.id[j])] = j;
  // events: (time, kind: 0 end, 1 submit (InitPrio compared), 2 start, 4 sprio snapshot; job or line): at one
  // second a job's submit before its start, as slurmctld has them
  std::vector<std::tuple<double, int, uint32_t>> events;
  std::ifstream in(run + "sacct.txt");
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    const std::vector<std::string> f = tsv_fields(line, 5, '|');  // JobIDRaw, Submit, Start, End, the rest
    const uint32_t j = job_of.at(f[0]);
    events.emplace_back(loaders::slurm::parse_slurm_date(f[1]), 1, j);
    events.emplace_back(loaders::slurm::parse_slurm_date(f[2]), 2, j);
    events.emplace_back(loaders::slurm::parse_slurm_date(f[3]), 0, j);
  }
  std::map<uint32_t, double> init;
  std::ifstream ip(run + "init-priority.tsv");
  while (std::getline(ip, line)) {
    const std::vector<std::string> f = tsv_fields(line, 2);
    init[job_of.at(f[0])] = std::stod(f[1]);
  }
  std::vector<std::pair<uint32_t, double>> snap;  // (job, sprio's priority)
  std::vector<std::pair<double, size_t>> snaps;   // (time, first index in snap)
  std::ifstream sp(run + "sprio.tsv");
  std::getline(sp, line);
  while (std::getline(sp, line)) {
    const std::vector<std::string> f = tsv_fields(line, 6);  // time, job, priority, age, fairshare, jobsize
    const double t = std::stod(f[0]);
    if (snaps.empty() || snaps.back().first != t) snaps.emplace_back(t, snap.size());
    snap.emplace_back(job_of.at(f[1]), std::stod(f[2]));
  }
  for (size_t s = 0; s < snaps.size(); ++s) events.emplace_back(snaps[s].first + 0.5, 4, static_cast<uint32_t>(s));
  std::sort(events.begin(), events.end());
  size_t compared = 0, equal = 0;
  for (const auto& [t, kind, x] : events) {
    if (kind == 0) prio.ended(x, t);
    if (kind == 2) prio.started(x, t);
    if (kind == 1) {
      prio.submitted(x, t);
      ++compared;
      equal += prio.priority(x) == init.at(x);
    }
    if (kind == 4) {
      prio.advance(t);
      const size_t end = x + 1 < snaps.size() ? snaps[x + 1].second : snap.size();
      for (size_t i = snaps[x].second; i < end; ++i) {
        ++compared;
        equal += prio.priority(snap[i].first) == snap[i].second;
      }
    }
  }
  return {compared, equal};
}

}  // namespace

// priority/multifactor without slurmdbd (run16-multifactor: PriorityWeightAge 1000 and PriorityWeightJobSize
// 2000, accounting_storage/none): slurmctld ignores the age weight and never recalculates, so each job keeps
// its job-size priority from submit. Every InitPrio and every sprio line agrees.
TEST(SlurmRun, MultifactorWithoutSlurmdbdGivesSlurmctldsPriorities) {
  const auto [compared, equal] = replay_priorities(kData + "run16-multifactor/");
  EXPECT_GT(compared, 1500u);
  EXPECT_EQ(equal, compared);
  // (the same settings with bf_min_prio_reserve, another run of the workload)
  const auto [again, again_equal] = replay_priorities(kData + "run16-prio-reserve/");
  EXPECT_GT(again, 1500u);
  EXPECT_EQ(again_equal, again);
  // (the same workload and settings run a second time, datasets/slurm/run16-multifactor2)
  const auto [second, second_equal] = replay_priorities(kData + "run16-multifactor2/");
  EXPECT_GT(second, 1500u);
  EXPECT_EQ(second_equal, second);
}

// The QOS factor (datasets/slurm/run2-qos: slurmdbd, QOS high (Priority 1000) and low (10) beside normal (0),
// PriorityWeightQOS 1000, job size 100, on 2 nodes of 4 CPUs): a job's QOS Priority over the largest, as
// sacctmgr-qos.txt in the dump gives them. Every InitPrio and sprio line: job 3 (high, 4 CPUs) 1050, job 6
// (high, 2 CPUs) 1037, job 4 (low) 60, job 8 (normal, 1 CPU) 31.
TEST(SlurmRun, QosFactorAsSlurmctldGivesIt) {
  const auto [compared, equal] = replay_priorities(kData + "run2-qos/");
  EXPECT_GE(compared, 8u);
  EXPECT_EQ(equal, compared);
  const loaders::Dataset ds = loaders::load_slurm(kData + "run2-qos/dump", "", kData + "run2-qos/sacct.txt");
  ASSERT_EQ(ds.policy.slurm_priority.qos_factor.size(), ds.jobs.size());
  std::map<std::string, double> factor;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j)
    factor[std::string(ds.jobs.id[j])] = ds.policy.slurm_priority.qos_factor[j];
  EXPECT_EQ(factor.at("3"), 1.0);
  EXPECT_EQ(factor.at("4"), 0.01);
  EXPECT_EQ(factor.at("8"), 0.0);
}

// With slurmdbd (run16-fairshare: age 1000 over 10 minutes, fair share 2000 between accounts phys (shares 2)
// and chem (1), job size 500, PriorityCalcPeriod 1 minute, half-life 1 hour; the association tree from the
// dump's sshare.txt, root's own user included): the priorities slurmctld logged and sprio printed, from
// Slurm's own timeline of starts and ends. 1,715 of 1,722 agree; the 7 others are two jobs submitted in the
// second of a calculation, on the other side of it than Slurm's whole-second times can say (job 60 got
// InitPrio 2031, the fair share before the calculation; job 59's age counts from the second after its submit).
TEST(SlurmRun, MultifactorWithFairShareGivesSlurmctldsPriorities) {
  const auto [compared, equal] = replay_priorities(kData + "run16-fairshare/");
  EXPECT_GT(compared, 1700u);
  EXPECT_GE(equal, compared - 7);
}

// PriorityUsageResetPeriod=DAILY (datasets/slurm/run4-usage-reset: slurmdbd, phys (shares 2) and chem (1), fair
// share 2000, job size 500, PriorityCalcPeriod 1 minute, on 4 nodes of 4 CPUs; slurmctld run under a TZ that put
// local midnight in the run). Before midnight both accounts used the cluster and slurmctld ranked them (job 6,
// chem: fair share 1333); the calculation after midnight set every usage to 0, so the six jobs submitted a
// minute later waited with fair share 2000 each until the jobs running since charged usage again (1333 and 667).
// Every InitPrio and sprio line agrees; replayed without the reset the jobs after midnight do not.
TEST(SlurmRun, UsageResetPeriodAsSlurmctldResetsUsage) {
  const std::string run = kData + "run4-usage-reset/";
  const loaders::Dataset ds = loaders::load_slurm(run + "dump", "", run + "sacct.txt");
  EXPECT_EQ(ds.policy_defaults.slurm_priority.usage_reset, SlurmUsageReset::Daily);
  const auto [compared, equal] = replay_priorities(run);
  EXPECT_GE(compared, 60u);
  EXPECT_EQ(equal, compared);
  const auto [never, never_equal] =
      replay_priorities(run, [](SimConfig& p) { p.slurm_priority.usage_reset = SlurmUsageReset::None; });
  EXPECT_EQ(never, compared);
  EXPECT_LE(never_equal + 20, compared) << "without the reset the jobs after midnight are ranked by the usage before";
  // the timeline: 15 of 16 starts within 5 s of Slurm's, mean wait -2.3% (the same without the reset: the
  // order among the six waiting jobs did not decide a start here)
  const auto [close, wait] = timeline_agreement(run);
  EXPECT_GE(close, 0.93);
  EXPECT_NEAR(wait, 1.0, 0.05);
}

// PriorityFlags=NO_FAIR_TREE (datasets/slurm/run16-classic: slurmdbd, accounts science (shares 2) and eng (1)
// under root, phys and chem (1 each) under science, user root in each; age 1000 over 10 minutes, fair share
// 2000, job size 500, PriorityCalcPeriod 1 minute, half-life 1 hour; 16 nodes of 4 CPUs, 150 jobs): the classic
// formula's factors, which unlike Fair Tree's ranks follow every CPU-second. 1,893 of 1,994 InitPrio and sprio
// lines agree; the 101 others are one too many at the calculations of 17:50:43 and 17:51:43, all from job 126
// (chem, 1 CPU) ending in the second of the 17:49:43 calculation: slurmctld had it end first and did not charge
// its last 38 s; the replay, whose calculation comes first in its second (as run16-fairshare's submits
// require), did. Fair Tree's factors on the same timeline agree on 110.
TEST(SlurmRun, ClassicFairShareGivesSlurmctldsPriorities) {
  const std::string run = kData + "run16-classic/";
  const loaders::Dataset ds = loaders::load_slurm(run + "dump", "", run + "sacct.txt");
  EXPECT_FALSE(ds.policy_defaults.slurm_priority.fair_tree) << "PriorityFlags = NO_FAIR_TREE";
  const auto [compared, equal] = replay_priorities(run);
  EXPECT_GT(compared, 1990u);
  EXPECT_GE(equal, compared - 101);
  const auto [tree, tree_equal] = replay_priorities(run, [](SimConfig& p) { p.slurm_priority.fair_tree = true; });
  EXPECT_LT(tree_equal, compared / 2);
  // the timeline: 39.3% of the starts within 5 s of Slurm's, mean wait +2.5%
  const auto [close, wait] = timeline_agreement(run);
  EXPECT_GE(close, 0.39);
  EXPECT_NEAR(wait, 1.0, 0.05);
}

// PriorityFlags=DEPTH_OBLIVIOUS (datasets/slurm/run16-oblivious: run16-classic's accounts, weights and workload
// with the flag): every InitPrio and sprio line as slurmctld gave it. What made it so: an association whose
// usage was never normalised (user root in science, which runs nothing) holds slurmdb_defs.c's initial NO_VAL,
// and its siblings' depth-oblivious ratio sums it, so phys's and chem's ratio L is about 3.4e-10 and their
// users' factors 0.81 and then 1 (slurmctld's priority-debug.log.gz shows both). With 0 for it: 615 agree;
// the classic effective usage: 120.
TEST(SlurmRun, DepthObliviousFairShareGivesSlurmctldsPriorities) {
  const std::string run = kData + "run16-oblivious/";
  const loaders::Dataset ds = loaders::load_slurm(run + "dump", "", run + "sacct.txt");
  EXPECT_TRUE(ds.policy_defaults.slurm_priority.depth_oblivious) << "PriorityFlags = DEPTH_OBLIVIOUS";
  EXPECT_TRUE(ds.taskers.warnings.empty()) << ds.taskers.warnings[0];
  const auto [compared, equal] = replay_priorities(run);
  EXPECT_GT(compared, 2000u);
  EXPECT_EQ(equal, compared);
  const auto [classic, classic_equal] =
      replay_priorities(run, [](SimConfig& p) { p.slurm_priority.depth_oblivious = false; });
  EXPECT_LE(classic_equal, 120u) << "the classic effective usage";
}

// explain --simulate names a multifactor job's priority with its factors as sprio -l shows them: job 22 of
// the fair-share run, started by the replay at 1795957033, had the priority of the calculation at
// 1795957000 (1 s after a BOOT_TIME minute), 1406 = age 42 + fair share 1333 + job size 31: sprio's line
// for it at 1795957001.
TEST(SlurmRun, ExplainShowsAMultifactorJobsPriorityAsSprioDoes) {
  const std::string run = kData + "run16-fairshare/";
  const loaders::Dataset ds = loaders::load_slurm(run + "dump", "", run + "sacct.txt");
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, ds.policy, kernels::active());
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  uint32_t j = 0;
  while (ds.jobs.id[j] != "22") ++j;
  const std::string text = writers::explain_simulated_job(ds, r, m, j, ds.policy);
  EXPECT_NE(text.find("priority 1406 (priority/multifactor, computed at t = 1795957000): age 42 + fair share 1333 + "
                      "job size 31"),
            std::string::npos)
      << text;
}

// ... and its TRES factors summed (datasets/slurm/c100-tres, job 8, `-c 16 --mem=8000 --gres=gpu:a100:4 -p gpu`:
// CPUs 12.82 + memory 3.29 + node 25 + billing 20.94 = 62.05, slurmctld's 62).
TEST(SlurmRun, ExplainShowsTheTresFactors) {
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100-tres", kData + "c100-tres.jobs");
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, ds.policy, kernels::active());
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  const std::string text = writers::explain_simulated_job(ds, r, m, 7, ds.policy);
  EXPECT_NE(text.find("priority 62 (priority/multifactor, computed at t = 0): age 0 + fair share 0 + job size 0 + "
                      "TRES 62.05;"),
            std::string::npos)
      << text;
}

// Slurm's backfill places a job only on the nodes no reservation holds during its run, in bf_resolution
// steps (datasets/slurm/run2-unheld: 2 nodes of 4 CPUs; its backfill.log is slurmctld's with
// DebugFlags=Backfill,BackfillMap). Job 1 (3 CPUs, -t 1) runs on n01, job 2 (2 CPUs, -t 3) on n02; job 3
// (4 CPUs) is reserved n01 from job 1's end by its limit (the map: n01 held from 03:51:00, the reservation's
// 03:51:52 rounded down, to 03:52:00); jobs 4 and 5 (1 CPU, -t 2) fit on n01 by best fit and on n02, and
// Slurm's backfill cycle at 03:51:02 started both on n02 ("Test JobId=4 ... on n02"), 7 s after their submit,
// not after job 3. The replay: the same nodes, each start within 2 s of Slurm's.
TEST(SlurmRun, BackfillPlacesAroundReservedNodesAsSlurmDoes) {
  const std::string run = kData + "run2-unheld/";
  const loaders::Dataset ds = loaders::load_slurm(run + "dump", "", run + "sacct.txt");
  ASSERT_EQ(ds.jobs.size(), 5u);
  const std::map<std::string, std::pair<double, double>> real = sacct_times(run);
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, ds.policy, kernels::active());
  const std::map<std::string, std::string> node = {
      {"1", "n01"}, {"2", "n02"}, {"3", "n01"}, {"4", "n02"}, {"5", "n02"}};
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    const std::string id(ds.jobs.id[j]);
    SCOPED_TRACE(id);
    EXPECT_NEAR(r.start[j], real.at(id).second, 2.0);
    ASSERT_EQ(r.alloc_count[j], 1u);
    EXPECT_EQ(std::string(ds.taskers.names[r.allocations[r.alloc_first[j]].tasker]), node.at(id));
  }
}

// Slurm's main pass blocks by partition (datasets/slurm/run4-partitions: 4 nodes of 4 CPUs, p1 = n[01-02],
// p2 = n[03-04], all = every node; backfill every 10 s, but every start here is the main pass's, "sched: Allocate" in
// sched.log). Job 1 fills p1 to 04:11:48; job 2 (p1) waits for it and fails p1; jobs 3 (p2), 4 (all) and 5
// (-p p1,p2) start at once on n03, each at its submit; job 6 (p1) waits behind job 2. The replay: every job
// at Slurm's second, on Slurm's node (a strict order over the whole queue kept 3, 4 and 5 waiting 58 s).
TEST(SlurmRun, MainPassBlocksByPartitionAsSlurmDoes) {
  const std::string run = kData + "run4-partitions/";
  const loaders::Dataset ds = loaders::load_slurm(run + "dump", "", run + "sacct.txt");
  ASSERT_EQ(ds.jobs.size(), 6u);
  ASSERT_NE(ds.policy.partitions, nullptr);
  const std::map<std::string, std::pair<double, double>> real = sacct_times(run);
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, ds.policy, kernels::active());
  const std::map<std::string, std::string> node = {
      {"2", "n01"}, {"3", "n03"}, {"4", "n03"}, {"5", "n03"}, {"6", "n01"}};
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    const std::string id(ds.jobs.id[j]);
    SCOPED_TRACE(id);
    EXPECT_EQ(r.start[j], real.at(id).second);
    if (node.count(id) != 0) {
      EXPECT_EQ(std::string(ds.taskers.names[r.allocations[r.alloc_first[j]].tasker]), node.at(id));
    }
  }
}

// Slurm's bf_min_age_reserve (datasets/slurm/run2-age: bf_min_age_reserve=30, backfill every 10 s; sched.log):
// job 3 (4 CPUs) waits for n01 behind job 1; job 4 (1 CPU), submitted 2 s after it, is started by the main
// pass at once on n02 ("sched: Allocate"): job 3, younger than 30 s, failed no partition. Job 5, submitted when
// job 3 had waited 38 s, is not (job 3 fails the partition now) and waits for the next backfill cycle, 0.7 s
// later. The replay: every start within 1 s of Slurm's (without the rule job 4 waited for backfill).
TEST(SlurmRun, YoungJobsBlockNoPartitionUnderBfMinAgeReserve) {
  const std::string run = kData + "run2-age/";
  const loaders::Dataset ds = loaders::load_slurm(run + "dump", "", run + "sacct.txt");
  ASSERT_EQ(ds.jobs.size(), 5u);
  EXPECT_EQ(ds.policy.backfill_min_age_reserve, 30);
  EXPECT_EQ(ds.policy.backfill_interval, 10) << "slurmctld takes the first bf_interval of its SchedulerParameters";
  const std::map<std::string, std::pair<double, double>> real = sacct_times(run);
  SimConfig young_blocks = ds.policy;
  young_blocks.backfill_min_age_reserve = 0;
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, ds.policy, kernels::active());
  const SimResult blocked = simulate(ds.catalog, ds.taskers, ds.jobs, young_blocks, kernels::active());
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    const std::string id(ds.jobs.id[j]);
    EXPECT_NEAR(r.start[j], real.at(id).second, 1.0) << id;
    if (id == "4") {
      EXPECT_GT(blocked.start[j], real.at(id).second + 1) << "job 4 waits for a backfill cycle";
    }
  }
}

namespace {

// `run`'s sacct.txt, fields by the header's names: job -> name -> value.
std::map<std::string, std::map<std::string, std::string>> sacct_records(const std::string& run) {
  std::ifstream in(run + "sacct.txt");
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> names =
      tsv_fields(line, static_cast<size_t>(std::count(line.begin(), line.end(), '|')) + 1, '|');
  std::map<std::string, std::map<std::string, std::string>> out;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = tsv_fields(line, names.size(), '|');
    for (size_t i = 0; i < names.size(); ++i) out[f[0]][names[i]] = f[i];
  }
  return out;
}

}  // namespace

// sacct's Eligible (datasets/slurm/run4-begin-deps: real Slurm ran 16 jobs, five with --dependency, four with
// --begin=now+N): Slurm sets it when a job becomes independent (job_mgr.c job_independent), in the second its
// last dependency ended or the one after. The loader takes a job whose Eligible follows such ends to wait for
// those jobs (the plan's afterok/afterany: 4 after 2, 7 after 3, 10 after 1, 13 after 6, 16 after 9 and 11,
// of which 11 ended last; sacct cannot tell a dependency from another job ending in the same second: 10
// waits for 4 too, 16 for 5), and the --begin jobs to wait until their Eligible; the others wait for
// nothing. Fails with Eligible unread (no hold, no dependency) and with every Eligible a hold.
TEST(SlurmRun, EligibleTimesAreDependenciesOrBeginTimes) {
  const std::string run = kData + "run4-begin-deps/";
  const loaders::Dataset ds = loaders::load_slurm(run + "dump", "", run + "sacct.txt");
  ASSERT_EQ(ds.jobs.size(), 16u);
  const auto rec = sacct_records(run);
  const std::map<std::string, std::vector<std::string>> after{
      {"4", {"2"}}, {"7", {"3"}}, {"10", {"1", "4"}}, {"13", {"6"}}, {"16", {"5", "11"}}};
  const std::vector<std::string> begin{"5", "8", "12", "15"};
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    const std::string id(ds.jobs.id[j]);
    SCOPED_TRACE(id);
    ASSERT_FALSE(ds.jobs.rejected(j)) << why_rejected(ds, j);
    std::vector<std::string> deps;
    for (const uint32_t d : ds.jobs.depends[j]) deps.emplace_back(ds.jobs.id[d]);
    EXPECT_EQ(deps, after.count(id) ? after.at(id) : std::vector<std::string>{});
    const bool held = std::find(begin.begin(), begin.end(), id) != begin.end();
    if (held) {
      EXPECT_EQ(ds.jobs.hold_until[j], loaders::slurm::parse_slurm_date(rec.at(id).at("Eligible")));
    } else {
      EXPECT_FALSE(std::isfinite(ds.jobs.hold_until[j]));
    }
  }
}

// The replay of run4-begin-deps: a job that waited for others starts when they end in the replay (job 4
// after job 2, at 40 s where Slurm, whose job 2 started 1 s later, started it at 41), never before; a
// --begin job not before its begin time. Slurm's own starts: 9 of 16 within 5 s (3 of 16 with Eligible
// unread, when job 4 started at 31 before job 2 ended; 4 of 16 with every Eligible a hold, when job 2's end
// came 1 s before job 4's hold ended and job 6 took the nodes: job 4 at 60); the plan run again
// (second-run/): 10 of 16 (3 unread).
TEST(SlurmRun, DependentJobsStartWhenTheJobsTheyWaitedForEndInTheReplay) {
  for (const auto& [records, want] : {std::pair<std::string, size_t>{"", 9}, {"second-run/", 10}}) {
    SCOPED_TRACE(records);
    const std::string run = kData + "run4-begin-deps/";
    const loaders::Dataset ds = loaders::load_slurm(run + "dump", "", run + records + "sacct.txt");
    const auto rec = sacct_records(run + records);
    const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, ds.policy, kernels::active());
    size_t near = 0;
    for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
      const std::string id(ds.jobs.id[j]);
      SCOPED_TRACE(id);
      ASSERT_FALSE(std::isnan(r.start[j]));
      for (const uint32_t d : ds.jobs.depends[j]) EXPECT_GE(r.start[j], r.end[d]) << "after " << ds.jobs.id[d];
      if (std::isfinite(ds.jobs.hold_until[j])) {
        EXPECT_GE(r.start[j], ds.jobs.hold_until[j]);
      }
      const double real = loaders::slurm::parse_slurm_date(rec.at(id).at("Start"));
      if (id == "4") {
        EXPECT_NEAR(r.start[j], real, 1.0);
      }
      near += std::abs(r.start[j] - real) <= 5 ? 1 : 0;
    }
    EXPECT_GE(near, want);
  }
}
