// colmatch simulate (engine/schedule/simulation.hpp): each step of Moab's scheduling iteration (seed 001) as a
// named test, EASY backfill's guarantee, and the engine against the naive reference simulator on
// random traces for every allocation and backfill policy. Every schedule passes the independent checker.
#include <cmath>
#include <filesystem>
#include <random>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "datasets/synth/synthetic.hpp"
#include "loaders/swf.hpp"
#include "loaders/traces.hpp"
#include "tests/engine/model/random_host_rules.hpp"
#include "tests/engine/schedule/sim_checker.hpp"
#include "tests/engine/schedule/sim_farm.hpp"
#include "tests/reference/naive_simulator.hpp"

using namespace colmatch;

// Jobs are written with designated initializers naming only what a test sets.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace {

using namespace simtest;

// Step 1, refresh resources: R.Available = R.Configured - R.Dedicated; a job's end gives its slots back.
TEST(SeedExamples, MoabRefreshResourcesCapacityComesBackWhenAJobEnds) {
  const Farm f({4});
  const auto jobs = make_jobs(f.cat, {{.id = "a", .runtime = 100, .slots = 4}, {.id = "b", .submit = 5, .slots = 2}});
  const auto r = run(f, jobs);
  EXPECT_EQ(r.start[0], 0);
  EXPECT_EQ(r.start[1], 100) << "b waits for a's four slots to come back";
  EXPECT_EQ(r.end[1], 110);
}

// Step 2, feasible jobs: holds, dependencies, and jobs no tasker can run.
TEST(SeedExamples, MoabFeasibleJobsHoldsDependenciesAndImpossibleJobs) {
  const Farm f({8});
  const auto jobs = make_jobs(f.cat, {{.id = "held", .hold = 50},
                                      {.id = "forever", .hold = kInf},
                                      {.id = "first", .runtime = 30},
                                      {.id = "after", .depends = {"first"}},
                                      {.id = "sparc", .request = "arch==sparc"},
                                      {.id = "huge", .slots = 20, .fill_up = true}});
  const auto r = run(f, jobs);
  EXPECT_EQ(r.start[index_of(jobs, "held")], 50) << "released at its hold time";
  EXPECT_TRUE(std::isnan(r.start[index_of(jobs, "forever")]));
  EXPECT_EQ(r.reason[index_of(jobs, "forever")], SimReason::Held);
  EXPECT_EQ(r.start[index_of(jobs, "after")], 30) << "starts when its dependency ends";
  EXPECT_EQ(r.reason[index_of(jobs, "sparc")], SimReason::NoEligibleTasker);
  EXPECT_EQ(r.reason[index_of(jobs, "huge")], SimReason::TooLarge);
  EXPECT_EQ(r.was_held[index_of(jobs, "held")], 1);
}

// Issue 28: a job waiting for a dependency is parked until that job ends, not visited by every cycle (a
// chain of 100k jobs took 43.6 s, now a few ms): the schedule and every reason stay what a full walk
// gives. Under a static and a time-dependent priority order: a chain cut by `until` leaves the next job
// waiting for a dependency and those after it too; a held job whose dependency has not ended says held
// (and was held); a job depending on two jobs waits for the later one.
TEST(Dependencies, ParkedUntilTheirJobEndsWithTheReasonsOfAFullWalk) {
  const Farm f({2});
  std::vector<Job> list;
  for (int i = 0; i < 200; ++i) {
    Job j{.id = "c" + std::to_string(i), .runtime = 10};
    if (i) j.depends = {"c" + std::to_string(i - 1)};
    list.push_back(j);
  }
  list.push_back({.id = "held", .runtime = 10, .hold = 5000, .depends = {"c199"}});
  list.push_back({.id = "both", .runtime = 10, .depends = {"c3", "c7"}});
  const auto jobs = make_jobs(f.cat, list);
  for (const bool time_dependent : {false, true}) {
    SCOPED_TRACE(time_dependent ? "queue_time weight" : "static order");
    SimConfig pol;
    pol.until = 995;
    if (time_dependent) pol.weights.queue_time = 1;
    const auto r = run(f, jobs, pol);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(r.start[i], 10 * i) << i;
    EXPECT_EQ(r.reason[100], SimReason::Dependency);
    EXPECT_EQ(r.reason[150], SimReason::Dependency);
    EXPECT_EQ(r.reason[index_of(jobs, "held")], SimReason::Held);
    EXPECT_EQ(r.was_held[index_of(jobs, "held")], 1);
    EXPECT_EQ(r.start[index_of(jobs, "both")], 80) << "after c7, the later of its two";
  }
}

// Step 3, priority: each weight orders the waiting jobs.
TEST(SeedExamples, MoabPriorityFactorsOrderTheQueue) {
  const Farm f({1});
  // One slot busy until 100; three jobs wait. Who runs first at 100 depends on the weights.
  const auto jobs = make_jobs(f.cat, {{.id = "busy", .runtime = 100},
                                      {.id = "old", .submit = 1, .runtime = 50, .slots = 1},
                                      {.id = "vip", .submit = 2, .runtime = 50, .priority = 5},
                                      {.id = "short", .submit = 3, .runtime = 1, .walltime = 1}});
  auto first_after_busy = [&](PriorityWeights w) {
    SimConfig pol;
    pol.weights = w;
    const auto r = run(f, jobs, pol);
    for (uint32_t j = 1; j < jobs.size(); ++j)
      if (r.start[j] == 100) return std::string(jobs.id[j]);
    return std::string("-");
  };
  EXPECT_EQ(first_after_busy({.credential = 1}), "vip");
  EXPECT_EQ(first_after_busy({.credential = 0, .queue_time = 1}), "old") << "longest queued";
  EXPECT_EQ(first_after_busy({.credential = 0, .expansion = 1}), "short") << "highest expansion factor";
}

// Step 3, credential priority (Moab QOSCFG[high] PRIORITY=100, USERCFG[...] PRIORITY=...): a job's
// credentials add their priorities to its own in the credential factor.
TEST(SeedExamples, MoabCredentialPriorityOfQosAndUser) {
  const Farm f({1});
  const auto jobs = make_jobs(f.cat, {{.id = "busy", .runtime = 100},
                                      {.id = "plain", .submit = 1, .priority = 5},
                                      {.id = "express", .submit = 2, .qos = "high"},
                                      {.id = "friend", .submit = 3, .user = "alice"}});
  auto order = [&](std::vector<CredentialPriority> cp) {
    SimConfig pol;
    pol.credential_priorities = std::move(cp);
    const auto r = run(f, jobs, pol);
    std::vector<std::pair<double, std::string>> starts;
    for (uint32_t j = 1; j < jobs.size(); ++j) starts.emplace_back(r.start[j], jobs.id[j]);
    std::sort(starts.begin(), starts.end());
    return starts[0].second + "," + starts[1].second + "," + starts[2].second;
  };
  EXPECT_EQ(order({}), "plain,express,friend") << "own priority, then submit order";
  EXPECT_EQ(order({{CredentialKind::QoS, "high", 10}}), "express,plain,friend");
  EXPECT_EQ(order({{CredentialKind::QoS, "high", 10}, {CredentialKind::User, "alice", 20}}), "friend,express,plain");
  EXPECT_EQ(order({{CredentialKind::QoS, "high", 3}, {CredentialKind::User, "u", 3}}), "plain,express,friend")
      << "plain (5 + 3) still leads express (0 + 3 + 3)";
}

// Step 4, throttling per credential.
TEST(SeedExamples, MoabThrottlingPerCredential) {
  const Farm f({8});
  const auto jobs = make_jobs(f.cat, {{.id = "a1", .runtime = 20, .user = "alice"},
                                      {.id = "a2", .runtime = 20, .user = "alice"},
                                      {.id = "b1", .runtime = 20, .user = "bob"}});
  SimConfig pol;
  pol.throttles.push_back({CredentialKind::User, "alice", 1, kInf});
  const auto r = run(f, jobs, pol);
  EXPECT_EQ(r.start[0], 0);
  EXPECT_EQ(r.start[1], 20) << "alice may run one job at a time";
  EXPECT_EQ(r.start[2], 0) << "bob is not throttled";
  EXPECT_EQ(r.was_throttled[1], 1);
  SimConfig until = pol;
  until.until = 10;
  const auto cut = run(f, jobs, until);
  EXPECT_EQ(cut.reason[1], SimReason::Throttled);
  EXPECT_EQ(cut.detail[1], "user alice max_jobs 1");
}

// Step 1, R.Available = R.Configured - MAX(R.Dedicated, R.Utilized), under each
// RESOURCEAVAILABILITYPOLICY. A 4-slot tasker; job a holds all 4 slots for 100 s but uses one
// (utilization 0.25); job b asks for 3 slots at t = 1. Dedicated: 4 - 4 = 0 left, b waits for a's end;
// utilized: 4 - 1 = 3, b starts at once; combined: 4 - MAX(4, 1) = 0, b waits. With a load of 1 slot on
// the tasker from other than jobs: dedicated ignores it; combined leaves 3 on the idle tasker, so a can
// never run there and b starts at once.
TEST(SeedExamples, MoabResourceAvailabilityPolicies) {
  const Farm f({4});
  const auto jobs = make_jobs(f.cat, {{.id = "a", .runtime = 100, .slots = 4, .utilization = 0.25},
                                      {.id = "b", .submit = 1, .runtime = 10, .slots = 3}});
  auto sim = [&](ResourceAvailability ra, double load) {
    SimConfig pol;
    pol.availability = ra;
    FarmEvents farm;
    if (load > 0) farm.load = {{load}};
    SimResult r = simulate(f.cat, f.taskers, jobs, pol, kernels::active(), farm);
    EXPECT_EQ(simcheck::check_schedule(f.cat, f.taskers, jobs, pol, r, farm), "");
    return r;
  };
  const auto dedicated = sim(ResourceAvailability::Dedicated, 0);
  EXPECT_EQ(dedicated.start[0], 0);
  EXPECT_EQ(dedicated.start[1], 100) << "a's 4 dedicated slots leave none";
  const auto utilized = sim(ResourceAvailability::Utilized, 0);
  EXPECT_EQ(utilized.start[0], 0);
  EXPECT_EQ(utilized.start[1], 1) << "a uses one slot: three are available";
  const auto combined = sim(ResourceAvailability::Combined, 0);
  EXPECT_EQ(combined.start[1], 100) << "MAX(4 dedicated, 1 utilized)";
  EXPECT_EQ(sim(ResourceAvailability::Dedicated, 1).start[0], 0) << "dedicated: the load does not count";
  const auto loaded = sim(ResourceAvailability::Combined, 1);
  EXPECT_TRUE(std::isnan(loaded.start[0]));
  EXPECT_EQ(loaded.reason[0], SimReason::TooLarge) << "3 slots at most are ever available";
  EXPECT_EQ(loaded.start[1], 1);
}

// Step 4 at scale: alice has 2,000 waiting jobs and max_jobs 1. Each end gives her room for one job;
// the fast cycle takes her parked jobs back one at a time as its scan reaches them, so an end costs a
// couple of them (the one that starts, the next one that finds the limit reached again), not all that
// wait (about 2 million over the run). bob's short jobs, arriving every 10 s on the other tasker, keep
// events coming, so the cycles between are fast ones.
TEST(SeedExamples, MoabThrottlingTakesParkedJobsBackOneAtATime) {
  const Farm f({1, 1});
  std::vector<Job> list;
  for (int i = 0; i < 2000; ++i) list.push_back({.id = "a" + std::to_string(i), .runtime = 10, .user = "alice"});
  for (int i = 0; i < 2000; ++i)
    list.push_back({.id = "b" + std::to_string(i), .submit = 10.0 * i + 5, .runtime = 1, .user = "bob"});
  const auto jobs = make_jobs(f.cat, list);
  SimConfig pol;
  pol.throttles.push_back({CredentialKind::User, "alice", 1, kInf});
  for (const auto backfill : {BackfillPolicy::None, BackfillPolicy::Easy}) {
    pol.backfill = backfill;
    const auto r = run(f, jobs, pol);
    for (int i = 0; i < 2000; ++i) ASSERT_EQ(r.start[i], 10.0 * i) << "alice's jobs one after another, in order";
    for (int i = 0; i < 2000; ++i) ASSERT_EQ(r.start[2000 + i], 10.0 * i + 5) << "bob's beside them";
    EXPECT_GT(r.cycles - r.full_cycles, 3000u) << "the fast cycle is the one exercised";
    EXPECT_GE(r.unparked, 1999u) << "each of alice's jobs but the first waited parked";
    EXPECT_LE(r.unparked, 2u * 2000 + 10) << "parked jobs taken back one at a time";
  }
}

// Step 4 for QoS (Moab QOSCFG[low] MAXJOB=1): a limit per quality of service.
TEST(SeedExamples, MoabThrottlingPerQos) {
  const Farm f({8});
  const auto jobs = make_jobs(f.cat, {{.id = "l1", .runtime = 20, .qos = "low"},
                                      {.id = "l2", .runtime = 20, .qos = "low"},
                                      {.id = "h1", .runtime = 20, .qos = "high"}});
  SimConfig pol;
  pol.throttles.push_back({CredentialKind::QoS, "low", 1, kInf});
  const auto r = run(f, jobs, pol);
  EXPECT_EQ(r.start[1], 20) << "one low-QoS job at a time";
  EXPECT_EQ(r.start[2], 0);
  pol.until = 10;
  EXPECT_EQ(run(f, jobs, pol).detail[1], "qos low max_jobs 1");
}

// Step 5, node allocation policies.
TEST(SeedExamples, MoabNodeAllocationPolicies) {
  // free slots after "fill": t0 4 (power 10), t1 1, t2 8 (power 8)... built directly as capacities
  const Farm f({4, 2, 8}, {10, 9, 8});
  const auto jobs = make_jobs(f.cat, {{.id = "j", .slots = 2}});
  auto where = [&](AllocationPolicy p) {
    SimConfig pol;
    pol.allocation = p;
    const auto r = run(f, jobs, pol);
    return f.taskers.names[r.allocations[r.alloc_first[0]].tasker];
  };
  EXPECT_EQ(where(AllocationPolicy::GreatestPower), "t0");
  EXPECT_EQ(where(AllocationPolicy::FirstAvailable), "t0");
  EXPECT_EQ(where(AllocationPolicy::BestFit), "t1") << "two slots leave none on t1";
  EXPECT_EQ(where(AllocationPolicy::WorstFit), "t2") << "most left over";
}

// Step 6, backfill: EASY lets a short job run ahead without delaying the reservation; strict priority
// order does not; a long job that would delay the reserved job waits.
TEST(SeedExamples, MoabEasyBackfillAndItsGuarantee) {
  const Farm f({5});
  const std::vector<Job> list = {{.id = "running", .runtime = 100, .walltime = 100, .slots = 3},
                                 {.id = "head", .submit = 1, .runtime = 50, .walltime = 50, .slots = 5},
                                 {.id = "short", .submit = 2, .runtime = 90, .walltime = 90, .slots = 1},
                                 {.id = "long", .submit = 3, .runtime = 500, .walltime = 500, .slots = 1}};
  const auto jobs = make_jobs(f.cat, list);
  SimConfig easy;
  easy.backfill = BackfillPolicy::Easy;
  const auto r = run(f, jobs, easy);
  EXPECT_EQ(r.start[2], 2) << "short ends (92) before the reservation (100): backfilled";
  EXPECT_EQ(r.backfilled[2], 1);
  EXPECT_LE(r.start[1], 100) << "the reserved job starts no later than its reservation";
  EXPECT_GE(r.start[3], r.start[1]) << "long would have delayed head";
  SimConfig until = easy;
  until.until = 50;
  EXPECT_EQ(run(f, jobs, until).reason[3], SimReason::Reservation) << "one slot is free, but not for 500 s";
  const auto strict = run(f, jobs);
  EXPECT_EQ(strict.start[1], 100);
  EXPECT_EQ(strict.start[2], 150) << "strict priority order: nothing passes the waiting head";
}

// SimConfig::record_timeline = false (`simulate --write metrics|schedule`, issue 46): the timeline rows and the
// per-minute cycle statistics stay empty, and nothing else changes: the schedule, the reasons, the cycles.
TEST(Simulation, WithoutTheTimelineTheScheduleIsTheSame) {
  const Farm f({5});
  const auto jobs = make_jobs(f.cat, {{.id = "running", .runtime = 100, .walltime = 100, .slots = 3},
                                      {.id = "head", .submit = 1, .runtime = 50, .walltime = 50, .slots = 5},
                                      {.id = "short", .submit = 70, .runtime = 90, .walltime = 90, .slots = 1},
                                      {.id = "late", .submit = 400, .runtime = 500, .walltime = 500, .slots = 2}});
  SimConfig easy;
  easy.backfill = BackfillPolicy::Easy;
  const auto with = run(f, jobs, easy);
  SimConfig off = easy;
  off.record_timeline = false;
  const auto without = run(f, jobs, off);
  ASSERT_GE(with.timeline.size(), 3u) << "a row for each simulated minute with cycles";
  EXPECT_EQ(with.timeline_used.size(), with.timeline.size() * with.timeline_width);
  EXPECT_FALSE(with.cycle_minutes.empty());
  EXPECT_TRUE(without.timeline.empty());
  EXPECT_TRUE(without.timeline_used.empty());
  EXPECT_TRUE(without.cycle_minutes.empty());
  for (uint32_t j = 0; j < jobs.size(); ++j) {
    EXPECT_EQ(without.start[j], with.start[j]) << j;
    EXPECT_EQ(without.end[j], with.end[j]) << j;
    EXPECT_EQ(without.reason[j], with.reason[j]) << j;
    EXPECT_EQ(without.backfilled[j], with.backfilled[j]) << j;
  }
  EXPECT_EQ(without.cycles, with.cycles);
  EXPECT_EQ(without.cycle_seconds.size(), with.cycle_seconds.size());
  EXPECT_EQ(without.last_cycle_time, with.last_cycle_time);
}

// EASY's reservation of a Grid Engine host rule job: `allocation_rule 2` over 4 slots needs two hosts of 2
// free slots (each tasker its own host here), which no single tasker's release shows; the reservation
// comes when t0 and t1 have both ended (20), so C (2 slots until 40) may not take t0 at 10.
TEST(SeedExamples, MoabEasyReservesAHostRuleJob) {
  const Farm f({2, 2, 2});
  JobBuilder jb(f.cat);
  const std::tuple<const char*, double, double, uint32_t> list[] = {
      {"r0", 0, 10, 2}, {"r1", 0, 20, 2}, {"r2", 0, 100, 2}, {"b", 1, 50, 4}, {"c", 2, 30, 2}};
  for (const auto& [id, submit, time, slots] : list) {
    jb.add(id, "u", "g", 0, submit, slots);
    jb.set_times(time, time);
    if (std::string(id) == "b") {
      jb.set_rule(AllocationRule::HostBlocks);
      jb.set_pe_shape(0, 2);
    }
  }
  const JobTable jobs = std::move(jb).build();
  SimConfig easy;
  easy.backfill = BackfillPolicy::Easy;
  const SimResult r = run(f, jobs, easy);
  EXPECT_EQ(r.start[3], 20) << "b on t0 and t1 once both have ended";
  EXPECT_EQ(allocations_of(r, 3), (std::vector<std::pair<uint32_t, uint32_t>>{{0, 2}, {1, 2}}));
  EXPECT_EQ(r.start[4], 70) << "c would have delayed b's reservation at 10";
}

// Step 6, greedy backfill (Moab RESERVATIONDEPTH 0; the Accelerator's dispatcher): every job that fits
// starts in priority order and nothing waits for another. The long job that EASY holds back (it would
// delay head's reservation) starts at once, and head waits until it has room.
TEST(Backfill, GreedyStartsEveryJobThatFits) {
  const Farm f({5});
  const auto jobs = make_jobs(f.cat, {{.id = "running", .runtime = 100, .walltime = 100, .slots = 3},
                                      {.id = "head", .submit = 1, .runtime = 50, .walltime = 50, .slots = 5},
                                      {.id = "long", .submit = 3, .runtime = 500, .walltime = 500, .slots = 1}});
  SimConfig greedy;
  greedy.backfill = BackfillPolicy::Greedy;
  const auto r = run(f, jobs, greedy);
  EXPECT_EQ(r.start[2], 3) << "long fits now: it starts";
  EXPECT_EQ(r.backfilled[2], 1) << "ahead of head, which waits";
  EXPECT_EQ(r.start[1], 503) << "head waits for long's slot: no reservation held it";
  EXPECT_TRUE(std::isnan(r.reserved_at[1]));
  SimConfig easy;
  easy.backfill = BackfillPolicy::Easy;
  const auto e = run(f, jobs, easy);
  EXPECT_EQ(e.start[1], 100);
  EXPECT_EQ(e.reserved_at[1], 100);
  EXPECT_EQ(e.start[2], 150) << "EASY: long would delay head";
  SimConfig until = greedy;
  until.until = 50;
  EXPECT_EQ(run(f, jobs, until).reason[1], SimReason::NoFreeCapacity) << "greedy: no job is blocked by another";
}

// Step 6, reservation depth (Moab RESERVATIONDEPTH): the first N waiting jobs are protected. t0 (4
// slots) is full until 100; t1 (4 slots) has 2 free until 150. h1 (4 slots) fits first on t0 at 100, h2
// (4 slots) on t1 at 150. l (2 slots, 200 s) fits on t1 now: it leaves h1's reservation alone, but not
// h2's. EASY (depth 1) starts it, and h2 then waits until t0 is free again at 200; depth 2 and
// conservative keep h2's reservation: l waits, h2 starts at 150.
TEST(Backfill, ReservationDepthProtectsTheFirstNJobs) {
  const Farm f({4, 4});
  const auto jobs = make_jobs(f.cat, {{.id = "r1", .runtime = 100, .walltime = 100, .slots = 4},
                                      {.id = "r2", .runtime = 150, .walltime = 150, .slots = 2},
                                      {.id = "h1", .submit = 1, .runtime = 100, .walltime = 100, .slots = 4},
                                      {.id = "h2", .submit = 2, .runtime = 100, .walltime = 100, .slots = 4},
                                      {.id = "l", .submit = 3, .runtime = 200, .walltime = 200, .slots = 2}});
  SimConfig easy;
  easy.backfill = BackfillPolicy::Easy;
  const auto e = run(f, jobs, easy);
  EXPECT_EQ(e.start[4], 3) << "h1 still fits on t0 at 100 beside l";
  EXPECT_EQ(e.start[2], 100);
  EXPECT_EQ(e.start[3], 200) << "h2, unprotected, waits for t0";
  for (const auto backfill : {BackfillPolicy::Easy, BackfillPolicy::Conservative}) {
    SimConfig deep;
    deep.backfill = backfill;
    deep.reservation_depth = 2;
    const auto d = run(f, jobs, deep);
    EXPECT_EQ(d.reserved_at[2], 100);
    EXPECT_EQ(d.reserved_at[3], 150) << "h2 reserved on t1 when r2 ends";
    EXPECT_EQ(d.start[2], 100);
    EXPECT_EQ(d.start[3], 150) << "its reservation is kept";
    EXPECT_EQ(d.start[4], 200) << "l would have delayed h2";
    SimConfig until = deep;
    until.until = 50;
    EXPECT_EQ(run(f, jobs, until).reason[4], SimReason::Reservation);
  }
}

// A booked reservation leaves what is free now to backfill (issue 24): t1 (the greater power) has 2 of its 4
// slots free now, t0 none; h (4 slots) fits on either when r1 and r2 end at 100. Placed as a start then would
// be, its reservation took t1, and l (2 slots, 150 s), which fits in t1's free slots now, could not start
// without touching it: it waited for h. Reserved on t0, whose nothing is free now, it leaves t1 to l.
TEST(Backfill, BookedReservationsLeaveWhatIsFreeNow) {
  const Farm f({4, 4}, {9, 10});
  const auto jobs = make_jobs(f.cat, {{.id = "r2", .runtime = 100, .walltime = 100, .slots = 2},
                                      {.id = "r1", .runtime = 100, .walltime = 100, .slots = 4},
                                      {.id = "h", .submit = 1, .runtime = 100, .walltime = 100, .slots = 4},
                                      {.id = "l", .submit = 2, .runtime = 150, .walltime = 150, .slots = 2}});
  for (const uint32_t depth : {2u, 0u}) {  // 0: conservative
    SimConfig pol;
    pol.backfill = depth == 0 ? BackfillPolicy::Conservative : BackfillPolicy::Easy;
    pol.reservation_depth = depth == 0 ? 1 : depth;
    const auto r = run(f, jobs, pol);
    auto on = [&](uint32_t j) { return std::string(f.taskers.names[r.allocations[r.alloc_first[j]].tasker]); };
    ASSERT_EQ(on(0), "t1") << "r2 on t1, the greater power";
    ASSERT_EQ(on(1), "t0");
    EXPECT_EQ(r.reserved_at[2], 100);
    EXPECT_EQ(r.start[2], 100);
    EXPECT_EQ(on(2), "t0") << "h where nothing was free when it was reserved";
    EXPECT_EQ(r.start[3], 2) << "l backfilled into t1's free slots at once (depth " << depth << ")";
  }
}

// Conservative backfill's guarantee (Mu'alem and Feitelson), and depth N's for the jobs it reserves: with
// first-come-first-served priorities, no job starts later than the first reservation it got, whether
// jobs end at their walltimes or before (a booked reservation is kept until its job starts, and a cycle
// runs at its time). EASY (depth 1, its reservation made again each cycle) when jobs end at their
// walltimes. On random farms and traces (no holds, dependencies, limits or farm changes: each could put
// a job ahead of a reserved one later). Fails when reservations are made again each cycle for depth > 1
// (a higher-priority job placed anew takes a later one's taskers), when a start may delay a booked
// reservation, or without the cycle at a reservation's time.
TEST(Backfill, NoJobStartsLaterThanItsFirstReservation) {
  size_t reserved = 0, backfilled = 0;
  for (const int depth : {1, 3, 0}) {  // 0: conservative
    for (int i = 0; i < 300; ++i) {
      const bool early = i % 2 == 1;
      std::mt19937_64 rng(1000 + i);
      synth::SynthSpec s;
      s.seed = 1000 + i;
      s.taskers = 1 + rng() % 12;
      s.jobs = 10 + rng() % 50;
      s.categories = 1 + rng() % 5;
      s.with_slots = true;
      s.fill_up = rng() % 2 ? 0.3 : 0.0;
      s.one_per_tasker = i % 3 == 1 ? 0.5 : 0.0;  // a slot a tasker (allocation_rule 1, Slurm -N)
      auto ds = synth::generate(s);
      for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
        ds.jobs.submit.set(j, static_cast<double>(rng() % 100));
        const double wall = static_cast<double>(1 + rng() % 60);
        ds.jobs.walltime.set(j, wall);
        ds.jobs.runtime.set(j, early && depth != 1 ? static_cast<double>(rng() % 61) * wall / 60 : wall);
        ds.jobs.priority[j] = 0;
      }
      SimConfig pol;
      pol.allocation = static_cast<AllocationPolicy>(rng() % 4);
      pol.backfill = depth == 0 ? BackfillPolicy::Conservative : BackfillPolicy::Easy;
      pol.reservation_depth = depth == 0 ? 1 : static_cast<uint32_t>(depth);
      pol.compression = i % 4 == 1;  // half the traces with early ends: compressed
      const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, pol, kernels::active());
      ASSERT_EQ(simcheck::check_schedule(ds.catalog, ds.taskers, ds.jobs, pol, r), "");
      for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
        backfilled += r.backfilled[j];
        if (std::isnan(r.reserved_at[j])) continue;
        ++reserved;
        ASSERT_LE(r.start[j], r.reserved_at[j]) << "depth " << depth << " seed " << s.seed << " job " << j;
      }
    }
  }
  EXPECT_GT(reserved, 300u);
  EXPECT_GT(backfilled, 100u);
}

// Interval-driven cycles (RMPOLLINTERVAL): starts happen only at multiples of the interval.
TEST(Simulation, PollingIntervalDelaysStartsToCycleTimes) {
  const Farm f({1});
  const auto jobs = make_jobs(f.cat, {{.id = "a", .submit = 3, .runtime = 10}, {.id = "b", .submit = 4, .runtime = 5}});
  SimConfig pol;
  pol.interval = 60;
  const auto r = run(f, jobs, pol);
  EXPECT_EQ(r.start[0], 60);
  EXPECT_EQ(r.start[1], 120) << "a ends at 70; the next cycle is at 120";
}

// Slurm's bf_interval (SimConfig::backfill_interval): backfill runs only in the cycles at phase + k x
// interval; the others are the main pass in strict order. `c` (one slot, ten seconds) fits beside the
// running `a` and ends long before the reservation of `b` (four slots): EASY in every cycle starts it at its
// submit (2), backfill every 30 s at the next backfill cycle (30; with phase 5, at 5; as Slurm's backfill
// thread, 30 s after its run at 1). A job larger than the
// farm waits for ever without waking the loop (nothing changes between backfill cycles: the run ends).
TEST(Simulation, BackfillOnlyEveryBackfillInterval) {
  const Farm f({4});
  const auto jobs = make_jobs(f.cat, {{.id = "a", .runtime = 100, .slots = 3},
                                      {.id = "b", .submit = 1, .runtime = 10, .slots = 4},
                                      {.id = "c", .submit = 2, .runtime = 10, .walltime = 10},
                                      {.id = "huge", .submit = 3, .slots = 8}});
  for (const auto backfill : {BackfillPolicy::Easy, BackfillPolicy::Conservative}) {
    SCOPED_TRACE(backfill == BackfillPolicy::Easy ? "easy" : "conservative");
    SimConfig pol;
    pol.backfill = backfill;
    EXPECT_EQ(run(f, jobs, pol).start[2], 2) << "backfill in every cycle";
    pol.backfill_interval = 30;
    const auto r = run(f, jobs, pol);
    EXPECT_EQ(r.start[2], 30) << "the next backfill cycle after its submit";
    EXPECT_EQ(r.start[1], 100);
    EXPECT_TRUE(std::isnan(r.start[3]));
    pol.backfill_phase = 5;
    EXPECT_EQ(run(f, jobs, pol).start[2], 5);
    // phase NaN, Slurm's backfill thread: its first run 1 s after the first event with work (b's submit
    // at 1: backfill at 1 is b's, at 2 the main pass), the next 30 s after that run
    pol.backfill_phase = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(run(f, jobs, pol).start[2], 31);
  }
}

// Slurm's bf_window and bf_max_job_test (SimConfig::backfill_window, backfill_max_jobs) in the backfill
// cycles of backfill_interval: `b` (four slots) can start only when `a` ends at 1000; `c` (one slot, 2000 s)
// fits now but would delay b. With b's reservation c waits for b (1010). With a window of 500 s the
// backfill cycle at 30 makes b none ("No reservation created": 1000 is past 30 + 500) and c starts then,
// b after it (2030). With a node-space map of one record (bf_max_job_test=1: backfill.c sizes the map by
// it) b's reservation finds the map full and ends the cycle: c is never tried by backfill and waits; but a
// b that reserves nothing (past the window) ends nothing, and c starts at 30 again.
TEST(Simulation, BackfillWindowAndJobsTriedAsSlurmsBackfill) {
  const Farm f({4});
  const auto jobs = make_jobs(f.cat, {{.id = "a", .runtime = 1000, .walltime = 1000, .slots = 3},
                                      {.id = "b", .submit = 1, .runtime = 10, .walltime = 10, .slots = 4},
                                      {.id = "c", .submit = 2, .runtime = 2000, .walltime = 2000}});
  SimConfig pol;
  pol.backfill = BackfillPolicy::Conservative;
  pol.backfill_interval = 30;
  auto r = run(f, jobs, pol);
  EXPECT_EQ(r.start[1], 1000);
  EXPECT_EQ(r.start[2], 1010) << "b's reservation holds c back";
  pol.backfill_window = 500;
  r = run(f, jobs, pol);
  EXPECT_EQ(r.start[2], 30) << "b reserved nothing past the window";
  EXPECT_EQ(r.start[1], 2030);
  pol.backfill_max_jobs = 1;
  EXPECT_EQ(run(f, jobs, pol).start[2], 30) << "b reserves nothing: the map stays as it is";
  pol.backfill_window = 86400;
  r = run(f, jobs, pol);
  EXPECT_EQ(r.start[2], 1010) << "b's reservation finds the map full: the cycle ends before c";
  // `d` (one slot, 500 s) ends before b's 1000: backfill starts it at 30, unless the cycle ended at b
  const auto short_d = make_jobs(f.cat, {{.id = "a", .runtime = 1000, .walltime = 1000, .slots = 3},
                                         {.id = "b", .submit = 1, .runtime = 10, .walltime = 10, .slots = 4},
                                         {.id = "d", .submit = 2, .runtime = 500, .walltime = 500}});
  EXPECT_EQ(run(f, short_d, pol).start[2], 1010) << "the cycle ends at b: d untried";
  pol.backfill_max_jobs = 3;  // b's start and end make 3 records: d needs none
  EXPECT_EQ(run(f, short_d, pol).start[2], 30);
  // `e` (4 slots) reserves from b's end, 1010: on a map of 3 records (b's start and end split it) that ends
  // the cycle before `g` (one slot, ends before 1000); on one of 4 g backfills at 30
  const auto two_reserve = make_jobs(f.cat, {{.id = "a", .runtime = 1000, .walltime = 1000, .slots = 3},
                                             {.id = "b", .submit = 1, .runtime = 10, .walltime = 10, .slots = 4},
                                             {.id = "e", .submit = 2, .runtime = 10, .walltime = 10, .slots = 4},
                                             {.id = "g", .submit = 3, .runtime = 500, .walltime = 500}});
  EXPECT_GT(run(f, two_reserve, pol).start[3], 30) << "the map is full at e";
  pol.backfill_max_jobs = 4;
  EXPECT_EQ(run(f, two_reserve, pol).start[3], 30);
  pol.backfill_interval = 0;  // not Slurm's backfill: neither is read
  EXPECT_EQ(run(f, jobs, pol).start[2], 1010);
}

// Slurm's bf_max_job_user and bf_min_prio_reserve (SimConfig::backfill_max_jobs_per_user,
// backfill_min_priority_reserve) in the backfill cycles of backfill_interval: `a` (three slots of four) runs
// to 1000; u1's `b` (four slots) waits for it; u1's `c` and u2's `d` (one slot each, 2000 s) fit now but would
// delay b's reservation. With one job a user tried a cycle, c is not tried at all (d is: u2's first) and b's
// reservation holds d back too. With reservations only for priorities of 5 and more, b (priority 1) reserves
// nothing and c, d start at once (b after them, at 2030).
TEST(Simulation, BackfillJobsPerUserAndLowPrioritiesAsSlurmsBackfill) {
  const Farm f({5});
  const auto jobs = make_jobs(
      f.cat, {{.id = "a", .runtime = 1000, .walltime = 1000, .slots = 3},
              {.id = "b", .submit = 1, .runtime = 10, .walltime = 10, .slots = 5, .priority = 1, .user = "u1"},
              {.id = "c", .submit = 2, .runtime = 2000, .walltime = 2000, .user = "u1"},
              {.id = "d", .submit = 3, .runtime = 2000, .walltime = 2000, .user = "u2"}});
  SimConfig pol;
  pol.backfill = BackfillPolicy::Conservative;
  pol.backfill_interval = 30;
  pol.weights = {1, 0, 0, 0};  // the jobs' own priorities: b 1, the others 0
  auto r = run(f, jobs, pol);
  EXPECT_EQ(r.start[2], 1010) << "b's reservation holds c back";
  EXPECT_EQ(r.start[3], 1010);
  pol.backfill_max_jobs_per_user = 1;
  r = run(f, jobs, pol);
  EXPECT_EQ(r.start[1], 1000);
  EXPECT_EQ(r.start[3], 1010) << "d is tried (u2's first) and waits for b";
  EXPECT_EQ(r.start[2], 1010) << "c is never tried by backfill: it starts in the main pass after b";
  pol.backfill_max_jobs_per_user = 0;
  pol.backfill_min_priority_reserve = 5;
  r = run(f, jobs, pol);
  EXPECT_EQ(r.start[2], 30) << "b (priority 1) reserved nothing";
  EXPECT_EQ(r.start[3], 30);
  EXPECT_EQ(r.start[1], 2030);
  pol.backfill_interval = 0;  // not Slurm's backfill: neither is read
  EXPECT_EQ(run(f, jobs, pol).start[2], 1010);
}

// Slurm's bf_max_job_assoc (SimConfig::backfill_max_jobs_per_association; backfill.c _job_exceeds_max_bf_param):
// `a` (three slots of five) runs to 1000; u1's `b` (five slots, account X) waits for it and reserves; u1's `c`
// (account Y) and `d` (X), one slot for 100 s, fit beside the reservation. With one job an association tried a
// cycle, b uses X's: d is never tried and starts after b, c (u1 in Y) backfills at once; bf_max_job_user=1 keeps
// both back. Without slurmdbd Slurm has no associations and the limit counts for nothing.
TEST(Simulation, BackfillJobsPerAssociationAsSlurmsBackfill) {
  const Farm f({5});
  const auto jobs = make_jobs(
      f.cat,
      {{.id = "a", .runtime = 1000, .walltime = 1000, .slots = 3},
       {.id = "b", .submit = 1, .runtime = 10, .walltime = 10, .slots = 5, .priority = 1, .user = "u1", .account = "X"},
       {.id = "c", .submit = 2, .runtime = 100, .walltime = 100, .user = "u1", .account = "Y"},
       {.id = "d", .submit = 3, .runtime = 100, .walltime = 100, .user = "u1", .account = "X"}});
  SimConfig pol;
  pol.backfill = BackfillPolicy::Conservative;
  pol.backfill_interval = 30;
  pol.weights = {1, 0, 0, 0};
  auto r = run(f, jobs, pol);
  EXPECT_EQ(r.start[2], 30);
  EXPECT_EQ(r.start[3], 30);
  pol.backfill_max_jobs_per_association = 1;
  r = run(f, jobs, pol);
  EXPECT_EQ(r.start[1], 1000);
  EXPECT_EQ(r.start[2], 30) << "c: u1's first in account Y";
  EXPECT_EQ(r.start[3], 1010) << "d: X's second, never tried by backfill";
  pol.slurm_priority.accounting = false;
  r = run(f, jobs, pol);
  EXPECT_EQ(r.start[3], 30) << "no slurmdbd: no associations";
  pol.slurm_priority.accounting = true;
  pol.backfill_max_jobs_per_association = 0;
  pol.backfill_max_jobs_per_user = 1;
  r = run(f, jobs, pol);
  EXPECT_EQ(r.start[2], 1010);
  EXPECT_EQ(r.start[3], 1010);
}

// Slurm's backfill places a job only on the nodes no reservation holds during its run, and holds them in
// bf_resolution steps (backfill.c's node-space map; datasets/slurm/run2-unheld shows both in slurmctld's
// log). t0 is preferred (greater power). `a` (3 of t0's 4 slots, to 100) and `x` (2 of t1's, to 1000) run;
// `b` (4 slots) is reserved t0 from 100; `c` (1 slot, 1000 s) fits now on t0, in b's way, and on t1:
// Slurm's backfill cycle at 30 starts it on t1 (Moab's book places it first and then finds it in the way:
// it waits). `d` (1 slot, 50 s: ends at 80, before b's 100) takes t0 at once; with a resolution of 60 s
// b holds t0 from 60 and d goes to t1 too.
TEST(Simulation, SlurmBackfillPlacesAroundReservedNodesInResolutionSteps) {
  const Farm f({4, 4}, {10, 9});
  const auto jobs = make_jobs(f.cat, {{.id = "a", .runtime = 100, .walltime = 100, .slots = 3},
                                      {.id = "x", .runtime = 1000, .walltime = 1000, .slots = 2},
                                      {.id = "b", .submit = 1, .runtime = 10, .walltime = 10, .slots = 4},
                                      {.id = "c", .submit = 2, .runtime = 1000, .walltime = 1000},
                                      {.id = "d", .submit = 3, .runtime = 50, .walltime = 50}});
  SimConfig pol;
  pol.backfill = BackfillPolicy::Conservative;
  pol.backfill_interval = 30;
  auto r = run(f, jobs, pol);
  auto on = [&](uint32_t j) { return std::string(f.taskers.names[r.allocations[r.alloc_first[j]].tasker]); };
  ASSERT_EQ(on(0), "t0");
  ASSERT_EQ(on(1), "t1");
  EXPECT_EQ(r.start[2], 100);
  EXPECT_EQ(on(2), "t0");
  EXPECT_EQ(r.start[3], 30) << "c starts off b's reserved tasker";
  EXPECT_EQ(on(3), "t1");
  EXPECT_EQ(r.start[4], 30);
  EXPECT_EQ(on(4), "t0") << "d ends before b's reservation";
  pol.backfill_resolution = 60;
  r = run(f, jobs, pol);
  EXPECT_EQ(r.start[3], 30);
  EXPECT_EQ(r.start[4], 30);
  EXPECT_EQ(on(4), "t1") << "b holds t0 from 60: d ends at 80";
  EXPECT_EQ(r.start[2], 100);
  // Moab's conservative (every cycle, without d, whose start would fill t0 and leave c only t1): c is
  // placed on t0, found in b's way, and waits for b's start
  pol.backfill_interval = 0;
  const auto without_d = make_jobs(f.cat, {{.id = "a", .runtime = 100, .walltime = 100, .slots = 3},
                                           {.id = "x", .runtime = 1000, .walltime = 1000, .slots = 2},
                                           {.id = "b", .submit = 1, .runtime = 10, .walltime = 10, .slots = 4},
                                           {.id = "c", .submit = 2, .runtime = 1000, .walltime = 1000}});
  EXPECT_EQ(run(f, without_d, pol).start[3], 100);
}

// Slurm's backfill reserves on the nodes no other reservation holds at any time of the job's run, started
// or not (backfill.c's node-space map): `a` holds t0 (preferred) to 100, `x` t1 to 200; r1 (2 slots, 300 s)
// is reserved t0 from 100; r2 (2 slots) would fit beside r1 on t0 at 100 (Moab's book: r1 has started
// then, only its charges are taken), but Slurm's map holds all of t0 for r1: r2 is reserved t1 at 200.
TEST(Simulation, SlurmBackfillReservesOffOtherReservationsNodes) {
  const Farm f({4, 4}, {10, 9});
  const auto jobs = make_jobs(f.cat, {{.id = "a", .runtime = 100, .walltime = 100, .slots = 4},
                                      {.id = "x", .runtime = 200, .walltime = 200, .slots = 4},
                                      {.id = "r1", .submit = 1, .runtime = 300, .walltime = 300, .slots = 2},
                                      {.id = "r2", .submit = 2, .runtime = 50, .walltime = 50, .slots = 2}});
  SimConfig pol;
  pol.backfill = BackfillPolicy::Conservative;
  pol.backfill_interval = 30;
  EXPECT_EQ(run(f, jobs, pol).reserved_at[3], 200) << "r2 reserved on t1, off r1's";
  pol.backfill_interval = 0;
  EXPECT_EQ(run(f, jobs, pol).reserved_at[3], 100) << "Moab's book: beside r1 on t0";
}

// Two taskers of 4 slots, t0 (power 10, arch p1) and t1 (9, p2): a job asking arch==p1 runs on t0 only, as a
// Slurm job's partition limits its nodes.
Farm two_partition_farm() {
  Farm f({4, 4}, {10, 9});
  TaskerBuilder tb(f.cat);
  for (const auto& [name, arch] : {std::pair{"t0", "p1"}, std::pair{"t1", "p2"}}) {
    tb.add(name, arch[1] == '1' ? 10 : 9);
    tb.set_number(f.slots, 4);
    tb.set(f.arch, arch);
  }
  f.taskers = std::move(tb).build();
  return f;
}

// Partitions p1 and p2 of two_partition_farm's taskers t0 and t1: p1 = {t0}; p2 = {t1}, or {t0, t1} when
// `p2_both`; per job its partition (0: p1, 1: p2).
std::shared_ptr<BlockingQueues> two_partitions(std::vector<uint32_t> queue_of_job, bool p2_both = false) {
  auto parts = std::make_shared<BlockingQueues>();
  parts->names = {"p1", "p2"};
  parts->taskers.push_back(kernels::TaskerSet::from_words({0b01}, 2, 1));
  parts->taskers.push_back(p2_both ? kernels::TaskerSet::from_words({0b11}, 2, 2)
                                   : kernels::TaskerSet::from_words({0b10}, 2, 1));
  parts->queue_of_job = std::move(queue_of_job);
  return parts;
}

// Slurm's main pass by partition over time (SimConfig::partitions; engine/schedule/slurm_main_pass.cpp), on
// t0 (preferred) and t1, partitions p1 = {t0} and p2 = {t0, t1}: `a` (p1, 3 of t0's 4 slots) runs; `b` (p1,
// 2 slots, priority 9) cannot start and fails p1: `d` (p1, 1 slot) waits behind it though t0 has a slot, and
// t0 leaves the pass, so `c` (p2, 1 slot) starts on t1, not t0. With bf_min_prio_reserve above b's priority b
// fails nothing: c takes t0's last slot and d is tried (and waits for c); so with bf_min_age_reserve (10 s)
// at 1, but at 11 b has waited 10 s and fails p1 again. Without partitions the pass is one strict order: c and d wait
// behind b.
TEST(Simulation, SlurmMainPassBlocksByPartition) {
  const Farm f = two_partition_farm();
  const std::string p1 = "arch==p1";
  const auto jobs = make_jobs(
      f.cat, {{.id = "a", .runtime = 100, .walltime = 100, .slots = 3, .priority = 10, .request = p1},
              {.id = "b", .submit = 1, .runtime = 10, .walltime = 10, .slots = 2, .priority = 9, .request = p1},
              {.id = "c", .submit = 1, .runtime = 10, .walltime = 10, .priority = 8},
              {.id = "d", .submit = 1, .runtime = 10, .walltime = 10, .priority = 7, .request = p1}});
  auto parts = two_partitions({0, 0, 1, 0}, true);
  SimConfig pol;
  pol.weights = {1, 0, 0, 0};  // the jobs' own priorities
  pol.partitions = parts;
  auto r = run(f, jobs, pol);
  auto on = [&](uint32_t j) { return std::string(f.taskers.names[r.allocations[r.alloc_first[j]].tasker]); };
  EXPECT_EQ(r.start[1], 100);
  EXPECT_EQ(r.start[2], 1) << "c's partition is not blocked";
  EXPECT_EQ(on(2), "t1") << "t0 left the pass with p1";
  EXPECT_EQ(r.start[3], 100) << "d waits behind b in p1";
  pol.backfill_min_priority_reserve = 9.5;  // b (9) fails no partition, holds nothing
  r = run(f, jobs, pol);
  EXPECT_EQ(r.start[2], 1);
  EXPECT_EQ(on(2), "t0") << "c takes t0's last slot";
  EXPECT_EQ(r.start[3], 11) << "d, tried, finds t0 full until c ends";
  pol.backfill_min_priority_reserve = 0;
  pol.backfill_min_age_reserve = 10;  // bf_min_age_reserve: b, waiting 0 s at 1, fails nothing either
  r = run(f, jobs, pol);
  EXPECT_EQ(on(2), "t0");
  EXPECT_EQ(r.start[3], 100) << "when c ends (11) b has waited 10 s: it fails p1 again, d behind it";
  pol.backfill_min_age_reserve = 0;
  pol.partitions = nullptr;
  pol.backfill_min_priority_reserve = 0;
  r = run(f, jobs, pol);
  EXPECT_EQ(r.start[2], 100) << "one strict order: c behind b";
}

// Slurm's default_queue_depth and sched_interval (SimConfig::main_pass_depth, main_pass_full_interval): `a`
// fills t0 (p1) to 100; b, c and d (p1) wait behind the first of them; `e` (p2, lowest priority) fits on t1.
// A pass of depth 2 tests 3 records and stops before e; the full pass on sched_interval's clock (60 s, from
// phase 0) starts it at 60. Without the depth it starts at its submit; with depth 3 too, unless d is a job of
// two partitions (a record each).
TEST(Simulation, SlurmMainPassDepthAndFullPasses) {
  const Farm f = two_partition_farm();
  const std::string p1 = "arch==p1";
  std::vector<Job> list = {{.id = "a", .runtime = 100, .walltime = 100, .slots = 4, .priority = 10, .request = p1}};
  for (const char* id : {"b", "c", "d"})
    list.push_back({.id = id, .submit = 1, .runtime = 10, .walltime = 10, .priority = 5, .request = p1});
  list.push_back({.id = "e", .submit = 1, .runtime = 10, .walltime = 10, .priority = 1, .request = "arch==p2"});
  const JobTable jobs = make_jobs(f.cat, list);
  auto parts = two_partitions({0, 0, 0, 0, 1});
  SimConfig pol;
  pol.weights = {1, 0, 0, 0};
  pol.partitions = parts;
  EXPECT_EQ(run(f, jobs, pol).start[4], 1);
  pol.main_pass_depth = 2;
  pol.main_pass_full_interval = 60;
  auto r = run(f, jobs, pol);
  EXPECT_EQ(r.start[4], 60) << "untried until the full pass";
  EXPECT_EQ(r.start[1], 100);
  pol.main_pass_depth = 3;  // e is the fourth record
  EXPECT_EQ(run(f, jobs, pol).start[4], 1);
  // d of p1 and p2 (asking either tasker) is two records, tried in p2 after p1: e is the fifth
  list[3].request = "";
  list[3].runtime = list[3].walltime = 100;  // (no event before the full pass)
  const JobTable several = make_jobs(f.cat, list);
  parts->queue_of_job[3] = kNone;
  parts->several_first = {0, 0, 0, 0, 2, 2};
  parts->several = {0, 1};
  r = run(f, several, pol);
  EXPECT_EQ(r.start[3], 1) << "d in p2";
  EXPECT_EQ(r.start[4], 60);
}

// Slurm's partition_job_depth (SimConfig::main_pass_partition_depth; job_scheduler.c's max_jobs_per_part):
// t0 is p1's, t1 p2's, 4 slots each; `a` (p1, 2 slots) runs to 100; at 1 `b` and `c` (p1) and `e` (p2), a
// slot each, all fit. With one record a partition, c's is skipped (Priority) and it starts at the next pass
// (b and e end at 11), and a skipped record does not count toward default_queue_depth: with depth 1 (two
// records) e is still tested. c of p1 and p2 (asking either) is skipped in p1 and tried in p2: t1 at 1.
// With sched_interval's periodic pass (5 s), c starts then: a skipped record waits for the next pass of
// any kind (slurmctld 22.05.8, partition_job_depth=1, three jobs of one partition and one of another
// released at once: one of each at the release, the second at the periodic pass; docs/formats/slurm.md).
TEST(Simulation, SlurmPartitionJobDepthSkipsLaterRecordsOfAPartition) {
  const Farm f = two_partition_farm();
  const std::string p1 = "arch==p1";
  std::vector<Job> list = {
      {.id = "a", .runtime = 100, .walltime = 100, .slots = 2, .priority = 10, .request = p1},
      {.id = "b", .submit = 1, .runtime = 10, .walltime = 10, .priority = 5, .request = p1},
      {.id = "c", .submit = 1, .runtime = 10, .walltime = 10, .priority = 4, .request = p1},
      {.id = "e", .submit = 1, .runtime = 10, .walltime = 10, .priority = 1, .request = "arch==p2"}};
  auto parts = two_partitions({0, 0, 0, 1});
  SimConfig pol;
  pol.weights = {1, 0, 0, 0};
  pol.partitions = parts;
  auto r = run(f, make_jobs(f.cat, list), pol);
  EXPECT_EQ(r.start[2], 1) << "no limit: c starts with b";
  pol.main_pass_partition_depth = 1;
  r = run(f, make_jobs(f.cat, list), pol);
  EXPECT_EQ(r.start[1], 1);
  EXPECT_EQ(r.start[2], 11) << "p1's second record skipped until the pass after b ends";
  EXPECT_EQ(r.start[3], 1) << "p2 has its own count";
  pol.main_pass_full_interval = 5;  // sched_interval: the periodic pass at 5 tests c (slurmctld 22.05.8 did)
  r = run(f, make_jobs(f.cat, list), pol);
  EXPECT_EQ(r.start[2], 5) << "c at the periodic pass";
  pol.main_pass_full_interval = 0;
  pol.main_pass_depth = 1;  // two records a pass: b's and e's, c's skipped uncounted
  r = run(f, make_jobs(f.cat, list), pol);
  EXPECT_EQ(r.start[3], 1) << "e is the second record tested";
  EXPECT_EQ(r.start[2], 11);
  pol.main_pass_depth = 0;
  list[2].request = "";  // c of p1 and p2
  parts->queue_of_job[2] = kNone;
  parts->several_first = {0, 0, 0, 2, 2};
  parts->several = {0, 1};
  r = run(f, make_jobs(f.cat, list), pol);
  EXPECT_EQ(r.start[2], 1) << "c skipped in p1, tried in p2";
  EXPECT_EQ(f.taskers.names[r.allocations[r.alloc_first[2]].tasker], "t1");
}

// Slurm's sched_max_job_start (SimConfig::main_pass_max_starts; job_scheduler.c, _schedule: "sched_max_job_start
// reached, breaking out"): b and c (p1) and e (p2), a slot each for 100 s, all fit at 1. One start a pass:
// b at 1, the rest untried; the full pass on sched_interval's clock (60 s) starts c only (full passes are
// limited too), and b's end at 101 starts e. Two a pass: b and c at 1, e at the full pass at 60. (slurmctld
// 22.05.8 did the same with six jobs on 4 nodes and sched_max_job_start=2: two at the release, two at the
// periodic pass 60 s after boot; docs/formats/slurm.md.)
TEST(Simulation, SlurmSchedMaxJobStartEndsAPass) {
  const Farm f = two_partition_farm();
  std::vector<Job> list = {
      {.id = "b", .submit = 1, .runtime = 100, .walltime = 100, .priority = 5, .request = "arch==p1"},
      {.id = "c", .submit = 1, .runtime = 100, .walltime = 100, .priority = 4, .request = "arch==p1"},
      {.id = "e", .submit = 1, .runtime = 100, .walltime = 100, .priority = 1, .request = "arch==p2"}};
  SimConfig pol;
  pol.weights = {1, 0, 0, 0};
  pol.partitions = two_partitions({0, 0, 1});
  pol.main_pass_full_interval = 60;
  const JobTable jobs = make_jobs(f.cat, list);
  auto r = run(f, jobs, pol);
  EXPECT_EQ(r.start[1], 1) << "no limit";
  EXPECT_EQ(r.start[2], 1);
  pol.main_pass_max_starts = 1;
  r = run(f, jobs, pol);
  EXPECT_EQ(r.start[0], 1);
  EXPECT_EQ(r.start[1], 60) << "untried until the full pass";
  EXPECT_EQ(r.start[2], 101) << "the full pass stopped after c too";
  pol.main_pass_max_starts = 2;
  r = run(f, jobs, pol);
  EXPECT_EQ(r.start[1], 1);
  EXPECT_EQ(r.start[2], 60);
}

// Slurm's bf_max_job_part and bf_max_job_user_part (SimConfig::backfill_max_jobs_per_partition,
// backfill_max_jobs_per_user_partition), backfill.c _job_exceeds_max_bf_param: t0 is p1's, t1 p2's; `a` and
// `x` hold 3 slots of each to 1000; `b` (p1, 4 slots) is reserved t0 from 1000; `c` (p1, one slot for 500 s)
// ends before it and backfills at 30 (`d`, p2's, starts at once: the main pass blocks p1 only). With one
// job tried a partition b uses p1's: c waits for b. With one job a user in a partition the same for u's c;
// v's c is tried.
TEST(Simulation, BackfillJobsPerPartitionAsSlurmsBackfill) {
  const Farm f = two_partition_farm();
  auto jobs_of = [&](const std::string& c_user) {
    return make_jobs(f.cat,
                     {{.id = "a", .runtime = 1000, .walltime = 1000, .slots = 3, .request = "arch==p1"},
                      {.id = "x", .runtime = 1000, .walltime = 1000, .slots = 3, .request = "arch==p2"},
                      {.id = "b", .submit = 1, .runtime = 10, .walltime = 10, .slots = 4, .request = "arch==p1"},
                      {.id = "c", .submit = 2, .runtime = 500, .walltime = 500, .user = c_user, .request = "arch==p1"},
                      {.id = "d", .submit = 3, .runtime = 500, .walltime = 500, .request = "arch==p2"}});
  };
  auto parts = two_partitions({0, 1, 0, 0, 1});
  SimConfig pol;
  pol.backfill = BackfillPolicy::Conservative;
  pol.backfill_interval = 30;
  pol.partitions = parts;
  const JobTable same = jobs_of("u"), other = jobs_of("v");
  EXPECT_EQ(run(f, same, pol).start[3], 30);
  pol.backfill_max_jobs_per_partition = 1;
  auto r = run(f, same, pol);
  EXPECT_EQ(r.start[2], 1000);
  EXPECT_EQ(r.start[3], 1010) << "b was p1's one job tried: c waits for it";
  EXPECT_EQ(r.start[4], 3) << "d: p2 blocked by nothing, the main pass starts it";
  pol.backfill_max_jobs_per_partition = 0;
  pol.backfill_max_jobs_per_user_partition = 1;
  EXPECT_EQ(run(f, same, pol).start[3], 1010) << "u's one job in p1 was b";
  EXPECT_EQ(run(f, other, pol).start[3], 30) << "v's first in p1";
}

// Slurm's -n N over -N K nodes over time (JobTable::FitUnit::total): `a`, 6 tasks over 2 nodes of 4 slots, runs
// 4 on the node picked first and 2 on the other (not 3 + 3), and holds them all until it ends: `b`, a slot on
// each of 2 nodes, waits for a (at 100), while `c`, 2 slots on one node, fits beside it at once; `d`, all 8
// slots, starts when b ends: a gave every one back.
TEST(Simulation, TasksOverNodesHoldWhatSlurmGivesEachNode) {
  const Farm f({4, 4});
  JobBuilder jb(f.cat);
  jb.add("a", "u", "g", 0, 0, 2);
  jb.set_rule(AllocationRule::OnePerTasker);
  jb.set_times(100, 100);
  jb.set_fit_unit(1, 0, 0, 6);
  jb.add("b", "u", "g", 0, 1, 2);
  jb.set_rule(AllocationRule::OnePerTasker);
  jb.set_times(10, 10);
  jb.add("c", "u", "g", 0, 2, 2);
  jb.set_times(10, 10);
  jb.add("d", "u", "g", 0, 3, 2);  // every slot of both nodes: after a and b have given all theirs back
  jb.set_rule(AllocationRule::OnePerTasker);
  jb.set_amount(f.slots, 4);
  jb.set_times(10, 10);
  const JobTable jobs = std::move(jb).build();
  SimConfig pol;
  pol.allocation = AllocationPolicy::ConsecutiveBestFit;
  pol.backfill = BackfillPolicy::Conservative;
  const SimResult r = simulate(f.cat, f.taskers, jobs, pol, kernels::active());
  ASSERT_EQ(r.start[0], 0);
  std::vector<uint32_t> split;
  for (uint32_t a = 0; a < r.alloc_count[0]; ++a) split.push_back(r.allocations[r.alloc_first[0] + a].slots);
  std::sort(split.begin(), split.end());
  EXPECT_EQ(split, (std::vector<uint32_t>{2, 4}));
  EXPECT_EQ(r.start[1], 100) << "no node has a slot left beside a's 4 until it ends";
  EXPECT_EQ(r.start[2], 2) << "2 slots beside a's 2";
  EXPECT_EQ(r.start[3], 110) << "a's 6 slots all given back at its end";
}

// Every cycle is at or after the event that calls it: 32529 / 0.7 rounds to exactly 46470, whose multiple
// 46470 x 0.7 = 32528.999999999996 is before the submit; the cycle is the next multiple, and no cycle is
// spent before the job exists (the job's start cycle and its end's: two).
TEST(Simulation, ACycleTimeRoundedBelowItsEventIsTheNextMultiple) {
  const Farm f({1});
  const auto jobs = make_jobs(f.cat, {{.id = "a", .submit = 32529, .runtime = 10}});
  SimConfig pol;
  pol.interval = 0.7;
  ASSERT_LT(46470 * 0.7, 32529.0) << "the rounding this test is about";
  const auto r = run(f, jobs, pol);
  EXPECT_EQ(r.start[0], 46471 * 0.7);
  EXPECT_EQ(r.cycles, 2u);
}

// An interval the clock cannot step by is refused before the run (issue 28: 1e-12 s with times near
// 1.7e9 s looped for ever, the next cycle rounding back to this one), as is one that overflows the clock.
TEST(Simulation, AnIntervalThatCannotAdvanceTheClockIsRefused) {
  const Farm f({1});
  const auto jobs = make_jobs(f.cat, {{.id = "a", .submit = 1.7e9, .runtime = 10}});
  SimConfig pol;
  pol.interval = 1e-12;
  pol.source = "p.toml";
  try {
    run(f, jobs, pol);
    FAIL() << "no error";
  } catch (const PolicyError& e) {
    EXPECT_NE(std::string(e.what()).find("p.toml: interval 1e-12 s cannot advance the clock: times reach 1700000010 s, "
                                         "where they are 2.384185791015625e-07 s apart"),
              std::string::npos)
        << e.what();
  }
  pol.interval = 1e308;
  EXPECT_THROW(run(f, jobs, pol), PolicyError);
  pol.interval = 1e-6;  // above the spacing there (2.4e-7 s): runs
  const auto r = run(f, jobs, pol);
  EXPECT_GE(r.start[0], 1.7e9);
}

// ---- the farm over time (Google 2011 machine ADD, REMOVE, UPDATE) ------------------------------------

SimResult run_with(const Farm& f, const JobTable& jobs, const FarmEvents& farm, const SimConfig& pol = {}) {
  SimResult r = simulate(f.cat, f.taskers, jobs, pol, kernels::active(), farm);
  EXPECT_EQ(simcheck::check_schedule(f.cat, f.taskers, jobs, pol, r, farm), "");
  return r;
}

TaskerEvent farm_event(double time, uint32_t tasker, TaskerEvent::Kind kind, double amount = 0) {
  return {time, tasker, kind, 0, amount};
}

// A tasker that goes down takes no new job; the job running there runs to its end (Moab's default when
// a node fails: no action on its jobs).
TEST(FarmOverTime, DownTaskerTakesNoNewJobButItsRunningJobEnds) {
  const Farm f({2, 2});
  const auto jobs = make_jobs(f.cat, {{.id = "a", .runtime = 100, .slots = 2},
                                      {.id = "b", .runtime = 100, .slots = 2},
                                      {.id = "c", .submit = 20, .runtime = 10, .slots = 2}});
  FarmEvents farm;
  farm.events = {farm_event(10, 0, TaskerEvent::Kind::Down)};
  const auto r = run_with(f, jobs, farm);
  EXPECT_EQ(r.allocations[r.alloc_first[0]].tasker, 0u);
  EXPECT_EQ(r.end[0], 100) << "a keeps running on the tasker that went down";
  EXPECT_EQ(r.start[2], 100);
  EXPECT_EQ(r.allocations[r.alloc_first[2]].tasker, 1u) << "c waits for b's tasker: a's is down";
}

// A machine ADDed during the run: down until then, it takes the waiting jobs when it comes up.
TEST(FarmOverTime, TaskerAddedLaterTakesTheWaitingJobs) {
  const Farm f({2, 2});
  const auto jobs = make_jobs(f.cat, {{.id = "a", .runtime = 100, .slots = 2}, {.id = "b", .runtime = 10, .slots = 2}});
  FarmEvents farm;
  farm.down_at_start = {0, 1};
  farm.events = {farm_event(30, 1, TaskerEvent::Kind::Up)};
  const auto r = run_with(f, jobs, farm);
  EXPECT_EQ(r.start[1], 30);
  EXPECT_EQ(r.allocations[r.alloc_first[1]].tasker, 1u);
}

// A machine UPDATE that shrinks it under what its running jobs hold: nothing is available there until
// enough of them end (R.Available = R.Configured - R.Dedicated, at least 0); growing it starts jobs.
TEST(FarmOverTime, ConfiguredAmountsChangeAvailableCapacity) {
  const Farm f({4});
  const auto jobs = make_jobs(f.cat, {{.id = "a", .runtime = 100, .slots = 4},
                                      {.id = "b", .submit = 20, .runtime = 10, .slots = 1},
                                      {.id = "c", .submit = 20, .runtime = 10, .slots = 3}});
  FarmEvents farm;
  farm.events = {farm_event(10, 0, TaskerEvent::Kind::Configure, 2),
                 farm_event(200, 0, TaskerEvent::Kind::Configure, 4)};
  const auto r = run_with(f, jobs, farm);
  EXPECT_EQ(r.start[1], 100) << "2 configured, 4 dedicated: nothing free until a ends";
  EXPECT_EQ(r.start[2], 200) << "3 slots fit only once the tasker has 4 again";
  SimConfig until;
  until.until = 150;
  const auto cut = run_with(f, jobs, farm, until);
  EXPECT_EQ(cut.reason[2], SimReason::NoFreeCapacity) << "not TooLarge: the tasker has had 4";
}

TEST(FarmOverTime, BadFarmEventsAreRefused) {
  const Farm f({2, 2});
  const auto jobs = make_jobs(f.cat, {{.id = "a"}});
  const SimConfig pol;
  FarmEvents late_first;
  late_first.events = {farm_event(10, 0, TaskerEvent::Kind::Down), farm_event(5, 0, TaskerEvent::Kind::Up)};
  EXPECT_THROW(simulate(f.cat, f.taskers, jobs, pol, kernels::active(), late_first), std::invalid_argument);
  FarmEvents nobody;
  nobody.events = {farm_event(1, 7, TaskerEvent::Kind::Down)};
  EXPECT_THROW(simulate(f.cat, f.taskers, jobs, pol, kernels::active(), nobody), std::invalid_argument);
  FarmEvents short_list;
  short_list.down_at_start = {1};
  EXPECT_THROW(simulate(f.cat, f.taskers, jobs, pol, kernels::active(), short_list), std::invalid_argument);
  FarmEvents negative;
  negative.events = {farm_event(1, 0, TaskerEvent::Kind::Configure, -1)};
  EXPECT_THROW(simulate(f.cat, f.taskers, jobs, pol, kernels::active(), negative), std::invalid_argument);
}

// ---- differential: engine against the naive reference simulator --------------------------------------

void randomize_times(JobTable& jobs, std::mt19937_64& rng) {
  const size_t n = jobs.size();
  const bool classes = rng() % 2 == 0;  // walltimes from a few classes: many jobs expected to end together
  for (uint32_t j = 0; j < n; ++j) {
    jobs.submit.set(j, static_cast<double>(classes ? 5 * (rng() % 12) : rng() % 60));
    const double run = static_cast<double>(rng() % 40);
    jobs.runtime.set(j, run);
    double wall = rng() % 4 == 0 ? NAN : run + static_cast<double>(rng() % 20) - 3;
    if (classes) wall = 10.0 * (1 + rng() % 4);
    if (wall < 0) wall = 0;
    jobs.walltime.set(j, wall);
    jobs.priority[j] = static_cast<double>(rng() % 3);
    if (rng() % 20 == 0) jobs.hold_until.set(j, rng() % 2 ? kInf : static_cast<double>(rng() % 120));
    if (j > 0 && rng() % 15 == 0) jobs.depends.add(j, static_cast<uint32_t>(rng() % j));
    jobs.queue.set(j, jobs.queues.intern(rng() % 2 ? "short" : "long"));
    jobs.owner[j] = jobs.owners.intern("u" + std::to_string(rng() % 3));
    jobs.group[j] = jobs.groups.intern("g" + std::to_string(rng() % 2));
    jobs.qos.set(j, jobs.qos_names.intern(rng() % 3 ? "normal" : "high"));
  }
}

// Taskers that go down and come back, some down at the start, slot counts that change (on a consumable
// with only taskers' own pools), at random times over the trace.
FarmEvents random_farm(const Catalog& cat, const TaskerTable& tk, std::mt19937_64& rng) {
  FarmEvents f;
  if (rng() % 3 != 0) return f;
  const size_t n = tk.size();
  f.down_at_start.assign(n, 0);
  for (uint32_t t = 0; t < n; ++t) f.down_at_start[t] = rng() % 5 == 0;
  int slots_k = -1;
  if (const auto a = cat.find("slots"); a && cat.consumable_slot(*a) >= 0 && !tk.columns[*a].multi_level())
    slots_k = cat.consumable_slot(*a);
  const size_t count = rng() % (2 * n + 4);
  for (size_t i = 0; i < count; ++i) {
    TaskerEvent e;
    e.time = static_cast<double>(rng() % 120);
    e.tasker = static_cast<uint32_t>(rng() % n);
    const auto pick = rng() % 3;
    e.kind = pick == 0 ? TaskerEvent::Kind::Up : pick == 1 ? TaskerEvent::Kind::Down : TaskerEvent::Kind::Configure;
    if (e.kind == TaskerEvent::Kind::Configure) {
      const Column& col = tk.columns[cat.consumables()[slots_k < 0 ? 0 : slots_k]];
      if (slots_k < 0 || !col.has(e.tasker)) continue;
      e.consumable = static_cast<uint32_t>(slots_k);
      e.amount = static_cast<double>(rng() % (static_cast<uint64_t>(col.queue().num(e.tasker)) + 3));
    }
    f.events.push_back(e);
  }
  std::stable_sort(f.events.begin(), f.events.end(),
                   [](const TaskerEvent& a, const TaskerEvent& b) { return a.time < b.time; });
  return f;
}

// In a third of the runs, Moab's utilized or combined availability: jobs that use a random fraction of
// what they hold (some of them, on some consumables) and taskers with a load of their own. Drawn from
// a generator of its own, so the other draws (the traces) stay what they were.
bool random_utilization(loaders::Dataset& ds, FarmEvents& farm, SimConfig& pol, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + 17);
  if (rng() % 3 != 0) return false;
  pol.availability = rng() % 2 ? ResourceAvailability::Utilized : ResourceAvailability::Combined;
  const auto& cons = ds.catalog.consumables();
  JobAmounts use;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    use.add_job();
    for (uint32_t k = 0; k < cons.size(); ++k)
      if (rng() % 2) use.set_last(k, static_cast<double>(rng() % 5) / 4.0);
  }
  ds.jobs.utilization = std::move(use);
  farm.load.assign(cons.size(), {});
  for (size_t k = 0; k < cons.size(); ++k) {
    const Column& col = ds.taskers.columns[cons[k]];
    if (col.multi_level() || rng() % 2) continue;
    farm.load[k].assign(ds.taskers.size(), 0.0);
    for (uint32_t t = 0; t < ds.taskers.size(); ++t)
      if (col.has(t) && rng() % 3 == 0) farm.load[k][t] = col.queue().num(t) * static_cast<double>(rng() % 4) / 4.0;
  }
  return true;
}

class SimDifferential : public ::testing::TestWithParam<int> {};

TEST_P(SimDifferential, EngineEqualsNaiveOnRandomTraces) {
  const int combo = GetParam();
  SimConfig base;
  // greatest power, first available, best fit, worst fit, Slurm's consecutive best fit
  base.allocation = static_cast<AllocationPolicy>(combo % 5);
  // None, EASY, greedy, conservative, EASY with reservation depth 3
  constexpr BackfillPolicy kinds[] = {BackfillPolicy::None, BackfillPolicy::Easy, BackfillPolicy::Greedy,
                                      BackfillPolicy::Conservative, BackfillPolicy::Easy};
  base.backfill = kinds[combo / 5];
  if (combo / 5 == 4) base.reservation_depth = 3;
  size_t started = 0, waited = 0, backfilled = 0, throttled = 0, fast_cycles = 0, with_farm_events = 0,
         with_utilized = 0, with_bf_interval = 0;
  for (int i = 0; i < 150; ++i) {
    const uint64_t seed = 7919ULL * static_cast<uint64_t>(combo) + static_cast<uint64_t>(i);
    std::mt19937_64 rng(seed);
    synth::SynthSpec s;
    s.seed = seed;
    s.taskers = 1 + rng() % 20;
    s.jobs = 1 + rng() % 40;
    s.categories = 1 + rng() % 8;
    s.levels = rng() % 2 == 0;
    s.with_slots = true;
    s.soft = rng() % 3 == 0 ? 0.5 : 0.0;
    s.fill_up = rng() % 2 ? 0.3 : 0.0;
    s.one_per_tasker = seed % 3 == 1 ? 0.5 : 0.0;  // a slot a tasker (allocation_rule 1, Slurm -N)
    auto ds = synth::generate(s);
    randomize_times(ds.jobs, rng);
    SimConfig pol = base;
    pol.compression = seed % 4 < 2;  // the book compressed on early ends in half the traces (no draw)
    pol.fit_consumable = seed % ds.catalog.consumables().size();  // (no draw: the traces stay as they were)
    if (seed % 2 == 0) {  // Slurm's --mem-per-cpu on a third of the jobs (no draw either)
      pol.fit_limit = (seed / 2) % ds.catalog.consumables().size();
      ds.jobs.fit_unit.resize(ds.jobs.size());
      for (uint32_t j = 0; j < ds.jobs.size(); ++j)
        if ((j + seed) % 3 == 0)  // most against the limit, some capped at a few tasks (a GRES job's)
          ds.jobs.fit_unit[j] = {1.0 + j % 3, j % 4 == 0 ? 0.0 : 0.5 + j % 8, j % 5 == 0 ? 1.0 + j % 2 : 0.0};
    }
    if (rng() % 3 == 0) pol.interval = static_cast<double>(1 + rng() % 9);
    if (rng() % 3 == 0) pol.throttles.push_back({CredentialKind::Class, "", 1 + rng() % 3, kInf});
    if (rng() % 4 == 0) {  // slot limits, per user or group, some for one named credential
      const auto kind = rng() % 2 ? CredentialKind::User : CredentialKind::Group;
      const std::string name = rng() % 2 ? "" : kind == CredentialKind::User ? "u1" : "g0";
      pol.throttles.push_back({kind, name, std::numeric_limits<uint64_t>::max(), static_cast<double>(1 + rng() % 12)});
    }
    if (rng() % 3 == 0) pol.weights = {0, 1, static_cast<double>(rng() % 2), 0};
    if (rng() % 3 == 0) {  // credential priorities, and a job limit per QoS
      pol.credential_priorities.push_back({CredentialKind::QoS, "high", static_cast<double>(rng() % 3)});
      pol.credential_priorities.push_back({CredentialKind::User, "u1", static_cast<double>(rng() % 2)});
      if (rng() % 2) pol.throttles.push_back({CredentialKind::QoS, "high", 1 + rng() % 2, kInf});
    }
    // Slurm's bf_interval: backfill only every few seconds (no draw), in runs with credential limits (their
    // cycles are full ones under conservative anyway, as every backfill_interval run's are)
    if (!pol.throttles.empty() && seed % 3 == 0) {
      pol.backfill_interval = static_cast<double>(1 + seed % 7);
      // (phase NaN, one run in five: Slurm's backfill thread, bf_interval after its last run)
      pol.backfill_phase = seed % 5 == 4 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(seed % 5);
      // Slurm's bf_window and bf_max_job_test in some of them
      if (seed % 3 == 1) pol.backfill_window = static_cast<double>(50 + seed % 400);
      if (seed % 4 == 2) pol.backfill_max_jobs = 1 + seed % 6;  // the node-space map's records
      // and bf_max_job_user, bf_min_prio_reserve (the priorities here: the weights' sums, 0 to a few tens)
      if (seed % 5 == 3) pol.backfill_max_jobs_per_user = 1 + seed % 3;
      if (seed % 5 == 2) {  // and bf_max_job_assoc, the jobs over three accounts (a trace's owners in several)
        pol.backfill_max_jobs_per_association = 1 + seed % 3;
        for (uint32_t j = 0; j < ds.jobs.size(); ++j)
          ds.jobs.account.set(j, ds.jobs.accounts.intern("acct" + std::to_string((j * 7 + seed) % 3)));
        pol.slurm_priority.accounting = seed % 10 != 7;  // without slurmdbd: no associations, no limit
      }
      if (seed % 7 == 5) pol.backfill_min_priority_reserve = static_cast<double>(1 + seed % 20);
      if (seed % 6 == 3) pol.backfill_min_age_reserve = static_cast<double>(1 + seed % 40);  // and bf_min_age_reserve
      // and bf_resolution in half of them
      if (seed % 2 == 1) pol.backfill_resolution = static_cast<double>(1 + seed % 13);
      with_bf_interval += base.backfill != BackfillPolicy::None;
    }
    // Slurm's partitions (no draw): the main pass blocks by partition, in an eighth of the runs and a quarter
    // of those with Slurm's backfill cycles (full cycles either way)
    if (seed % 8 == 1 || (pol.backfill_interval > 0 && seed % 4 == 1)) {
      auto parts = std::make_shared<BlockingQueues>();
      const auto nq = static_cast<uint32_t>(1 + seed % 3), nt = static_cast<uint32_t>(ds.taskers.size());
      const auto s32 = static_cast<uint32_t>(seed);
      for (uint32_t q = 0; q < nq; ++q) {
        parts->names.push_back("p" + std::to_string(q));
        std::vector<uint64_t> words((nt + 63) / 64, 0);
        uint64_t count = 0;
        for (uint32_t x = 0; x < nt; ++x)
          if (x % nq == q || x % 5 == 0) words[x / 64] |= uint64_t{1} << (x % 64), ++count;  // some in every one
        parts->taskers.push_back(kernels::TaskerSet::from_words(std::move(words), nt, count));
      }
      const auto n = static_cast<uint32_t>(ds.jobs.size());
      for (uint32_t j = 0; j < n; ++j) {
        const bool several = nq > 1 && j % 6 == 0;  // a job of two partitions, its own first
        parts->several_first.push_back(static_cast<uint32_t>(parts->several.size()));
        parts->queue_of_job.push_back(several ? kNone : j % 9 == 4 ? kNone : (j + s32) % nq);
        if (several) parts->several.insert(parts->several.end(), {(j + s32) % nq, (j + s32 + 1) % nq});
        parts->holds_own.push_back(j % 11 == 7 ? 1 : 0);  // -w: holds its taskers, blocks nothing
      }
      parts->several_first.push_back(static_cast<uint32_t>(parts->several.size()));
      pol.partitions = std::move(parts);
      if (seed % 3 == 0) {  // default_queue_depth and sched_interval (no draw)
        pol.main_pass_depth = 1 + seed % 5;
        pol.main_pass_full_interval = static_cast<double>(5 + seed % 20);
        pol.main_pass_full_phase = static_cast<double>(seed % 7);
      }
      if (seed % 4 == 1) pol.main_pass_partition_depth = 1 + seed % 3;  // partition_job_depth (no draw)
      if (seed % 5 == 3) {  // sched_max_job_start, with sched_interval's full passes (no draw)
        pol.main_pass_max_starts = 1 + seed % 3;
        if (pol.main_pass_full_interval == 0) pol.main_pass_full_interval = static_cast<double>(5 + seed % 20);
      }
      if (pol.backfill_interval > 0) {  // and Slurm's per-partition backfill limits (no draw)
        if (seed % 3 == 2) pol.backfill_max_jobs_per_partition = 1 + seed % 4;
        if (seed % 5 == 1) pol.backfill_max_jobs_per_user_partition = 1 + seed % 2;
      }
    }
    FarmEvents farm = random_farm(ds.catalog, ds.taskers, rng);
    with_farm_events += !farm.events.empty();
    with_utilized += random_utilization(ds, farm, pol, seed);
    const std::string ctx = "seed " + std::to_string(seed);
    const SimResult e = simulate(ds.catalog, ds.taskers, ds.jobs, pol, kernels::active(), farm);
    ASSERT_EQ(simcheck::check_schedule(ds.catalog, ds.taskers, ds.jobs, pol, e, farm), "") << ctx;
    const naive::SimOutcome ref = naive::simulate(ds.catalog, ds.taskers, ds.jobs, pol, farm);
    fast_cycles += e.cycles - e.full_cycles;
    for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
      const std::string at = ctx + " job " + std::string(ds.jobs.id[j]);
      ASSERT_EQ(std::isnan(e.start[j]), std::isnan(ref.start[j])) << at;
      if (!std::isnan(e.start[j])) {
        ASSERT_EQ(e.start[j], ref.start[j]) << at;
        ASSERT_EQ(e.end[j], ref.end[j]) << at;
        ASSERT_EQ(allocations_of(e, j), ref.allocations[j]) << at;
        ASSERT_EQ(e.backfilled[j], ref.backfilled[j]) << at;
        ++started;
        waited += e.start[j] > ds.jobs.submit[j];
        backfilled += e.backfilled[j];
      } else {
        ASSERT_EQ(e.reason[j], ref.reason[j]) << at;
      }
      throttled += e.was_throttled[j];
    }
  }
  EXPECT_GT(started, 500u);
  EXPECT_GT(waited, 100u) << "jobs wait for capacity, so the queue logic is exercised";
  EXPECT_GT(throttled, 5u);
  if (base.depth() <= 1 || base.depth() == SIZE_MAX) {  // a finite deeper book takes full cycles
    EXPECT_GT(fast_cycles, base.depth() <= 1 ? 1000u : 500u)
        << "most cycles take the fast path, which is what is compared (conservative's only without limits)";
  }
  EXPECT_GT(with_farm_events, 30u) << "taskers go down, come up and change size during some runs";
  EXPECT_GT(with_utilized, 30u) << "utilized and combined availability in some runs";
  if (base.backfill != BackfillPolicy::None) {
    EXPECT_GT(backfilled, 5u) << "backfill starts some jobs ahead of a waiting one";
    EXPECT_GE(with_bf_interval, 10u) << "backfill only every backfill_interval in some runs";
  }
}

INSTANTIATE_TEST_SUITE_P(AllocationTimesBackfill, SimDifferential, ::testing::Range(0, 25));

// Grid Engine's host rules over time ($pe_slots over a host's taskers, $fill_up and $round_robin host by
// host, allocation_rule N; no slot range, no -masterq: the simulator refuses those) against the naive
// simulator, whose placement is the naive matcher's place_by_host: on farms of hosts of four taskers with
// host pools (a placement says where a job fits) and of taskers on their own (the slot instances counted),
// under no backfill, EASY, greedy, conservative and depth 3, on a host sort in half of them.
class SimHostRulesDifferential : public ::testing::TestWithParam<int> {};

TEST_P(SimHostRulesDifferential, EngineEqualsNaiveOnRandomTraces) {
  size_t started = 0, waited = 0, backfilled = 0, over_hosts = 0, blocks = 0, robin = 0;
  for (int i = 0; i < 400; ++i) {
    const uint64_t seed = 9100003ULL * static_cast<uint64_t>(GetParam()) + static_cast<uint64_t>(i);
    std::mt19937_64 rng(seed);
    synth::SynthSpec s;
    s.seed = seed;
    s.taskers = 8 + rng() % 24;
    s.jobs = 1 + rng() % 40;
    s.categories = 1 + rng() % 8;
    s.levels = seed % 3 != 0;  // hosts of four taskers with host pools, or taskers on their own
    s.with_slots = true;
    s.fill_up = 0.7;
    s.one_per_tasker = 0;
    auto ds = synth::generate(s);
    randomize_times(ds.jobs, rng);
    JobTable& jobs = ds.jobs;
    jobs.pe_shape.assign(jobs.size(), {});
    for (uint32_t j = 0; j < jobs.size(); ++j) testing_support::draw_host_rule(jobs, j, rng);
    SimConfig pol;
    constexpr BackfillPolicy kinds[] = {BackfillPolicy::None, BackfillPolicy::Easy, BackfillPolicy::Greedy,
                                        BackfillPolicy::Conservative, BackfillPolicy::Easy};
    pol.backfill = kinds[seed % 5];
    if (seed % 5 == 4) pol.reservation_depth = 3;
    pol.compression = seed % 4 < 2;
    if (rng() % 3 == 0) pol.interval = static_cast<double>(1 + rng() % 9);
    const std::string ctx = "seed " + std::to_string(seed);
    const SimResult e = simulate(ds.catalog, ds.taskers, jobs, pol, kernels::active());
    ASSERT_EQ(simcheck::check_schedule(ds.catalog, ds.taskers, jobs, pol, e, {}), "") << ctx;
    const naive::SimOutcome ref = naive::simulate(ds.catalog, ds.taskers, jobs, pol, {});
    for (uint32_t j = 0; j < jobs.size(); ++j) {
      const std::string at = ctx + " job " + std::string(jobs.id[j]);
      ASSERT_EQ(std::isnan(e.start[j]), std::isnan(ref.start[j])) << at;
      if (std::isnan(e.start[j])) {
        ASSERT_EQ(e.reason[j], ref.reason[j]) << at;
        continue;
      }
      ASSERT_EQ(e.start[j], ref.start[j]) << at;
      ASSERT_EQ(allocations_of(e, j), ref.allocations[j]) << at;
      ASSERT_EQ(e.backfilled[j], ref.backfilled[j]) << at;
      ++started;
      waited += e.start[j] > jobs.submit[j];
      backfilled += e.backfilled[j];
      if (!by_host(jobs.rule[j]) || ds.taskers.host_of.empty()) continue;
      std::set<uint32_t> hosts;
      for (uint32_t a = 0; a < e.alloc_count[j]; ++a)
        hosts.insert(ds.taskers.host_of[e.allocations[e.alloc_first[j] + a].tasker]);
      over_hosts += hosts.size() > 1;
      blocks += jobs.rule[j] == AllocationRule::HostBlocks && hosts.size() > 1;
      robin += jobs.rule[j] == AllocationRule::HostRoundRobin && hosts.size() > 1;
    }
  }
  EXPECT_GT(started, 500u);
  EXPECT_GT(waited, 100u) << "jobs wait for capacity";
  EXPECT_GT(backfilled, 5u);
  EXPECT_GT(over_hosts, 30u) << "jobs over several hosts";
  EXPECT_GT(blocks, 5u) << "allocation_rule N over several hosts";
  EXPECT_GT(robin, 5u) << "$round_robin over several hosts";
}
INSTANTIATE_TEST_SUITE_P(Shards, SimHostRulesDifferential, ::testing::Range(0, 4));

// ---- the fast cycle against the full one on real workload logs ---------------------------------------

// The fast cycle (ready jobs per category, parked jobs, failed categories remembered) must start the
// same jobs at the same times on the same taskers as the full cycle that visits every waiting job.
// Real logs reach states the small random traces rarely do (hundreds of running jobs ending at the
// same expected time, long queues of one category).
void expect_fast_equals_full(const loaders::Dataset& ds, const std::string& path, const SimConfig& pol) {
  SimConfig full = pol;
  full.full_cycles = true;
  const SimResult f = simulate(ds.catalog, ds.taskers, ds.jobs, full, kernels::active(), ds.farm);
  const SimResult e = simulate(ds.catalog, ds.taskers, ds.jobs, pol, kernels::active(), ds.farm);
  EXPECT_EQ(f.full_cycles, f.cycles);
  EXPECT_LT(e.full_cycles * 10, e.cycles) << "the fast cycle is the one exercised";
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    const std::string at = path + " job " + std::string(ds.jobs.id[j]);
    ASSERT_EQ(std::isnan(e.start[j]), std::isnan(f.start[j])) << at;
    if (std::isnan(e.start[j])) {
      ASSERT_EQ(e.reason[j], f.reason[j]) << at;
      continue;
    }
    ASSERT_EQ(e.start[j], f.start[j]) << at;
    ASSERT_EQ(e.alloc_count[j], f.alloc_count[j]) << at;
    for (uint32_t a = 0; a < e.alloc_count[j]; ++a) {
      ASSERT_EQ(e.allocations[e.alloc_first[j] + a].tasker, f.allocations[f.alloc_first[j] + a].tasker) << at;
      ASSERT_EQ(e.allocations[e.alloc_first[j] + a].slots, f.allocations[f.alloc_first[j] + a].slots) << at;
    }
    ASSERT_EQ(e.backfilled[j], f.backfilled[j]) << at;
  }
}

void expect_fast_equals_full(const std::string& path, const SimConfig& pol) {
  expect_fast_equals_full(loaders::load_swf(path), path, pol);
}

std::vector<SimConfig> log_policies() {
  std::vector<SimConfig> out;
  SimConfig p;
  p.throttles.push_back({CredentialKind::User, "", 3, kInf});
  out.push_back(p);  // strict order, a job limit per user
  p.backfill = BackfillPolicy::Easy;
  p.throttles[0].max_jobs = 2;
  p.throttles.push_back({CredentialKind::Group, "", std::numeric_limits<uint64_t>::max(), 64});
  out.push_back(p);  // EASY, user job limit and group slot limit
  SimConfig b;
  b.backfill = BackfillPolicy::Easy;
  b.allocation = AllocationPolicy::BestFit;
  out.push_back(b);
  SimConfig g;  // greedy: the fast cycle's backfill with no reservation
  g.backfill = BackfillPolicy::Greedy;
  out.push_back(g);
  SimConfig c;  // conservative: the fast cycle over a kept book (pooled on these logs)
  c.backfill = BackfillPolicy::Conservative;
  out.push_back(c);
  SimConfig d;  // reservation depth 4: the fast cycle over a pooled book with a finite depth
  d.backfill = BackfillPolicy::Easy;
  d.reservation_depth = 4;
  out.push_back(d);
  return out;
}

TEST(Simulation, FastCyclesEqualFullCyclesOnTheBundledKthSample) {
  for (const SimConfig& pol : log_policies())
    expect_fast_equals_full(std::string(COLMATCH_SOURCE_DIR) + "/datasets/samples/kth_sp2_head3000.swf.gz", pol);
}

// The bundled Google 2011 slice with its machine events applied during the run: machines ADDed,
// REMOVEd and UPDATEd while tasks wait and run. The checker holds, and fast cycles equal full ones.
TEST(Simulation, GoogleSliceWithMachineEventsDuringTheRun) {
  const std::string dir = std::string(COLMATCH_SOURCE_DIR) + "/datasets/samples/";
  const auto ds =
      loaders::load_google2011(dir + "google_machine_events.csv.gz", dir + "google_task_events_job_mod25.csv.gz",
                               std::nullopt, {}, loaders::LoadMode::OverTime);
  size_t downs = 0, ups = 0, configures = 0;
  for (const TaskerEvent& e : ds.farm.events) {
    downs += e.kind == TaskerEvent::Kind::Down;
    ups += e.kind == TaskerEvent::Kind::Up;
    configures += e.kind == TaskerEvent::Kind::Configure;
  }
  EXPECT_GT(downs, 0u);
  EXPECT_GT(ups, 0u);
  SimConfig pol;
  pol.backfill = BackfillPolicy::Easy;
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, pol, kernels::active(), ds.farm);
  EXPECT_EQ(simcheck::check_schedule(ds.catalog, ds.taskers, ds.jobs, pol, r, ds.farm), "");
  size_t started = 0;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) started += !std::isnan(r.start[j]);
  EXPECT_GT(started, ds.jobs.size() / 2);
  expect_fast_equals_full(ds, "google sample", pol);
  RecordProperty("farm_events", fmt::format("{} down, {} up, {} configure", downs, ups, configures));
}

// The progress callback (the CLI's progress bar): simulated time never goes back, ends only add up, and
// the last call reports every started job as ended.
TEST(Simulation, ProgressReportsTimeAndJobsDone) {
  const auto ds = loaders::load_swf(std::string(COLMATCH_SOURCE_DIR) + "/datasets/samples/kth_sp2_head3000.swf.gz");
  std::vector<std::tuple<double, uint64_t, uint64_t>> calls;
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, SimConfig{}, kernels::active(), {},
                               [&](double t, uint64_t ended, uint64_t jobs) { calls.emplace_back(t, ended, jobs); });
  ASSERT_GE(calls.size(), r.cycles / 1024);
  ASSERT_GE(calls.size(), 2u);
  for (size_t i = 1; i < calls.size(); ++i) {
    EXPECT_LE(std::get<0>(calls[i - 1]), std::get<0>(calls[i]));
    EXPECT_LE(std::get<1>(calls[i - 1]), std::get<1>(calls[i]));
  }
  uint64_t started = 0;
  for (double s : r.start) started += !std::isnan(s);
  EXPECT_EQ(std::get<1>(calls.back()), started);
  EXPECT_EQ(std::get<2>(calls.back()), 3000u);
}

TEST(Simulation, FastCyclesEqualFullCyclesOnTheFullKthLog) {
  const std::string path = std::string(COLMATCH_SOURCE_DIR) +
                           "/../shared/datasets/raw/parallel-workloads-archive/KTH-SP2-1996-2.1-cln.swf.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not here";
  for (const SimConfig& pol : log_policies()) expect_fast_equals_full(path, pol);
}

}  // namespace

// SimResult::detail keeps a text per job in 4 bytes once one is set, each distinct text once while some
// job has it (issue 29: a std::string a job was 320 MB for 10M jobs): the texts read back as set, a text
// replaced everywhere is freed and its slot reused, so texts renewed in every cycle do not pile up.
TEST(JobTexts, TextsReadBackAndReplacedOnesAreFreed) {
  JobTexts t;
  t.assign(5);
  EXPECT_EQ(t[3], "");
  t.set(1, "user alice max_jobs 2");
  t.set(2, "user alice max_jobs 2");
  t.set(3, "queue q1 is stuck");
  EXPECT_EQ(t[1], "user alice max_jobs 2");
  EXPECT_EQ(t[2], "user alice max_jobs 2");
  EXPECT_EQ(t[3], "queue q1 is stuck");
  EXPECT_EQ(t[0], "");
  t.clear(1);
  EXPECT_EQ(t[1], "");
  EXPECT_EQ(t[2], "user alice max_jobs 2") << "still used by job 2";
  for (int cycle = 0; cycle < 10000; ++cycle)
    t.set(4, "section s1 (priority " + std::to_string(cycle) + ") waits first");
  EXPECT_EQ(t[4], "section s1 (priority 9999) waits first");
  EXPECT_LE(t.stored(), 3u) << "the texts of earlier cycles are not kept";
  t.set(2, "");
  t.set(3, "");
  t.set(4, "");
  EXPECT_EQ(t.stored(), 0u);
}
