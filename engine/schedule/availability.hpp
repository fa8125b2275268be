// Moab's resource availability (seed 001, RESOURCEAVAILABILITYPOLICY):
//   R.Available = R.Configured - MAX(R.Dedicated, R.Utilized)
// Under "utilized" or "combined", each queue-only consumable's free amount on a tasker is set from an
// occupancy computed again from the charges held there whenever they change: D = the charges, U = the
// tasker's load (FarmEvents::load) + each charge times its job's utilization, occupancy U or MAX(D, U),
// free = MAX(0, configured - occupancy). Summed in job order, so the result does not depend on the order
// the jobs started in. While a job is placed its charges are taken in full (Placer); SimWorld::start then
// sets the free amounts its load leaves. Under "dedicated" (the default) nothing here is active and
// Capacity's own take/release keep R.Available = R.Configured - R.Dedicated.
// Internal to engine/schedule/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "engine/model/capacity.hpp"
#include "engine/model/jobs.hpp"
#include "engine/model/taskers.hpp"
#include "engine/placement/placer.hpp"
#include "engine/schedule/events.hpp"
#include "engine/schedule/policy.hpp"

namespace colmatch {

/// One charge a running job holds: `amount` of consumable k (index in catalog.consumables()) on tasker x.
struct HeldAmount {
  uint32_t k, x;
  double amount;
};

/// The charges held per tasker on the consumables whose availability counts utilization ("tracked":
/// queue-only consumables, policy not dedicated), and a copy-on-write view of them for a reservation's
/// walk over the running jobs' ends (engine/schedule/easy_reservation.hpp, engine/schedule/tasker_book.hpp). O(taskers
/// + running charges). It reads the farm's configuration, load and jobs (given to init, which must outlive it) and the
/// charges its callers name; it knows nothing of the simulator's world.
class Availability {
 public:
  /// Sets up tracking for `policy` over the farm's consumables and applies the farm's load to `cap`
  /// and `idle` (the capacity now and the idle farm's).
  void init(const SimConfig& policy, const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
            const FarmEvents& farm, Capacity& cap, Capacity& idle);
  /// Some consumable is tracked (else every method below is a no-op and need not be called).
  bool active() const noexcept { return !tracked_.empty(); }
  bool tracked(size_t k) const noexcept { return !tracked_.empty() && tracked_[k]; }
  /// Job j, holding `charges`, started (`on`) or ended: the free amounts of `cap` its charges touch are
  /// set again; the taskers whose amount grew are appended to `grown`.
  void occupy(uint32_t j, std::span<const HeldAmount> charges, bool on, Capacity& cap, std::vector<uint32_t>& grown);
  /// Tracked consumable k's free amount on tasker x of `cap` with the charges held there now.
  double free_now(size_t k, uint32_t x, const Capacity& cap) const;
  /// A reservation's walk begins: the next vacate() calls see the charges held now.
  void begin_walk() noexcept { ++walk_; }
  /// In the current walk, running job rj, on the taskers of `allocs` holding `charges`, ends on
  /// `future`: the free amounts its charges held are set again there. A walk copies a tasker's held
  /// charges when it first touches it.
  void vacate(uint32_t rj, std::span<const Allocation> allocs, std::span<const HeldAmount> charges, Capacity& future);

 private:
  struct HeldCharge {  // a charge held on a tasker, ordered by (job, consumable)
    uint32_t job, k;
    double amount, used;  // used: amount times the job's utilization of k
    bool operator<(const HeldCharge& o) const noexcept { return job != o.job ? job < o.job : k < o.k; }
  };
  double load_of(size_t k, uint32_t x) const noexcept;
  double free_with(const std::vector<HeldCharge>& held, size_t k, uint32_t x, const Capacity& cap) const;
  void hold(std::vector<std::vector<HeldCharge>>& held, uint32_t j, std::span<const HeldAmount> charges, bool on);

  ResourceAvailability kind_ = ResourceAvailability::Dedicated;
  const FarmEvents* farm_ = nullptr;
  const JobTable* jobs_ = nullptr;
  std::vector<uint8_t> tracked_;                             // per consumable
  std::vector<std::vector<HeldCharge>> held_, future_held_;  // per tasker
  std::vector<uint64_t> walk_of_;                            // per tasker: the walk that copied its held charges last
  uint64_t walk_ = 0;
  std::vector<std::pair<size_t, uint32_t>> touched_;  // (consumable, tasker) pairs hold() changed
};

}  // namespace colmatch
