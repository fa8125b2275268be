// Job categories (Grid Engine 6 "job categories", seed 002 section 5; DIRAC submit pools, seed 003):
// jobs with the same canonical hard and soft requests, the same slot count and the same consumable charges
// select the same taskers and fit the same free capacities, so eligibility is computed once per
// category and the dispatch cursor of a category is shared by its jobs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/columns.hpp"

namespace colmatch {

/// How a category's charge of one consumable binds (Son of Grid Engine 8.1.9; issue 8, classes 6, 7).
enum class ChargeKind : uint8_t {
  Everywhere = 0,    ///< requested (or any charge under 6.0-design): the tasker must define it, with room
  WhereDefined = 1,  ///< the catalog default, not requested: charged only on taskers that define the
                     ///< consumable on some level; taskers without it stay eligible and are not charged
  DefinedOnly = 2,   ///< requested as 0: nothing charged, but the tasker must define it on some level
};

/// The charge kinds of one job (one per consumable) under the catalog's reading; all Everywhere (and
/// `out` left empty) under GridEngineReading::Design60 or when every kind is Everywhere.
void job_charge_kinds(const Catalog& catalog, const JobTable& jobs, uint32_t j, std::vector<ChargeKind>& out);

struct Categories {
  std::vector<uint32_t> of_job;      ///< category of each job; kNone for rejected jobs
  std::vector<uint32_t> request;     ///< per category: index into JobTable::requests
  std::vector<uint32_t> soft;        ///< per category: soft requests (index, 0 = none)
  std::vector<uint32_t> slots;       ///< per category: slots each job asks for
  std::vector<AllocationRule> rule;  ///< per category: allocation rule
  /// per category, per consumable (catalog.consumables() order): what one unit of placement takes: for
  /// $pe_slots the whole job on the tasker it runs on (per-slot amounts times slots); for $fill_up one
  /// slot instance (per-slot amounts, 1 of "slots"). 0 when it takes none. Eligibility requires this
  /// much configured capacity.
  std::vector<std::vector<double>> unit_charge;
  /// per category, per consumable: for $fill_up, the per-job amounts taken once on the first (master)
  /// tasker of the job; empty for $pe_slots (they are in `unit_charge`).
  std::vector<std::vector<double>> master_charge;
  /// per category, per consumable: how its charge binds (job_charge_kinds); empty = all Everywhere.
  std::vector<std::vector<ChargeKind>> charge_kind;
  std::vector<uint64_t> hash;  ///< per category: 64-bit FNV-1a of its canonical content
  /// per category: its content (canonical hard and soft request texts, slots, rule, charges) as bytes,
  /// independent of any job table's numbering: the key of MatchSession's cache across cycles.
  std::vector<std::string> key;
  std::vector<uint32_t> job_count;  ///< per category: number of jobs
  /// per category: the JobTable::choices index of a category whose jobs choose among solutions when
  /// dispatched, else kNone (Altair Accelerator, seed 000; issue 27).
  std::vector<uint32_t> choice;
  /// per category: its solutions' categories, in the choice's order (empty unless it chooses). They
  /// come after every job's category and may have no job of their own.
  std::vector<std::vector<uint32_t>> solutions;

  /// Category c's jobs choose among solutions (it has a JobTable::Choice; a gated one may have none).
  bool chooses(size_t c) const noexcept { return c < choice.size() && choice[c] != kNone; }

  size_t size() const noexcept { return request.size(); }

  /// What one allocation of a job of category c takes of consumable k: for $pe_slots its unit charge;
  /// for $fill_up `slots_here` slot instances, plus the per-job charge on its first (master) allocation.
  double allocation_charge(uint32_t c, size_t k, uint32_t slots_here, bool master) const noexcept {
    return rule[c] == AllocationRule::FillUp ? slots_here * unit_charge[c][k] + (master ? master_charge[c][k] : 0.0)
                                             : unit_charge[c][k];
  }
  /// What a job of category c asking `job_slots` slots takes of consumable k over all its allocations.
  double job_charge(uint32_t c, size_t k, uint32_t job_slots) const noexcept {
    return allocation_charge(c, k, job_slots, true);
  }
};

/// The choice with a gate (JobTable::Choice::gate) that category c's jobs follow, or nullptr.
inline const JobTable::Choice* gate_of(const Categories& cats, const JobTable& jobs, size_t c) noexcept {
  if (!cats.chooses(c)) return nullptr;
  const JobTable::Choice& ch = jobs.choices[cats.choice[c]];
  return ch.outcome.empty() ? nullptr : &ch;
}

/// The unit charges of category c's solutions (Categories::solutions), in order; empty unless it chooses.
inline std::vector<std::vector<double>> solutions_need(const Categories& cats, size_t c) {
  std::vector<std::vector<double>> out;
  if (c < cats.solutions.size())
    for (const uint32_t s : cats.solutions[c]) out.push_back(cats.unit_charge[s]);
  return out;
}

/// 64-bit FNV-1a of `data`, continuing from `h` (the hash of the canonical requirements names a
/// DIRAC submit pool, seed 003; colmatch also names job categories with it).
uint64_t fnv1a(std::string_view data, uint64_t h = 14695981039346656037ULL) noexcept;

/// The charge of one job: per-slot amounts x slots, per-job amounts once; a consumable the job does not
/// request charges its catalog default (or 0); a consumable named "slots" charges the slot count.
/// `out` gets one value per consumable.
void job_need(const Catalog& catalog, const JobTable& jobs, uint32_t j, std::vector<double>& out);

/// The charges of one $fill_up job: per slot instance (per-slot amounts, 1 of "slots") and once per
/// job on its master tasker (per-job amounts, defaults applied).
void fill_up_need(const Catalog& catalog, const JobTable& jobs, uint32_t j, std::vector<double>& per_instance,
                  std::vector<double>& per_job);

/// Groups the non-rejected jobs into categories, numbered in order of first appearance.
/// O(jobs x consumables); allocates.
Categories categorize(const Catalog& catalog, const JobTable& jobs);

}  // namespace colmatch
