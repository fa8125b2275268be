#include "engine/dispatch.hpp"

#include <algorithm>
#include <numeric>

namespace colmatch {

const char* reason_text(PendingReason r) noexcept {
  switch (r) {
    case PendingReason::None: return "";
    case PendingReason::NoEligibleTasker: return "no eligible tasker";
    case PendingReason::NoFreeCapacity: return "eligible but no free capacity";
  }
  return "";
}

std::vector<uint32_t> dispatch_order(const JobTable& jobs) {
  std::vector<uint32_t> order;
  order.reserve(jobs.size());
  for (uint32_t j = 0; j < jobs.size(); ++j)
    if (!jobs.rejected(j)) order.push_back(j);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (jobs.priority[a] != jobs.priority[b]) return jobs.priority[a] > jobs.priority[b];
    return jobs.submit[a] < jobs.submit[b];
  });
  return order;
}

DispatchResult dispatch(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                        const Categories& cats, const std::vector<kernels::TaskerSet>& eligible) {
  DispatchResult res;
  const size_t nj = jobs.size();
  res.status.assign(nj, JobStatus::Pending);
  res.tasker.assign(nj, kNone);
  res.reason.assign(nj, PendingReason::None);
  const auto& cons = catalog.consumables();
  res.free.resize(cons.size());
  for (size_t k = 0; k < cons.size(); ++k) res.free[k] = taskers.columns[cons[k]].num;

  // Per category: the consumables it charges (need > 0), and its cursor.
  std::vector<std::vector<std::pair<uint32_t, double>>> charges(cats.size());
  for (size_t c = 0; c < cats.size(); ++c)
    for (size_t k = 0; k < cons.size(); ++k)
      if (cats.need[c][k] > 0) charges[c].emplace_back(static_cast<uint32_t>(k), cats.need[c][k]);
  std::vector<size_t> cursor(cats.size(), 0);

  for (uint32_t j = 0; j < nj; ++j)
    if (jobs.rejected(j)) {
      res.status[j] = JobStatus::Rejected;
      ++res.rejected;
    }

  for (const uint32_t j : dispatch_order(jobs)) {
    const uint32_t c = cats.of_job[j];
    const kernels::TaskerSet& set = eligible[c];
    if (set.count() == 0) {
      res.reason[j] = PendingReason::NoEligibleTasker;
      ++res.pending;
      continue;
    }
    const auto& ch = charges[c];
    size_t t = set.next(cursor[c]);
    for (; t < set.universe(); t = set.next(t + 1)) {
      bool fits = true;
      for (const auto& [k, need] : ch)
        if (!(res.free[k][t] >= need)) {
          fits = false;
          break;
        }
      if (fits) break;
    }
    cursor[c] = t;
    if (t >= set.universe()) {
      res.reason[j] = PendingReason::NoFreeCapacity;
      ++res.pending;
      continue;
    }
    for (const auto& [k, need] : ch) res.free[k][t] -= need;
    res.status[j] = JobStatus::Assigned;
    res.tasker[j] = static_cast<uint32_t>(t);
    ++res.assigned;
  }
  return res;
}

}  // namespace colmatch
