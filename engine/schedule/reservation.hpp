// Backfill's reservations (seed 001, step 6; Moab RESERVATIONDEPTH 1, EASY): the earliest time a
// blocked job fits, found by releasing the running jobs in order of their expected end (start +
// walltime) on a copy of the capacity, and the taskers it would get then. A later job may start now
// only if it ends by that time (the shadow time) or leaves the reserved taskers alone.
// Internal to engine/schedule/; the backfill pass that uses it is engine/schedule/backfill.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/dispatch.hpp"

namespace colmatch {

class SimWorld;

/// A reservation: the shadow time (seconds) and the reserved taskers. Inactive: the job does not fit
/// even once every running job has ended (or no job is blocked).
struct Reservation {
  bool active = false;
  double shadow = 0;
  std::vector<uint8_t> reserved;  ///< per tasker
};

/// The reservation of a blocked job, kept while no job starts or ends, and the tests a backfill
/// candidate must pass against it. Memory O(taskers) (the copy of the capacity and a few per-tasker
/// instance counts).
class Reservations {
 public:
  explicit Reservations(SimWorld& w);
  /// The reservation of job j on the farm as it is: made again after any start, end or farm change
  /// (and in every call under SimPolicy::full_cycles). Keeping it across the starts it allows is not
  /// exact: a job ending at the same expected time as the one the reservation waits for, or a
  /// best_fit placement, can move it.
  const Reservation& reservation_for(uint32_t j);
  /// No reservation (inactive): what a cycle holds before its first blocked job.
  const Reservation& none() const noexcept { return none_; }
  /// A job placed on `allocs` leaves reservation r alone: none of its taskers is reserved and it
  /// charges no pool shared between taskers (host or global).
  bool leaves_alone(uint32_t j, const std::vector<Allocation>& allocs, const Reservation& r) const;
  /// Job j, which would not end before reservation r, cannot leave it alone, decided without a
  /// placement: it charges a shared pool, or it is a $fill_up job whose master would be reserved.
  bool cannot_leave_alone(uint32_t j, const Reservation& r);
  /// Capacity on tasker x changed: the kept $fill_up instance totals follow.
  void tasker_changed(uint32_t x);

 private:
  // $fill_up categories charging no shared pool: how many slot instances (capped at the job's slots)
  // each eligible tasker takes now, and their sum; kept for the last few categories reserve() needed,
  // and updated on the taskers a start or an end touches instead of summed over the farm again.
  struct InstanceTotal {
    uint32_t category = UINT32_MAX;
    uint64_t total = 0, used = 0;  // used: when it was last needed (LRU)
    std::vector<uint32_t> per_tasker;
  };
  static constexpr size_t kInstanceTotals = 4;

  void reserve(uint32_t j, Reservation& r);
  const InstanceTotal& instance_total(uint32_t c);

  SimWorld& w_;
  Capacity future_;  // the capacity as running jobs end (reserve), with its placer
  Placer future_placer_;
  std::array<InstanceTotal, kInstanceTotals> totals_;
  uint64_t totals_clock_ = 0;
  std::vector<uint32_t> future_instances_;                // reserve(): per tasker, instances on future_
  std::vector<std::pair<uint64_t, size_t>> master_memo_;  // per category: (state_version, fill_up master)
  Reservation resv_, none_;
  uint32_t resv_job_ = UINT32_MAX;
  uint64_t resv_version_ = 0;  // state_version when resv_ was made
};

}  // namespace colmatch
