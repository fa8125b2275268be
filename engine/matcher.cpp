#include "engine/matcher.hpp"

#include <chrono>

namespace colmatch {

MatchOutcome run_match(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                       const kernels::KernelTable& k) {
  MatchOutcome out;
  out.isa = k.isa;
  PhaseClock clock;
  out.categories = categorize(catalog, jobs);
  out.timings.categorize_s = clock.lap();
  out.eligible = compute_eligibility(catalog, taskers, jobs, out.categories, k);
  out.timings.eligibility_s = clock.lap();
  out.dispatch = dispatch(catalog, taskers, jobs, out.categories, out.eligible);
  out.timings.dispatch_s = clock.lap();
  return out;
}

}  // namespace colmatch
