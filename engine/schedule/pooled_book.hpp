// The book of reservations on a pooled farm (engine/schedule/pool_profile.hpp: every job spreads one-unit
// slots over the same taskers): reservations hold slots, not taskers, planned on the count of free units
// over time; exactly the pool-based reservations of Mu'alem and Feitelson. A reserved job is placed
// anywhere when it starts. Internal to engine/schedule/ (engine/schedule/book.hpp says what a book is).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/schedule/book.hpp"
#include "engine/schedule/pool_profile.hpp"

namespace colmatch {

/// A ReservationBook on a PoolProfile. Memory O(running jobs + booked reservations).
class PooledBook final : public ReservationBook {
 public:
  PooledBook(SimWorld& w, PoolProfile pool) : ReservationBook(w), pool_(std::move(pool)) {}

  void started(uint32_t j, double t) override;
  void ended(uint32_t j, double t) override;
  bool take_booked(uint32_t j, std::vector<Allocation>& out) override;
  const PooledBook* pooled() const noexcept override { return this; }

  /// The first time from t (now) when fewer than `slots` units are free. A job of that many slots may
  /// start now only if it ends by then, or if its own reservation starts by then.
  double dip(double t, uint32_t slots) const { return pool_.dip(t, slots); }
  /// The jobs whose booked reservation starts after t but no later than dip(t, their slots), in `jobs`.
  void early_starts(double t, std::vector<uint32_t>& jobs) const;
  /// How many times units came back to the count (a reservation given up, a job ended). A question
  /// answered before may have another answer once it moved.
  uint64_t given_back() const noexcept { return pool_.given_back(); }

 private:
  void plan(uint32_t j, double t, Reservation& r) override;
  bool may_move_earlier(uint32_t j, double t) const override;
  void held(const Reservation& r) override;
  void released(const Reservation& r) override;
  bool delays_booked(uint32_t j, double t, double end, const std::vector<Allocation>& allocs) override;
  bool forbids_booked(uint32_t j, double t, double end) override;
  bool free_until(uint32_t j, double t, double end) const;

  PoolProfile pool_;
};

}  // namespace colmatch
