// The book of reservations on particular taskers (engine/schedule/book.hpp says what a book is): a
// reservation holds the taskers of the placement its job would get at its start, found by a walk over the
// running jobs' expected ends and the booked reservations' ends on a copy of the capacity. A job may start
// now only on taskers no other reservation starting within its run holds, and charging no shared (host or
// global) pool while one does. Under Slurm's backfill (backfill.c's node-space map) a job is placed only
// on taskers no reservation holds during its run, started or not. Internal to engine/schedule/.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "engine/schedule/book.hpp"

namespace colmatch {

/// A ReservationBook of taskers. Memory O(taskers) (copies of the capacity, per-tasker holds).
class TaskerBook final : public ReservationBook {
 public:
  explicit TaskerBook(SimWorld& w);

  bool take_booked(uint32_t j, std::vector<Allocation>& out) override;
  const CategoryEligibility* unheld(uint32_t c, uint32_t j, double end) override;

 private:
  void plan(uint32_t j, double t, Reservation& r) override;
  void held(const Reservation& r) override;
  void released(const Reservation& r) override;
  bool delays_booked(uint32_t j, double t, double end, const std::vector<Allocation>& allocs) override;
  bool forbids_booked(uint32_t j, double t, double end) override;

  bool held_by_other(uint32_t x, uint32_t j, double end) const noexcept;
  const CategoryEligibility* without_holds(uint32_t c, double from, double to, uint32_t except);
  const CategoryEligibility* busy_now(uint32_t c);
  template <class Ok>
  bool plan_leaving_free(Placer& placer, uint32_t j, const CategoryEligibility* busy, std::vector<Allocation>& trial,
                         Ok&& ok);

  // the walk's capacity as running jobs end, and the capacity at a step less the booked reservations
  // (availability counting use): made by the first plan()
  std::optional<CapacityCopy> future_, probe_;
  std::vector<HeldAmount> vacated_;                              // release_running's scratch
  std::vector<std::pair<uint64_t, size_t>> master_memo_;         // per category: (state_version, fill_up master)
  std::vector<std::vector<std::pair<double, uint32_t>>> holds_;  // per tasker: (shadow, job), ascending
  std::vector<int32_t> pending_count_;  // the walk: per tasker, pending reservations holding it
  std::vector<uint8_t> pending_;        // the walk on rebuilt capacity: per tasker, held by a pending reservation
  CategoryEligibility busy_;            // busy_now()'s answer
  CategoryEligibility unheld_;          // unheld()'s answer
};

}  // namespace colmatch
