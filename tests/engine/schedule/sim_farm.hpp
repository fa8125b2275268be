// Small farms and job lists for the simulation tests (tests/engine/schedule/): a farm of taskers with
// `slots` each, jobs written with designated initializers naming only what a test sets, and a run that
// passes every schedule through the independent checker.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "engine/model/catalog.hpp"
#include "engine/model/jobs.hpp"
#include "engine/model/taskers.hpp"
#include "engine/schedule/simulation.hpp"
#include "tests/engine/schedule/sim_checker.hpp"

namespace simtest {

using namespace colmatch;

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// A farm of taskers with `slots` each (power descending in input order) and a builder for jobs.
struct Farm {
  Catalog cat;
  uint32_t slots, arch;
  TaskerTable taskers;
  explicit Farm(std::vector<int> per_tasker, std::vector<double> power = {}) {
    slots = cat.add(consumable_attribute("slots", AttrType::Int));
    AttributeDef d;
    d.name = "arch";
    arch = cat.add(d);
    TaskerBuilder tb(cat);
    for (size_t i = 0; i < per_tasker.size(); ++i) {
      tb.add("t" + std::to_string(i), power.empty() ? 10.0 - static_cast<double>(i) : power[i]);
      tb.set_number(slots, per_tasker[i]);
      tb.set(arch, "x86");
    }
    taskers = std::move(tb).build();
  }
};

struct Job {
  std::string id;
  double submit = 0, runtime = 10, walltime = NAN;
  uint32_t slots = 1;
  double priority = 0;
  std::string user = "u", request, qos, account;
  double hold = -kInf;
  std::vector<std::string> depends;
  bool fill_up = false;
  double utilization = NAN;  // of its slots
};

inline JobTable make_jobs(const Catalog& cat, const std::vector<Job>& list) {
  JobBuilder jb(cat);
  for (const Job& j : list) {
    jb.add(j.id, j.user, "g", j.priority, j.submit, j.slots);
    if (!j.request.empty()) jb.set_request(j.request);
    jb.set_times(j.runtime, j.walltime);
    if (j.hold > -kInf) jb.set_hold(j.hold);
    if (!j.depends.empty()) jb.set_depends(j.depends);
    if (j.fill_up) jb.set_rule(AllocationRule::FillUp);
    if (!j.qos.empty() || !j.account.empty()) jb.set_credentials("", j.account, j.qos);
    if (!std::isnan(j.utilization)) jb.set_utilization(*cat.find("slots"), j.utilization);
  }
  return std::move(jb).build();
}

inline SimResult run(const Farm& f, const JobTable& jobs, const SimConfig& pol = {}) {
  SimResult r = simulate(f.cat, f.taskers, jobs, pol, kernels::active());
  EXPECT_EQ(simcheck::check_schedule(f.cat, f.taskers, jobs, pol, r), "");
  return r;
}

inline uint32_t index_of(const JobTable& jobs, const std::string& id) {
  for (uint32_t j = 0; j < jobs.size(); ++j)
    if (jobs.id[j] == id) return j;
  return kNone;
}

// Job j's allocations as (tasker, slots) pairs, as the naive simulator gives them.
inline std::vector<std::pair<uint32_t, uint32_t>> allocations_of(const SimResult& r, uint32_t j) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (uint32_t a = 0; a < r.alloc_count[j]; ++a)
    out.emplace_back(r.allocations[r.alloc_first[j] + a].tasker, r.allocations[r.alloc_first[j] + a].slots);
  return out;
}

}  // namespace simtest
