#include "engine/schedule/result.hpp"

#include <cmath>

namespace colmatch {

const char* sim_reason_text(SimReason r) noexcept {
  switch (r) {
    case SimReason::None: return "";
    case SimReason::NotSubmitted: return "not submitted before the end of the run";
    case SimReason::Held: return "held";
    case SimReason::Dependency: return "waiting for a dependency";
    case SimReason::NoEligibleTasker: return "no eligible tasker";
    case SimReason::TooLarge: return "larger than its eligible taskers together";
    case SimReason::Throttled: return "throttled";
    case SimReason::Blocked: return "waiting behind a higher-priority job";
    case SimReason::Reservation: return "would delay a reservation";
    case SimReason::NoFreeCapacity: return "eligible but no free capacity";
    case SimReason::PriorityGap: return "held by a priority gap";
    case SimReason::Rejected: return "rejected";
    case SimReason::Removed: return "removed";
  }
  return "";
}

double sim_duration(const JobTable& jobs, uint32_t j) noexcept {
  double d = jobs.runtime[j];
  if (!(d > 0)) d = 0;
  const double w = jobs.walltime[j];
  if (w >= 0 && w < d) d = w;  // ended at its walltime
  return d;
}

double sim_estimate(const JobTable& jobs, uint32_t j) noexcept {
  const double w = jobs.walltime[j];
  return w >= 0 ? w : sim_duration(jobs, j);
}

}  // namespace colmatch
