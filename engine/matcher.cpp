#include "engine/matcher.hpp"

#include <chrono>

namespace colmatch {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

MatchOutcome run_match(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                       const kernels::KernelTable& k) {
  MatchOutcome out;
  out.isa = k.isa;
  auto t0 = std::chrono::steady_clock::now();
  out.categories = categorize(catalog, jobs);
  out.timings.categorize_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  out.eligible = compute_eligibility(catalog, taskers, jobs, out.categories, k);
  out.timings.eligibility_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  out.dispatch = dispatch(catalog, taskers, jobs, out.categories, out.eligible);
  out.timings.dispatch_s = seconds_since(t0);
  return out;
}

}  // namespace colmatch
