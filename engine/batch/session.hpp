// A run of several scheduling cycles over one farm, with Grid Engine's job-category result cache
// (seed 002, section 5 "Scheduler attribute matching" and "Result caching"): the eligibility of each
// job category (and its soft-violation tiers) is computed once and kept across cycles, keyed by the
// category's content; when a tasker's value changes, only that tasker's bit is re-decided in each
// cached category instead of invalidating the cache.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/batch/matcher.hpp"

namespace colmatch {

class MatchSession {
 public:
  /// Takes the farm; `catalog` must outlive the session.
  MatchSession(const Catalog& catalog, TaskerTable taskers, const kernels::KernelTable& k);

  const TaskerTable& taskers() const noexcept { return taskers_; }

  /// Sets tasker t's (rank order) queue-level value of `attr` from text, parsed by the attribute's type,
  /// and marks t for refresh. Throws ValueError for a value of the wrong type, or for an override the
  /// Grid Engine 6.0 rules forbid under GridEngineReading::Design60 (an ==/!= attribute the host or global
  /// level defines; an ordering relop value less restrictive than the host's or global one); 8.1.9 accepts it.
  void set_tasker_value(uint32_t t, uint32_t attr, std::string_view text);
  /// Removes tasker t's queue-level value of `attr` and marks t for refresh.
  void clear_tasker_value(uint32_t t, uint32_t attr);

  /// One scheduling cycle over `jobs`: categorize; refresh the bits of changed taskers in every cached
  /// category; evaluate only categories not seen before (in parallel, with evaluate_category, as
  /// run_match does); dispatch from the configured capacities (each cycle is a fresh batch:
  /// consumption does not carry over).
  MatchOutcome cycle(const JobTable& jobs);

  struct Stats {
    uint64_t evaluated = 0;       ///< categories evaluated over all taskers with kernels
    uint64_t reused = 0;          ///< categories served from the cache
    uint64_t refreshed_bits = 0;  ///< (cached category, changed tasker) pairs re-decided one by one
  };
  /// Cumulative over the session.
  const Stats& stats() const noexcept { return stats_; }

 private:
  struct Entry {
    Request request, soft;
    bool has_soft = false;
    ChargeVector need;
    std::vector<ChargeKind> kinds;
    CategoryEligibility result;
  };
  void mark_dirty(uint32_t t);

  const Catalog& catalog_;
  TaskerTable taskers_;
  const kernels::KernelTable& k_;
  std::unordered_map<std::string, Entry> cache_;
  std::vector<uint32_t> dirty_;
  std::vector<uint8_t> is_dirty_;
  Stats stats_;
};

}  // namespace colmatch
