// Slurm's node selection for the Placer (AllocationPolicy::ConsecutiveBestFit): slurmctld 22.05.8's
// cons_tres _eval_nodes, as read in its source and checked job by job against the daemon (issue 26,
// datasets/slurm): of the nodes with room, the lowest weight (greatest power here: a Slurm node's power
// is -Weight); among them runs of nodes adjacent in Slurm's node table (name order); the run with the
// fewest free CPUs in sum, its node with the fewest. A job of -N K takes K nodes from the best runs.
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/dispatch.hpp"

namespace colmatch {

// Rows are in rank order (power descending, then input order), so taskers of one power are one stretch
// of rows, in input order: two are adjacent in Slurm's node table when they are adjacent rows with
// adjacent input indices and the same power (a row between them, eligible or not, breaks the run).
bool Placer::adjacent(size_t prev, size_t x) const noexcept {
  return x == prev + 1 && taskers_.input_index[x] == taskers_.input_index[prev] + 1 &&
         taskers_.power[x] == taskers_.power[prev];
}

double Placer::fit_free(uint32_t c, uint32_t t) const noexcept {
  double a = cap_.available(fit_, t);
  if (!(a >= 0)) a = 0;  // NaN: no pool of it here
  const JobTable::FitUnit u = cats_.fit_unit_of(c);
  if (u.fit <= 0) return a;
  // whole tasks of u.fit CPUs, as many as the free CPUs, the free memory (--mem-per-cpu) and the cap allow
  double tasks = std::floor(a / u.fit);
  if (u.limit > 0 && fit_limit_ != SIZE_MAX) {
    const double limit = cap_.available(fit_limit_, t);
    tasks = std::min(tasks, limit >= 0 ? std::floor(limit / u.limit) : 0.0);
  }
  return u.tasks > 0 ? std::min(tasks, u.tasks) : tasks;
}

size_t Placer::consecutive_best_fit(uint32_t c, const kernels::TaskerSet& tier, const std::vector<Charge>& ch) const {
  const size_t universe = tier.universe();
  size_t best = universe, run_best = universe, prev = universe;
  double best_sum = 0, run_sum = 0, run_best_free = 0;
  auto close_run = [&] {
    if (run_best < universe && (best == universe || run_sum < best_sum)) {
      best = run_best;
      best_sum = run_sum;
    }
    run_best = universe;
    run_sum = 0;
  };
  for (size_t x = tier.next(0); x < universe; x = tier.next(x + 1)) {
    if (prev < universe && taskers_.power[x] != taskers_.power[prev]) break;  // past the greatest power with room
    if (cap_.block_full(ch, x >> 6)) {
      x = (((x >> 6) + 1) << 6) - 1;
      continue;
    }
    const auto tx = static_cast<uint32_t>(x);
    if (!cap_.fits(ch, tx)) continue;
    if (prev == universe || !adjacent(prev, x)) close_run();
    const double free = fit_free(c, tx);
    run_sum += free;
    if (run_best == universe || free < run_best_free) {
      run_best = x;
      run_best_free = free;
    }
    prev = x;
  }
  close_run();
  return best;
}

bool Placer::place_consecutive(uint32_t j, uint32_t c, std::vector<Allocation>& out) {
  const PreferenceTiers tiers(elig(c));
  const size_t universe = tiers[0].universe();
  const uint32_t want = jobs_.slots[j];
  // kept across calls: no allocation per job
  std::vector<uint32_t>& taskers = scratch_.taskers;
  std::vector<uint32_t>& chosen = scratch_.chosen;
  std::vector<double>& free = scratch_.free;
  std::vector<ConsecutiveScratch::Run>& runs = scratch_.runs;
  for (size_t v = 0; v < tiers.size(); ++v) {
    taskers.clear();
    free.clear();
    runs.clear();
    chosen.clear();
    const kernels::TaskerSet& tier = tiers[v];
    for (size_t x = tier.next(0); x < universe; x = tier.next(x + 1)) {
      const auto tx = static_cast<uint32_t>(x);
      if (instances(c, tx, false, 1) == 0) continue;
      if (taskers.empty() || !adjacent(taskers.back(), x)) runs.push_back({taskers.size(), 0, 0, taskers_.power[x]});
      taskers.push_back(tx);
      free.push_back(fit_free(c, tx));
      runs.back().count += 1;
      runs.back().free += free.back();
    }
    if (taskers.size() < want) continue;
    uint32_t rem = want;
    while (rem > 0) {
      ConsecutiveScratch::Run* best = nullptr;
      bool best_sufficient = false;
      for (auto& r : runs) {
        if (r.count == 0) continue;
        const bool sufficient = r.count >= rem;
        bool better = best == nullptr || r.power > best->power;
        if (!better && r.power == best->power)
          better = (sufficient && !best_sufficient) || (sufficient && r.free < best->free) ||
                   (!sufficient && r.free > best->free);
        if (better) {
          best = &r;
          best_sufficient = sufficient;
        }
      }
      if (best == nullptr) break;
      if (rem == 1) {  // the best fit tasker of the run
        size_t pick = best->first;
        for (size_t i = best->first; i < best->first + best->count; ++i)
          if (free[i] < free[pick]) pick = i;
        chosen.push_back(taskers[pick]);
        rem = 0;
      } else {
        const size_t take = std::min<size_t>(rem, best->count);
        for (size_t i = best->first; i < best->first + take; ++i) chosen.push_back(taskers[i]);
        rem -= static_cast<uint32_t>(take);
      }
      best->count = 0;
    }
    if (rem > 0) continue;
    std::sort(chosen.begin(), chosen.end(),
              [&](uint32_t a, uint32_t b) { return taskers_.input_index[a] < taskers_.input_index[b]; });
    // each its slot in turn (a host or global pool may run short after some): all of them, or this tier
    // fails and its charges are undone (try_place's transaction holds nothing else yet)
    const size_t first = out.size();
    bool all = true;
    for (size_t i = 0; i < chosen.size() && all; ++i) {
      if (instances(c, chosen[i], i == 0, 1) == 0) {
        all = false;
        break;
      }
      cats_.each_allocation_charge(c, 1, i == 0, [&](uint32_t k, double amount) {
        if (amount > 0) cap_.take(ledger_, k, chosen[i], amount);
        return true;
      });
      out.push_back({chosen[i], 1});
    }
    if (all) return true;
    may_pass_ = true;
    out.resize(first);
    cap_.rollback(ledger_);
    cap_.begin(ledger_);
  }
  return false;
}

}  // namespace colmatch
