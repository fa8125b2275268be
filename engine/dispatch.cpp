#include "engine/dispatch.hpp"

#include <algorithm>
#include <limits>
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
                        const Categories& cats, const std::vector<kernels::TaskerSet>& eligible,
                        const std::vector<std::vector<kernels::TaskerSet>>* soft_tiers) {
  DispatchResult res;
  const size_t nj = jobs.size();
  res.status.assign(nj, JobStatus::Pending);
  res.tasker.assign(nj, kNone);
  res.reason.assign(nj, PendingReason::None);
  const auto& cons = catalog.consumables();
  res.free.resize(cons.size());
  res.free_host.resize(cons.size());
  res.free_global.resize(cons.size());
  for (size_t k = 0; k < cons.size(); ++k) {
    const Column& col = taskers.columns[cons[k]];
    res.free[k] = col.num;
    res.free_host[k] = col.by_host.num;
    res.free_global[k] = col.global_present ? col.global_num : std::numeric_limits<double>::quiet_NaN();
  }

  // Per category: the consumables it charges (need > 0), with the levels that hold pools.
  struct Charge {
    uint32_t k;
    double need;
    bool queue_only;  // no host or global pool: the common case, one comparison
  };
  std::vector<std::vector<Charge>> charges(cats.size());
  for (size_t c = 0; c < cats.size(); ++c)
    for (size_t k = 0; k < cons.size(); ++k)
      if (cats.need[c][k] > 0)
        charges[c].push_back({static_cast<uint32_t>(k), cats.need[c][k], !taskers.columns[cons[k]].multi_level()});
  // One cursor per category, or per (category, soft tier): tier v's taskers all have v violations.
  std::vector<std::vector<size_t>> cursor(cats.size());
  for (size_t c = 0; c < cats.size(); ++c) {
    const bool tiered = soft_tiers && !(*soft_tiers)[c].empty();
    cursor[c].assign(tiered ? (*soft_tiers)[c].size() : 1, 0);
  }

  auto fits = [&](const std::vector<Charge>& ch, size_t t) {
    for (const Charge& x : ch) {
      if (x.queue_only) {
        if (!(res.free[x.k][t] >= x.need)) return false;
        continue;
      }
      const Column& col = taskers.columns[cons[x.k]];
      if (col.has(static_cast<uint32_t>(t)) && !(res.free[x.k][t] >= x.need)) return false;
      const uint32_t h = taskers.host_of[t];
      if (h != kNone && col.by_host.has(h) && !(res.free_host[x.k][h] >= x.need)) return false;
      if (col.global_present && !(res.free_global[x.k] >= x.need)) return false;
    }
    return true;
  };
  auto take = [&](const std::vector<Charge>& ch, size_t t) {
    for (const Charge& x : ch) {
      const Column& col = taskers.columns[cons[x.k]];
      if (x.queue_only || col.has(static_cast<uint32_t>(t))) res.free[x.k][t] -= x.need;
      if (x.queue_only) continue;
      const uint32_t h = taskers.host_of[t];
      if (h != kNone && col.by_host.has(h)) res.free_host[x.k][h] -= x.need;
      if (col.global_present) res.free_global[x.k] -= x.need;
    }
  };

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
    const bool tiered = soft_tiers && !(*soft_tiers)[c].empty();
    size_t t = set.universe();
    for (size_t v = 0; v < cursor[c].size() && t >= set.universe(); ++v) {
      const kernels::TaskerSet& tier = tiered ? (*soft_tiers)[c][v] : set;
      size_t x = tier.next(cursor[c][v]);
      while (x < tier.universe() && !fits(ch, x)) x = tier.next(x + 1);
      cursor[c][v] = x;
      t = x;
    }
    if (t >= set.universe()) {
      res.reason[j] = PendingReason::NoFreeCapacity;
      ++res.pending;
      continue;
    }
    take(ch, t);
    res.status[j] = JobStatus::Assigned;
    res.tasker[j] = static_cast<uint32_t>(t);
    ++res.assigned;
  }
  return res;
}

}  // namespace colmatch
