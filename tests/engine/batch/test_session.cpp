// Grid Engine's category result cache across scheduling cycles (seed 002, section 5).
#include <random>

#include <gtest/gtest.h>

#include "datasets/synth/synthetic.hpp"
#include "engine/batch/session.hpp"

using namespace colmatch;

namespace {

void expect_same(const MatchOutcome& a, const MatchOutcome& b, const std::string& ctx) {
  ASSERT_EQ(a.eligible.size(), b.eligible.size()) << ctx;
  for (size_t c = 0; c < a.eligible.size(); ++c) {
    ASSERT_EQ(a.eligible[c].eligible.to_vector(), b.eligible[c].eligible.to_vector()) << ctx << " category " << c;
    ASSERT_EQ(a.eligible[c].tiers.size(), b.eligible[c].tiers.size()) << ctx << " category " << c;
    for (size_t v = 0; v < a.eligible[c].tiers.size(); ++v)
      ASSERT_EQ(a.eligible[c].tiers[v].to_vector(), b.eligible[c].tiers[v].to_vector()) << ctx << " tier " << v;
  }
  ASSERT_EQ(a.dispatch.tasker, b.dispatch.tasker) << ctx;
  ASSERT_EQ(a.dispatch.reason, b.dispatch.reason) << ctx;
}

loaders::Dataset farm(uint64_t seed, bool levels) {
  synth::SynthSpec s;
  s.taskers = 300;
  s.jobs = 400;
  s.categories = 60;
  s.seed = seed;
  s.levels = levels;
  s.soft = 0.4;
  s.fill_up = 0.2;
  return synth::generate(s);
}

TEST(CategoryCache, KnownCategoriesAreNotEvaluatedAgain) {
  const auto ds = farm(5, false);
  MatchSession session(ds.catalog, ds.taskers, kernels::active());
  const auto first = session.cycle(ds.jobs);
  const uint64_t cats = first.categories.size();
  EXPECT_EQ(session.stats().evaluated, cats);
  EXPECT_EQ(session.stats().reused, 0u);
  const auto second = session.cycle(ds.jobs);
  EXPECT_EQ(session.stats().evaluated, cats) << "nothing evaluated again";
  EXPECT_EQ(session.stats().reused, cats);
  expect_same(first, second, "second cycle");
  expect_same(first, run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active()), "against a fresh match");
}

TEST(CategoryCache, AChangedTaskerRefreshesOnlyItsOwnBit) {
  const auto ds = farm(6, false);
  MatchSession session(ds.catalog, ds.taskers, kernels::active());
  const auto first = session.cycle(ds.jobs);
  const uint64_t cats = first.categories.size();
  const uint32_t arch = *ds.catalog.find("arch"), speed = *ds.catalog.find("speed");
  session.set_tasker_value(7, arch, "sol-sparc64");
  session.set_tasker_value(7, speed, "0.5");
  session.clear_tasker_value(42, arch);
  const auto second = session.cycle(ds.jobs);
  EXPECT_EQ(session.stats().evaluated, cats) << "no category evaluated over all taskers again";
  EXPECT_EQ(session.stats().refreshed_bits, 2 * cats) << "two changed taskers x cached categories";
  expect_same(second, run_match(ds.catalog, session.taskers(), ds.jobs, kernels::active()), "after the change");
  bool changed = false;
  for (size_t c = 0; c < cats; ++c)
    changed = changed || first.eligible[c].eligible.to_vector() != second.eligible[c].eligible.to_vector();
  EXPECT_TRUE(changed) << "the changes must matter for the test to mean something";
}

TEST(CategoryCache, RandomChangesOverManyCyclesMatchFreshEvaluation) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const auto ds = farm(100 + seed, seed % 2 == 0);
    MatchSession session(ds.catalog, ds.taskers, kernels::active());
    std::mt19937_64 rng(seed);
    const char* strings[] = {"lx-amd64", "lx-arm64", "sol-sparc64", "none"};
    for (int cycle = 0; cycle < 4; ++cycle) {
      for (int change = 0; change < 5; ++change) {
        const uint32_t t = static_cast<uint32_t>(rng() % ds.taskers.size());
        const uint32_t a = static_cast<uint32_t>(rng() % ds.catalog.size());
        const AttributeDef& d = ds.catalog.at(a);
        try {
          if (rng() % 4 == 0) session.clear_tasker_value(t, a);
          else if (d.multi_valued) continue;
          else if (is_numeric(d.type))
            session.set_tasker_value(t, a, d.type == AttrType::Boolean ? "true" : std::to_string(rng() % 8));
          else session.set_tasker_value(t, a, strings[rng() % 4]);
        } catch (const ValueError&) {
          // an override the levels forbid: rejected, nothing changed
        }
      }
      const auto got = session.cycle(ds.jobs);
      expect_same(got, run_match(ds.catalog, session.taskers(), ds.jobs, kernels::active()),
                  "seed " + std::to_string(seed) + " cycle " + std::to_string(cycle));
    }
  }
}

TEST(CategoryCache, ForbiddenOverridesAreRejected) {
  Catalog cat;
  AttributeDef a;
  a.name = "arch";
  const uint32_t arch = cat.add(a);
  AttributeDef c;
  c.name = "cores";
  c.type = AttrType::Int;
  c.relop = Relop::LE;
  const uint32_t cores = cat.add(c);
  TaskerBuilder tb(cat);
  const uint32_t h = tb.add_host("h");
  tb.set_host(h, arch, "lx-amd64");
  tb.set_host(h, cores, "8");
  tb.add("q@h", 1, h);
  MatchSession session(cat, std::move(tb).build(), kernels::active());
  EXPECT_THROW(session.set_tasker_value(0, arch, "lx-arm64"), ValueError);
  EXPECT_THROW(session.set_tasker_value(0, cores, "16"), ValueError);
  EXPECT_NO_THROW(session.set_tasker_value(0, cores, "4"));
}

}  // namespace
