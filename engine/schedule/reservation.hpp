// Backfill's reservations (seed 001, step 6; Moab RESERVATIONDEPTH; Mu'alem and Feitelson): the earliest
// time a blocked job fits, found from the running jobs' expected ends (start + walltime estimate). The
// book (engine/schedule/book.hpp) asks backfill's one question, "does this start delay a reservation?",
// at every depth; its implementations (EASY's at depth 1, kept ones of taskers or pooled deeper) share
// what this header holds: a reservation, a copy of the capacity to plan on, the running jobs released on
// it. Internal to engine/schedule/.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/placement/placer.hpp"
#include "engine/schedule/availability.hpp"
#include "engine/schedule/result.hpp"

namespace colmatch {

class SimWorld;

/// A reservation: the shadow time (seconds) and the placement the job would get then. Inactive: the job does not fit
/// even once every running job has ended (or no job is blocked).
struct Reservation {
  bool active = false;
  uint32_t job = UINT32_MAX;       ///< the job it is for
  double shadow = 0;               ///< when the job is expected to start (seconds)
  double end = 0;                  ///< shadow + the job's walltime estimate
  std::vector<Allocation> allocs;  ///< the placement it would get then (empty on a pooled farm: slots, not taskers)
  uint32_t category = UINT32_MAX;  ///< whose charges that placement takes (SimWorld::charged)
};

/// A copy of the capacity with a placer on it (never the world's own): what a reservation walk releases
/// running jobs on and places a job on. The placer records a choosing job's solution in SimWorld::chosen and
/// fits by the policy's fit consumable. Not copyable (the placer refers to the capacity beside it).
struct CapacityCopy {
  /// The configured capacity of w's farm.
  explicit CapacityCopy(SimWorld& w);
  CapacityCopy(const CapacityCopy&) = delete;
  CapacityCopy& operator=(const CapacityCopy&) = delete;
  Capacity cap;
  Placer placer;
};

/// Running job rj ends on `future` (a copy of the capacity a reservation walk releases jobs on): its
/// charges come back, those of consumables whose availability counts utilization through Availability's
/// copy of the held charges. `scratch` is storage reused across calls.
void release_running(SimWorld& w, uint32_t rj, Capacity& future, std::vector<HeldAmount>& scratch);

/// The units job j holds on a pooled farm (engine/schedule/pool_profile.hpp): its slots where it was
/// placed (none for a job removed).
int64_t units_held(const SimResult& res, uint32_t j);

}  // namespace colmatch
