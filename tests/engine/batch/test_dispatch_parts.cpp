// The parallel batch dispatch (issue 29): which categories may be walked apart (dispatch_parts), and the
// differential test: on random partitioned farms, the parts walked side by side at 1, 2 and 16 threads
// give exactly what one walk over every job gives (every per-job column, the allocations in order, the
// removed jobs, the counts and the capacity left).
#include <random>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include "engine/batch/dispatch.hpp"
#include "engine/batch/dispatch_parts.hpp"
#include "engine/batch/matcher.hpp"

using namespace colmatch;

namespace {

AttributeDef consumable(const char* name, AttrType type = AttrType::Int) {
  AttributeDef d;
  d.name = name;
  d.type = type;
  d.relop = Relop::LE;
  d.consumable = true;
  return d;
}

AttributeDef text_attribute(const char* name) {
  AttributeDef d;
  d.name = name;
  return d;
}

// A farm whose taskers are in `part` groups; jobs ask for one group, several, or none that exists.
struct PartFarm {
  Catalog cat;
  uint32_t slots, mem, lic, hmem, part;
  TaskerTable taskers;
  JobTable jobs;

  PartFarm() {
    slots = cat.add(consumable("slots"));
    mem = cat.add(consumable("mem", AttrType::Memory));
    lic = cat.add(consumable("lic"));    // a global pool where a farm has one
    hmem = cat.add(consumable("hmem"));  // a host pool where a farm has one
    part = cat.add(text_attribute("part"));
  }
  MatchOutcome match() const { return run_match(cat, taskers, jobs, kernels::active()); }
  DispatchParts parts(const MatchOutcome& m, uint64_t budget = uint64_t{1} << 40) const {
    return dispatch_parts(m.categories, jobs, m.eligible, Capacity::configured(cat, taskers), budget);
  }
};

// Four taskers, two groups of two, 4 slots each; jobs' requests by text.
PartFarm two_groups(const std::vector<std::string>& requests, bool global_licence = false) {
  PartFarm f;
  TaskerBuilder tb(f.cat);
  for (int t = 0; t < 4; ++t) {
    tb.add("q" + std::to_string(t));
    tb.set(f.slots, "4");
    tb.set(f.part, t < 2 ? "a" : "b");
  }
  if (global_licence) tb.set_global(f.lic, "10");
  f.taskers = std::move(tb).build();
  JobBuilder jb(f.cat);
  for (size_t j = 0; j < requests.size(); ++j) {
    jb.add("j" + std::to_string(j), "u", "g", 0, static_cast<double>(j), 1);
    jb.set_request(requests[j]);
    if (global_licence && j == 0) jb.set_amount(f.lic, 1);
  }
  f.jobs = std::move(jb).build();
  return f;
}

uint32_t part_of_job(const MatchOutcome& m, const DispatchParts& p, uint32_t j) {
  return p.part_of[m.categories.of_job[j]];
}

TEST(DispatchParts, CategoriesOnDisjointTaskersAreApart) {
  const PartFarm f = two_groups({"part==a", "part==b", "part==a", "part==zz"});
  const MatchOutcome m = f.match();
  const DispatchParts p = f.parts(m);
  EXPECT_EQ(p.count, 2u);
  EXPECT_NE(part_of_job(m, p, 0), part_of_job(m, p, 1));
  EXPECT_EQ(part_of_job(m, p, 0), part_of_job(m, p, 2)) << "one category";
  EXPECT_EQ(part_of_job(m, p, 3), kNone) << "no eligible tasker: takes from no pool";
}

TEST(DispatchParts, ACategoryOverBothGroupsJoinsThem) {
  const PartFarm f = two_groups({"part==a", "part==b", "part=={a,b}"});
  const MatchOutcome m = f.match();
  const DispatchParts p = f.parts(m);
  EXPECT_EQ(p.count, 1u);
  EXPECT_EQ(part_of_job(m, p, 0), part_of_job(m, p, 1));
}

TEST(DispatchParts, AGlobalPoolJoinsEveryCategoryChargingIt) {
  PartFarm f = two_groups({"part==a", "part==b"}, /*global_licence=*/true);  // job 0 asks for the licence
  MatchOutcome m = f.match();
  EXPECT_EQ(f.parts(m).count, 2u) << "only one category charges the licence";
  JobBuilder jb(f.cat);  // both ask for it now
  for (int j = 0; j < 2; ++j) {
    jb.add("j" + std::to_string(j), "u", "g", 0, j, 1);
    jb.set_request(j == 0 ? "part==a" : "part==b");
    jb.set_amount(f.lic, 1);
  }
  f.jobs = std::move(jb).build();
  m = f.match();
  EXPECT_EQ(f.parts(m).count, 1u) << "the licence is one farm-wide pool";
}

TEST(DispatchParts, PastTheBudgetEveryCategoryIsInOnePart) {
  const PartFarm f = two_groups({"part==a", "part==b", "part==zz"});
  const MatchOutcome m = f.match();
  EXPECT_EQ(f.parts(m).count, 2u);
  const DispatchParts p = f.parts(m, /*budget=*/1);
  EXPECT_EQ(p.count, 1u);
  EXPECT_EQ(part_of_job(m, p, 2), kNone);
}

// A random farm of `groups` groups of taskers (some farms with hosts and a host pool, some with a global
// licence), jobs over one group, two, all, or none, some $fill_up, priorities and submit times random.
PartFarm random_farm(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto below = [&](uint64_t n) { return rng() % n; };
  PartFarm f;
  const size_t groups = 1 + below(12), nt = 1 + below(200), nj = 1 + below(400);
  const bool hosts = below(3) == 0, licence = below(3) == 0;
  const uint64_t spanning = below(3) * below(3);  // in 100: jobs over two groups or all (0 for half the farms)
  TaskerBuilder tb(f.cat);
  uint32_t host = kNone;
  for (size_t t = 0; t < nt; ++t) {
    if (hosts && t % 4 == 0) {
      host = tb.add_host("h" + std::to_string(t / 4));
      tb.set_host(host, f.hmem, std::to_string(4 + below(8)));
    }
    tb.add("q" + std::to_string(t), static_cast<double>(1 + below(3)), hosts ? host : kNone);
    tb.set(f.slots, std::to_string(1 + below(8)));
    tb.set(f.mem, std::to_string(1 + below(16)) + "G");
    tb.set(f.part, "g" + std::to_string(below(groups)));
  }
  if (licence) tb.set_global(f.lic, std::to_string(1 + below(20)));
  f.taskers = std::move(tb).build();
  JobBuilder jb(f.cat);
  for (size_t j = 0; j < nj; ++j) {
    jb.add("j" + std::to_string(j), "u", "g", static_cast<double>(below(3)), static_cast<double>(below(50)),
           static_cast<uint32_t>(1 + below(4)));
    const uint64_t kind = below(100);
    const std::string g = "g" + std::to_string(below(groups));
    if (kind < 5) jb.set_request("part==none");
    else if (kind < 5 + spanning) jb.set_request(fmt::format("part=={{{},g{}}}", g, below(groups)));
    else if (kind < 5 + spanning + spanning / 2) jb.set_request("");
    else jb.set_request("part==" + g);
    if (below(3) == 0) jb.set_amount(f.mem, static_cast<double>(1 + below(4)) * (1 << 30));
    if (licence && below(5) == 0) jb.set_amount(f.lic, 1);
    if (hosts && below(4) == 0) jb.set_amount(f.hmem, 1);
    if (below(5) == 0) jb.set_rule(AllocationRule::FillUp);
  }
  f.jobs = std::move(jb).build();
  return f;
}

DispatchResult dispatch_at(const PartFarm& f, const MatchOutcome& m, DispatchOptions::Parts parts, int threads) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
  tbb::task_arena arena(threads);
  DispatchResult r;
  DispatchOptions options;
  options.parts = parts;
  arena.execute(
      [&] { r = dispatch(f.cat, f.taskers, f.jobs, m.categories, m.eligible, kernels::active(), nullptr, options); });
  return r;
}

void expect_same(const DispatchResult& a, const DispatchResult& b, const std::string& ctx) {
  ASSERT_EQ(a.status, b.status) << ctx;
  ASSERT_EQ(a.tasker, b.tasker) << ctx;
  ASSERT_EQ(a.reason, b.reason) << ctx;
  ASSERT_EQ(a.alloc_first, b.alloc_first) << ctx;
  ASSERT_EQ(a.alloc_count, b.alloc_count) << ctx;
  ASSERT_EQ(a.allocations.size(), b.allocations.size()) << ctx;
  for (size_t i = 0; i < a.allocations.size(); ++i) {
    ASSERT_EQ(a.allocations[i].tasker, b.allocations[i].tasker) << ctx << " allocation " << i;
    ASSERT_EQ(a.allocations[i].slots, b.allocations[i].slots) << ctx << " allocation " << i;
  }
  ASSERT_EQ(a.removed, b.removed) << ctx;
  ASSERT_EQ(a.assigned, b.assigned) << ctx;
  ASSERT_EQ(a.pending, b.pending) << ctx;
  ASSERT_EQ(a.rejected, b.rejected) << ctx;
  for (size_t k = 0; k < a.capacity.consumables(); ++k) {
    ASSERT_EQ(a.capacity.queue_free(k), b.capacity.queue_free(k)) << ctx << " consumable " << k;
    ASSERT_EQ(a.capacity.host_free(k), b.capacity.host_free(k)) << ctx << " consumable " << k;
    const double ga = a.capacity.global_free(k), gb = b.capacity.global_free(k);
    ASSERT_TRUE(ga == gb || (ga != ga && gb != gb)) << ctx << " consumable " << k;
  }
}

// 1,000 random farms: the parallel dispatch at 1, 2 and 16 threads equals the one walk.
TEST(ParallelDispatch, SameResultAsOneWalkAtOneTwoAndSixteenThreads) {
  size_t split = 0, many = 0, assigned = 0, pending_capacity = 0, spread = 0;
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    const PartFarm f = random_farm(seed);
    const MatchOutcome m = f.match();
    const DispatchParts p = f.parts(m);
    split += p.count > 1;
    many += p.count > 4;
    const DispatchResult one_walk = dispatch_at(f, m, DispatchOptions::Parts::Never, 1);
    assigned += one_walk.assigned;
    for (const PendingReason r : one_walk.reason) pending_capacity += r == PendingReason::NoFreeCapacity;
    for (const uint32_t n : one_walk.alloc_count) spread += n > 1;
    for (const int threads : {1, 2, 16}) {
      expect_same(one_walk, dispatch_at(f, m, DispatchOptions::Parts::Always, threads),
                  fmt::format("seed {} threads {} parts {}", seed, threads, p.count));
      expect_same(one_walk, dispatch_at(f, m, DispatchOptions::Parts::Auto, threads),
                  fmt::format("seed {} threads {} parts {} (auto)", seed, threads, p.count));
    }
  }
  // The farms must split, fill and overflow, or equality proves little.
  EXPECT_GT(split, 300u);
  EXPECT_GT(many, 200u);
  EXPECT_GT(assigned, 20000u);
  EXPECT_GT(pending_capacity, 20000u);
  EXPECT_GT(spread, 500u) << "$fill_up jobs over several taskers";
}

}  // namespace
