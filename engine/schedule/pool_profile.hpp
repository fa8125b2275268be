// A pooled farm's free capacity over time, for the book of reservations (reservation depth > 1 and
// conservative backfill; engine/schedule/book.hpp). On a pooled farm every job spreads its
// slots ($fill_up) over one set of taskers, each slot taking one unit of one consumable on its tasker's
// own pool: any placement of a job fits exactly when the free units over that set reach its slots, so the
// farm is the single pool of processors of the literature (Mu'alem and Feitelson's conservative
// backfilling, the SWF logs of the Parallel Workloads Archive). The book then plans on the count of free
// units over time (the running jobs ending at their expected ends, booked reservations taking their slots
// from their start to their end) instead of on particular taskers, and its reservations are exactly the
// pool-based ones: a job may start wherever the count says so, whichever taskers hold the free units.
// Internal to engine/schedule/.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "engine/schedule/step_profile.hpp"

namespace colmatch {

class SimWorld;

/// The free units of a pooled farm's consumable over time: what the pooled taskers offer, less the
/// running jobs' slots until their expected ends and the booked reservations' slots between their start
/// and end (a StepProfile: each change and each question O(points / 64 + 64)). Memory O(running +
/// booked). Not thread-safe.
class PoolProfile {
 public:
  /// The profile of world w when w is pooled and books reservations (SimConfig::depth() > 1): every
  /// job category spreads its slots ($fill_up) with no per-job charge, no choice among solutions and no
  /// fit unit, takes exactly one unit per slot of the same consumable on its taskers' own pools, and is
  /// eligible on the same taskers; resource availability dedicated; no farm events (taskers down at the
  /// start, changes, load); an allocation policy other than consecutive_best_fit. std::nullopt otherwise
  /// (the book then plans on particular taskers). Evaluates every category's eligibility once (the
  /// world's own evaluations on first submit are unchanged). O(categories x taskers / 64).
  static std::optional<PoolProfile> of(const SimWorld& w);
  /// The same profile whatever the reservation depth (EASY's reservation on a pooled farm counts the
  /// free units at the running jobs' ends: EasyReservation::reserve), or std::nullopt when w is not pooled.
  static std::optional<PoolProfile> of_farm(const SimWorld& w);

  /// Units free now: those the pooled taskers offered when the run began less what the running jobs hold.
  int64_t free_now(const std::vector<double>& used) const noexcept;
  /// `units` are held from `start` to `end` (seconds; a booked reservation), or no longer (release: a
  /// reservation given up, or a job that ended at `start`, now, before its expected end `end`).
  void hold(double start, double end, int64_t units) { change(start, end, -units); }
  void release(double start, double end, int64_t units) {
    change(start, end, units);
    ++given_back_;
  }
  /// How many times release() gave units back.
  uint64_t given_back() const noexcept { return given_back_; }
  /// The first time from t (now) when fewer than `units` are free (+inf if never); kept while the
  /// count does not change.
  double dip(double t, int64_t units) const;
  /// A job of `units` started at t (now), expected to end at `end`; what no time from t on reads is forgotten.
  void started(double t, double end, int64_t units);
  /// The earliest time >= t (now) from which `units` are free for `length` seconds; +inf when never.
  /// One of t, a running job's expected end or a booked reservation's end (free units grow only there).
  double earliest(double t, int64_t units, double length) const;
  /// Whether earliest(t, units, length) would be before `own_start` once the booked reservation of
  /// (`own_start`, `own_end`, `units`) is given back: the question compression asks of a reservation
  /// before planning it again (ReservationBook::compress), answered without changing the profile.
  /// Exact. O(steps of earliest before own_start).
  bool fits_before(double t, int64_t units, double length, double own_start, double own_end) const;
  /// `units` are free throughout [t, until), with the booked reservation of (`own_start`, `own_end`,
  /// `own_units`) given back (a job asking whether it may start before its own reservation; 0 units:
  /// none).
  bool free_throughout(double t, double until, int64_t units, double own_start = 0, double own_end = 0,
                       int64_t own_units = 0) const;

 private:
  PoolProfile(uint32_t consumable, int64_t total) : k_(consumable), total_(total), free_(total) {}
  void change(double start, double end, int64_t units);

  uint32_t k_;
  int64_t total_;     // units the pooled taskers offer, free when the run began
  StepProfile free_;  // free units over time
  // Per unit count: the first time from t where fewer are free, while the profile is unchanged (a cycle
  // asks it of every job of the categories that can place one)
  struct Dip {
    uint64_t version;
    double t, at;
  };
  uint64_t version_ = 0, given_back_ = 0;
  mutable std::unordered_map<int64_t, Dip> dips_;
};

}  // namespace colmatch
