// The batch pipeline: categorize -> eligibility -> dispatch, with wall-clock time per phase.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "engine/batch/dispatch.hpp"
#include "engine/match/categories.hpp"
#include "engine/match/eligibility.hpp"

namespace colmatch {

struct MatchTimings {
  double categorize_s = 0, eligibility_s = 0, dispatch_s = 0;
  double total() const noexcept { return categorize_s + eligibility_s + dispatch_s; }
};

struct MatchOutcome {
  Categories categories;
  /// Per category: eligible taskers and, with soft requests, their tiers by violations.
  std::vector<CategoryEligibility> eligible;
  DispatchResult dispatch;
  MatchTimings timings;
  kernels::Isa isa = kernels::Isa::Scalar;
};

/// Times consecutive phases: lap() returns the seconds since construction or since the last lap().
class PhaseClock {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - t0_).count();
    t0_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

/// Runs the whole match from configured capacity with the kernels of `k` (the caller chooses them:
/// kernels::active() for the process default). The thread count is whatever oneTBB's arena allows
/// (set it with tbb::global_control around the call). Categories and eligibility are computed by the
/// same functions MatchSession uses (categorize, evaluate_category), so a batch match equals a
/// session's first cycle.
/// `beside_dispatch`, when given, runs as a oneTBB task while dispatch runs (whose walk of the largest
/// part of the batch is sequential): it gets the outcome with its categories and eligibility final and must not
/// read its dispatch (e.g. a writer formatting categories.csv). Its exception, if any, is rethrown once
/// dispatch is done.
/// `in_use` (optional): what the farm's running jobs hold, taken before dispatch (see dispatch()).
/// `options`: the dispatch's allocation policy and blocking queues (a format's, Dataset::dispatch).
MatchOutcome run_match(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                       const kernels::KernelTable& k,
                       const std::function<void(const MatchOutcome&)>& beside_dispatch = {},
                       const InUse* in_use = nullptr, const DispatchOptions& options = {});

}  // namespace colmatch
