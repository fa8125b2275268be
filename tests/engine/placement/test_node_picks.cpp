// Node picks (JobTable::NodePick; Slurm's required nodes: node counts in a constraint, -w below -N): the
// builder's checks, the categories they key, and what every placement with picks must hold. And the other
// per-job Slurm request the engine carries, a fallback request (JobTable::Fallback: --constraint after
// --prefer), as categories key it.
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engine/batch/dispatch.hpp"
#include "engine/batch/matcher.hpp"
#include "engine/match/categories.hpp"

using namespace colmatch;

namespace {

// A catalog of `slots` (an int consumable, the CPUs of a Slurm node) and `arch` (a string: its feature).
struct Farm {
  Catalog cat;
  uint32_t slots = 0, arch = 0;
  Farm() {
    auto add = [&](const char* name, AttrType type, bool consumable) {
      AttributeDef d;
      d.name = name;
      d.type = type;
      d.relop = type == AttrType::Int ? Relop::LE : Relop::EQ;
      d.consumable = consumable;
      return cat.add(d);
    };
    slots = add("slots", AttrType::Int, true);
    arch = add("arch", AttrType::String, false);
  }
};

TEST(NodePicks, BuilderRefusesBadListsAndCategoriesKeyThem) {
  Farm f;
  JobBuilder jb(f.cat);
  const uint32_t x = jb.intern_text("arch==x"), y = jb.intern_text("arch==y");
  jb.add("pe", "u", "g", 0, 0, 2);
  EXPECT_THROW(jb.set_node_picks({{{x}, 1, false}}), ValueError) << "not OnePerTasker";
  jb.set_rule(AllocationRule::OnePerTasker);
  EXPECT_THROW(jb.set_node_picks({}), ValueError);
  EXPECT_THROW(jb.set_node_picks({{{x}, 0, false}}), ValueError);
  EXPECT_THROW(jb.set_node_picks({{{}, 1, false}}), ValueError);
  EXPECT_THROW(jb.set_node_picks({{{99}, 1, false}}), ValueError);
  EXPECT_THROW(jb.set_node_picks({{{x}, 3, false}}), ValueError) << "more than the job's slots";
  EXPECT_THROW(jb.set_node_picks({{{x}, 2, true}, {{y}, 1, true}}), ValueError) << "apart: 3 of 2 slots";
  jb.set_node_picks({{{x}, 2, false}});
  for (const char* id : {"same", "other", "none"}) {
    jb.add(id, "u", "g", 0, 0, 2);
    jb.set_rule(AllocationRule::OnePerTasker);
    if (std::string(id) == "same") jb.set_node_picks({{{x}, 2, false}});
    if (std::string(id) == "other") jb.set_node_picks({{{y, x}, 1, true}, {{y}, 1, true}});
  }
  const JobTable jobs = std::move(jb).build();
  EXPECT_EQ(jobs.node_picks.size(), 2u) << "equal lists kept once";
  EXPECT_EQ(jobs.node_pick_of(0), jobs.node_pick_of(1));
  EXPECT_EQ(jobs.node_pick_of(3), kNone);
  const Categories cats = categorize(f.cat, jobs);
  EXPECT_EQ(cats.of_job[0], cats.of_job[1]);
  EXPECT_NE(cats.of_job[0], cats.of_job[2]);
  EXPECT_NE(cats.of_job[0], cats.of_job[3]) << "picks are part of the key";
  ASSERT_EQ(cats.node_picks_of(cats.of_job[2]).size(), 2u);
  const Categories::NodePick& first = cats.node_picks_of(cats.of_job[2])[0];
  EXPECT_EQ(first.tiers.size(), 2u);
  EXPECT_EQ(jobs.request_text[cats.request[first.all()]], jobs.request_text[x]);
  EXPECT_EQ(cats.job_count[first.all()], 0u) << "a pick's category has no job of its own";
  EXPECT_TRUE(cats.node_picks_of(cats.of_job[3]).empty());
}

TEST(Fallback, CategoriesKeyItAsAnotherRequestOfTheSameJob) {
  Farm f;
  JobBuilder jb(f.cat);
  for (const char* fallback : {"arch==y", "arch==y", "", "arch==z"}) {
    jb.add(fallback, "u", "g", 0, 0, 1);
    jb.set_request("arch==x");
    jb.set_amount(f.slots, 2);
    if (*fallback) jb.set_fallback(fallback, "");
  }
  EXPECT_THROW(jb.set_fallback("arch==", ""), RequestError);
  const JobTable jobs = std::move(jb).build();
  const Categories cats = categorize(f.cat, jobs);
  EXPECT_EQ(cats.of_job[0], cats.of_job[1]);
  EXPECT_NE(cats.of_job[0], cats.of_job[2]) << "the fallback is part of the key";
  EXPECT_NE(cats.of_job[0], cats.of_job[3]);
  EXPECT_EQ(cats.fallback_of(cats.of_job[2]), kNone);
  const uint32_t fb = cats.fallback_of(cats.of_job[0]);
  ASSERT_NE(fb, kNone);
  EXPECT_EQ(jobs.request_text[cats.request[fb]], jobs.request_text[jobs.fallback_of(0).request]);
  EXPECT_EQ(cats.unit_charge[fb][0], cats.unit_charge[cats.of_job[0]][0]) << "the same job's charges";
  EXPECT_EQ(cats.job_count[fb], 0u);
}

// Random farms of 8-40 taskers (arch x, y or z; 1-8 slots; weights 1 or 10, so runs of one weight) and jobs
// of 1-5 taskers with 1-2 picks; under ConsecutiveBestFit every placed job holds its picks: as many
// taskers as its slots, each once, at least each count of its pick's arch (apart picks of one arch
// together), every tasker eligible and no capacity overdrawn; a job whose pick has fewer taskers of its arch
// than it counts never runs (no eligible tasker).
TEST(NodePicks, EveryPlacementHoldsItsPicks) {
  std::mt19937 rng(2622);
  size_t placed = 0, never = 0, with_picks = 0;
  for (int round = 0; round < 300; ++round) {
    Farm f;
    TaskerBuilder tb(f.cat);
    const int n = 8 + static_cast<int>(rng() % 33);
    const char* arches[] = {"x", "y", "z"};
    std::vector<std::string> arch_of;
    for (int t = 0; t < n; ++t) {
      const std::string a = arches[rng() % 3];
      tb.add(fmt::format("t{:02}", t), rng() % 3 == 0 ? -10.0 : -1.0);
      tb.set(f.slots, std::to_string(1 + rng() % 8));
      tb.set(f.arch, a);
      arch_of.push_back(a);
    }
    const TaskerTable taskers = std::move(tb).build();
    JobBuilder jb(f.cat);
    struct Want {
      std::vector<std::pair<std::string, uint32_t>> picks;
      bool apart;
    };
    std::vector<Want> want;
    for (int j = 0; j < 12; ++j) {
      const uint32_t k = 1 + rng() % 5;
      jb.add(fmt::format("j{}", j), "u", "g", 0, j, k);
      jb.set_rule(AllocationRule::OnePerTasker);
      jb.set_amount(f.slots, 1 + rng() % 3);
      Want w{{}, rng() % 2 == 0};
      if (rng() % 4 != 0) {
        std::vector<JobTable::NodePick> list;
        uint32_t left = k;
        for (int p = 0; p < 2 && left > 0; ++p) {
          const std::string a = arches[rng() % 3];
          const uint32_t c = 1 + rng() % (w.apart ? left : k);
          if (!w.apart && p == 1) break;  // (one pick outside brackets, as the Slurm loader makes them)
          std::vector<uint32_t> tiers;
          if (w.apart && p == 1) tiers.push_back(jb.intern_text("arch==" + a + " && arch==" + w.picks[0].first));
          tiers.push_back(jb.intern_text("arch==" + a));
          list.push_back({tiers, c, w.apart});
          w.picks.emplace_back(a, c);
          left -= w.apart ? c : 0;
        }
        jb.set_node_picks(std::move(list));
        ++with_picks;
      }
      want.push_back(w);
    }
    const JobTable jobs = std::move(jb).build();
    DispatchOptions options;
    options.allocation = AllocationPolicy::ConsecutiveBestFit;
    options.fit_consumable = static_cast<size_t>(f.cat.consumable_slot(f.slots));
    const MatchOutcome m = run_match(f.cat, taskers, jobs, kernels::active(), {}, nullptr, options);
    for (uint32_t t = 0; t < taskers.size(); ++t)
      EXPECT_GE(m.dispatch.capacity.queue_free(options.fit_consumable)[t], 0.0);
    for (uint32_t j = 0; j < jobs.size(); ++j) {
      SCOPED_TRACE(fmt::format("round {} job {}", round, j));
      std::map<std::string, uint32_t> of_arch;
      for (const auto& [a, c] : want[j].picks) of_arch[a] = want[j].apart ? of_arch[a] + c : std::max(of_arch[a], c);
      bool possible = true;
      for (const auto& [a, c] : of_arch) {
        uint32_t have = 0;
        for (uint32_t t = 0; t < taskers.size(); ++t) have += arch_of[taskers.input_index[t]] == a ? 1 : 0;
        possible = possible && have >= c;
      }
      possible = possible && jobs.slots[j] <= taskers.size();
      if (!possible) {
        EXPECT_EQ(m.dispatch.status[j], JobStatus::Pending);
        EXPECT_EQ(m.dispatch.reason[j], PendingReason::NoEligibleTasker);
        ++never;
        continue;
      }
      if (m.dispatch.status[j] != JobStatus::Assigned) continue;
      ++placed;
      std::set<uint32_t> used;
      std::map<std::string, uint32_t> got;
      for (uint32_t a = 0; a < m.dispatch.alloc_count[j]; ++a) {
        const uint32_t t = m.dispatch.allocations[m.dispatch.alloc_first[j] + a].tasker;
        EXPECT_TRUE(used.insert(t).second) << "a tasker once";
        ++got[arch_of[taskers.input_index[t]]];
      }
      EXPECT_EQ(used.size(), jobs.slots[j]);
      for (const auto& [a, c] : of_arch) EXPECT_GE(got[a], c) << a;
    }
  }
  EXPECT_GT(placed, 1000u);
  EXPECT_GT(never, 50u);
  EXPECT_GT(with_picks, 2000u);
}

}  // namespace
