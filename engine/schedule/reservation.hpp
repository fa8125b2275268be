// Backfill's reservations (seed 001, step 6; Moab RESERVATIONDEPTH): the earliest time a blocked job
// fits, found by releasing the running jobs in order of their expected end (start + walltime) on a copy
// of the capacity. One reservation is EASY (depth 1), made again in every cycle for the first job that
// cannot start: a later job may start now if it ends by that time (the shadow time), or if the blocked
// job still fits at the shadow time with the later job's charges taken from the capacity then (Mu'alem
// and Feitelson's "extra processors": on identical taskers, exactly the pool-based EASY of the
// literature; on any farm, exactly "does not delay the reservation"). With a greater depth reservations are kept
// in a book until their jobs start (Mu'alem and Feitelson's conservative backfilling: a reservation,
// once made, is never moved later): a waiting job gets one, in priority order, while fewer than the
// depth are booked, at the earliest time it fits beside the running jobs and every booked reservation,
// and any job may start now only if it delays none of the others' (conservative: every waiting job).
// On a pooled farm (engine/schedule/pool_profile.hpp: every job spreads one-unit slots over the same
// taskers) the book plans on the count of free units over time, not on particular taskers: its
// reservations hold slots, not taskers, and are exactly the pool-based ones of the literature; a
// reserved job is placed anywhere when it starts. EASY's reservation there is a count too: the shadow
// time is the first running-job end by which the free units reach its job's slots, the extra processors
// the units beyond them (the same answers as the walk on taskers, without a copy of the capacity).
// Internal to engine/schedule/; the backfill pass that uses it is engine/schedule/backfill.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "engine/placement/placer.hpp"
#include "engine/schedule/availability.hpp"
#include "engine/schedule/pool_profile.hpp"

namespace colmatch {

class SimWorld;

/// A reservation: the shadow time (seconds) and the placement the job would get then. Inactive: the job does not fit
/// even once every running job has ended (or no job is blocked).
struct Reservation {
  bool active = false;
  uint32_t job = UINT32_MAX;       ///< the job it is for
  double shadow = 0;               ///< when the job is expected to start (seconds)
  double end = 0;                  ///< shadow + the job's walltime estimate
  std::vector<Allocation> allocs;  ///< the placement it would get then
  uint32_t category = UINT32_MAX;  ///< whose charges that placement takes (SimWorld::charged)
};

/// The reservation of a blocked job, kept while no job starts or ends, and the tests a backfill
/// candidate must pass against it. Memory O(taskers) (the copy of the capacity and a few per-tasker
/// instance counts).
class Reservations {
 public:
  explicit Reservations(SimWorld& w);
  /// The reservation of job j on the farm as it is: made again after any start, end or farm change
  /// (and in every call under SimConfig::full_cycles). Keeping it across the starts it allows is not
  /// exact: a job ending at the same expected time as the one the reservation waits for, or a
  /// best_fit placement, can move it.
  const Reservation& reservation_for(uint32_t j);
  /// No reservation (inactive): what a cycle holds before its first blocked job.
  const Reservation& none() const noexcept { return none_; }
  /// Job j, started now on `allocs` and still running at reservation r's shadow time, leaves r alone:
  /// r's job still fits at its shadow time on the capacity then, less j's charges (on every level: its
  /// own taskers' pools, host and global pools) and those of the jobs started so far under r
  /// (started_under). One placement of r's job on a copy of that capacity.
  bool leaves_alone(uint32_t j, const std::vector<Allocation>& allocs, const Reservation& r);
  /// Job j started on `allocs` under reservation r and runs past its shadow time: the capacity r's job
  /// counts on then loses j's charges (for the later leaves_alone of the same reservation).
  void started_under(uint32_t j, const std::vector<Allocation>& allocs, const Reservation& r);
  /// EASY on a pooled farm: whether job j fits now, by the count of free units (any placement of it fits
  /// exactly then); std::nullopt elsewhere (a placement must say).
  std::optional<bool> fits_by_count(uint32_t j) const {
    if (!easy_pool_) return std::nullopt;
    return easy_pool_->free_now(w_) >= static_cast<int64_t>(units_of(j));
  }
  /// Capacity on tasker x changed: the kept $fill_up instance totals follow.
  void tasker_changed(uint32_t x);

  // ---- The book: reservations kept until their jobs start (depth > 1, conservative) ----
  /// Job j started at t / ended at t (after SimWorld::start / finish): a pooled book's count follows.
  void started(uint32_t j, double t);
  void ended(uint32_t j, double t);
  /// Reservations booked.
  size_t booked() const noexcept { return shadows_.size(); }
  /// Job j holds a booked reservation.
  bool has(uint32_t j) const noexcept { return j < slot_of_.size() && slot_of_[j] != kNoSlot; }
  /// Job j's booked reservation (has(j) must hold).
  const Reservation& of(uint32_t j) const noexcept { return book_[slot_of_[j]]; }
  /// Job j gives its reservation up (it starts, or cannot use it).
  void drop(uint32_t j);
  /// Job j, which cannot start now (t) and holds no reservation, gets one at the earliest of the running
  /// jobs' expected ends and the booked reservations' ends where a start would fit beside them (see
  /// reserve_after_book; on a pooled farm, where its slots stay free for its walltime estimate beside
  /// them: PoolProfile::earliest). Returns it (inactive, and not booked, when it fits at none of those
  /// times). O(running + booked) placements at most (pooled: O(running + booked) steps of a count).
  /// `latest`: none is booked (the returned one inactive) if it would start after this time.
  /// Under Slurm's backfill (SimConfig::slurm_backfill, backfill.c's node-space map) the job is placed
  /// only on taskers no booked reservation holds during its run, started or not; the booked reservation
  /// holds its taskers from its start rounded down to a multiple of SimConfig::backfill_resolution (when
  /// above 0) until its end rounded down, at least one step; and no cycle is asked for at its start (Slurm
  /// plans again in its next backfill cycle). Else Moab's: placed, then checked to leave the pending
  /// reservations alone; a cycle at its start.
  const Reservation& book(uint32_t j, double t, double latest = std::numeric_limits<double>::infinity());
  /// Compression (Mu'alem and Feitelson's conservative backfilling, when a job ends before its walltime):
  /// job j's booked reservation is made again at t as book() would make it, beside every other booked
  /// one, and kept if it starts earlier; else the old one stays as it was. Returns whether it moved. A
  /// reservation never moves later, so no job starts later than its first reservation.
  bool compress(uint32_t j, double t);
  /// Takes job j's booked placement on the capacity now, within a Capacity transaction left open for the
  /// caller to commit (true, `out` the placement) or rolled back (false: some tasker of it is down or
  /// short). Its time has come: the reservations booked after it were planned around it there. On a
  /// pooled farm the job is placed now as any start is (Placer::try_place).
  bool take_booked(uint32_t j, std::vector<Allocation>& out);
  /// The jobs holding a booked reservation, appended to `out` (in no particular order).
  void booked_jobs(std::vector<uint32_t>& out) const {
    for (const auto& [shadow, j] : shadows_) out.push_back(j);
  }
  /// The earliest start of a booked reservation of a job other than j (+inf if none).
  double first_shadow_except(uint32_t j) const noexcept;
  /// Job j, started now (t) and expected to end at `end`, on `allocs`, delays no other job's booked
  /// reservation: each one that starts before `end` keeps its taskers, and no shared (host or global)
  /// pool is charged while one does. On a pooled farm: the free units, with j's own reservation given
  /// back, cover its slots from t to `end` (the booked ones keep theirs whichever taskers j takes).
  bool book_allows(uint32_t j, double t, double end, const std::vector<Allocation>& allocs) const;
  /// Job j, expected to end at `end` if started now (t), would delay another job's booked reservation
  /// whatever its placement (decided without one): it charges a shared pool, or it is a $fill_up job
  /// whose master such a reservation holds; on a pooled farm, its slots are free now but not until `end`.
  bool book_forbids(uint32_t j, double t, double end);
  /// Slurm's backfill (backfill.c, _attempt_backfill): a job tried now is placed only on the nodes that
  /// no reservation made before it in the cycle holds during its run. Category c's eligibility less the
  /// taskers held by another job's booked reservation starting before `end`, its soft tiers cut alike;
  /// nullptr when none of its eligible taskers is held, for a category that chooses among solutions, or
  /// one charging a shared pool (book_allows decides those). Valid until the next call. O(booked
  /// reservations' allocations + a copy of the eligible set when one is held).
  const CategoryEligibility* unheld(uint32_t c, uint32_t j, double end);
  /// Category c's eligibility less the taskers of every booked reservation that holds them some time in
  /// [from, to) (Slurm's node-space map for a reservation made at `from`); nullptr when none is held.
  const CategoryEligibility* unheld_between(uint32_t c, double from, double to);
  /// The book plans on a pooled farm's count of free units (PoolProfile::of).
  bool pooled() const noexcept { return pool_.has_value(); }
  /// Pooled: the first time from t (now) when fewer than `slots` units are free. A job of that many
  /// slots may start now only if it ends by then, or if its own reservation starts by then.
  double pool_dip(double t, uint32_t slots) const { return pool_->dip(t, slots); }
  /// Pooled: the jobs whose booked reservation starts after t but no later than pool_dip(t, their slots).
  void early_starts(double t, std::vector<uint32_t>& jobs) const;
  /// Pooled: how many times units came back to the count (a reservation given up, a job ended), 0 if
  /// not pooled. A question answered before may have another answer once it moved.
  uint64_t pool_given_back() const noexcept { return pool_ ? pool_->given_back() : 0; }

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
  void release_running(uint32_t rj);
  void plan_booking(uint32_t j, double t);
  const Reservation& insert(const Reservation& r, bool wake);
  void reserve_after_book(uint32_t j, Reservation& r);
  void made(Reservation& r, uint32_t j, double T, double est, const std::vector<Allocation>& allocs);
  bool held_by_other(uint32_t x, uint32_t j, double end) const noexcept;
  const CategoryEligibility* without_holds(uint32_t c, double from, double to, uint32_t except);
  bool pool_allows(uint32_t j, double t, double end) const;
  const CategoryEligibility* busy_now(uint32_t c);
  template <class Ok>
  bool plan_leaving_free(Placer& placer, uint32_t j, const CategoryEligibility* busy, std::vector<Allocation>& trial,
                         Ok&& ok);
  int64_t units_held(uint32_t j) const;
  uint32_t units_of(uint32_t j) const noexcept;  // a pooled job's units: its slots
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  const InstanceTotal& instance_total(uint32_t c);

  SimWorld& w_;
  Capacity future_;  // the capacity as running jobs end (reserve), with its placer
  Placer future_placer_;
  std::array<InstanceTotal, kInstanceTotals> totals_;
  uint64_t totals_clock_ = 0;
  std::vector<uint32_t> future_instances_;                // reserve(): per tasker, instances on future_
  std::vector<std::pair<uint64_t, size_t>> master_memo_;  // per category: (state_version, fill_up master)
  Reservation resv_, none_;
  Capacity at_shadow_;
  Placer at_shadow_placer_;  // counts slot instances on at_shadow_ (never places)
  // resv_'s job is $fill_up on its taskers' own pools with no per-job charge: per tasker, the slot
  // instances it takes at the shadow time (up to its slots), and their sum (from reserve()'s walk)
  bool counted_ = false;
  std::vector<uint32_t> at_shadow_instances_;
  std::vector<uint64_t> seen_;  // leaves_alone: per tasker, the call that last counted it
  uint64_t seen_stamp_ = 0;
  uint64_t at_shadow_total_ = 0;   // EASY: the capacity at resv_'s shadow time, less the jobs started under it
  std::vector<Reservation> book_;  // the booked reservations (slots; free ones have job kNoSlot)
  std::vector<uint32_t> free_slots_;
  std::vector<uint32_t> slot_of_;                                // per job: its slot in book_, or kNoSlot
  std::vector<std::vector<std::pair<double, uint32_t>>> holds_;  // per tasker: (shadow, job), ascending
  std::set<std::pair<double, uint32_t>> shadows_;                // every booked (shadow, job)
  std::set<std::pair<double, uint32_t>> ends_;                   // every booked (end, job)
  std::vector<int32_t> pending_count_;  // reserve_after_book: per tasker, pending reservations holding it
  Reservation trial_resv_;
  std::vector<HeldAmount> vacated_;  // a running job's charges, for Availability::vacate
  std::vector<uint8_t> pending_;     // reserve_after_book: per tasker, held by a pending reservation
  std::vector<Allocation> probe_trial_;
  Capacity probe_;  // reserve_after_book: the capacity at a candidate time, less the booked reservations
  Placer probe_placer_;
  CategoryEligibility busy_;         // busy_now()'s answer
  CategoryEligibility unheld_;       // unheld()'s answer
  std::optional<PoolProfile> pool_;  // a pooled farm's free units over time (the book plans on it)
  // EASY on a pooled farm: the reservation counts free units (reserve), and its extra processors are the
  // units free at the shadow time beyond its job's slots, less those of the jobs started under it
  std::optional<PoolProfile> easy_pool_;
  int64_t easy_extra_ = 0;
  uint32_t resv_job_ = UINT32_MAX;
  uint64_t resv_version_ = 0;  // state_version when resv_ was made
};

}  // namespace colmatch
