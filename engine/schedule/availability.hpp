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
#include <utility>
#include <vector>

namespace colmatch {

class Capacity;
class SimWorld;

/// The charges held per tasker on the consumables whose availability counts utilization ("tracked":
/// queue-only consumables, policy not dedicated), and a copy-on-write view of them for a reservation's
/// walk over the running jobs' ends (engine/schedule/reservation.hpp). O(taskers + running charges).
class Availability {
 public:
  /// Sets up tracking for `w`'s policy and consumables and applies the farm's load to w.cap and w.idle.
  void init(SimWorld& w);
  /// Some consumable is tracked (else every method below is a no-op and need not be called).
  bool active() const noexcept { return !tracked_.empty(); }
  bool tracked(size_t k) const noexcept { return !tracked_.empty() && tracked_[k]; }
  /// Job j started (`on`) or ended: the free amounts of w.cap its charges touch are set again; a tasker
  /// whose amount grew is logged through SimWorld::grew.
  void occupy(SimWorld& w, uint32_t j, bool on);
  /// Tracked consumable k's free amount on tasker x of `cap` with the charges held there now.
  double free_now(const SimWorld& w, size_t k, uint32_t x, const Capacity& cap) const;
  /// A reservation's walk begins: the next vacate() calls see the charges held now.
  void begin_walk() noexcept { ++walk_; }
  /// In the current walk, running job rj ends on `future`: the free amounts its charges held are set
  /// again there. A walk copies a tasker's held charges when it first touches it.
  void vacate(const SimWorld& w, uint32_t rj, Capacity& future);

 private:
  struct HeldCharge {  // a charge held on a tasker, ordered by (job, consumable)
    uint32_t job, k;
    double amount, used;  // used: amount times the job's utilization of k
    bool operator<(const HeldCharge& o) const noexcept { return job != o.job ? job < o.job : k < o.k; }
  };
  double load_of(const SimWorld& w, size_t k, uint32_t x) const noexcept;
  double free_with(const SimWorld& w, const std::vector<HeldCharge>& held, size_t k, uint32_t x,
                   const Capacity& cap) const;
  void hold(const SimWorld& w, std::vector<std::vector<HeldCharge>>& held, uint32_t j, bool on);

  std::vector<uint8_t> tracked_;                             // per consumable
  std::vector<std::vector<HeldCharge>> held_, future_held_;  // per tasker
  std::vector<uint64_t> walk_of_;                            // per tasker: the walk that copied its held charges last
  uint64_t walk_ = 0;
  std::vector<std::pair<size_t, uint32_t>> touched_;  // (consumable, tasker) pairs hold() changed
};

}  // namespace colmatch
