#include "engine/dispatch.hpp"

#include <algorithm>
#include <cmath>
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
  res.alloc_first.assign(nj, 0);
  res.alloc_count.assign(nj, 0);
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
  // Largest free amount per consumable in each block of 64 taskers (queue level): a cursor skips a
  // whole block where no tasker can take the charge. Exact: the maximum is one of the values.
  const size_t nblocks = kernels::words_for(taskers.size());
  std::vector<std::vector<double>> block_max(cons.size(), std::vector<double>(nblocks, 0.0));
  auto refresh_block = [&](size_t k, size_t b) {
    const size_t end = std::min(taskers.size(), (b + 1) * 64);
    double m = res.free[k][b * 64];
    for (size_t t = b * 64 + 1; t < end; ++t) m = std::max(m, res.free[k][t]);
    block_max[k][b] = m;
  };
  for (size_t k = 0; k < cons.size(); ++k)
    for (size_t b = 0; b < nblocks; ++b) refresh_block(k, b);
  // No tasker of block b can take charges `ch` (checked on queue-level pools only).
  auto block_full = [&](const auto& ch, size_t b) {
    for (const auto& x : ch)
      if (x.queue_only && !(block_max[x.k][b] >= x.need)) return true;
    return false;
  };

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
      if (x.queue_only || col.has(static_cast<uint32_t>(t))) {
        res.free[x.k][t] -= x.need;
        refresh_block(x.k, t >> 6);
      }
      if (x.queue_only) continue;
      const uint32_t h = taskers.host_of[t];
      if (h != kNone && col.by_host.has(h)) res.free_host[x.k][h] -= x.need;
      if (col.global_present) res.free_global[x.k] -= x.need;
    }
  };

  // --- $fill_up ------------------------------------------------------------------------------------
  // Free amount of consumable k for tasker t: the smallest pool over the levels that define it; NaN
  // when no level does.
  auto avail = [&](size_t k, size_t t) {
    const Column& col = taskers.columns[cons[k]];
    double a = std::numeric_limits<double>::quiet_NaN();
    auto low = [&](double v) { a = std::isnan(a) ? v : std::min(a, v); };
    if (col.has(static_cast<uint32_t>(t))) low(res.free[k][t]);
    const uint32_t h = taskers.host_of[t];
    if (h != kNone && col.by_host.has(h)) low(res.free_host[k][h]);
    if (col.global_present) low(res.free_global[k]);
    return a;
  };
  // How many slot instances of category c tasker t takes now (at most `want`); the master also pays
  // the per-job charges.
  auto instances = [&](uint32_t c, size_t t, bool master, uint32_t want) -> uint32_t {
    uint32_t n = want;
    for (size_t k = 0; k < cons.size(); ++k) {
      const double once = master ? cats.job_need[c][k] : 0.0, inst = cats.need[c][k];
      if (once <= 0 && inst <= 0) continue;
      const double a = avail(k, t) - once;
      if (!(a >= 0) || (inst > 0 && !(a >= inst))) return 0;
      if (inst <= 0) continue;
      double q = std::floor(a / inst);
      if (q * inst > a) q -= 1;  // guard against rounding up in the division
      n = static_cast<uint32_t>(std::min<double>(n, q));
    }
    return n;
  };
  std::vector<std::pair<double*, double>> undo;  // saved pool values: restoring them is exact
  std::vector<std::pair<size_t, size_t>> touched;  // (consumable, block) whose maxima must be refreshed
  auto charge = [&](size_t k, size_t t, double amount) {
    const Column& col = taskers.columns[cons[k]];
    auto sub = [&](double& v) {
      undo.emplace_back(&v, v);
      v -= amount;
    };
    if (col.has(static_cast<uint32_t>(t))) {
      sub(res.free[k][t]);
      touched.emplace_back(k, t >> 6);
    }
    const uint32_t h = taskers.host_of[t];
    if (h != kNone && col.by_host.has(h)) sub(res.free_host[k][h]);
    if (col.global_present) sub(res.free_global[k]);
  };
  // Places job j of category c; true when all its slots found room.
  auto fill_up = [&](uint32_t j, uint32_t c) {
    const bool tiered = soft_tiers && !(*soft_tiers)[c].empty();
    uint32_t remaining = jobs.slots[j];
    undo.clear();
    touched.clear();
    const size_t first = res.allocations.size();
    std::vector<std::pair<size_t, size_t>> advance;  // (tier, new cursor), kept only on success
    auto place = [&](size_t x, uint32_t n, bool master) {
      for (size_t k = 0; k < cons.size(); ++k) {
        const double amount = n * cats.need[c][k] + (master ? cats.job_need[c][k] : 0.0);
        if (amount > 0) charge(k, x, amount);
      }
      res.allocations.push_back({static_cast<uint32_t>(x), n});
      remaining -= n;
    };
    // 1. the master: the first tasker in preference order that also pays the per-job charges
    size_t master = eligible[c].universe();
    for (size_t v = 0; v < cursor[c].size() && master == eligible[c].universe(); ++v) {
      const kernels::TaskerSet& tier = tiered ? (*soft_tiers)[c][v] : eligible[c];
      for (size_t x = tier.next(cursor[c][v]); x < tier.universe(); x = tier.next(x + 1))
        if (const uint32_t n = instances(c, x, true, remaining)) {
          place(x, n, true);
          master = x;
          break;
        }
    }
    // 2. the other slots, filling the remaining taskers in preference order
    for (size_t v = 0; v < cursor[c].size() && remaining > 0 && master != eligible[c].universe(); ++v) {
      const kernels::TaskerSet& tier = tiered ? (*soft_tiers)[c][v] : eligible[c];
      bool prefix = true;
      for (size_t x = tier.next(cursor[c][v]); x < tier.universe() && remaining > 0; x = tier.next(x + 1)) {
        if (x == master) {
          prefix = false;
          continue;
        }
        const uint32_t n = instances(c, x, false, remaining);
        if (n == 0) {
          if (prefix) advance.emplace_back(v, x + 1);  // no room for one instance now, nor ever after
          continue;
        }
        prefix = false;
        place(x, n, false);
      }
    }
    if (remaining > 0) {
      // block maxima were not lowered by the tentative charges, so they are still right
      for (auto it = undo.rbegin(); it != undo.rend(); ++it) *it->first = it->second;
      res.allocations.resize(first);
      // capacity only shrinks and the category's jobs are alike: later ones cannot fit either
      for (auto& cur : cursor[c]) cur = eligible[c].universe();
      return false;
    }
    // A block maximum above the truth only costs a skip missed, never a wrong skip; refresh them now.
    for (const auto& [k, b] : touched) refresh_block(k, b);
    for (const auto& [v, cur] : advance) cursor[c][v] = std::max(cursor[c][v], cur);
    res.alloc_first[j] = static_cast<uint32_t>(first);
    res.alloc_count[j] = static_cast<uint32_t>(res.allocations.size() - first);
    res.tasker[j] = res.allocations[first].tasker;
    return true;
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
    if (cats.fill_up[c]) {
      if (fill_up(j, c)) {
        res.status[j] = JobStatus::Assigned;
        ++res.assigned;
      } else {
        res.reason[j] = PendingReason::NoFreeCapacity;
        ++res.pending;
      }
      continue;
    }
    const auto& ch = charges[c];
    const bool tiered = soft_tiers && !(*soft_tiers)[c].empty();
    size_t t = set.universe();
    for (size_t v = 0; v < cursor[c].size() && t >= set.universe(); ++v) {
      const kernels::TaskerSet& tier = tiered ? (*soft_tiers)[c][v] : set;
      size_t x = tier.next(cursor[c][v]);
      while (x < tier.universe()) {
        if (block_full(ch, x >> 6)) {
          x = tier.next(((x >> 6) + 1) << 6);
          continue;
        }
        if (fits(ch, x)) break;
        x = tier.next(x + 1);
      }
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
    res.alloc_first[j] = static_cast<uint32_t>(res.allocations.size());
    res.alloc_count[j] = 1;
    res.allocations.push_back({static_cast<uint32_t>(t), jobs.slots[j]});
    ++res.assigned;
  }
  return res;
}

}  // namespace colmatch
