// Eligibility of job categories over taskers: a chain of column kernels per category, combined
// with bitmask algebra, giving one TaskerSet per category. Categories are evaluated in parallel
// (oneTBB); the result does not depend on the number of threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/match/categories.hpp"
#include "engine/model/jobs.hpp"
#include "engine/model/taskers.hpp"
#include "kernels/kernels.hpp"
#include "kernels/tasker_set.hpp"

namespace colmatch {

/// One step of a category's eligibility chain, with its counts (why a job has no eligible tasker: the
/// first step that leaves none). The steps are the terms of the request's top-level AND (the whole
/// request when it is not an AND), in evaluation order, then one capacity step per consumable the
/// category charges (configured capacity >= the charge).
struct EligibilityStep {
  int32_t term = -1;        ///< index into the request's top-level AND terms; -1: the whole request
  int32_t consumable = -1;  ///< capacity step: index in catalog.consumables(); -1: a request step
  uint64_t pass = 0;        ///< taskers passing this step alone
  uint64_t after = 0;       ///< taskers passing it and every step before it
  /// Forced step (Son of Grid Engine 8.1.9): a FORCED attribute the category does not request, whose
  /// taskers it may not use; -1: not a forced step.
  int32_t forced = -1;
  /// A capacity step's kind (ChargeKind): a default charge where defined, or a requested 0.
  ChargeKind kind = ChargeKind::Everywhere;
};

/// The FORCED attributes a job category does not request (mentioned neither in its request nor, for a
/// consumable, charged), under GridEngineReading::SoGE819: SGE 8.1.9 does not refuse such a job, it
/// keeps it off every tasker where the attribute is defined on some level ("does not request 'forced'
/// resource"). Empty under Design60, where the job is rejected instead (JobBuilder).
std::vector<uint32_t> unrequested_forced(const Catalog& catalog, const Request& request, const ChargeVector& need);

/// The match result of one job category: its eligible taskers, for a category with soft requests and
/// some eligible tasker those taskers by number of soft violations (soft_tiers; else empty), and the
/// counts of each step of its eligibility chain (two popcounts a step on masks the evaluation builds).
struct CategoryEligibility {
  kernels::TaskerSet eligible;
  std::vector<kernels::TaskerSet> tiers;
  std::vector<EligibilityStep> steps;
};

/// One Grid Engine level's part in a step (seed 002, strict hierarchical matching: a tasker passes a
/// clause only if every level that defines the attribute for it satisfies the clause).
struct LevelCount {
  const char* level;     ///< "global", "host" or "queue"
  uint64_t defined = 0;  ///< taskers the level gives a value (global: every tasker)
  uint64_t pass = 0;     ///< of those, the taskers whose value at this level satisfies the clause
};

/// Per level, for a step that is one clause (or a capacity step) on an attribute with values on the
/// host or global level: which level decides (colmatch explain). Empty for any other step, and for an
/// attribute that only the queue level defines. O(taskers) row by row: explain runs it on demand,
/// never the match.
std::vector<LevelCount> step_level_counts(const Catalog& catalog, const TaskerTable& taskers, const Request& request,
                                          const ChargeVector& need, const EligibilityStep& step);

/// Writes into `out` (words_for(taskers.size()) words) the taskers that satisfy `request` and whose
/// configured capacity of every consumable k with need[k] > 0 is defined and >= need[k].
/// String patterns and value lists are evaluated once per distinct dictionary value, then expanded to
/// taskers with the lookup kernel. Thread-safe; allocates scratch per call.
/// `kinds` (Categories::charge_kind; nullptr or empty: all Everywhere) relaxes a default charge to the
/// taskers that define the consumable (WhereDefined) and turns a requested 0 into "defined"
/// (DefinedOnly), as Son of Grid Engine 8.1.9 does.
void eligible_words(const Catalog& catalog, const TaskerTable& taskers, const Request& request,
                    const ChargeVector& need, const kernels::KernelTable& k, uint64_t* out,
                    std::vector<EligibilityStep>* steps = nullptr, const std::vector<ChargeKind>* kinds = nullptr);

/// Eligibility of one tasker row, by the same rules as eligible_words (used to refresh one bit of a
/// cached category when the tasker changes). O(request size); no kernels.
bool tasker_eligible(const Catalog& catalog, const TaskerTable& taskers, const Request& request,
                     const ChargeVector& need, uint32_t t, const std::vector<ChargeKind>* kinds = nullptr);

/// Number of `soft`'s requests tasker t violates. O(soft request size); no kernels.
size_t soft_violations(const TaskerTable& taskers, const Request& soft, uint32_t t);

/// Soft violations (Grid Engine soft requests, seed 002 "Result caching"): splits the taskers of
/// `eligible` (words_for(taskers.size()) words) by how many of `soft`'s requests they violate:
/// result[v] holds the eligible taskers violating exactly v of them (v = 0..number of soft requests).
/// Counted with a 4-plane bit-sliced adder over the soft requests' masks, once per category.
std::vector<kernels::TaskerSet> soft_tiers(const TaskerTable& taskers, const Request& soft, const uint64_t* eligible,
                                           const kernels::KernelTable& k);

/// Evaluates one category (hard request, soft requests or nullptr, consumable charges in
/// catalog.consumables() order) over all taskers with the kernels of `k`. The one evaluation used by
/// the batch match and by MatchSession's cache. Thread-safe; allocates.
CategoryEligibility evaluate_category(const Catalog& catalog, const TaskerTable& taskers, const Request& request,
                                      const Request* soft, const ChargeVector& need, const kernels::KernelTable& k,
                                      const std::vector<ChargeKind>* kinds = nullptr);

/// Re-decides tasker t's bit in an evaluated category (and its soft tier) after the tasker changed.
/// O(request size).
void refresh_tasker(const Catalog& catalog, const TaskerTable& taskers, const Request& request, const Request* soft,
                    const ChargeVector& need, uint32_t t, CategoryEligibility& e,
                    const std::vector<ChargeKind>* kinds = nullptr);

/// A $fill_up or OnePerTasker category whose per-job charges (Categories::master_charge) fit no eligible tasker
/// together with one slot instance can never start: its master has nowhere to go. Son of Grid Engine 8.1.9 refuses such
/// a job (qsub -w v, e.g. `-pe mpi 4 -l lic=11` with a per-job lic of 10 on the global level;
/// datasets/sge/farm80-answers.tsv.gz). Clears `e` (eligible set and soft tiers) then; else leaves it. O(eligible
/// taskers x request size) when no master fits, O(1) for other categories. A OnePerTasker category with fewer eligible
/// taskers than its slots is cleared too (one slot a tasker: never runs).
void require_master_fit(const Catalog& catalog, const TaskerTable& taskers, const Request& request,
                        const Categories& cats, uint32_t c, CategoryEligibility& e);

/// A category whose jobs choose among solutions (Categories::solutions; Altair Accelerator, seed 000):
/// its eligible taskers become those of its solutions together (its own request, what they ask
/// together, cannot say that a solution holds more units of a counted map than exist). The solutions'
/// eligibility must be computed. O(taskers / 64 + their eligible taskers). No-op for any other category.
void unite_solutions(const Categories& cats, uint32_t c, std::vector<CategoryEligibility>& eligible);

/// Evaluates every category in parallel (oneTBB); one result per category, in category order. The
/// result does not depend on the thread count, and equals evaluate_category's for each category: a
/// clause's mask depends on the clause and the taskers only, so each thread computes a clause once and
/// copies its mask for the later categories that ask it (up to 64 MiB of masks a thread).
std::vector<CategoryEligibility> compute_eligibility(const Catalog& catalog, const TaskerTable& taskers,
                                                     const JobTable& jobs, const Categories& cats,
                                                     const kernels::KernelTable& k);

}  // namespace colmatch
