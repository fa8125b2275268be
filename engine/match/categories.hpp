// Job categories (Grid Engine 6 "job categories", seed 002 section 5; DIRAC submit pools, seed 003):
// jobs with the same canonical hard and soft requests, the same slot count and the same consumable charges
// select the same taskers and fit the same free capacities, so eligibility is computed once per
// category and the dispatch cursor of a category is shared by its jobs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/charges.hpp"
#include "engine/model/jobs.hpp"

namespace colmatch {

/// How a category's charge of one consumable binds (Son of Grid Engine 8.1.9; issue 8, classes 6, 7).
enum class ChargeKind : uint8_t {
  Everywhere = 0,    ///< requested (or any charge under 6.0-design): the tasker must define it, with room
  WhereDefined = 1,  ///< the catalog default, not requested: charged only on taskers that define the
                     ///< consumable on some level; taskers without it stay eligible and are not charged
  DefinedOnly = 2,   ///< requested as 0: nothing charged, but the tasker must define it on some level
};

struct Categories {
  std::vector<uint32_t> of_job;      ///< category of each job; kNone for rejected jobs
  std::vector<uint32_t> request;     ///< per category: index into JobTable::requests
  std::vector<uint32_t> soft;        ///< per category: soft requests (index, 0 = none)
  std::vector<uint32_t> slots;       ///< per category: slots each job asks for
  std::vector<AllocationRule> rule;  ///< per category: allocation rule
  /// per category, per consumable (catalog.consumables() order, sparse): what one unit of placement
  /// takes: for $pe_slots the whole job on the tasker it runs on (per-slot amounts times slots); for
  /// $fill_up one slot instance (per-slot amounts, 1 of "slots"). 0 when it takes none. Eligibility
  /// requires this much configured capacity.
  std::vector<ChargeVector> unit_charge;
  /// per category, per consumable (sparse): for $fill_up, the per-job amounts taken once on the first
  /// (master) tasker of the job; empty for $pe_slots (they are in `unit_charge`).
  std::vector<ChargeVector> master_charge;
  /// per category, per consumable: how its charge binds under Son of Grid Engine 8.1.9 (a requested 0,
  /// an unrequested default); empty = all Everywhere (every category of a farm without defaults).
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

  /// One of a category's Slurm node picks (JobTable::NodePick): `tiers` are the categories of its requests in
  /// order (each one slot of the picking category's charges, no job of its own), whose eligible taskers it
  /// tries in turn; the last is every tasker it may pick.
  struct NodePick {
    std::vector<uint32_t> tiers;
    uint32_t count = 1;
    bool apart = false;
    uint32_t all() const noexcept { return tiers.back(); }
  };
  /// per category, up to the last that has some (empty on most farms): its jobs' node picks, in order. The
  /// picks' categories come after every job's category (and after the solutions).
  std::vector<std::vector<NodePick>> node_picks;
  std::span<const NodePick> node_picks_of(size_t c) const noexcept {
    return c < node_picks.size() ? std::span<const NodePick>(node_picks[c]) : std::span<const NodePick>{};
  }

  /// per category, up to the last that has one (empty on most farms): the category of its jobs' JobTable::Fallback
  /// (the fallback request and soft request with this category's slots, rule and charges; after every job's
  /// category and the node picks'), or kNone.
  std::vector<uint32_t> fallback;
  uint32_t fallback_of(size_t c) const noexcept { return c < fallback.size() ? fallback[c] : kNone; }

  /// per category, up to the last that has one (empty on most farms): its jobs' JobTable::PeShape.
  std::vector<JobTable::PeShape> pe_shape;
  JobTable::PeShape pe_shape_of(size_t c) const noexcept {
    return c < pe_shape.size() ? pe_shape[c] : JobTable::PeShape{};
  }
  /// The fewest taskers a job of category c runs on: a OnePerTasker job its slots (Slurm's -N K), or the
  /// low end of its node count range (-N MIN-MAX: MIN); any other job 1.
  uint32_t fewest_taskers(size_t c) const noexcept {
    if (rule[c] != AllocationRule::OnePerTasker) return 1;
    const uint32_t low = pe_shape_of(c).min_slots;
    return low > 0 ? low : slots[c];
  }
  /// per category, up to the last that has one (empty on most farms): the category of its jobs' master queue
  /// request (JobTable::PeShape::master, qsub -masterq; one slot of this category's charges, no job of its own,
  /// after the fallbacks), whose eligible taskers may hold the master task; or kNone.
  std::vector<uint32_t> master_of;
  uint32_t master_category(size_t c) const noexcept { return c < master_of.size() ? master_of[c] : kNone; }
  /// per category, up to the last that has one (empty on most farms): the category of its jobs' master-only
  /// request (JobTable::PeShape::master_only, qsub -masterq beside -q; built as master_of's), whose eligible
  /// taskers give one slot at most until a host has given the master; or kNone.
  std::vector<uint32_t> master_only_of;
  uint32_t master_only_category(size_t c) const noexcept {
    return c < master_only_of.size() ? master_only_of[c] : kNone;
  }
  /// per category: its jobs' JobTable::FitUnit (empty when no category has one).
  std::vector<JobTable::FitUnit> fit_unit;
  JobTable::FitUnit fit_unit_of(size_t c) const noexcept {
    return c < fit_unit.size() ? fit_unit[c] : JobTable::FitUnit{};
  }

  /// Category c's jobs choose among solutions (it has a JobTable::Choice; a gated one may have none).
  bool chooses(size_t c) const noexcept { return c < choice.size() && choice[c] != kNone; }

  size_t size() const noexcept { return request.size(); }

  /// What one allocation of a job of category c takes of consumable k: for $pe_slots its unit charge;
  /// for $fill_up `slots_here` slot instances, plus the per-job charge on its first (master) allocation.
  double allocation_charge(uint32_t c, size_t k, uint32_t slots_here, bool master) const noexcept {
    return charge_of(rule[c], unit_charge[c][k], master_charge[c][k], slots_here, master);
  }
  /// allocation_charge for every consumable the allocation takes: fn(k, amount) by increasing k while fn
  /// returns true (false when fn stopped it). O(the category's charges): the walk over a category's
  /// charges in dispatch, in the simulator's holds and in FBSNG's quotas.
  template <class Fn>
  bool each_allocation_charge(uint32_t c, uint32_t slots_here, bool master, Fn&& fn) const {
    static const ChargeVector none;
    const AllocationRule r = rule[c];
    return each_of_both(unit_charge[c], master ? master_charge[c] : none, [&](uint32_t k, double unit, double once) {
      return fn(k, charge_of(r, unit, once, slots_here, master));
    });
  }
  /// What a job of category c asking `job_slots` slots takes of consumable k over all its allocations.
  double job_charge(uint32_t c, size_t k, uint32_t job_slots) const noexcept {
    return allocation_charge(c, k, job_slots, true);
  }

 private:
  // The one formula: `unit` and `once` are a category's unit and per-job (master) charge of a consumable.
  static double charge_of(AllocationRule r, double unit, double once, uint32_t slots_here, bool master) noexcept {
    return spreads(r) ? slots_here * unit + (master ? once : 0.0) : unit;
  }
};

/// The choice with a gate (JobTable::Choice::gate) that category c's jobs follow, or nullptr.
inline const JobTable::Choice* gate_of(const Categories& cats, const JobTable& jobs, size_t c) noexcept {
  if (!cats.chooses(c)) return nullptr;
  const JobTable::Choice& ch = jobs.choices[cats.choice[c]];
  return ch.outcome.empty() ? nullptr : &ch;
}

/// The unit charges of category c's solutions (Categories::solutions), in order; empty unless it chooses.
inline std::vector<ChargeVector> solutions_need(const Categories& cats, size_t c) {
  std::vector<ChargeVector> out;
  if (c < cats.solutions.size())
    for (const uint32_t s : cats.solutions[c]) out.push_back(cats.unit_charge[s]);
  return out;
}

/// 64-bit FNV-1a of `data`, continuing from `h` (the hash of the canonical requirements names a
/// DIRAC submit pool, seed 003; colmatch also names job categories with it).
uint64_t fnv1a(std::string_view data, uint64_t h = 14695981039346656037ULL) noexcept;

/// Groups the non-rejected jobs into categories, numbered in order of first appearance.
/// O(jobs + distinct requests x (their amounts + the consumables charged by default)); allocates.
Categories categorize(const Catalog& catalog, const JobTable& jobs);

}  // namespace colmatch
