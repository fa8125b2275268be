#include <cmath>
#include <map>
#include <random>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <tbb/global_control.h>

#include "datasets/synth/synthetic.hpp"
#include "engine/batch/dispatch.hpp"
#include "engine/batch/matcher.hpp"
#include "engine/match/eligibility.hpp"

using namespace colmatch;

namespace {

// An int consumable (relop <=), charged per slot unless said otherwise.
AttributeDef int_consumable(const char* name, ConsumeScope scope = ConsumeScope::PerSlot) {
  AttributeDef d;
  d.name = name;
  d.type = AttrType::Int;
  d.relop = Relop::LE;
  d.consumable = true;
  d.scope = scope;
  return d;
}

// A small farm: slots (consumable, per job), mem (memory consumable, per slot), arch, t01 (int, <=).
struct Farm {
  Catalog cat;
  TaskerTable taskers;
  JobTable jobs;
  uint32_t slots, mem, arch, t01;

  Farm() {
    AttributeDef d;
    d.name = "slots";
    d.type = AttrType::Int;
    d.relop = Relop::LE;
    d.consumable = true;
    slots = cat.add(d);
    d.name = "mem";
    d.type = AttrType::Memory;
    mem = cat.add(d);
    AttributeDef a;
    a.name = "arch";
    arch = cat.add(a);
    AttributeDef t;
    t.name = "t01";
    t.type = AttrType::Int;
    t.relop = Relop::LE;
    t01 = cat.add(t);
  }
  uint32_t tasker_row(const std::string& name) const {
    for (uint32_t r = 0; r < taskers.size(); ++r)
      if (taskers.names[r] == name) return r;
    return kNone;
  }
  std::string assigned_to(const MatchOutcome& m, uint32_t j) const {
    return m.dispatch.tasker[j] == kNone ? "-" : taskers.names[m.dispatch.tasker[j]];
  }
  double free_of(const MatchOutcome& m, uint32_t attr, const std::string& tasker) const {
    return m.dispatch.capacity.queue_free(static_cast<size_t>(cat.consumable_slot(attr)))[tasker_row(tasker)];
  }
};

// Seed 002, example E1: j1 requests t01=10 with 4 slots; q1 has 5 slots and t01 <= 20. j1 fits on q1
// (t01 allows requests from 0 to 20) and afterwards q1 offers slots = 1 and still t01 <= 20.
TEST(SeedExamples, GridEngineE1PerSlotFixedAttribute) {
  Farm f;
  TaskerBuilder tb(f.cat);
  tb.add("q1");
  tb.set(f.slots, "5");
  tb.set(f.t01, "20");
  f.taskers = std::move(tb).build();
  JobBuilder jb(f.cat);
  jb.add("j1", "u", "g", 0, 0, 4);
  jb.set_request("t01=10");
  f.jobs = std::move(jb).build();
  const auto m = run_match(f.cat, f.taskers, f.jobs, kernels::active());
  EXPECT_EQ(m.dispatch.status[0], JobStatus::Assigned);
  EXPECT_EQ(f.assigned_to(m, 0), "q1");
  EXPECT_EQ(f.free_of(m, f.slots, "q1"), 1) << "5 slots - 4";
  EXPECT_EQ(f.taskers.columns[f.t01].queue().num(0), 20) << "a fixed attribute is not consumed";
}

// One formula for what a job takes (dispatch, the simulator's holds and FBSNG's quotas use it): a
// $pe_slots job its unit charge on its one tasker; a $fill_up job per slot instance on each of its
// taskers, plus its per-job charge once, on the master.
TEST(Categories, AllocationAndJobChargesPerRule) {
  Categories cats;
  cats.rule = {AllocationRule::PeSlots, AllocationRule::FillUp};
  cats.unit_charge = {{8.0, 4096.0}, {1.0, 512.0}};  // slots, mem: a 8-slot job; one slot instance
  cats.master_charge = {{0.0, 0.0}, {0.0, 1000.0}};  // the $fill_up job's per-job memory
  EXPECT_EQ(cats.allocation_charge(0, 1, 8, true), 4096.0);
  EXPECT_EQ(cats.allocation_charge(0, 1, 3, false), 4096.0) << "$pe_slots: one allocation, the whole job";
  EXPECT_EQ(cats.job_charge(0, 0, 8), 8.0);
  EXPECT_EQ(cats.allocation_charge(1, 1, 3, true), 3 * 512.0 + 1000.0) << "the master takes the per-job charge";
  EXPECT_EQ(cats.allocation_charge(1, 1, 5, false), 5 * 512.0);
  EXPECT_EQ(cats.allocation_charge(1, 0, 5, false), 5.0);
  EXPECT_EQ(cats.job_charge(1, 1, 8), 8 * 512.0 + 1000.0);
}

TEST(Dispatch, GreatestEffectivePowerThenLowestInputIndex) {
  Farm f;
  TaskerBuilder tb(f.cat);
  for (auto [name, power] : {std::pair{"slow", 1.0}, {"fastA", 3.0}, {"fastB", 3.0}, {"mid", 2.0}}) {
    tb.add(name, power);
    tb.set(f.slots, "1");
    tb.set(f.arch, "x");
  }
  f.taskers = std::move(tb).build();
  JobBuilder jb(f.cat);
  for (int j = 0; j < 5; ++j) jb.add("j" + std::to_string(j), "u", "g", 0, j, 1);
  f.jobs = std::move(jb).build();
  const auto m = run_match(f.cat, f.taskers, f.jobs, kernels::active());
  EXPECT_EQ(f.assigned_to(m, 0), "fastA");
  EXPECT_EQ(f.assigned_to(m, 1), "fastB");
  EXPECT_EQ(f.assigned_to(m, 2), "mid");
  EXPECT_EQ(f.assigned_to(m, 3), "slow");
  EXPECT_EQ(m.dispatch.status[4], JobStatus::Pending);
  EXPECT_EQ(m.dispatch.reason[4], PendingReason::NoFreeCapacity);
}

// run_match's beside_dispatch runs once, beside dispatch, given the outcome with its categories and
// eligibility final and no dispatch yet; the outcome equals a run without it; its exception comes out
// of run_match once dispatch is done.
TEST(Dispatch, BesideDispatchSeesFinalCategoriesAndEligibility) {
  Farm f;
  TaskerBuilder tb(f.cat);
  for (int t = 0; t < 6; ++t) {
    tb.add("t" + std::to_string(t), t);
    tb.set(f.slots, "2");
    tb.set(f.arch, t % 2 ? "x" : "y");
  }
  f.taskers = std::move(tb).build();
  JobBuilder jb(f.cat);
  for (int j = 0; j < 40; ++j) {
    jb.add("j" + std::to_string(j), "u", "g", 0, j, 1 + j % 2);
    jb.set_request(j % 3 ? "arch==x" : "arch==y");
  }
  f.jobs = std::move(jb).build();
  const MatchOutcome plain = run_match(f.cat, f.taskers, f.jobs, kernels::active());
  int calls = 0;
  std::vector<uint32_t> seen_of_job;
  std::vector<uint64_t> seen_eligible;
  size_t seen_dispatched = 1;
  const MatchOutcome m = run_match(f.cat, f.taskers, f.jobs, kernels::active(), [&](const MatchOutcome& so_far) {
    ++calls;
    seen_of_job = so_far.categories.of_job;
    for (const CategoryEligibility& e : so_far.eligible) seen_eligible.push_back(e.eligible.count());
    seen_dispatched = so_far.dispatch.status.size();
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen_of_job, m.categories.of_job);
  ASSERT_EQ(seen_eligible.size(), m.eligible.size());
  for (size_t c = 0; c < m.eligible.size(); ++c) EXPECT_EQ(seen_eligible[c], m.eligible[c].eligible.count()) << c;
  EXPECT_EQ(seen_dispatched, 0u) << "no dispatch yet when the task runs";
  EXPECT_EQ(m.dispatch.status, plain.dispatch.status);
  EXPECT_EQ(m.dispatch.tasker, plain.dispatch.tasker);
  EXPECT_EQ(m.dispatch.assigned, plain.dispatch.assigned);
  EXPECT_GT(m.dispatch.assigned, 0u);
  EXPECT_THROW(run_match(f.cat, f.taskers, f.jobs, kernels::active(),
                         [](const MatchOutcome&) { throw std::runtime_error("beside"); }),
               std::runtime_error);
}

TEST(Dispatch, PriorityThenSubmitTimeThenInputOrder) {
  Farm f;
  TaskerBuilder tb(f.cat);
  tb.add("only");
  tb.set(f.slots, "2");
  f.taskers = std::move(tb).build();
  JobBuilder jb(f.cat);
  jb.add("low-early", "u", "g", 1, 0);
  jb.add("high-late", "u", "g", 5, 100);
  jb.add("low-earlier", "u", "g", 1, -5);
  jb.add("high-late-2", "u", "g", 5, 100);
  f.jobs = std::move(jb).build();
  const auto order = dispatch_order(f.jobs);
  EXPECT_EQ(order, (std::vector<uint32_t>{1, 3, 2, 0}));
  const auto m = run_match(f.cat, f.taskers, f.jobs, kernels::active());
  EXPECT_EQ(m.dispatch.status[1], JobStatus::Assigned);
  EXPECT_EQ(m.dispatch.status[3], JobStatus::Assigned);
  EXPECT_EQ(m.dispatch.status[2], JobStatus::Pending);
  EXPECT_EQ(m.dispatch.status[0], JobStatus::Pending);
}

// dispatch_order on many jobs gives the stable sort's order by (priority, submit time, input order) on
// every path: jobs already in order (equal priority, submitted in order), a few priority levels (the
// counting sort; its levels in submit order already or not; -0.0 and 0.0 one level), and a priority per
// job (the full sort).
TEST(Dispatch, OrderOfManyJobsIsTheStableSortsOrder) {
  Catalog cat;
  std::mt19937 rng(5);
  // OutOfOrderAcrossPieces: in order but at job 65,536, where dispatch_order's second piece of jobs starts
  enum Mode { Random, Sorted, LevelsInOrder, SignedZeros, ManyPriorities, OutOfOrderAcrossPieces };
  for (const Mode mode : {Random, Sorted, LevelsInOrder, SignedZeros, ManyPriorities, OutOfOrderAcrossPieces}) {
    JobBuilder jb(cat);
    for (int j = 0; j < 100000; ++j) {
      double priority = rng() % 4, submit = rng() % 50;
      if (mode == Sorted) priority = 0, submit = j / 7;
      if (mode == LevelsInOrder) submit = j / 3;
      if (mode == SignedZeros) priority = rng() % 2 ? -0.0 : 0.0;
      if (mode == ManyPriorities) priority = rng() % 5000 - 2500.5;
      if (mode == OutOfOrderAcrossPieces) priority = 0, submit = j == 65536 ? 0 : j;
      const uint32_t k = jb.add("j" + std::to_string(j), "u", "g", priority, submit);
      if (rng() % 100 == 0 && j != 65536) jb.reject(k, "no");
    }
    const JobTable jobs = std::move(jb).build();
    std::vector<uint32_t> want;
    for (uint32_t j = 0; j < jobs.size(); ++j)
      if (!jobs.rejected(j)) want.push_back(j);
    std::stable_sort(want.begin(), want.end(), [&](uint32_t a, uint32_t b) {
      if (jobs.priority[a] != jobs.priority[b]) return jobs.priority[a] > jobs.priority[b];
      return jobs.submit[a] < jobs.submit[b];
    });
    EXPECT_EQ(dispatch_order(jobs), want) << "mode " << mode;
  }
}

TEST(Dispatch, PerSlotConsumablesAreChargedTimesSlots) {
  Farm f;
  TaskerBuilder tb(f.cat);
  tb.add("big", 2);
  tb.set(f.slots, "8");
  tb.set(f.mem, "16G");
  tb.add("small", 1);
  tb.set(f.slots, "8");
  tb.set(f.mem, "8G");
  f.taskers = std::move(tb).build();
  JobBuilder jb(f.cat);
  jb.add("a", "u", "g", 0, 0, 4);
  jb.set_amount(f.mem, parse_number(AttrType::Memory, "3G"));  // 4 x 3G = 12G: only "big" is eligible
  jb.add("b", "u", "g", 0, 1, 2);
  jb.set_amount(f.mem, parse_number(AttrType::Memory, "3G"));  // 6G: big has 4G left, small fits
  jb.add("c", "u", "g", 0, 2, 1);
  jb.set_amount(f.mem, parse_number(AttrType::Memory, "10G"));  // eligible on big only, no room left
  jb.add("d", "u", "g", 0, 3, 1);
  jb.set_amount(f.mem, parse_number(AttrType::Memory, "20G"));  // eligible nowhere
  f.jobs = std::move(jb).build();
  const auto m = run_match(f.cat, f.taskers, f.jobs, kernels::active());
  EXPECT_EQ(f.assigned_to(m, 0), "big");
  EXPECT_EQ(f.assigned_to(m, 1), "small");
  EXPECT_EQ(m.dispatch.reason[2], PendingReason::NoFreeCapacity);
  EXPECT_EQ(m.dispatch.reason[3], PendingReason::NoEligibleTasker);
  EXPECT_EQ(f.free_of(m, f.mem, "big"), parse_number(AttrType::Memory, "4G"));
  EXPECT_EQ(f.free_of(m, f.slots, "big"), 4);
  EXPECT_EQ(f.free_of(m, f.slots, "small"), 6);
  EXPECT_EQ(m.categories.size(), 4u);
}

TEST(Dispatch, MissingAttributeMakesTaskerIneligibleUnlessNegated) {
  Farm f;
  TaskerBuilder tb(f.cat);
  tb.add("with", 1);
  tb.set(f.arch, "x");
  tb.set(f.slots, "4");
  tb.add("without", 2);
  tb.set(f.slots, "4");
  f.taskers = std::move(tb).build();
  JobBuilder jb(f.cat);
  jb.add("ne", "u", "g", 0, 0);
  jb.set_request("arch!=y");
  jb.add("not", "u", "g", 0, 1);
  jb.set_request("!(arch==y)");
  f.jobs = std::move(jb).build();
  const auto m = run_match(f.cat, f.taskers, f.jobs, kernels::active());
  EXPECT_EQ(f.assigned_to(m, 0), "with") << "!= needs the attribute (DIRAC: missing = not eligible)";
  EXPECT_EQ(f.assigned_to(m, 1), "without") << "NOT of a failed clause passes";
}

TEST(Dispatch, ForcedAttributeMustBeRequested) {
  Catalog cat;
  AttributeDef d;
  d.name = "project";
  d.requestable = Requestable::Forced;
  cat.add(d);
  JobBuilder jb(cat);
  jb.add("ok", "u", "g", 0, 0);
  jb.set_request("project==p1");
  jb.add("missing", "u", "g", 0, 0);
  const JobTable jobs = std::move(jb).build();
  EXPECT_FALSE(jobs.rejected(0));
  ASSERT_TRUE(jobs.rejected(1));
  EXPECT_NE(jobs.reject_reason[jobs.reject[1]].find("forced"), std::string::npos);
}

TEST(Categories, SameRequestsShareOneCategory) {
  Farm f;
  JobBuilder jb(f.cat);
  jb.add("a", "u1", "g", 0, 0);
  jb.set_request("arch==x && t01=3");
  jb.add("b", "u2", "g", 9, 5);
  jb.set_request("t01=3 && arch==x");
  jb.add("c", "u1", "g", 0, 0);
  jb.set_request("arch==x && t01=3");
  jb.set_amount(f.mem, 1);
  jb.add("d", "u1", "g", 0, 0, 2);
  jb.set_request("arch==x && t01=3");
  f.jobs = std::move(jb).build();
  const Categories c = categorize(f.cat, f.jobs);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c.of_job[0], c.of_job[1]);
  EXPECT_NE(c.of_job[0], c.of_job[2]) << "different consumable charge";
  EXPECT_NE(c.of_job[0], c.of_job[3]) << "different slot count";
  EXPECT_EQ(c.job_count[c.of_job[0]], 2u);
  EXPECT_NE(c.hash[0], c.hash[1]);
}

}  // namespace

namespace {

// Grid Engine soft requests (seed 002 "Result caching"): counted, not required; the tasker with the
// fewest violations wins before effective power; counts are computed once per category.
TEST(SoftRequests, FewestViolationsBeforeEffectivePower) {
  Catalog cat;
  const uint32_t slots = cat.add(int_consumable("slots"));
  AttributeDef s;
  s.name = "ssd";
  s.type = AttrType::Boolean;
  const uint32_t ssd = cat.add(s);
  AttributeDef a;
  a.name = "arch";
  const uint32_t arch = cat.add(a);
  TaskerBuilder tb(cat);
  tb.add("fast-plain", 3);
  tb.set(slots, "1");
  tb.add("mid-ssd", 2);
  tb.set(slots, "1");
  tb.set(ssd, "true");
  tb.add("slow-ssd-x", 1);
  tb.set(slots, "1");
  tb.set(ssd, "true");
  tb.set(arch, "x");
  const TaskerTable t = std::move(tb).build();
  JobBuilder jb(cat);
  for (int i = 0; i < 4; ++i) {
    jb.add("j" + std::to_string(i), "u", "g", 0, i);
    jb.set_soft("ssd==true && arch==x");
  }
  jb.add("hard-only", "u", "g", -1, 0);
  const JobTable jobs = std::move(jb).build();
  const auto m = run_match(cat, t, jobs, kernels::active());
  auto where = [&](uint32_t j) {
    return m.dispatch.tasker[j] == kNone ? std::string("-") : t.names[m.dispatch.tasker[j]];
  };
  EXPECT_EQ(where(0), "slow-ssd-x");  // 0 violations
  EXPECT_EQ(where(1), "mid-ssd");     // 1 violation
  EXPECT_EQ(where(2), "fast-plain");  // 2 violations
  EXPECT_EQ(m.dispatch.reason[3], PendingReason::NoFreeCapacity);
  ASSERT_EQ(m.eligible[m.categories.of_job[0]].tiers.size(), 3u);
  for (size_t v = 0; v < 3; ++v) EXPECT_EQ(m.eligible[m.categories.of_job[0]].tiers[v].count(), 1u) << v;
  EXPECT_EQ(m.categories.job_count[m.categories.of_job[0]], 4u) << "one category: counts computed once";
  EXPECT_NE(m.categories.of_job[4], m.categories.of_job[0]) << "soft requests are part of the category";
}

TEST(SoftRequests, TooManySoftRequestsIsAnError) {
  Catalog cat;
  AttributeDef d;
  d.name = "n";
  d.type = AttrType::Int;
  d.relop = Relop::LE;
  cat.add(d);
  JobBuilder jb(cat);
  jb.add("j", "u", "g", 0, 0);
  std::string many;
  for (int i = 0; i < 16; ++i) many += (i ? " && n>=" : "n>=") + std::to_string(i);
  EXPECT_THROW(jb.set_soft(many), RequestError);
}

}  // namespace

namespace {

// Seed 002, example E2: j2 requests t02 = 20 with 4 slots; q2 offers 5 slots with t02 <= 40, q3 offers
// 1 slot with t02 <= 40, q4 offers 3 slots with t02 <= 40. Two instances start on q2, one on q3, one
// on q4. Afterwards q2 offers 3 slots with t02 <= 0, q3 0 slots with t02 <= 20, q4 2 slots with
// t02 <= 20. (The seed's table calls the second and third rows "q1" and "q3" and writes their
// arithmetic as q2.t02 - 1*j2.t02; the evident intent, kept here with its numbers, is q3 and q4 with
// their own t02 of 40 minus one instance's 20.) t02 is charged per slot instance; the job uses the
// $fill_up allocation rule; q2, q3, q4 are visited in that order (effective power 3, 2, 1).
TEST(SeedExamples, GridEngineE2SpreadsOneParallelJobOverQueues) {
  Catalog cat;
  const uint32_t slots = cat.add(int_consumable("slots"));
  const uint32_t t02 = cat.add(int_consumable("t02"));
  TaskerBuilder tb(cat);
  for (auto [name, power, s] : {std::tuple{"q2", 3.0, "5"}, {"q3", 2.0, "1"}, {"q4", 1.0, "3"}}) {
    tb.add(name, power);
    tb.set(slots, s);
    tb.set(t02, "40");
  }
  const TaskerTable t = std::move(tb).build();
  JobBuilder jb(cat);
  jb.add("j2", "u", "g", 0, 0, 4);
  jb.set_amount(t02, 20);
  jb.set_rule(AllocationRule::FillUp);
  const JobTable jobs = std::move(jb).build();
  const auto m = run_match(cat, t, jobs, kernels::active());
  ASSERT_EQ(m.dispatch.status[0], JobStatus::Assigned);
  std::vector<std::pair<std::string, uint32_t>> placed;
  for (uint32_t a = 0; a < m.dispatch.alloc_count[0]; ++a) {
    const auto& x = m.dispatch.allocations[m.dispatch.alloc_first[0] + a];
    placed.emplace_back(t.names[x.tasker], x.slots);
  }
  EXPECT_EQ(placed, (std::vector<std::pair<std::string, uint32_t>>{{"q2", 2}, {"q3", 1}, {"q4", 1}}));
  const size_t ks = static_cast<size_t>(cat.consumable_slot(slots)), kt = static_cast<size_t>(cat.consumable_slot(t02));
  auto row = [&](const char* n) {
    for (uint32_t r = 0; r < t.size(); ++r)
      if (t.names[r] == n) return r;
    return kNone;
  };
  EXPECT_EQ(m.dispatch.capacity.queue_free(ks)[row("q2")], 3);
  EXPECT_EQ(m.dispatch.capacity.queue_free(kt)[row("q2")], 0);
  EXPECT_EQ(m.dispatch.capacity.queue_free(ks)[row("q3")], 0);
  EXPECT_EQ(m.dispatch.capacity.queue_free(kt)[row("q3")], 20);
  EXPECT_EQ(m.dispatch.capacity.queue_free(ks)[row("q4")], 2);
  EXPECT_EQ(m.dispatch.capacity.queue_free(kt)[row("q4")], 20);
}

TEST(FillUp, AllOrNothingAndPerJobChargesOnTheMaster) {
  Catalog cat;
  const uint32_t slots = cat.add(int_consumable("slots"));
  const uint32_t lic = cat.add(int_consumable("lic", ConsumeScope::PerJob));
  TaskerBuilder tb(cat);
  tb.add("a", 2);
  tb.set(slots, "2");
  tb.add("b", 1);
  tb.set(slots, "2");
  tb.set(lic, "1");
  const TaskerTable t = std::move(tb).build();
  JobBuilder jb(cat);
  jb.add("too-wide", "u", "g", 1, 0, 5);  // 5 slots, 4 in the farm: nothing placed
  jb.set_rule(AllocationRule::FillUp);
  jb.add("licensed", "u", "g", 0, 1, 3);  // the master must hold the licence: b (2 slots), then a (1)
  jb.set_rule(AllocationRule::FillUp);
  jb.set_amount(lic, 1);
  const JobTable jobs = std::move(jb).build();
  const auto m = run_match(cat, t, jobs, kernels::active());
  EXPECT_EQ(m.dispatch.reason[0], PendingReason::NoFreeCapacity);
  ASSERT_EQ(m.dispatch.status[1], JobStatus::Assigned);
  EXPECT_EQ(t.names[m.dispatch.tasker[1]], "b") << "a has no licence, so it cannot be the master";
  EXPECT_EQ(m.dispatch.alloc_count[1], 2u);
  const size_t ks = static_cast<size_t>(cat.consumable_slot(slots));
  EXPECT_EQ(m.dispatch.capacity.queue_free(ks)[0] + m.dispatch.capacity.queue_free(ks)[1], 1)
      << "the failed job left no charge behind";
}

// Placer::plan (EASY's reservation asks where a job would go without placing it): the same allocations
// try_place makes, and the capacity untouched, on random farms with $fill_up and $pe_slots jobs,
// soft tiers and partly used taskers. Placer::can_place (submit's "could it ever run") gives try_place's
// answer, under every allocation policy, and takes nothing either.
TEST(Placer, PlanGivesTryPlaceAllocationsAndTakesNothing) {
  size_t planned = 0, could = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    synth::SynthSpec s;
    s.seed = seed;
    s.taskers = 1 + seed % 40;
    s.jobs = 30;
    s.categories = 1 + seed % 6;
    s.levels = seed % 3 == 0;
    s.with_slots = true;
    s.soft = seed % 4 == 0 ? 0.5 : 0.0;
    s.fill_up = 0.5;
    const auto ds = synth::generate(s);
    const Categories cats = categorize(ds.catalog, ds.jobs);
    std::vector<CategoryEligibility> elig;
    for (uint32_t c = 0; c < cats.size(); ++c) {
      const Request* soft = cats.soft[c] != 0 ? &ds.jobs.requests[cats.soft[c]] : nullptr;
      elig.push_back(evaluate_category(ds.catalog, ds.taskers, ds.jobs.requests[cats.request[c]], soft,
                                       cats.unit_charge[c], kernels::active()));
    }
    Capacity cap = Capacity::configured(ds.catalog, ds.taskers);
    Placer placer(ds.taskers, ds.jobs, cats, elig, cap, nullptr);
    for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
      if (ds.jobs.rejected(j) || elig[cats.of_job[j]].eligible.count() == 0) continue;
      const auto policy = static_cast<AllocationPolicy>(j % 5);
      std::vector<Allocation> planned_allocs, placed;
      const std::vector<double> before = cap.queue_free(0);
      const bool can = placer.can_place(j, policy);
      ASSERT_EQ(cap.queue_free(0), before) << "seed " << seed << " job " << j << ": can_place took capacity";
      const bool p = placer.plan(j, policy, planned_allocs);
      ASSERT_EQ(cap.queue_free(0), before) << "seed " << seed << " job " << j << ": plan took capacity";
      const bool ok = placer.try_place(j, policy, placed);
      ASSERT_EQ(p, ok) << "seed " << seed << " job " << j;
      ASSERT_EQ(can, ok) << "seed " << seed << " job " << j << " policy " << j % 5;
      could += can;
      ASSERT_EQ(planned_allocs.size(), placed.size()) << "seed " << seed << " job " << j;
      for (size_t a = 0; a < placed.size(); ++a) {
        ASSERT_EQ(planned_allocs[a].tasker, placed[a].tasker);
        ASSERT_EQ(planned_allocs[a].slots, placed[a].slots);
      }
      if (ok) {
        cap.commit();  // the next job sees a fuller farm
        planned += cats.rule[cats.of_job[j]] == AllocationRule::FillUp;
      }
    }
  }
  EXPECT_GT(planned, 500u) << "$fill_up plans are exercised";
  EXPECT_GT(could, 1000u) << "jobs that fit are asked, not only jobs that do not";
}

// Job categories of a farm with many consumables (an Accelerator farm: one per counted map) key their
// charges sparsely; jobs with the same charges share a category, jobs whose charges differ (even by a
// consumable only one of them asks for) do not, and the categories' hashes do not depend on the order.
TEST(Categories, ManyConsumablesKeyTheirChargesSparsely) {
  Catalog cat;
  std::vector<uint32_t> lic;
  for (int i = 0; i < 40; ++i)
    lic.push_back(cat.add(consumable_attribute("lic" + std::to_string(i), AttrType::Int, ConsumeScope::PerJob)));
  JobBuilder jb(cat);
  auto job = [&](const char* id, std::vector<std::pair<int, double>> amounts) {
    jb.add(id, "u", "g", 0, 0);
    for (const auto& [i, a] : amounts) jb.set_amount(lic[static_cast<size_t>(i)], a);
  };
  job("a", {{3, 1}});
  job("b", {{3, 1}});
  job("c", {{3, 2}});
  job("d", {{3, 1}, {30, 1}});
  job("e", {{30, 1}, {3, 1}});
  job("f", {});
  job("g", {{39, 1}});
  const JobTable jobs = std::move(jb).build();
  const Categories c = categorize(cat, jobs);
  EXPECT_EQ(c.of_job[0], c.of_job[1]);
  EXPECT_NE(c.of_job[0], c.of_job[2]) << "another amount";
  EXPECT_NE(c.of_job[0], c.of_job[3]) << "one more consumable";
  EXPECT_EQ(c.of_job[3], c.of_job[4]) << "the same charges given in another order";
  EXPECT_NE(c.of_job[5], c.of_job[0]);
  EXPECT_NE(c.of_job[6], c.of_job[5]);
  EXPECT_NE(c.of_job[6], c.of_job[0]);
  EXPECT_EQ(c.size(), 5u);
  EXPECT_EQ(c.unit_charge[c.of_job[3]][30], 1);
}

}  // namespace

namespace {

// A job's requested amounts are stored per job (JobAmounts, CSR): a later set_amount of the same
// consumable replaces the earlier one, entries stay sorted whatever the order they were set in, and a
// consumable a job did not request reads NaN.
TEST(JobAmounts, PerJobEntriesReplaceSortAndReadNaN) {
  Catalog cat;
  std::vector<uint32_t> lic;
  for (int i = 0; i < 5; ++i)
    lic.push_back(cat.add(consumable_attribute("lic" + std::to_string(i), AttrType::Int, ConsumeScope::PerJob)));
  JobBuilder jb(cat);
  jb.add("a", "u", "g", 0, 0);
  jb.set_amount(lic[3], 2);
  jb.set_amount(lic[1], 1);
  jb.set_amount(lic[3], 7);
  jb.add("b", "u", "g", 0, 0);
  jb.add("c", "u", "g", 0, 0);
  jb.set_amount(lic[0], 4);
  const JobTable jobs = std::move(jb).build();
  ASSERT_EQ(jobs.amount.jobs(), 3u);
  const auto a = jobs.amount.of(0);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].consumable, static_cast<uint32_t>(cat.consumable_slot(lic[1])));
  EXPECT_EQ(a[1].consumable, static_cast<uint32_t>(cat.consumable_slot(lic[3])));
  EXPECT_EQ(jobs.amount.at(static_cast<size_t>(cat.consumable_slot(lic[3])), 0), 7);
  EXPECT_TRUE(std::isnan(jobs.amount.at(static_cast<size_t>(cat.consumable_slot(lic[0])), 0)));
  EXPECT_TRUE(jobs.amount.of(1).empty());
  EXPECT_EQ(jobs.amount.at(static_cast<size_t>(cat.consumable_slot(lic[0])), 2), 4);
}

// Jobs copied from prototypes (add_jobs_like) share the prototype's row; a later set_last on the last
// job copies its row first, so the jobs that share it keep their amounts; a job started after them has
// a row of its own; the prototypes' table is not changed.
TEST(JobAmounts, CopiedJobsShareARowUntilTheLastChanges) {
  using Amounts = std::vector<std::pair<uint32_t, double>>;
  auto amounts = [](const JobAmounts& a, uint32_t j) {
    Amounts out;
    for (const JobAmounts::Entry& e : a.of(j)) out.emplace_back(e.consumable, e.amount);
    return out;
  };
  JobAmounts src;
  src.add_job();
  src.set_last(2, 5);
  src.set_last(0, 1);
  src.add_job();
  src.add_job();
  src.set_last(1, 3);
  JobAmounts t;
  t.add_job();
  t.set_last(4, 9);
  const std::vector<uint32_t> like{2, 0, 0, 1, 2};
  t.add_jobs_like(src, like);
  t.set_last(1, 8);  // job 5, like prototype 2 as job 1 is
  t.set_last(6, 2);
  const std::vector<uint32_t> again{0};
  t.add_jobs_like(src, again);
  t.set_last(0, 7);  // job 6, like prototype 0 as jobs 2 and 3 are
  t.add_job();
  t.set_last(3, 1);
  ASSERT_EQ(t.jobs(), 8u);
  const Amounts want[] = {{{4, 9}}, {{1, 3}},         {{0, 1}, {2, 5}}, {{0, 1}, {2, 5}},
                          {},       {{1, 8}, {6, 2}}, {{0, 7}, {2, 5}}, {{3, 1}}};
  for (uint32_t j = 0; j < 8; ++j) EXPECT_EQ(amounts(t, j), want[j]) << "job " << j;
  EXPECT_EQ(amounts(src, 0), (Amounts{{0, 1}, {2, 5}}));
  EXPECT_EQ(amounts(src, 2), (Amounts{{1, 3}}));
  EXPECT_EQ(t.at(2, 3), 5);
  EXPECT_TRUE(std::isnan(t.at(2, 1)));
}

// Dependencies in CSR form over the jobs up to the last one given any: jobs between and after read
// empty, a job's several read in the order given, jobs given theirs out of order are refused.
TEST(JobDepends, ListsInJobOrderAndNoneAfterTheLast) {
  JobDepends d;
  EXPECT_TRUE(d[0].empty());
  EXPECT_TRUE(d[1000000].empty());
  d.add(3, 7);
  d.add(3, 1);
  d.add(5, 0);
  EXPECT_FALSE(d[3].empty());
  auto list = [&](size_t j) { return std::vector<uint32_t>(d[j].begin(), d[j].end()); };
  EXPECT_EQ(list(3), (std::vector<uint32_t>{7, 1}));
  EXPECT_EQ(list(5), (std::vector<uint32_t>{0}));
  for (size_t j : {0, 1, 2, 4, 6, 1000000}) EXPECT_TRUE(d[j].empty()) << j;
  EXPECT_THROW(d.add(4, 2), std::invalid_argument) << "job 4 after job 5";
  d.add(5, 2);
  EXPECT_EQ(list(5), (std::vector<uint32_t>{0, 2}));
}

// Texts in Arrow's layout: pushed one by one or appended in parts (empty parts, empty texts, parts
// longer than a parallel grain), they read back the same; columns compare by their texts.
TEST(TextColumn, PartsAppendedReadAsTextsPushedOneByOne) {
  TextColumn by_text, by_parts;
  by_text.push_back("first");
  by_parts.push_back("first");
  std::vector<std::string> texts(5);
  std::vector<std::vector<uint32_t>> ends(5);
  std::vector<std::string> all{"first"};
  for (size_t p = 0; p < 5; ++p) {
    const size_t n = p == 1 ? 0 : p == 3 ? 20000 : 3 + p;  // part 1 empty
    for (size_t i = 0; i < n; ++i) {
      const std::string t = i % 7 == 0 ? "" : fmt::format("p{}-{}", p, i);  // some texts empty
      texts[p] += t;
      ends[p].push_back(static_cast<uint32_t>(texts[p].size()));
      by_text.push_back(t);
      all.push_back(t);
    }
  }
  std::vector<std::string_view> views(texts.begin(), texts.end());
  std::vector<std::span<const uint32_t>> spans(ends.begin(), ends.end());
  by_parts.append_parts(views, spans);
  ASSERT_EQ(by_parts.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(by_parts[i], all[i]) << i;
  EXPECT_EQ(by_parts, by_text);
  EXPECT_EQ(by_parts.strings(), all);
  by_parts.push_back("last");
  EXPECT_FALSE(by_parts == by_text);
  EXPECT_EQ(by_parts[all.size()], "last");
}

// A per-job consumable `mem` whose default amount is 1024 (a job that requests none is charged 1024).
uint32_t add_mem_with_default(Catalog& cat) {
  AttributeDef mem = consumable_attribute("mem", AttrType::Memory, ConsumeScope::PerJob);
  mem.default_amount = 1024;
  return cat.add(mem);
}

// categorize finds a job's category by what it requested and, the first time, by what it is charged:
// a job requesting a consumable's default amount and a job requesting nothing are charged alike and
// share one category; a job requesting another amount does not.
TEST(Categories, RequestingTheDefaultChargesAsNotRequesting) {
  Catalog cat;
  const uint32_t m = add_mem_with_default(cat);
  JobBuilder jb(cat);
  jb.add("none", "u", "g", 0, 0);
  jb.add("default", "u", "g", 0, 0);
  jb.set_amount(m, 1024);
  jb.add("none-again", "u", "g", 0, 0);
  jb.add("more", "u", "g", 0, 0);
  jb.set_amount(m, 2048);
  jb.add("default-again", "u", "g", 0, 0);
  jb.set_amount(m, 1024);
  const JobTable jobs = std::move(jb).build();
  const Categories c = categorize(cat, jobs);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(c.of_job[0], c.of_job[1]);
  EXPECT_EQ(c.of_job[0], c.of_job[2]);
  EXPECT_EQ(c.of_job[0], c.of_job[4]);
  EXPECT_NE(c.of_job[0], c.of_job[3]);
  EXPECT_EQ(c.job_count[c.of_job[0]], 4u);
  EXPECT_EQ(c.unit_charge[c.of_job[3]][0], 2048);
}

// The same over pieces: categorize reads 65,536 jobs a piece in parallel; categories are numbered in the
// order the jobs first show them, raw keys first met in different pieces that charge alike (the default
// amount, no amount) are one category, rejected jobs have none, and counts add up over the pieces.
TEST(Categories, ManyPiecesNumberCategoriesAsTheJobsShowThem) {
  Catalog cat;
  const uint32_t m = add_mem_with_default(cat);
  JobBuilder jb(cat);
  std::mt19937 rng(11);
  std::vector<int> kind;  // -1 rejected, else the amount class: 0 none or the default, 1.. others
  const int n = 300000;
  for (int j = 0; j < n; ++j) {
    const uint32_t k = jb.add("j" + std::to_string(j), "u", "g", 0, 0);
    // new kinds keep appearing late (only past 100,000 jobs for some), so pieces meet them first
    const int top = j < 100000 ? 20 : 40;
    int a = static_cast<int>(rng() % top);
    if (a == 0 && j > 150000) jb.set_amount(m, 1024);  // the default, met first as a raw key late
    else if (a > 0) jb.set_amount(m, 1024.0 * (a + 1));
    if (rng() % 50 == 0) {
      jb.reject(k, "no");
      a = -1;
    }
    kind.push_back(a);
  }
  const JobTable jobs = std::move(jb).build();
  const Categories c = categorize(cat, jobs);
  std::map<int, uint32_t> number;  // kind -> category, numbered as first met
  std::vector<uint64_t> count;
  for (int j = 0; j < n; ++j) {
    if (kind[j] < 0) {
      ASSERT_EQ(c.of_job[j], kNone) << j;
      continue;
    }
    const auto [it, fresh] = number.try_emplace(kind[j], static_cast<uint32_t>(number.size()));
    if (fresh) count.push_back(0);
    ++count[it->second];
    ASSERT_EQ(c.of_job[j], it->second) << "job " << j;
  }
  ASSERT_EQ(c.size(), number.size());
  EXPECT_EQ(number.size(), 40u);
  for (uint32_t x = 0; x < c.size(); ++x) EXPECT_EQ(c.job_count[x], count[x]) << x;
}

// Thousands of raw keys (amounts, slot counts, soft requests) in one piece and across pieces: categorize
// compares jobs field by field under a hash of their raw keys, never building the key but for its
// first job; categories are still one per distinct charge, numbered as the jobs first show them.
TEST(Categories, ThousandsOfRawKeysAreOneCategoryEach) {
  Catalog cat;
  const uint32_t m = add_mem_with_default(cat);
  JobBuilder jb(cat);
  std::mt19937 rng(5);
  const int n = 150000;
  for (int j = 0; j < n; ++j) {
    jb.add("j" + std::to_string(j), "u", "g", 0, 0, 1 + rng() % 3);
    const int a = static_cast<int>(rng() % 5000);  // 0: none; 1: the default, charged as none; else 1024 * a
    if (a > 0) jb.set_amount(m, 1024.0 * a);
  }
  const JobTable jobs = std::move(jb).build();
  std::map<std::pair<int, uint32_t>, uint32_t> number;  // (amount in KiB, slots) -> category, as first met
  std::vector<uint32_t> want(n);
  for (uint32_t j = 0; j < n; ++j) {
    const double amount = jobs.amount.at(0, j);
    const int a = std::isnan(amount) ? 1 : static_cast<int>(amount / 1024);
    want[j] = number.try_emplace({a, jobs.slots[j]}, static_cast<uint32_t>(number.size())).first->second;
  }
  const Categories c = categorize(cat, jobs);
  ASSERT_EQ(c.size(), number.size());
  EXPECT_GT(c.size(), 10000u);
  for (uint32_t j = 0; j < n; ++j) ASSERT_EQ(c.of_job[j], want[j]) << "job " << j;
}

// Copies of one prototype share its row of amounts (JobBuilder::add_copies: how the Accelerator loader
// adds a million jobs); categorize takes one row for equal amounts at once, and compares the amounts of
// different rows value by value: two prototypes requesting alike in rows of their own are one category
// with their copies, one requesting another amount is another, and jobs built one by one requesting
// alike (a row each) join the first, across pieces of 65,536 jobs.
TEST(Categories, JobsSharingARowOrRequestingAlikeInRowsOfTheirOwnAreOneCategory) {
  Catalog cat;
  const uint32_t m = add_mem_with_default(cat);
  JobBuilder protos(cat);
  for (const double amount : {2048.0, 2048.0, 4096.0, 1024.0}) {  // 1024: the default, charged as none
    protos.add("", "u", "g", 0, 0);
    protos.set_amount(m, amount);
  }
  protos.add("", "u", "g", 0, 0);  // no amount
  const JobTable pt = std::move(protos).build();
  std::vector<uint32_t> like;
  std::string ids;
  std::vector<uint32_t> ends;
  const int n = 150000;
  for (int j = 0; j < n; ++j) {
    like.push_back(static_cast<uint32_t>((j * 7 + j / 1000) % 5));
    ids += "c" + std::to_string(j);
    ends.push_back(static_cast<uint32_t>(ids.size()));
  }
  JobBuilder jb(cat);
  const std::vector<JobBuilder::CopiedJobs> pieces{{like, ids, ends, {}, {}, {}}};
  jb.add_copies(pt, pieces);
  for (int j = 0; j < 3; ++j) {  // rows of their own
    jb.add("own" + std::to_string(j), "u", "g", 0, 0);
    jb.set_amount(m, j == 2 ? 4096 : 2048);
  }
  const JobTable jobs = std::move(jb).build();
  auto first_like = [&](uint32_t p) {
    return static_cast<uint32_t>(std::find(like.begin(), like.end(), p) - like.begin());
  };
  ASSERT_EQ(like[0], 0u);
  ASSERT_EQ(jobs.amount.row(0), jobs.amount.row(5)) << "copies of one prototype share its row";
  ASSERT_NE(jobs.amount.row(first_like(0)), jobs.amount.row(first_like(1))) << "two prototypes, two rows";
  const Categories c = categorize(cat, jobs);
  ASSERT_EQ(c.size(), 3u) << "2048 (two prototypes and two jobs of their own), 4096, and none or the default";
  const uint32_t two = c.of_job[0], four = c.of_job[first_like(2)], none = c.of_job[first_like(4)];
  EXPECT_EQ(two, 0u);
  EXPECT_EQ(c.of_job[first_like(1)], two);
  EXPECT_EQ(c.of_job[first_like(3)], none);
  EXPECT_NE(two, four);
  EXPECT_NE(four, none);
  for (uint32_t j = 0; j < static_cast<uint32_t>(n); ++j)
    ASSERT_EQ(c.of_job[j], like[j] < 2 ? two : like[j] == 2 ? four : none) << "job " << j;
  EXPECT_EQ(c.of_job[n], two);
  EXPECT_EQ(c.of_job[n + 1], two);
  EXPECT_EQ(c.of_job[n + 2], four);
  uint64_t twos = 2;
  for (const uint32_t l : like) twos += l < 2 ? 1 : 0;
  EXPECT_EQ(c.job_count[two], twos);
}

}  // namespace

namespace {

// Slurm's main pass on a farm of four equal taskers in input order x, z, p, q (z not eligible for the
// small jobs): x has 10 slots, p and q 6, q alone 1G of mem. w takes q's mem and a slot; s1 goes to x
// (run {x} of 10 free against run {p, q} of 11); y, in queue {q}, finds q's mem taken and holds q; s2
// then sees runs {x} of 9 and {p} of 6 and goes to p. (A job may follow its category's last placement
// only while nothing else changed: holding q split a run.)
TEST(Dispatch, ConsecutiveBestFitSearchesAgainAfterAQueueHoldsTaskers) {
  Farm f;
  TaskerBuilder tb(f.cat);
  for (auto [name, slots, arch, mem] :
       {std::tuple{"x", "10", "x", ""}, {"z", "10", "y", ""}, {"p", "6", "x", ""}, {"q", "6", "x", "1G"}}) {
    tb.add(name, 1.0);
    tb.set(f.slots, slots);
    tb.set(f.arch, arch);
    if (*mem) tb.set(f.mem, mem);
  }
  f.taskers = std::move(tb).build();
  JobBuilder jb(f.cat);
  for (auto [id, mem] : {std::pair{"w", true}, {"s1", false}, {"y", true}, {"s2", false}}) {
    jb.add(id, "u", "g", 0, static_cast<double>(jb.size()), 1);
    jb.set_request("arch==x");
    if (mem) jb.set_amount(f.mem, 1024.0 * 1024 * 1024);
  }
  f.jobs = std::move(jb).build();
  DispatchOptions options;
  options.allocation = AllocationPolicy::ConsecutiveBestFit;
  options.fit_consumable = static_cast<size_t>(f.cat.consumable_slot(f.slots));
  auto q = std::make_shared<BlockingQueues>();
  q->names = {"q"};
  std::vector<uint64_t> words(1, uint64_t{1} << f.tasker_row("q"));
  q->taskers.push_back(kernels::TaskerSet::from_words(std::move(words), f.taskers.size(), 1));
  q->queue_of_job = {kNone, kNone, 0, kNone};
  options.queues = std::move(q);
  const auto m = run_match(f.cat, f.taskers, f.jobs, kernels::active(), {}, nullptr, options);
  EXPECT_EQ(f.assigned_to(m, 0), "q");
  EXPECT_EQ(f.assigned_to(m, 1), "x");
  EXPECT_EQ(m.dispatch.reason[2], PendingReason::NoFreeCapacity);
  EXPECT_EQ(f.assigned_to(m, 3), "p");
}

// QueueBlocks::any_busy (Slurm's nodes_busy): a tasker of the requested set that is up with nothing free of
// the busy consumable: seen once placed_on() says a job went there, and no longer once its queue holds it.
TEST(Dispatch, BusyTaskersAreSeenAfterEachPlacementAndHold) {
  Farm f;
  TaskerBuilder tb(f.cat);
  for (const char* name : {"a", "b"}) {
    tb.add(name, 1.0);
    tb.set(f.slots, "2");
  }
  f.taskers = std::move(tb).build();
  Capacity cap = Capacity::configured(f.cat, f.taskers);
  BlockingQueues q;
  q.names = {"q"};
  q.taskers.push_back(kernels::TaskerSet::from_words({uint64_t{1} << f.tasker_row("a")}, 2, 1));
  q.queue_of_job = {0};
  q.busy_consumable = static_cast<uint32_t>(f.cat.consumable_slot(f.slots));
  const kernels::TaskerSet both = kernels::TaskerSet::from_words({3}, 2, 2);
  QueueBlocks blocks(q, cap);
  EXPECT_FALSE(blocks.any_busy(both));
  cap.take(q.busy_consumable, f.tasker_row("a"), 2);
  blocks.placed_on(f.tasker_row("a"));
  EXPECT_TRUE(blocks.any_busy(both)) << "a has nothing free";
  blocks.failed(0);  // its queue blocks: a is held, so no longer counts
  EXPECT_FALSE(blocks.any_busy(both));
  blocks.release();
}

}  // namespace
