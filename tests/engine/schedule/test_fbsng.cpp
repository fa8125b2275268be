// FBSNG dynamic priorities (engine/schedule/fbsng.hpp, seed 004): the rules one by one, then each of the seed's
// worked configurations as a named simulation over at least 1,000 starts, each beside the same run with
// the dynamic priorities off (fixed queue priorities, no gaps: plain priority order) to show what they
// change. Every schedule passes the independent checker, which also checks process-type quotas.
#include <cmath>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "datasets/synth/synthetic.hpp"
#include "engine/schedule/fbsng.hpp"
#include "loaders/errors.hpp"
#include "loaders/policy.hpp"
#include "loaders/writers/simulation_writer.hpp"
#include "tests/engine/schedule/sim_checker.hpp"
#include "tests/reference/naive_simulator.hpp"

using namespace colmatch;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// `taskers` taskers of `slots` slots; tasker i offers the boolean attributes named in flags[i].
struct Farm {
  Catalog cat;
  TaskerTable taskers;
  Farm(int n, int slots, std::vector<std::vector<std::string>> flags = {}, std::vector<std::string> names = {}) {
    const uint32_t s = cat.add(consumable_attribute("slots", AttrType::Int));
    std::vector<uint32_t> attrs;
    for (const std::string& name : names) {
      AttributeDef d;
      d.name = name;
      d.type = AttrType::Boolean;
      attrs.push_back(cat.add(d));
    }
    TaskerBuilder tb(cat);
    for (int i = 0; i < n; ++i) {
      tb.add("t" + std::to_string(i), 100.0 - i);
      tb.set_number(s, slots);
      if (static_cast<size_t>(i) < flags.size())
        for (const std::string& f : flags[i])
          for (size_t a = 0; a < names.size(); ++a)
            if (names[a] == f) tb.set_number(attrs[a], 1);
    }
    taskers = std::move(tb).build();
  }
};

struct Section {
  std::string queue, type;
  double submit = 0, runtime = 100;
  uint32_t slots = 1;
  bool fill_up = false;  // its processes on any taskers ($fill_up), else all on one
};

JobTable make_jobs(const Catalog& cat, const std::vector<Section>& list) {
  JobBuilder jb(cat);
  for (size_t i = 0; i < list.size(); ++i) {
    const Section& s = list[i];
    jb.add("s" + std::to_string(i), "u", "g", 0, s.submit, s.slots);
    jb.set_times(s.runtime, NAN);
    jb.set_credentials(s.queue, s.type.empty() ? s.queue : s.type);
    if (s.fill_up) jb.set_rule(AllocationRule::FillUp);
  }
  return std::move(jb).build();
}

SimConfig fbsng(std::vector<FbsngQueue> queues) {
  SimConfig p;
  p.scheduler = SchedulerKind::Fbsng;
  p.fbsng.queues = std::move(queues);
  return p;
}

// The same queues with the dynamic priorities off: fixed at QPmin, no gaps.
SimConfig off(SimConfig p) {
  for (FbsngQueue& q : p.fbsng.queues) {
    q.qpi = q.qpd = 0;
    q.qpg = q.spg = kInf;
  }
  return p;
}

SimResult run(const Farm& f, const JobTable& jobs, const SimConfig& pol) {
  SimResult r = simulate(f.cat, f.taskers, jobs, pol, kernels::active());
  EXPECT_EQ(simcheck::check_schedule(f.cat, f.taskers, jobs, pol, r), "");
  return r;
}

// Starts per queue among the sections started before `until`.
std::map<std::string, double> starts(const JobTable& jobs, const SimResult& r, double until = kInf) {
  std::map<std::string, double> n;
  for (uint32_t j = 0; j < jobs.size(); ++j)
    if (r.start[j] < until) n[jobs.queues.value(jobs.queue[j])] += 1;
  return n;
}

FbsngQueue queue(std::string name, double qpmin, double qpmax, double qpi, double qpd, double qpg, double spg = kInf) {
  FbsngQueue q;
  q.name = std::move(name);
  q.qp_min = qpmin;
  q.qp_max = qpmax;
  q.qpi = qpi;
  q.qpd = qpd;
  q.qpg = qpg;
  q.spg = spg;
  return q;
}

// Q2 alone: queues always able to start, the highest priority starting each time; A's share of starts.
double rule_share(double qpd_a, double qpd_b, int starts_n = 10000) {
  FbsngQueuePriorities p({queue("A", 0, 100, 1, qpd_a, 100), queue("B", 0, 100, 1, qpd_b, 100)});
  int a = 0;
  for (int i = 0; i < starts_n; ++i) {
    const uint32_t q = p.priority(0) >= p.priority(1) ? 0 : 1;
    a += q == 0;
    p.on_start(q);
  }
  return static_cast<double>(a) / starts_n;
}

}  // namespace

// ---- the rules ----

TEST(FbsngRules, QueuePriorityStartsAtQpminAndStaysWithinBounds) {
  FbsngQueuePriorities p({queue("A", 5, 12, 3, 1, kInf), queue("B", 0, 100, 1, 4, kInf)});
  EXPECT_EQ(p.priority(0), 5);  // Q1
  EXPECT_EQ(p.priority(1), 0);
  for (int i = 0; i < 10; ++i) p.on_start(1);  // B starts: A rises by 3 a tick up to its QPmax
  EXPECT_EQ(p.priority(0), 12);
  EXPECT_GE(p.priority(1), 0);
  for (int i = 0; i < 50; ++i) {
    p.on_start(i % 3 == 0 ? 0 : 1);
    for (uint32_t q : {0u, 1u}) {
      EXPECT_GE(p.priority(q), p.params(q).qp_min);
      EXPECT_LE(p.priority(q), p.params(q).qp_max);
    }
  }
}

TEST(FbsngRules, StartingQueueDropsByQpdOthersRiseByQpi) {
  FbsngQueuePriorities p({queue("A", 0, 100, 1, 3, kInf), queue("B", 0, 100, 2, 7, kInf)});
  p.on_start(1);  // B: A 1, B 2 - 7 = -5, both raised by 5 (relative): A 6, B 0
  EXPECT_EQ(p.priority(0), 6);
  EXPECT_EQ(p.priority(1), 0);
  p.on_start(1);  // A 7, B -5: A 12, B 0
  const double a = p.priority(0), b = p.priority(1);
  EXPECT_EQ(a, 12);
  p.on_start(0);  // A: its tick, then its QPD: 10; B: 2; then both down by 2 (B back at its QPmin)
  EXPECT_EQ(p.priority(0) - p.priority(1), (a + 1 - 3) - (b + 2));
  EXPECT_EQ(p.priority(1), 0);
}

TEST(FbsngRules, PrioritiesAreRelativeAtTheFloor) {
  // both at QPmin 0: A's start would take it to -2; both rise together instead, keeping the difference
  FbsngQueuePriorities p({queue("A", 0, 100, 1, 3, kInf), queue("B", 0, 100, 1, 7, kInf)});
  p.on_start(0);
  EXPECT_EQ(p.priority(0), 0);
  EXPECT_EQ(p.priority(1), 3);
}

TEST(FbsngRules, StuckQueueHoldsQueuesBelowItsPriorityMinusQpg) {
  FbsngQueuePriorities p({queue("high", 5, 105, 3, 1, 7), queue("bg", 0, 100, 1, 1, 100)});
  EXPECT_EQ(p.holds_below(0), 5 - 7);  // at rest the gap (QPG >= QPmin difference) holds nothing
  p.on_start(1);                       // one background start: high rises by its QPI
  EXPECT_EQ(p.priority(0), 8);
  EXPECT_GT(p.holds_below(0), p.priority(1));  // now background is held while high is stuck
}

TEST(FbsngRules, SectionGapBlocksAtSpgOrMore) {
  EXPECT_FALSE(fbsng_gap_blocks(4, 0, 5));
  EXPECT_TRUE(fbsng_gap_blocks(5, 0, 5));
  EXPECT_TRUE(fbsng_gap_blocks(0, 0, 0));  // SPG 0: nothing passes the head
  EXPECT_FALSE(fbsng_gap_blocks(1e9, 0, kInf));
}

TEST(FbsngRules, BadQueueParametersAreRefused) {
  EXPECT_THROW(FbsngQueuePriorities({queue("A", 10, 5, 1, 1, 1)}), std::invalid_argument);
  EXPECT_THROW(FbsngQueuePriorities({queue("A", 0, 5, -1, 1, 1)}), std::invalid_argument);
  EXPECT_THROW(FbsngQueuePriorities({queue("A", 0, 5, 1, NAN, 1)}), std::invalid_argument);
  EXPECT_THROW(FbsngQueuePriorities({queue("A", 0, kInf, 1e300, 1, 1)}), std::invalid_argument);  // inf - inf
  EXPECT_THROW(FbsngQueuePriorities({queue("A", -kInf, 5, 1, 1, 1)}), std::invalid_argument);
}

// Q2 over many queues (issue 45: 10,000 queues x 100,000 jobs spent most of their time updating every
// queue's priority at each start): queues of one QPI move as one, a start writes a few group values.
TEST(FbsngRules, AStartWritesItsGroupsNotEveryQueue) {
  std::vector<FbsngQueue> params;
  for (int i = 0; i < 10000; ++i) params.push_back(queue("q" + std::to_string(i), 0, NAN, 1, 2, 100));
  FbsngQueuePriorities p(params);
  std::vector<double> ref(params.size(), 0.0);
  for (FbsngQueue& q : params) q.qp_max = q.qp_min + 100;
  const int starts = 1000;
  for (int i = 0; i < starts; ++i) {
    const uint32_t q = static_cast<uint32_t>((i * 7919) % 10000);
    p.on_start(q);
    naive::fbsng_queue_started(ref, params, q);
  }
  EXPECT_TRUE(p.grouped());
  EXPECT_LE(p.writes(), 3u * starts) << "a start costs its groups (here one), not every queue";
  for (uint32_t q = 0; q < ref.size(); ++q) ASSERT_EQ(p.priority(q), ref[q]) << "queue " << q;
}

// The grouped form against the rule queue by queue (tests/reference): every priority after every start,
// bit for bit, on random whole-number queues (several QPI groups, QPmax near QPmin, far from it, or at
// 2^52) and on queues whose parameters are not whole numbers (then updated queue by queue).
TEST(FbsngRules, GroupedPrioritiesEqualTheRuleQueueByQueue) {
  size_t grouped = 0, each = 0;
  for (uint64_t seed = 1; seed <= 1500; ++seed) {
    std::mt19937_64 rng(seed);
    auto small = [&](int n) { return static_cast<double>(rng() % static_cast<uint64_t>(n)); };
    std::vector<FbsngQueue> params;
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      const double lo = small(11) - 5;
      const uint64_t kind = rng() % 6;
      const double hi = kind == 0 ? NAN : kind == 1 ? 4503599627370496.0 : kind == 2 ? lo : lo + small(30);
      params.push_back(queue("q" + std::to_string(i), lo, hi, small(4), small(9), kInf));
      if (seed % 10 == 0 && i == 0) params.back().qpi = 0.5;  // not whole: queue by queue
    }
    FbsngQueuePriorities p(params);
    (p.grouped() ? grouped : each) += 1;
    for (FbsngQueue& q : params)
      if (std::isnan(q.qp_max)) q.qp_max = q.qp_min + 100;
    std::vector<double> ref;
    for (const FbsngQueue& q : params) ref.push_back(q.qp_min);
    for (int step = 0; step < 300; ++step) {
      uint32_t q = static_cast<uint32_t>(rng() % params.size());
      if (rng() % 3)  // mostly the highest, as the scheduler starts them
        for (uint32_t x = 0; x < params.size(); ++x)
          if (ref[x] > ref[q]) q = x;
      p.on_start(q);
      naive::fbsng_queue_started(ref, params, q);
      for (uint32_t x = 0; x < params.size(); ++x) {
        ASSERT_EQ(p.priority(x), ref[x]) << "seed " << seed << " step " << step << " queue " << x;
        ASSERT_EQ(std::signbit(p.priority(x)), std::signbit(ref[x])) << "seed " << seed;
      }
    }
  }
  EXPECT_GT(grouped, 1000u);
  EXPECT_GT(each, 100u);
}

// A group whose shift grows past 2^51 is rebased (every sum stays a whole double): a queue of QPI 1e9
// rises past its QPmax at each of 3 million starts of a queue of QPI 0, and still equals the rule.
TEST(FbsngRules, GroupedPrioritiesStayExactPastTheRebase) {
  std::vector<FbsngQueue> params{queue("fast", 0, 100, 1e9, 1e9, kInf), queue("still", 3, 50, 0, 0, kInf)};
  FbsngQueuePriorities p(params);
  ASSERT_TRUE(p.grouped());
  std::vector<double> ref{0, 3};
  for (int step = 0; step < 3000000; ++step) {
    const uint32_t q = step % 100000 == 99999 ? 0 : 1;
    p.on_start(q);
    naive::fbsng_queue_started(ref, params, q);
    if (q == 0 || step % 1000 == 0) {
      ASSERT_EQ(p.priority(0), ref[0]) << "step " << step;
      ASSERT_EQ(p.priority(1), ref[1]) << "step " << step;
    }
  }
  EXPECT_GT(p.writes(), 3000000u * 5) << "the rebases wrote the group's queues";
}

// The seed: with QPI = 1 for all queues, shares are inversely proportional to QPD.
TEST(FbsngRules, SharesInverselyProportionalToQpd) {
  for (const auto& [a, b] : std::vector<std::pair<double, double>>{{3, 7}, {1, 1}, {1, 3}, {1, 9}, {2, 3}, {5, 5}}) {
    const double expected = b / (a + b);
    EXPECT_NEAR(rule_share(a, b), expected, 0.005) << "QPD " << a << "/" << b;
  }
}

// ---- the seed's worked configurations, by simulation ----

// Seed: "jobs of high priority project start as soon as possible, and as long as there are some
// pending jobs of the high priority project, background project jobs should not be started".
// QPmin 5/0, QPG 7/100, QPI 3/1; the background sections take fewer resources (1 slot) than the high
// priority ones (a whole 4-slot tasker).
TEST(FbsngSeed, BackgroundAndHighPriorityProjects) {
  const Farm f(10, 4);
  std::vector<Section> list;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dur(50, 150);
  for (int i = 0; i < 3000; ++i) list.push_back({"bg", "", static_cast<double>(i % 40), dur(rng), 1});
  for (int i = 0; i < 40; ++i) list.push_back({"high", "", 500.0 + 150.0 * i, 60, 4});
  const JobTable jobs = make_jobs(f.cat, list);
  const SimConfig on = fbsng({queue("high", 5, kInf, 3, 1, 7), queue("bg", 0, kInf, 1, 1, 100)});
  const SimResult r = run(f, jobs, on), o = run(f, jobs, off(on));
  auto check = [&](const SimResult& x, int& bg_while_pending, double& mean_wait) {
    bg_while_pending = 0;
    mean_wait = 0;
    for (uint32_t h = 3000; h < jobs.size(); ++h) {
      ASSERT_FALSE(std::isnan(x.start[h]));
      mean_wait += (x.start[h] - jobs.submit[h]) / 40;
      for (uint32_t b = 0; b < 3000; ++b)
        if (jobs.submit[h] <= x.start[b] && x.start[b] < x.start[h]) ++bg_while_pending;
    }
  };
  int pending_on = 0, pending_off = 0;
  double wait_on = 0, wait_off = 0;
  check(r, pending_on, wait_on);
  check(o, pending_off, wait_off);
  EXPECT_EQ(pending_on, 0) << "a background section started while a high priority one was pending";
  EXPECT_GT(pending_off, 100);  // off: background sections take the 1-slot holes first
  // on: each high section starts when the first tasker empties (at most one background run, 150 s)
  EXPECT_LE(wait_on, 150);
  EXPECT_GT(wait_off, 2 * wait_on);
  std::printf(
      "high priority sections: mean wait %.1f s (off %.1f s); (background start, waiting high section) pairs: %d (off "
      "%d)\n",
      wait_on, wait_off, pending_on, pending_off);
  // nothing but the high sections' waits differs in kind: every background section still runs
  EXPECT_GE(starts(jobs, r)["bg"], 1000);
}

// Seed: 70% of the resources to A, 30% to B, both always backlogged with equal sections:
// QPmin 0/0, QPmax 100/100, QPG 100/100, QPI 1/1, QPD 3/7.
TEST(FbsngSeed, SeventyThirtyShareByQpd) {
  const Farm f(10, 4);
  std::vector<Section> list;
  for (int i = 0; i < 3000; ++i) list.push_back({"A", "", 0, 100, 1});
  for (int i = 0; i < 3000; ++i) list.push_back({"B", "", 0, 100, 1});
  const JobTable jobs = make_jobs(f.cat, list);
  const SimConfig on = fbsng({queue("A", 0, 100, 1, 3, 100), queue("B", 0, 100, 1, 7, 100)});
  const double until = 6000;  // about 2,400 starts: both queues still backlogged
  SimConfig p = on;
  p.until = until;
  const SimResult r = run(f, jobs, p);
  auto n = starts(jobs, r);
  ASSERT_GE(n["A"] + n["B"], 1000);
  ASSERT_LT(n["A"], 3000);
  ASSERT_LT(n["B"], 3000);
  EXPECT_NEAR(n["A"] / (n["A"] + n["B"]), 0.70, 0.02);
  // slot-seconds: equal sections, so the same share
  double a = 0, b = 0;
  for (uint32_t j = 0; j < jobs.size(); ++j)
    if (!std::isnan(r.start[j])) (jobs.queues.value(jobs.queue[j]) == "A" ? a : b) += r.end[j] - r.start[j];
  EXPECT_NEAR(a / (a + b), 0.70, 0.02);
  // off: fixed equal priorities, ties by queue name: A takes everything until it drains
  SimConfig q = off(on);
  q.until = until;
  auto m = starts(jobs, run(f, jobs, q));
  EXPECT_GT(m["A"] / (m["A"] + m["B"]), 0.95);
}

// The seed's "reversely proportional to QPD" over a sweep of QPD ratios, by simulation.
TEST(FbsngSeed, QpdSweepSharesInverselyProportional) {
  const Farm f(10, 4);
  std::vector<Section> list;
  for (int i = 0; i < 3000; ++i) list.push_back({"A", "", 0, 100, 1});
  for (int i = 0; i < 3000; ++i) list.push_back({"B", "", 0, 100, 1});
  const JobTable jobs = make_jobs(f.cat, list);
  std::string table = "| QPD(A) | QPD(B) | A's share, expected | A's share, simulated |\n|---|---|---|---|\n";
  for (const auto& [qa, qb] : std::vector<std::pair<double, double>>{{1, 1}, {1, 2}, {1, 3}, {3, 7}, {1, 4}, {2, 3}}) {
    SimConfig p = fbsng({queue("A", 0, 100, 1, qa, 100), queue("B", 0, 100, 1, qb, 100)});
    p.until = 6000;
    auto n = starts(jobs, run(f, jobs, p));
    const double share = n["A"] / (n["A"] + n["B"]), expected = qb / (qa + qb);
    EXPECT_NEAR(share, expected, 0.02) << "QPD " << qa << "/" << qb;
    table += fmt::format("| {} | {} | {:.3f} | {:.3f} |\n", qa, qb, expected, share);
  }
  std::printf("%s", table.c_str());
}

// Seed: bulk sections (many slots) must start as often as light ones, at the cost of idle capacity:
// QPG 1/100, QPI 1/1, QPD 1/1.
TEST(FbsngSeed, BulkStartsAsOftenAsLight) {
  const Farm f(10, 4);
  std::vector<Section> list;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> dur(50, 150);
  for (int i = 0; i < 10000; ++i) list.push_back({"light", "", 0, dur(rng), 1});
  for (int i = 0; i < 2000; ++i) list.push_back({"bulk", "", 1, dur(rng), 8, true});
  const JobTable jobs = make_jobs(f.cat, list);
  const SimConfig on = fbsng({queue("bulk", 0, 100, 1, 1, 1), queue("light", 0, 100, 1, 1, 100)});
  const double until = 20000;
  SimConfig p = on, q = off(on);
  p.until = q.until = until;
  const SimResult r = run(f, jobs, p), o = run(f, jobs, q);
  auto n = starts(jobs, r), m = starts(jobs, o);
  ASSERT_GE(n["bulk"] + n["light"], 1000);
  ASSERT_LT(n["bulk"], 2000);
  ASSERT_LT(n["light"], 10000);
  EXPECT_NEAR(n["bulk"] / n["light"], 1.0, 0.10);
  // off (equal fixed priorities, the older sections first): light sections take every slot that frees
  // and a bulk section never finds 8 free at once
  EXPECT_LT(m["bulk"] / m["light"], 0.05);
  // the cost: idle capacity (held slots) while the light queue is held
  auto busy = [&](const SimResult& x) {
    double s = 0;
    for (uint32_t j = 0; j < jobs.size(); ++j)
      if (!std::isnan(x.start[j])) s += (std::min(x.end[j], until) - x.start[j]) * jobs.slots[j];
    return s / (40 * until);
  };
  EXPECT_LT(busy(r), busy(o));
  EXPECT_LT(busy(r), 0.99);
  // metrics.json reports it: utilisation of the slots, busy over offered
  loaders::Dataset ds;
  ds.catalog = f.cat;
  ds.taskers = f.taskers;
  ds.jobs = jobs;
  auto utilisation = [&](const SimResult& x) {
    const std::string json = writers::simulation_metrics_json(ds, x);
    const size_t at = json.find("\"utilisation\": ");
    return at == std::string::npos ? -1.0 : std::stod(json.substr(at + 15));
  };
  EXPECT_GT(utilisation(r), 0.5);
  EXPECT_LT(utilisation(r), utilisation(o) - 0.05);
  // the waiting light sections say why: the bulk queue is stuck and holds them (a reason can fail:
  // with the gap off, none has it)
  size_t held_by_gap = 0, held_by_gap_off = 0;
  for (uint32_t j = 0; j < jobs.size(); ++j) {
    if (jobs.slots[j] != 1 || !std::isnan(r.start[j])) continue;
    held_by_gap += r.reason[j] == SimReason::PriorityGap && r.detail[j].rfind("queue bulk (priority ", 0) == 0;
    held_by_gap_off += o.reason[j] == SimReason::PriorityGap;
  }
  EXPECT_GT(held_by_gap, 0u);
  EXPECT_EQ(held_by_gap_off, 0u);
  std::printf("bulk vs light: starts bulk/light %.3f (off %.3f), utilisation %.3f (off %.3f)\n", n["bulk"] / n["light"],
              m["bulk"] / m["light"], busy(r), busy(o));
}

// Seed: one queue for bulk and light sections, SPG = N: one bulk section per N light ones on average,
// and no bulk section waits forever. Bulk sections take 24 processes on any nodes (more than half the
// 40-slot farm, so one runs at a time and the next is the head while it runs); light ones take 1.
// They are submitted in equal numbers, mixed. The head bulk section is passed by N light sections,
// then the light ones wait (the farm drains) until it starts.
namespace {
struct GapRun {
  double bulk = 0, light = 0, longest_between_bulk_starts = 0;
  size_t gap_reasons = 0;  // sections left waiting behind the head by the gap
};
GapRun gap_run(const Farm& f, double spg, double until = 30000) {
  std::vector<Section> list;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> dur(50, 150);
  std::bernoulli_distribution is_bulk(0.5);
  for (int i = 0; i < 8000; ++i) {
    const bool bulk = is_bulk(rng);
    list.push_back({"mixed", bulk ? "bulk" : "light", i * 0.001, dur(rng), bulk ? 24u : 1u, bulk});
  }
  const JobTable jobs = make_jobs(f.cat, list);
  SimConfig p = fbsng({queue("mixed", 0, 100, 1, 1, 100, spg)});
  p.until = until;
  const SimResult r = run(f, jobs, p);
  GapRun g;
  for (uint32_t j = 0; j < jobs.size(); ++j)  // light sections behind a bulk head say so
    if (std::isnan(r.start[j]) && r.reason[j] == SimReason::PriorityGap && r.detail[j].rfind("section s", 0) == 0)
      ++g.gap_reasons;
  std::vector<double> bulk_starts;
  for (uint32_t j = 0; j < jobs.size(); ++j) {
    if (std::isnan(r.start[j])) continue;
    (jobs.slots[j] == 24 ? g.bulk : g.light) += 1;
    if (jobs.slots[j] == 24) bulk_starts.push_back(r.start[j]);
  }
  EXPECT_LT(g.light, 4000);  // both still backlogged
  EXPECT_LT(g.bulk, 4000);
  std::sort(bulk_starts.begin(), bulk_starts.end());
  g.longest_between_bulk_starts = bulk_starts.empty() ? p.until : bulk_starts.front();
  for (size_t i = 1; i < bulk_starts.size(); ++i)
    g.longest_between_bulk_starts = std::max(g.longest_between_bulk_starts, bulk_starts[i] - bulk_starts[i - 1]);
  return g;
}
}  // namespace

TEST(FbsngSeed, SectionPriorityGapOneBulkPerNLight) {
  const Farm f(10, 4);
  for (const double spg : {3.0, 5.0, 10.0}) {
    const GapRun g = gap_run(f, spg);
    ASSERT_GE(g.bulk + g.light, 1000);
    EXPECT_NEAR(g.light / g.bulk, spg, 0.10 * spg) << "SPG " << spg;
    // no bulk section waits forever: they start in turn, one run (150 s at most) plus the drain apart
    EXPECT_LT(g.longest_between_bulk_starts, 400) << "SPG " << spg;
    EXPECT_GT(g.gap_reasons, 0u) << "SPG " << spg;
    std::printf("SPG %g: light/bulk starts %.3f, longest time between bulk starts %.0f s\n", spg, g.light / g.bulk,
                g.longest_between_bulk_starts);
  }
  // off (no gap): the light sections pass the head for as long as slots free, 16 a bulk run or more
  const GapRun o = gap_run(f, kInf, 15000);
  std::printf("no SPG: light/bulk starts %.3f, longest time between bulk starts %.0f s\n", o.light / o.bulk,
              o.longest_between_bulk_starts);
  EXPECT_GT(o.light / o.bulk, 13);
  EXPECT_EQ(o.gap_reasons, 0u);
}

// Seed: fixed sets of worker nodes per project through node attributes and process types' default
// requirements; nodes of an idle project stay unused.
TEST(FbsngSeed, FixedNodeSetsThroughProcessTypeRequirements) {
  // t0-t3: project a; t4-t7: project b; t8-t9: shared by both
  std::vector<std::vector<std::string>> flags;
  for (int i = 0; i < 10; ++i)
    flags.push_back(i < 4   ? std::vector<std::string>{"proj_a"}
                    : i < 8 ? std::vector<std::string>{"proj_b"}
                            : std::vector<std::string>{"proj_a", "proj_b"});
  const Farm f(10, 4, flags, {"proj_a", "proj_b"});
  std::vector<Section> list;
  for (int i = 0; i < 1500; ++i) list.push_back({"q", "b", 0, 100, 1});     // only b is active
  for (int i = 0; i < 500; ++i) list.push_back({"q", "a", 20000, 100, 1});  // a arrives later
  const JobTable jobs = make_jobs(f.cat, list);
  SimConfig p = fbsng({queue("q", 0, 100, 1, 1, 100)});
  FbsngProcessType a, b;
  a.name = "a";
  a.requirements = "proj_a==true";
  b.name = "b";
  b.requirements = "proj_b==true";
  p.fbsng.process_types = {a, b};
  const SimResult r = run(f, jobs, p);
  for (uint32_t j = 0; j < jobs.size(); ++j) {
    ASSERT_FALSE(std::isnan(r.start[j]));
    const uint32_t t = r.allocations[r.alloc_first[j]].tasker;
    if (jobs.accounts.value(jobs.account[j]) == "a") EXPECT_TRUE(t < 4 || t >= 8) << "a on t" << t;
    else EXPECT_TRUE(t >= 4) << "b on t" << t;
  }
  // while a is idle its four nodes stay unused: b runs on 6 nodes, 24 slots, 1,500 x 100 s / 24
  double last_b = 0;
  for (uint32_t j = 0; j < 1500; ++j) last_b = std::max(last_b, r.end[j]);
  EXPECT_NEAR(last_b, std::ceil(1500.0 / 24) * 100, 1);
  // without the requirements, b takes every node
  SimConfig q = fbsng({queue("q", 0, 100, 1, 1, 100)});
  const SimResult o = run(f, jobs, q);
  double last_b_off = 0;
  for (uint32_t j = 0; j < 1500; ++j) last_b_off = std::max(last_b_off, o.end[j]);
  EXPECT_NEAR(last_b_off, std::ceil(1500.0 / 40) * 100, 1);
}

// Seed: projects limited to a number of resources at once by process-type quotas, slightly over-booked
// so that the farm stays busy. The checker verifies the quotas at every instant.
TEST(FbsngSeed, ProcessTypeQuotasNeverExceededAndFarmStaysBusy) {
  const Farm f(10, 4);  // 40 slots
  std::vector<Section> list;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> dur(50, 150);
  const char* types[] = {"p1", "p2", "p3"};
  // p1's sections come first: in plain order they would take the whole farm
  for (int i = 0; i < 3000; ++i) list.push_back({"q", types[i / 1000], 0, dur(rng), 1 + static_cast<uint32_t>(i % 2)});
  const JobTable jobs = make_jobs(f.cat, list);
  SimConfig p = fbsng({queue("q", 0, 100, 1, 1, 100)});
  for (const char* t : types) {  // 3 x 16 = 48 slots over 40: slight over-booking
    FbsngProcessType pt;
    pt.name = t;
    pt.max_slots = 16;
    pt.max_sections = 12;
    pt.max_amount = {{"slots", 16}};
    p.fbsng.process_types.push_back(pt);
  }
  p.until = 6000;
  const SimResult r = run(f, jobs, p);  // the checker fails the test on any quota exceeded
  double busy = 0, n = 0;
  for (uint32_t j = 0; j < jobs.size(); ++j)
    if (!std::isnan(r.start[j])) {
      busy += (std::min(r.end[j], p.until) - r.start[j]) * jobs.slots[j];
      ++n;
    }
  ASSERT_GE(n, 1000);
  EXPECT_GT(busy / (40 * p.until), 0.93);
  std::printf("quotas 3 x 16 slots over 40: utilisation %.3f over %.0f starts\n", busy / (40 * p.until), n);
  // a quota that binds shows as the reason of the sections it keeps waiting
  bool throttled = false;
  for (uint32_t j = 0; j < jobs.size(); ++j)
    throttled = throttled || (r.reason[j] == SimReason::Throttled && r.detail[j].find("process type") == 0);
  EXPECT_TRUE(throttled);
  // the checker catches a quota broken: the same schedule against tighter quotas fails it
  SimConfig tighter = p;
  for (auto& pt : tighter.fbsng.process_types) pt.max_slots = 8;
  EXPECT_NE(simcheck::check_schedule(f.cat, f.taskers, jobs, tighter, r), "");
  // off (no quotas): one process type takes far more than 16 slots at some instant
  SimConfig q = fbsng({queue("q", 0, 100, 1, 1, 100)});
  q.until = 6000;
  EXPECT_NE(simcheck::check_schedule(f.cat, f.taskers, jobs, p, run(f, jobs, q)), "");
}

// ---- configuration ----

TEST(FbsngConfig, ReadFromToml) {
  const std::string path = ::testing::TempDir() + "/fbsng_policy.toml";
  {
    std::FILE* out = std::fopen(path.c_str(), "w");
    std::fputs(
        "[policy]\nscheduler = \"fbsng\"\n[policy.fbsng]\nprocess_type = \"group\"\n"
        "[policy.fbsng.queues.A]\nQPmin = 1\nQPmax = 50\nQPI = 2\nQPD = 3\nQPG = 4\nSPG = 5\n"
        "[policy.fbsng.queues.\"*\"]\nqpd = 9\n"
        "[policy.fbsng.process_types.cms]\nmax_sections = 10\nmax_slots = 64\nmax = { mem = 1e9 }\n"
        "requirements = \"proj==cms\"\n",
        out);
    std::fclose(out);
  }
  const SimConfig p = loaders::read_policy_toml(path);
  EXPECT_EQ(p.scheduler, SchedulerKind::Fbsng);
  EXPECT_EQ(p.min_interval, 5);  // FBSNG runs at most once per 5 s
  EXPECT_EQ(p.process_type, CredentialKind::Group);
  ASSERT_EQ(p.fbsng.queues.size(), 1u);
  EXPECT_EQ(p.fbsng.queues[0].qp_min, 1);
  EXPECT_EQ(p.fbsng.queues[0].qp_max, 50);
  EXPECT_EQ(p.fbsng.queues[0].qpi, 2);
  EXPECT_EQ(p.fbsng.queues[0].qpd, 3);
  EXPECT_EQ(p.fbsng.queues[0].qpg, 4);
  EXPECT_EQ(p.fbsng.queues[0].spg, 5);
  EXPECT_EQ(p.fbsng.defaults.qpd, 9);
  ASSERT_EQ(p.fbsng.process_types.size(), 1u);
  EXPECT_EQ(p.fbsng.process_types[0].max_sections, 10u);
  EXPECT_EQ(p.fbsng.process_types[0].max_slots, 64);
  EXPECT_EQ(p.fbsng.process_types[0].max_amount.at(0).second, 1e9);
  EXPECT_EQ(p.fbsng.process_types[0].requirements, "proj==cms");
}

TEST(FbsngConfig, BadValuesNameTheKey) {
  const std::string path = ::testing::TempDir() + "/fbsng_bad.toml";
  auto fails_with = [&](const std::string& text, const std::string& key) {
    std::FILE* out = std::fopen(path.c_str(), "w");
    std::fputs(text.c_str(), out);
    std::fclose(out);
    try {
      loaders::read_policy_toml(path);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const loaders::LoadError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  fails_with("[policy]\nscheduler = \"pbs\"\n", "policy.scheduler");
  fails_with("[policy.fbsng.queues.A]\nQPX = 1\n", "policy.fbsng.queues.A.QPX");
  fails_with("[policy.fbsng.queues.A]\nQPI = -1\n", "policy.fbsng.queues.A.QPI");
  fails_with("[policy.fbsng.queues.A]\nQPmin = 10\nQPmax = 5\n", "policy.fbsng.queues.A");
  fails_with("[policy.fbsng.queues.A]\nQPI = 1e300\n", "policy.fbsng.queues.A.QPI");
  fails_with("[policy.fbsng.process_types.x]\nmax_sections = 1.5\n", "policy.fbsng.process_types.x.max_sections");
  fails_with("[policy.fbsng]\nprocess_type = \"project\"\n", "policy.fbsng.process_type");
}

TEST(FbsngConfig, BadQuotaOrRequirementsAreRefusedBySimulate) {
  const Farm f(2, 4, {}, {"proj_a"});
  const JobTable jobs = make_jobs(f.cat, {{"q", "a", 0, 10, 1}});
  SimConfig p = fbsng({});
  FbsngProcessType t;
  t.name = "a";
  t.max_amount = {{"nosuch", 1}};
  p.fbsng.process_types = {t};
  EXPECT_THROW(simulate(f.cat, f.taskers, jobs, p, kernels::active()), std::invalid_argument);
  p.fbsng.process_types[0].max_amount.clear();
  p.fbsng.process_types[0].requirements = "proj_a==";
  EXPECT_THROW(simulate(f.cat, f.taskers, jobs, p, kernels::active()), std::invalid_argument);
  p.fbsng.process_types[0].requirements = "slots>=2";
  EXPECT_THROW(simulate(f.cat, f.taskers, jobs, p, kernels::active()), std::invalid_argument);
}

// ---- differential: the engine's FBSNG cycle against the naive reference simulator's ----

namespace {

// `queues`: 0, the three named queues; else that many queues q0, q1, ...
void random_times_and_credentials(JobTable& jobs, std::mt19937_64& rng, uint32_t queues = 0) {
  for (uint32_t j = 0; j < jobs.size(); ++j) {
    jobs.submit.set(j, static_cast<double>(rng() % 60));
    jobs.runtime.set(j, static_cast<double>(rng() % 40));
    jobs.walltime.set(j, NAN);
    if (rng() % 20 == 0) jobs.hold_until.set(j, rng() % 2 ? kInf : static_cast<double>(rng() % 120));
    if (j > 0 && rng() % 15 == 0) jobs.depends.add(j, static_cast<uint32_t>(rng() % j));
    if (queues > 0) jobs.queue.set(j, jobs.queues.intern("q" + std::to_string(rng() % queues)));
    else jobs.queue.set(j, jobs.queues.intern(rng() % 3 == 0 ? "bulk" : rng() % 2 ? "light" : "other"));
    jobs.account.set(j, jobs.accounts.intern("p" + std::to_string(rng() % 3)));
    jobs.owner[j] = jobs.owners.intern("u" + std::to_string(rng() % 3));
  }
}

}  // namespace

class FbsngDifferential : public ::testing::TestWithParam<int> {};

// combo % 4: the allocation policy; combo >= 4: up to 40 queues of random parameters (the walk's order
// kept from cycle to cycle, queues coming and going), not three.
TEST_P(FbsngDifferential, EngineEqualsNaiveOnRandomTraces) {
  const int combo = GetParam();
  const bool many = combo >= 4;
  size_t started = 0, waited = 0, runs_with_quota = 0;
  for (int i = 0; i < 150; ++i) {
    const uint64_t seed = 104729ULL * static_cast<uint64_t>(combo + 1) + static_cast<uint64_t>(i);
    std::mt19937_64 rng(seed);
    synth::SynthSpec s;
    s.seed = seed;
    s.taskers = 1 + rng() % 16;
    s.jobs = 1 + rng() % (many ? 150 : 50);
    s.categories = 1 + rng() % 8;
    s.levels = rng() % 2 == 0;
    s.fill_up = rng() % 2 ? 0.4 : 0.0;
    auto ds = synth::generate(s);
    const uint32_t queues = many ? static_cast<uint32_t>(2 + rng() % 39) : 0;
    random_times_and_credentials(ds.jobs, rng, queues);
    SimConfig pol;
    pol.scheduler = SchedulerKind::Fbsng;
    pol.allocation = static_cast<AllocationPolicy>(combo % 4);
    if (rng() % 2) pol.min_interval = static_cast<double>(1 + rng() % 6);
    auto small = [&](int n) { return static_cast<double>(rng() % static_cast<uint64_t>(n)); };
    std::vector<std::string> names{"bulk", "light", "other"};
    if (many) {
      names.clear();
      for (uint32_t q = 0; q < queues; ++q) names.push_back("q" + std::to_string(q));
    }
    for (const std::string& q : names) {
      if (rng() % 4 == 0) continue;  // some queues take the defaults
      FbsngQueue p;
      p.name = q;
      p.qp_min = small(6);
      p.qp_max = rng() % 3 ? p.qp_min + small(20) : NAN;
      p.qpi = small(4);
      p.qpd = small(8);
      p.qpg = rng() % 2 ? small(6) : kInf;
      p.spg = rng() % 2 ? small(5) : kInf;
      pol.fbsng.queues.push_back(p);
    }
    if (rng() % 2) pol.fbsng.defaults.qpg = small(4);
    if (rng() % 2) {  // quotas and default requirements per process type (the account)
      ++runs_with_quota;
      for (const char* t : {"p0", "p1"}) {
        FbsngProcessType pt;
        pt.name = t;
        if (rng() % 2) pt.max_sections = 1 + rng() % 4;
        if (rng() % 2) pt.max_slots = static_cast<double>(1 + rng() % 12);
        if (rng() % 2) pt.max_amount = {{"slots", static_cast<double>(1 + rng() % 10)}};
        if (rng() % 3 == 0) pt.requirements = rng() % 2 ? "arch==lx-amd64" : "cores>=4 && ssd==true";
        pol.fbsng.process_types.push_back(pt);
      }
    }
    if (rng() % 4 == 0) pol.throttles.push_back({CredentialKind::User, "", 1 + rng() % 3, kInf});
    const std::string ctx = "combo " + std::to_string(combo) + " seed " + std::to_string(seed);
    const SimResult e = simulate(ds.catalog, ds.taskers, ds.jobs, pol, kernels::active());
    ASSERT_EQ(simcheck::check_schedule(ds.catalog, ds.taskers, ds.jobs, pol, e), "") << ctx;
    const naive::SimOutcome ref = naive::simulate(ds.catalog, ds.taskers, ds.jobs, pol);
    for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
      const std::string at = ctx + " job " + std::string(ds.jobs.id[j]);
      ASSERT_EQ(std::isnan(e.start[j]), std::isnan(ref.start[j]))
          << at << " engine: " << sim_reason_text(e.reason[j]) << " " << e.detail[j] << " naive start " << ref.start[j]
          << " submit " << ds.jobs.submit[j] << " queue " << ds.jobs.queues.value(ds.jobs.queue[j]) << " quotas "
          << pol.fbsng.process_types.size() << " req " << ds.jobs.request_text[ds.jobs.request[j]];
      if (std::isnan(e.start[j])) continue;
      ASSERT_EQ(e.start[j], ref.start[j])
          << at << " min_interval " << pol.min_interval << " submit " << ds.jobs.submit[j] << " hold "
          << ds.jobs.hold_until[j] << " cycles " << e.cycles;
      std::vector<std::pair<uint32_t, uint32_t>> allocs;
      for (uint32_t a = 0; a < e.alloc_count[j]; ++a)
        allocs.emplace_back(e.allocations[e.alloc_first[j] + a].tasker, e.allocations[e.alloc_first[j] + a].slots);
      ASSERT_EQ(allocs, ref.allocations[j]) << at;
      ++started;
      waited += e.start[j] > ds.jobs.submit[j];
    }
  }
  EXPECT_GT(started, 500u);
  EXPECT_GT(waited, 100u) << "sections wait, so queue and section priorities decide";
  EXPECT_GT(runs_with_quota, 30u);
}

INSTANTIATE_TEST_SUITE_P(Allocation, FbsngDifferential, ::testing::Range(0, 8));
