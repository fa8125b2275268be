// The reference simulator: deliberately naive. Every cycle re-scans the whole queue and decides each
// job's eligibility row by row (naive matcher), keeps its own pools, no categories, no bitsets, no
// cursors, no cache. Same rules as engine/schedule/simulation.hpp; the engine is compared against it.
#pragma once

#include "engine/schedule/simulation.hpp"
#include "tests/reference/naive_matcher.hpp"

namespace colmatch::naive {

struct SimOutcome {
  std::vector<double> start, end;                                       ///< NaN if never started
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> allocations;  ///< (tasker, slots)
  std::vector<SimReason> reason;
  std::vector<uint8_t> backfilled;
  std::vector<double> reserved_at;  ///< the first reservation's start, or NaN
};

/// O(cycles x jobs x taskers x request size). `farm`: taskers down at the start and farm events, applied
/// after a cycle's ends and before its submits; a down tasker is skipped as if not eligible; a
/// Configure adds (new - old) to the tasker's own pool, which may go below 0 (nothing fits there then).
SimOutcome simulate(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs, const SimConfig& policy,
                    const FarmEvents& farm = {});

/// FBSNG's rule Q2, queue by queue: a start from queue q; every queue rises by its QPI up to its QPmax, q
/// drops by its QPD, then all move together so that the one nearest its QPmin sits at it (each at most
/// its QPmax). `priority[i]`, `params[i]`: queue i's (qp_max resolved).
void fbsng_queue_started(std::vector<double>& priority, const std::vector<FbsngQueue>& params, uint32_t q);

}  // namespace colmatch::naive
