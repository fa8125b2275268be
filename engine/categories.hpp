// Job categories (Grid Engine 6 "job categories", seed 002 section 5; DIRAC submit pools, seed 003):
// jobs with the same canonical hard and soft requests, the same slot count and the same consumable charges
// select the same taskers and fit the same free capacities, so eligibility is computed once per
// category and the dispatch cursor of a category is shared by its jobs.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/columns.hpp"

namespace colmatch {

struct Categories {
  std::vector<uint32_t> of_job;              ///< category of each job; kNone for rejected jobs
  std::vector<uint32_t> request;             ///< per category: index into JobTable::requests
  std::vector<uint32_t> soft;                ///< per category: soft requests (index, 0 = none)
  std::vector<uint32_t> slots;               ///< per category: slots each job asks for
  /// per category, per consumable (catalog.consumables() order): the amount one job of the category
  /// takes from the tasker it runs on (per-slot amounts times slots); 0 when it takes none.
  std::vector<std::vector<double>> need;
  std::vector<uint64_t> hash;                ///< per category: 64-bit FNV-1a of its canonical key
  std::vector<uint32_t> job_count;           ///< per category: number of jobs

  size_t size() const noexcept { return request.size(); }
};

/// The charge of one job: per-slot amounts x slots, per-job amounts once; a consumable the job does not
/// request charges its catalog default (or 0); a consumable named "slots" charges the slot count.
/// `out` gets one value per consumable.
void job_need(const Catalog& catalog, const JobTable& jobs, uint32_t j, std::vector<double>& out);

/// Groups the non-rejected jobs into categories, numbered in order of first appearance.
/// O(jobs x consumables); allocates.
Categories categorize(const Catalog& catalog, const JobTable& jobs);

}  // namespace colmatch
