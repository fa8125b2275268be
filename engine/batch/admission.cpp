#include "engine/batch/admission.hpp"

#include <stdexcept>

#include "engine/match/categories.hpp"
#include "engine/match/eligibility.hpp"
#include "engine/model/capacity.hpp"
#include "engine/placement/placer.hpp"

namespace colmatch {

std::vector<uint8_t> never_runnable(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                                    std::span<const EverCheck> check, const kernels::KernelTable& k,
                                    const DispatchOptions& options) {
  if (check.size() != jobs.size()) throw std::invalid_argument("never_runnable: one check per job");
  std::vector<uint8_t> never(jobs.size(), 0);
  bool any = false;
  for (const EverCheck c : check) any = any || c != EverCheck::None;
  if (!any) return never;
  const Categories cats = categorize(catalog, jobs);
  const std::vector<CategoryEligibility> eligible = compute_eligibility(catalog, taskers, jobs, cats, k);
  Capacity capacity = Capacity::configured(catalog, taskers);
  Placer placer(taskers, jobs, cats, eligible, capacity, nullptr);
  placer.fit_by(options.fit_consumable, options.fit_limit);
  enum : uint8_t { Unknown, Fits, Fails };
  std::vector<uint8_t> placed(eligible.size(), Unknown);  // per category, once asked
  for (uint32_t j = 0; j < jobs.size(); ++j) {
    if (check[j] == EverCheck::None || jobs.rejected(j)) continue;
    const uint32_t c = cats.of_job[j];
    if (eligible[c].eligible.count() == 0) {
      never[j] = 1;
      continue;
    }
    if (check[j] != EverCheck::Placed) continue;
    if (placed[c] == Unknown) placed[c] = placer.can_place(j, options.allocation) ? Fits : Fails;
    never[j] = placed[c] == Fails;
  }
  return never;
}

}  // namespace colmatch
