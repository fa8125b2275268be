#include <functional>
// Grid Engine levels (seed 002, section 3 "Overriding attributes" and section 5): global -> host ->
// queue, override rules, fixed and load values, strict hierarchical matching, consumable pools.
#include <gtest/gtest.h>

#include "engine/batch/matcher.hpp"
#include "tests/reference/naive_matcher.hpp"

using namespace colmatch;

namespace {

const double GB = 1024.0 * 1024 * 1024;

struct LevelsFarm {
  Catalog cat;
  uint32_t mem_free, arch, cores, lic, slots;
  LevelsFarm() {
    AttributeDef d;
    d.name = "mem_free";
    d.type = AttrType::Memory;
    d.relop = Relop::LE;
    mem_free = cat.add(d);
    d = AttributeDef{};
    d.name = "arch";
    arch = cat.add(d);
    d.name = "cores";
    d.type = AttrType::Int;
    d.relop = Relop::LE;
    cores = cat.add(d);
    d.name = "lic";
    d.consumable = true;
    d.scope = ConsumeScope::PerJob;
    lic = cat.add(d);
    d.name = "slots";
    d.scope = ConsumeScope::PerSlot;
    slots = cat.add(d);
  }
  JobTable jobs(std::initializer_list<const char*> requests) const {
    JobBuilder jb(cat);
    int i = 0;
    for (const char* r : requests) {
      jb.add("j" + std::to_string(i), "u", "g", 0, i);
      jb.set_request(r);
      ++i;
    }
    return std::move(jb).build();
  }
};

// Levels as a type: the setters are the only way to write, and they keep values, both masks, the
// count of present rows and the column's "defined" mask consistent.
TEST(Levels, SettersKeepMasksConsistent) {
  LevelValues lv(130, true);
  EXPECT_FALSE(lv.any());
  lv.set(64, 2.5, 0);
  lv.set(64, 3.5, 0);  // again: still one row present
  lv.set(129, 1.0, 0);
  EXPECT_TRUE(lv.has(64) && lv.has(129) && !lv.has(0));
  EXPECT_EQ(lv.num(64), 3.5);
  for (size_t w = 0; w < lv.present().size(); ++w) {
    EXPECT_EQ(lv.present()[w] & lv.absent()[w], 0u) << w;
    EXPECT_EQ(lv.present()[w] | lv.absent()[w], w + 1 < lv.present().size() ? ~uint64_t{0} : (uint64_t{1} << 2) - 1)
        << "complementary, tail clear";
  }
  lv.clear(64);
  lv.clear(64);
  EXPECT_TRUE(lv.any());
  lv.clear(129);
  EXPECT_FALSE(lv.any());
  EXPECT_EQ(lv.num(64), 0.0);

  Column c(AttrType::Int, false, 3, 2);
  c.set_queue(0, 4, 0);
  EXPECT_EQ(c.defined()[0], 0b001u);
  LevelValues hosts(2, true);
  hosts.set(1, 8, 0);
  c.set_hosts(std::move(hosts), {kNone, 1, 1});
  EXPECT_EQ(c.defined()[0], 0b111u);
  EXPECT_EQ(c.host().num(2), 8);
  EXPECT_EQ(c.host_distinct(), (std::vector<double>{8}));
  c.clear_queue(0);
  EXPECT_EQ(c.defined()[0], 0b110u);
  c.set_global({true, 64, 0});
  EXPECT_EQ(c.defined()[0], 0b111u) << "a global value defines the attribute everywhere";
  EXPECT_TRUE(c.multi_level());
  EXPECT_FALSE(c.holds_at_every_level(1, [](double v, uint32_t) { return v <= 8; })) << "global 64 fails <= 8";
  c.set_global({});
  EXPECT_TRUE(c.holds_at_every_level(1, [](double v, uint32_t) { return v <= 8; }));
  EXPECT_FALSE(c.holds_at_every_level(0, [](double, uint32_t) { return true; })) << "no level defines it";
}

TEST(Levels, OverrideRuleInOnePlace) {
  EXPECT_FALSE(may_override(Relop::EQ, 1, UpperValue{false, 0, true})) << "== under a load value";
  EXPECT_FALSE(may_override(Relop::NE, 1, UpperValue{true, 1, false}));
  EXPECT_TRUE(may_override(Relop::EQ, 1, UpperValue{}));
  EXPECT_TRUE(may_override(Relop::LE, 4, UpperValue{true, 8, false}));
  EXPECT_FALSE(may_override(Relop::LE, 16, UpperValue{true, 8, false}));
  EXPECT_TRUE(may_override(Relop::GE, 16, UpperValue{true, 8, true}));
  EXPECT_TRUE(may_override(Relop::LT, 99, UpperValue{false, 0, true})) << "load values move: not compared";
}

// Seed 002, mem_free example: custom 1 GB / load 4 GB -> 1 GB; custom 1 GB / load 0.9 GB -> 0.9 GB.
TEST(SeedExamples, GridEngineMemFreeFixedAndLoadCombine) {
  LevelsFarm f;
  TaskerBuilder tb(f.cat);
  tb.set_global(f.slots, "100");  // a global slot pool, so that only mem_free decides
  const uint32_t a = tb.add_host("hostA"), b = tb.add_host("hostB");
  tb.set_host(a, f.mem_free, "1G");
  tb.set_host(a, f.mem_free, "4G", ValueKind::Load);
  tb.set_host(b, f.mem_free, "1G");
  tb.set_host(b, f.mem_free, "0.9G", ValueKind::Load);
  tb.add("q@hostA", 1, a);
  tb.add("q@hostB", 1, b);
  const TaskerTable t = std::move(tb).build();
  const Column& c = t.columns[f.mem_free];
  EXPECT_EQ(c.by_host().num(a), 1 * GB);
  EXPECT_EQ(c.by_host().num(b), 0.9 * GB);
  // A job asking mem_free=0.95G fits on hostA (1 GB), not on hostB (0.9 GB).
  const JobTable jobs = f.jobs({"mem_free=0.95G"});
  const auto m = run_match(f.cat, t, jobs, kernels::active());
  ASSERT_EQ(m.dispatch.status[0], JobStatus::Assigned);
  EXPECT_EQ(t.names[m.dispatch.tasker[0]], "q@hostA");
  EXPECT_EQ(m.eligible[0].eligible.count(), 1u);
}

void expect_override_error(const std::function<void(TaskerBuilder&, const LevelsFarm&)>& setup, const char* words) {
  LevelsFarm f;
  TaskerBuilder tb(f.cat);
  setup(tb, f);
  try {
    std::move(tb).build();
    FAIL() << "override accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(Levels, EqualityAttributesAreOverriddenOnlyOnTheSameLevel) {
  // Seed 002: "a load value arch on host level ... can override it in the host definition with another
  // value, but not in a queue."
  expect_override_error(
      [](TaskerBuilder& tb, const LevelsFarm& f) {
        const uint32_t h = tb.add_host("h1");
        tb.set_host(h, f.arch, "lx-amd64", ValueKind::Load);
        tb.add("q@h1", 1, h);
        tb.set(f.arch, "sol-sparc64");
      },
      "== and != attributes can be overridden only on the same level");
  expect_override_error(
      [](TaskerBuilder& tb, const LevelsFarm& f) {
        tb.set_global(f.arch, "lx-amd64");
        const uint32_t h = tb.add_host("h1");
        tb.set_host(h, f.arch, "lx-amd64");
      },
      "attribute 'arch' (relop ==): host 'h1' (lx-amd64) overrides the global value (lx-amd64)");
  // ... while on the same level, a fixed value overrides the load value.
  LevelsFarm f;
  TaskerBuilder tb(f.cat);
  const uint32_t h = tb.add_host("h1");
  tb.set_host(h, f.arch, "lx-amd64", ValueKind::Load);
  tb.set_host(h, f.arch, "lx-arm64");
  tb.add("q@h1", 1, h);
  const TaskerTable t = std::move(tb).build();
  EXPECT_EQ(t.columns[f.arch].dict.value(t.columns[f.arch].by_host().id(h)), "lx-arm64");
}

TEST(Levels, OrderingRelopsOverrideOnlyWithMoreRestrictiveValues) {
  expect_override_error(
      [](TaskerBuilder& tb, const LevelsFarm& f) {
        const uint32_t h = tb.add_host("h1");
        tb.set_host(h, f.cores, "8");
        tb.add("q@h1", 1, h);
        tb.set(f.cores, "16");  // cores has relop <=: a larger queue value is less restrictive
      },
      "tasker 'q@h1' (16) overrides host 'h1' (8); a lower level may only set a more restrictive value");
  LevelsFarm f;
  TaskerBuilder tb(f.cat);
  tb.set_global(f.cores, "64");
  const uint32_t h = tb.add_host("h1");
  tb.set_host(h, f.cores, "8");
  tb.add("q@h1", 1, h);
  tb.set(f.cores, "4");
  EXPECT_NO_THROW(std::move(tb).build());
}

TEST(Levels, MatchingIsStrictlyHierarchical) {
  LevelsFarm f;
  TaskerBuilder tb(f.cat);
  tb.set_global(f.cores, "64");
  tb.set_global(f.slots, "100");
  const uint32_t h1 = tb.add_host("h1"), h2 = tb.add_host("h2");
  tb.set_host(h1, f.cores, "8");
  tb.add("q@h1", 3, h1);
  tb.set(f.cores, "4");
  tb.add("q@h2", 2, h2);  // no host or queue value: the global one decides
  tb.add("other@h2", 1, h2);
  tb.set(f.cores, "2");
  const TaskerTable t = std::move(tb).build();
  const JobTable jobs = f.jobs({
      "cores>=4",  // global 64 ok; h1: 8 ok, queue 4 ok; q@h2: global only, ok; other@h2: queue 2 fails
      "cores<=4",  // the global level (64) fails first and rejects every tasker
      "cores>=8",  // q@h1's queue value 4 fails although its host has 8
      "!(cores>=100)",
  });
  const auto m = run_match(f.cat, t, jobs, kernels::active());
  auto names = [&](size_t c) {
    std::vector<std::string> out;
    for (uint32_t x : m.eligible[c].eligible.to_vector()) out.push_back(t.names[x]);
    return out;
  };
  EXPECT_EQ(names(m.categories.of_job[0]), (std::vector<std::string>{"q@h1", "q@h2"}));
  EXPECT_TRUE(names(m.categories.of_job[1]).empty());
  EXPECT_EQ(names(m.categories.of_job[2]), (std::vector<std::string>{"q@h2"}));
  EXPECT_EQ(names(m.categories.of_job[3]).size(), 3u);
  for (uint32_t j = 0; j < jobs.size(); ++j)
    for (uint32_t x = 0; x < t.size(); ++x)
      EXPECT_EQ(m.eligible[m.categories.of_job[j]].eligible.contains(x), naive::eligible(f.cat, t, jobs, x, j));
}

TEST(Levels, ConsumablePoolsOnEveryLevel) {
  LevelsFarm f;
  TaskerBuilder tb(f.cat);
  tb.set_global(f.lic, "2");  // two licences for the whole farm
  const uint32_t h = tb.add_host("h1");
  tb.set_host(h, f.slots, "3");  // three slots shared by the host's two queues
  tb.add("a@h1", 2, h);
  tb.set(f.slots, "2");
  tb.add("b@h1", 1, h);
  tb.set(f.slots, "2");
  const TaskerTable t = std::move(tb).build();
  JobBuilder jb(f.cat);
  for (int i = 0; i < 5; ++i) jb.add("s" + std::to_string(i), "u", "g", 0, i);
  jb.add("lic1", "u", "g", 0, 10);
  jb.set_amount(f.lic, 1);
  const JobTable jobs = std::move(jb).build();
  const auto m = run_match(f.cat, t, jobs, kernels::active());
  // slots: a@h1 takes 2 (its queue limit), b@h1 only 1 more (the host pool of 3), the rest pend.
  std::vector<std::string> where;
  for (uint32_t j = 0; j < 5; ++j) where.push_back(m.dispatch.tasker[j] == kNone ? "-" : t.names[m.dispatch.tasker[j]]);
  EXPECT_EQ(where, (std::vector<std::string>{"a@h1", "a@h1", "b@h1", "-", "-"}));
  EXPECT_EQ(m.dispatch.reason[3], PendingReason::NoFreeCapacity);
  EXPECT_EQ(m.dispatch.capacity.host_free(static_cast<size_t>(f.cat.consumable_slot(f.slots)))[h], 0);
  // the licence job needs a slot too: none left on h1
  EXPECT_EQ(m.dispatch.status[5], JobStatus::Pending);
  const auto ref = naive::run(f.cat, t, jobs);
  EXPECT_EQ(m.dispatch.tasker, ref.tasker);
  for (size_t k = 0; k < ref.free_host.size(); ++k) EXPECT_EQ(m.dispatch.capacity.host_free(k), ref.free_host[k]);
}

TEST(Levels, GlobalLicencePoolIsSharedByAllTaskers) {
  LevelsFarm f;
  TaskerBuilder tb(f.cat);
  tb.set_global(f.lic, "2");
  for (int i = 0; i < 3; ++i) {
    tb.add("q" + std::to_string(i), 3.0 - i);
    tb.set(f.slots, "8");
  }
  const TaskerTable t = std::move(tb).build();
  JobBuilder jb(f.cat);
  for (int i = 0; i < 3; ++i) {
    jb.add("lic" + std::to_string(i), "u", "g", 0, i, 4);  // per-job consumable: 1 licence whatever the slots
    jb.set_amount(f.lic, 1);
  }
  const JobTable jobs = std::move(jb).build();
  const auto m = run_match(f.cat, t, jobs, kernels::active());
  EXPECT_EQ(m.dispatch.status[0], JobStatus::Assigned);
  EXPECT_EQ(m.dispatch.status[1], JobStatus::Assigned);
  EXPECT_EQ(m.dispatch.reason[2], PendingReason::NoFreeCapacity);
  EXPECT_EQ(m.dispatch.capacity.global_free(static_cast<size_t>(f.cat.consumable_slot(f.lic))), 0);
}

// TaskerBuilder grows a column only when a tasker sets it (a farm of hundreds of attributes, most on
// few taskers, costs what its taskers set): values land on their own taskers, every other row of every
// column is absent, including attributes no tasker sets and taskers added after the last value; a
// value set before any tasker is refused.
TEST(TaskerColumns, ValuesSetOnFewTaskersLandOnTheirOwnRowsOnly) {
  Catalog cat;
  std::vector<uint32_t> attrs;
  for (int a = 0; a < 300; ++a) {
    AttributeDef d;
    d.name = "a" + std::to_string(a);
    d.type = a % 2 ? AttrType::Int : AttrType::String;
    attrs.push_back(cat.add(d));
  }
  TaskerBuilder tb(cat);
  EXPECT_THROW(tb.set(attrs[0], "x"), ValueError);
  const int n = 200;
  auto sets = [](int t, int a) { return a % 7 == t % 7 && a < 250; };  // attrs 250.. on none
  for (int t = 0; t < n; ++t) {
    tb.add("t" + std::to_string(t), 1000.0 - t);  // rank = input order
    for (int a = 0; a < 300; ++a)
      if (sets(t, a) && t < 190) tb.set(attrs[a], std::to_string(t * 1000 + a));  // the last 10 set none
  }
  const TaskerTable tt = std::move(tb).build();
  ASSERT_EQ(tt.size(), static_cast<size_t>(n));
  for (int a = 0; a < 300; ++a) {
    const Column& col = tt.columns[attrs[a]];
    for (int t = 0; t < n; ++t) {
      const bool want = sets(t, a) && t < 190;
      ASSERT_EQ(col.has(static_cast<uint32_t>(t)), want) << "attr " << a << " tasker " << t;
      if (!want) continue;
      if (a % 2) {
        ASSERT_EQ(col.queue().num(static_cast<uint32_t>(t)), t * 1000 + a);
      } else {
        ASSERT_EQ(col.dict.value(col.queue().id(static_cast<uint32_t>(t))), std::to_string(t * 1000 + a));
      }
    }
  }
}

}  // namespace
