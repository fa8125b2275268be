#include "engine/batch/matcher.hpp"

#include <chrono>

#include <tbb/task_group.h>

namespace colmatch {

MatchOutcome run_match(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                       const kernels::KernelTable& k, const std::function<void(const MatchOutcome&)>& beside_dispatch,
                       const InUse* in_use, const DispatchOptions& options) {
  MatchOutcome out;
  out.isa = k.isa;
  PhaseClock clock;
  out.categories = categorize(catalog, jobs);
  out.timings.categorize_s = clock.lap();
  out.eligible = compute_eligibility(catalog, taskers, jobs, out.categories, k);
  out.timings.eligibility_s = clock.lap();
  // The task reads out's categories and eligibility only; dispatch writes a result of its own, moved
  // into `out` once the task is done. The group's destructor waits for the task should dispatch throw.
  tbb::task_group beside;
  if (beside_dispatch) beside.run([&] { beside_dispatch(out); });
  DispatchResult result = dispatch(catalog, taskers, jobs, out.categories, out.eligible, k, in_use, options);
  out.timings.dispatch_s = clock.lap();
  beside.wait();
  out.dispatch = std::move(result);
  return out;
}

}  // namespace colmatch
