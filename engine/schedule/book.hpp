// The book of reservations (seed 001, step 6; Mu'alem and Feitelson's EASY and conservative backfilling):
// backfill written once, parameterised by the reservation depth (Flux's queue_policy_bf_base). A waiting
// job that cannot start gets a reservation, in priority order, while fewer than the depth are booked, at
// the earliest time it fits beside the running jobs and every booked reservation; any job may start now
// only if it delays none of the others' (conservative: every waiting job holds one). Depth 0 (no backfill,
// greedy) books none. With compression (SimConfig::compression), a job ending before its walltime lets each
// reservation be made again, kept only if it starts earlier; a kept reservation is never moved later.
//
// One question, three implementations (MoabScheduler picks one per run):
//   - EasyReservation (engine/schedule/easy_reservation.hpp): depth 1, EASY's: made again in every pass,
//     and a start delays it only if the reserved job no longer fits beside it at its time (the extra
//     processors, every job ending then counted);
//   - TaskerBook (engine/schedule/tasker_book.hpp): reservations kept, holding particular taskers, found by
//     a walk over the running jobs' and the booked reservations' ends on a copy of the capacity;
//   - PooledBook (engine/schedule/pooled_book.hpp): on a pooled farm (PoolProfile::of: every job spreads
//     one-unit slots over the same taskers) reservations kept, holding slots, planned on the count of free
//     units over time: exactly the pool-based reservations of the literature; a reserved job is placed
//     anywhere when it starts.
// Internal to engine/schedule/; its users are MoabScheduler's passes (engine/schedule/moab.cpp,
// engine/schedule/backfill.cpp).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "engine/match/eligibility.hpp"
#include "engine/schedule/reservation.hpp"

namespace colmatch {

class PooledBook;

/// The booked reservations and backfill's question of them. Memory O(booked reservations + jobs) beside
/// what each implementation keeps.
class ReservationBook {
 public:
  virtual ~ReservationBook() = default;
  ReservationBook(const ReservationBook&) = delete;
  ReservationBook& operator=(const ReservationBook&) = delete;

  /// Reservations booked.
  size_t booked() const noexcept { return shadows_.size(); }
  /// Job j holds a booked reservation.
  bool has(uint32_t j) const noexcept { return j < slot_of_.size() && slot_of_[j] != kNoSlot; }
  /// Job j's booked reservation (has(j) must hold).
  const Reservation& of(uint32_t j) const noexcept { return book_[slot_of_[j]]; }
  /// The jobs holding a booked reservation, appended to `out` (in no particular order).
  void booked_jobs(std::vector<uint32_t>& out) const {
    for (const auto& [shadow, j] : shadows_) out.push_back(j);
  }
  /// The earliest start of a booked reservation of a job other than j (+inf if none).
  double first_shadow_except(uint32_t j) const noexcept;
  /// Job j gives its reservation up (it starts, or cannot use it).
  void drop(uint32_t j);
  /// Job j, which cannot start now (t) and holds no reservation, gets one at the earliest time a start
  /// would fit beside the running jobs and every booked reservation (the implementation's plan). Returns
  /// it (inactive, and not booked, when it fits at no time). `latest`: none is booked (the returned one
  /// inactive) if it would start after this time. Under Slurm's backfill (SimConfig::slurm_backfill) the
  /// booked reservation holds its taskers from its start rounded down to a multiple of
  /// SimConfig::backfill_resolution (when above 0) until its end rounded down, at least one step, and no
  /// cycle is asked for at its start (Slurm plans again in its next backfill cycle); else a cycle is asked
  /// for at its start.
  const Reservation& book(uint32_t j, double t, double latest = std::numeric_limits<double>::infinity());
  /// Compression (Mu'alem and Feitelson's conservative backfilling, when a job ends before its walltime):
  /// job j's booked reservation is made again at t as book() would make it, beside every other booked
  /// one, and kept if it starts earlier; else the old one stays as it was. Returns whether it moved. A
  /// reservation never moves later, so no job starts later than its first reservation.
  bool compress(uint32_t j, double t);

  /// Backfill's question: job j, started now (t) and expected to end at `end`, on `allocs`, delays another
  /// job's booked reservation. False when none starts before `end`; else the implementation's answer
  /// (taskers: one that starts before `end` holds a tasker of `allocs`, or j charges a shared pool; pooled:
  /// the free units, j's own reservation given back, do not cover its slots from t to `end`).
  bool delays(uint32_t j, double t, double end, const std::vector<Allocation>& allocs) {
    return first_shadow_except(j) < end && delays_booked(j, t, end, allocs);
  }
  /// Job j, expected to end at `end` if started now (t), would delay another job's booked reservation
  /// whatever its placement (decided without one; false when it cannot tell).
  bool forbids(uint32_t j, double t, double end) { return first_shadow_except(j) < end && forbids_booked(j, t, end); }

  /// Job j started at t / ended at t (after SimWorld::start / finish).
  virtual void started(uint32_t /*j*/, double /*t*/) {}
  virtual void ended(uint32_t /*j*/, double /*t*/) {}
  /// Takes job j's booked placement on the capacity now, within a Capacity transaction left open for the
  /// caller to commit (true, `out` the placement) or rolled back (false: some tasker of it is down or
  /// short). Its time has come: the reservations booked after it were planned around it there. On a
  /// pooled farm the job is placed now as any start is (Placer::try_place).
  virtual bool take_booked(uint32_t j, std::vector<Allocation>& out) = 0;
  /// Slurm's backfill (backfill.c, _attempt_backfill): a job tried now is placed only on the nodes that
  /// no reservation made before it in the cycle holds during its run. Category c's eligibility less the
  /// taskers held by another job's booked reservation starting before `end`, its soft tiers cut alike;
  /// nullptr when none of its eligible taskers is held, for a category that chooses among solutions, one
  /// charging a shared pool (delays() decides those), or a pooled book. Valid until the next call.
  virtual const CategoryEligibility* unheld(uint32_t /*c*/, uint32_t /*j*/, double /*end*/) { return nullptr; }
  /// The pooled book's own questions (cycle_book_fast's), or nullptr for another book.
  virtual const PooledBook* pooled() const noexcept { return nullptr; }

  /// Reservations are kept from pass to pass (false: EASY's, made again in every pass; such a book asks
  /// for no cycle at a reservation's start, takes no Slurm rounding and is never compressed).
  virtual bool kept() const noexcept { return true; }
  /// A pass over the waiting jobs begins (EASY: its first blocked job may book again).
  virtual void begin_pass() {}
  /// A job that cannot start now may book a reservation in this pass at reservation depth `depth`: fewer
  /// than `depth` are booked (EASY: and none was tried in this pass, booked or not).
  virtual bool has_room(size_t depth) const noexcept { return booked() < depth; }
  /// Job j started now on `allocs`, beside a booked reservation it runs past the start of (delays() said
  /// no): what the book counts on then follows (EASY: the extra processors lose j's).
  virtual void started_beside(uint32_t /*j*/, const std::vector<Allocation>& /*allocs*/) {}
  /// Whether a job starting now is a backfill start: `blocked`, a job before it in the pass waits (EASY:
  /// a reservation is booked).
  virtual bool backfilling(bool blocked) const noexcept { return blocked; }
  /// On a pooled farm, whether job j fits now by the count of free units (any placement of it fits
  /// exactly then); std::nullopt when a placement must say.
  virtual std::optional<bool> fits_by_count(uint32_t /*j*/) const { return std::nullopt; }
  /// Capacity on tasker x changed (a start, an end, a farm event).
  virtual void tasker_changed(uint32_t /*x*/) {}

 protected:
  explicit ReservationBook(SimWorld& w) : w_(w) {}
  /// The reservation book() would make for job j at t, in r (inactive if none), booking nothing.
  virtual void plan(uint32_t j, double t, Reservation& r) = 0;
  /// Whether job j's booked reservation could move earlier at t (compress's first question; true: plan
  /// it again to see).
  virtual bool may_move_earlier(uint32_t /*j*/, double /*t*/) const { return true; }
  /// Reservation r was booked / given up: what the implementation keeps of the book follows.
  virtual void held(const Reservation& r) = 0;
  virtual void released(const Reservation& r) = 0;
  /// delays() and forbids() when a reservation of another job starts before `end`.
  virtual bool delays_booked(uint32_t j, double t, double end, const std::vector<Allocation>& allocs) = 0;
  virtual bool forbids_booked(uint32_t j, double t, double end) = 0;
  /// Reservation r is job j's at time T, for its walltime estimate `est`, on `allocs`.
  void made(Reservation& r, uint32_t j, double T, double est, const std::vector<Allocation>& allocs) const;

  SimWorld& w_;
  std::set<std::pair<double, uint32_t>> shadows_;  // every booked (shadow, job)
  std::set<std::pair<double, uint32_t>> ends_;     // every booked (end, job)
  std::vector<Reservation> book_;                  // the booked reservations (slots; free ones have job kNoSlot)
  static constexpr uint32_t kNoSlot = UINT32_MAX;

 private:
  const Reservation& insert(const Reservation& r, bool wake);

  std::vector<uint32_t> free_slots_;
  std::vector<uint32_t> slot_of_;  // per job: its slot in book_, or kNoSlot
  Reservation trial_;              // plan()'s answer
};

}  // namespace colmatch
