// Random Grid Engine host rules for the differential tests of the batch dispatch
// (tests/engine/batch/test_differential.cpp) and the simulator (tests/engine/schedule/test_simulation.cpp):
// a host sort of Grid Engine's load formula, and per job a host rule (AllocationRule::HostPeSlots ...
// HostBlocks) with, for allocation_rule N, an N that divides its slots.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "engine/model/jobs.hpp"
#include "engine/model/taskers.hpp"

namespace colmatch::testing_support {

/// Job j (jobs.pe_shape sized to the jobs) gets a host rule, and for allocation_rule N an N dividing its slots;
/// on a fifth of the draws it keeps its rule (false).
inline bool draw_host_rule(JobTable& jobs, uint32_t j, std::mt19937_64& rng) {
  if (rng() % 5 == 0) return false;
  jobs.rule[j] = static_cast<AllocationRule>(static_cast<uint32_t>(AllocationRule::HostPeSlots) + rng() % 4);
  if (jobs.rule[j] == AllocationRule::HostBlocks) {
    std::vector<uint32_t> divisors;
    for (uint32_t d = 1; d <= jobs.slots[j]; ++d)
      if (jobs.slots[j] % d == 0) divisors.push_back(d);
    jobs.pe_shape[j].per_host = divisors[rng() % divisors.size()];
  }
  return true;
}

}  // namespace colmatch::testing_support
