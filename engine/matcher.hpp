// The batch pipeline: categorize -> eligibility -> dispatch, with wall-clock time per phase.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "engine/categories.hpp"
#include "engine/dispatch.hpp"
#include "engine/eligibility.hpp"

namespace colmatch {

struct MatchTimings {
  double categorize_s = 0, eligibility_s = 0, dispatch_s = 0;
  double total() const noexcept { return categorize_s + eligibility_s + dispatch_s; }
};

struct MatchOutcome {
  Categories categories;
  std::vector<kernels::TaskerSet> eligible;
  /// Per category with soft requests: eligible taskers by number of soft violations (see soft_tiers).
  std::vector<std::vector<kernels::TaskerSet>> soft_tiers;
  DispatchResult dispatch;
  MatchTimings timings;
  kernels::Isa isa = kernels::Isa::Scalar;
};

/// Seconds elapsed since t0 (phase timings).
double seconds_since(std::chrono::steady_clock::time_point t0);

/// Runs the whole match with the kernels of `k` (default: kernels::active()). The thread count is
/// whatever oneTBB's arena allows (set it with tbb::global_control around the call).
MatchOutcome run_match(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                       const kernels::KernelTable& k = kernels::active());

}  // namespace colmatch
