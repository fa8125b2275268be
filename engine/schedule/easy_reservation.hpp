// EASY's reservation (seed 001, step 6 at depth 1; Mu'alem and Feitelson's EASY backfilling): the first
// job that cannot start gets a reservation at the earliest time it fits, found by releasing the running
// jobs in order of their expected end (start + walltime) on a copy of the capacity, made again in every
// cycle. A later job may start now if it ends by that time (the shadow time), or if the blocked job still
// fits at the shadow time with the later job's charges taken from the capacity then (the "extra
// processors": every job ending at the shadow time counted; on identical taskers exactly the pool-based
// EASY of the literature, on any farm exactly "does not delay the reservation"). On a pooled farm
// (engine/schedule/pool_profile.hpp) the reservation is a count: the shadow time is the first running-job
// end by which the free units reach its job's slots, the extra processors the units beyond them (the same
// answers as the walk on taskers, without a copy of the capacity). It is the book of depth 1
// (engine/schedule/book.hpp): the pass books the first blocked job's reservation, the next pass gives it up
// (begin_pass); the fast cycle's backfill (engine/schedule/backfill.cpp) asks the same questions.
// Internal to engine/schedule/.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/schedule/book.hpp"
#include "engine/schedule/pool_profile.hpp"
#include "engine/schedule/reservation.hpp"

namespace colmatch {

/// The reservation of a blocked job, kept while no job starts or ends, and the test a backfill candidate
/// must pass against it: the ReservationBook of depth 1. Memory O(taskers) (copies of the capacity and a
/// few per-tasker instance counts).
class EasyReservation final : public ReservationBook {
 public:
  explicit EasyReservation(SimWorld& w);

  // ReservationBook's questions at depth 1 (engine/schedule/book.hpp)
  bool kept() const noexcept override { return false; }  // made again in every pass
  void begin_pass() override { tried_ = false; }
  bool has_room(size_t depth) const noexcept override { return !tried_ && booked() < depth; }  // one try a pass
  /// The extra processors (the capacity the reserved job counts on at its shadow time) lose j's charges,
  /// for the later delays() of the same reservation.
  void started_beside(uint32_t j, const std::vector<Allocation>& allocs) override;
  bool backfilling(bool /*blocked*/) const noexcept override { return booked() > 0; }
  std::optional<bool> fits_by_count(uint32_t j) const override;
  /// The kept $fill_up instance totals follow.
  void tasker_changed(uint32_t x) override;
  /// Never asked: the reservation's job is visited once in the pass that books it, and the next pass gives
  /// it up first. Returns false.
  bool take_booked(uint32_t j, std::vector<Allocation>& out) override;

 private:
  /// plan(): the reservation of job j on the farm as it is (resv_): made again after any start, end or
  /// farm change (and in every call under SimConfig::full_cycles). Keeping it across the starts it allows
  /// is not exact: a job ending at the same expected time as the one the reservation waits for, or a
  /// best_fit placement, can move it.
  void plan(uint32_t j, double t, Reservation& r) override;
  bool may_move_earlier(uint32_t /*j*/, double /*t*/) const override { return false; }  // (never compressed)
  void held(const Reservation& /*r*/) override {}
  void released(const Reservation& /*r*/) override {}
  /// Job j, started now on `allocs` and running past the shadow time, delays the booked reservation: its
  /// job would no longer fit at its shadow time on the capacity then, less j's charges (on every level: its
  /// own taskers' pools, host and global pools) and those of the jobs started so far beside it
  /// (started_beside). One placement of the reserved job on a copy of that capacity at most; on a pooled
  /// farm, j's units against the extra processors.
  bool delays_booked(uint32_t j, double t, double end, const std::vector<Allocation>& allocs) override;
  bool forbids_booked(uint32_t /*j*/, double /*t*/, double /*end*/) override { return false; }

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
  void reserve_by_count(uint32_t j, Reservation& r);
  bool leaves_alone(uint32_t j, const std::vector<Allocation>& allocs);
  const InstanceTotal& instance_total(uint32_t c);
  uint32_t units_of(uint32_t j) const noexcept;

  bool tried_ = false;  // a reservation was asked for in this pass (booked or not)
  // copies of the capacity, made by the first reserve() on taskers: as running jobs end; at the shadow
  // time (its placer counts slot instances, never places); for leaves_alone, at the shadow time less a
  // candidate's charges
  std::optional<CapacityCopy> future_, at_shadow_, probe_;
  std::array<InstanceTotal, kInstanceTotals> totals_;
  uint64_t totals_clock_ = 0;
  std::vector<uint32_t> future_instances_;  // reserve(): per tasker, instances on future_
  std::vector<HeldAmount> vacated_;         // release_running's scratch
  Reservation resv_;                        // plan()'s, kept while the state does not change
  // resv_'s job is $fill_up on its taskers' own pools with no per-job charge: per tasker, the slot
  // instances it takes at the shadow time (up to its slots), and their sum (from reserve()'s walk)
  bool counted_ = false;
  std::vector<uint32_t> at_shadow_instances_;
  std::vector<uint64_t> seen_;  // leaves_alone: per tasker, the call that last counted it
  uint64_t seen_stamp_ = 0;
  uint64_t at_shadow_total_ = 0;  // the capacity at resv_'s shadow time, less the jobs started under it
  std::vector<Allocation> probe_trial_;
  // On a pooled farm: the reservation counts free units (reserve), and its extra processors are the units
  // free at the shadow time beyond its job's slots, less those of the jobs started under it
  std::optional<PoolProfile> pool_;
  int64_t extra_ = 0;
  uint32_t resv_job_ = UINT32_MAX;
  uint64_t resv_version_ = 0;  // state_version when resv_ was made
};

}  // namespace colmatch
