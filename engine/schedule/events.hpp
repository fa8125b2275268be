// The farm over time, as an input of `colmatch simulate`: taskers that go down, come up or change their
// configured amounts (Google cluster-data 2011 machine events), and the load that is not the jobs'; and the
// run's own timed events, the jobs' ends and wake-ups.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace colmatch {

/// A change of the farm during the run (Google cluster-data 2011 machine events ADD, REMOVE, UPDATE).
/// Down: the tasker takes no new job; the jobs running on it keep running to their end with their
/// charges (Moab's default when a node fails: no action on its jobs). Up: it takes jobs again.
/// Configure: the configured amount of consumable `consumable` (catalog.consumables() order) on the
/// tasker's own pool becomes `amount` (base units); R.Available = R.Configured - R.Dedicated, at least
/// 0 (Capacity::set_configured). Only for consumables with no host or global pool, on taskers that have a
/// value for them. The scheduler does not know the future: a reservation counts on the taskers up now.
struct TaskerEvent {
  enum class Kind : uint8_t { Up, Down, Configure };
  double time = 0;  ///< seconds, the clock of the jobs' submit times
  uint32_t tasker = 0;
  Kind kind = Kind::Up;
  uint32_t consumable = 0;
  double amount = 0;
};

/// The farm over time: which taskers are down when the run starts, and the events after (ascending
/// time; events at one instant apply in order). Empty: every tasker up with its configured values.
struct FarmEvents {
  std::vector<uint8_t> down_at_start;  ///< per tasker, or empty (all up)
  std::vector<TaskerEvent> events;
  /// Per consumable (catalog.consumables() order), per tasker: what is used there by other than the
  /// jobs (interactive users, daemons; part of Moab's R.Utilized), in the consumable's base units.
  /// Empty, or an empty vector for a consumable: none. Read under resource_availability "utilized" or
  /// "combined" only, and only for consumables without host or global pools.
  std::vector<std::vector<double>> load;
  bool empty() const noexcept { return down_at_start.empty() && events.empty() && load.empty(); }
};

/// (time in seconds, job) pairs, earliest first: the event loop's job ends and wake-ups (SimWorld::ends,
/// SimWorld::wakes).
using TimedJobs =
    std::priority_queue<std::pair<double, uint32_t>, std::vector<std::pair<double, uint32_t>>, std::greater<>>;

}  // namespace colmatch
