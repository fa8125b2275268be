// never_runnable (engine/batch/admission.hpp): whether a job could ever run on a farm as configured, each
// job alone on every tasker up and empty (Slurm's refusal at submit, job_mgr.c job_allocate).
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "engine/batch/admission.hpp"

using namespace colmatch;

namespace {

AttributeDef per_slot(const char* name) {
  AttributeDef d;
  d.name = name;
  d.type = AttrType::Int;
  d.relop = Relop::LE;
  d.consumable = true;
  d.scope = ConsumeScope::PerSlot;
  return d;
}

}  // namespace

// Three taskers of 16, 32 and 64 cpus, one of them "big". A job of 65 cpus is never eligible, nor one
// slot per tasker over four taskers, nor two small ones of 20; over three it places (the farm is empty,
// whatever runs now). Two taskers picked among the one big tasker: eligible, but no placement. None asks
// nothing; a rejected job is left out.
TEST(Admission, EligibleAndPlacedAloneOnTheFarmAsConfigured) {
  Catalog cat;
  const uint32_t cpus = cat.add(per_slot("cpus"));
  AttributeDef kind;
  kind.name = "kind";
  const uint32_t k = cat.add(kind);
  TaskerBuilder tb(cat);
  for (auto [name, c, what] : {std::tuple{"a", "16", "small"}, {"b", "32", "small"}, {"c", "64", "big"}}) {
    tb.add(name);
    tb.set(cpus, c);
    tb.set(k, what);
  }
  const TaskerTable t = std::move(tb).build();
  JobBuilder jb(cat);
  auto job = [&](const char* id, double need, uint32_t slots, AllocationRule rule, const char* request = "") {
    jb.add(id, "u", "g", 0, 0, slots);
    jb.set_amount(cpus, need);
    jb.set_rule(rule);
    if (*request) jb.set_request(request);
  };
  job("too-big", 65, 1, AllocationRule::PeSlots);                        // 0: no tasker holds it
  job("four-apart", 1, 4, AllocationRule::OnePerTasker);                 // 1: four taskers of three
  job("three-apart", 1, 3, AllocationRule::OnePerTasker);                // 2: one on each
  job("two-small", 20, 2, AllocationRule::OnePerTasker, "kind==small");  // 3: one small tasker holds 20
  job("too-big-unasked", 65, 1, AllocationRule::PeSlots);                // 4: not asked
  job("refused", 65, 1, AllocationRule::PeSlots);                        // 5: rejected already
  jb.reject(5, "refused by its loader");
  // 6: two taskers, both picked among the big ones (Slurm's `-N 2 -C big*2`): eligible, never placed
  job("two-big-picked", 1, 2, AllocationRule::OnePerTasker);
  jb.set_node_picks({JobTable::NodePick{{jb.intern_text("kind==big")}, 2}});
  const JobTable jobs = std::move(jb).build();
  const std::vector<EverCheck> placed(jobs.size(), EverCheck::Placed);
  std::vector<EverCheck> check = placed;
  check[4] = EverCheck::None;
  DispatchOptions options;
  EXPECT_EQ(never_runnable(cat, t, jobs, check, kernels::active(), options),
            (std::vector<uint8_t>{1, 1, 0, 1, 0, 0, 1}));
  // eligibility alone: a one-per-tasker job with fewer eligible taskers than slots has none (eligibility
  // says so); the 65-cpu ones none either
  const std::vector<EverCheck> eligible(jobs.size(), EverCheck::Eligible);
  EXPECT_EQ(never_runnable(cat, t, jobs, eligible, kernels::active(), options),
            (std::vector<uint8_t>{1, 1, 0, 1, 1, 0, 0}));
  // whatever the dispatch's policy, the same answer
  options.allocation = AllocationPolicy::BestFit;
  EXPECT_EQ(never_runnable(cat, t, jobs, placed, kernels::active(), options),
            (std::vector<uint8_t>{1, 1, 0, 1, 1, 0, 1}));
  EXPECT_THROW(never_runnable(cat, t, jobs, std::vector<EverCheck>(2), kernels::active(), options),
               std::invalid_argument);
}
