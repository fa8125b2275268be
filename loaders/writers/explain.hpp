// `colmatch explain`: why one job (or one job category) is where it is, from the match that was run:
// each step of its category's eligibility chain with the taskers passing it alone and those left after
// it, the first step that leaves none, soft tiers, and for a job with eligible taskers but no room,
// the largest free amount of each charged consumable on them (issue 11). Over time (simulate), a job's
// start or its reason at the last cycle that considered it, then its category's steps.
#pragma once

#include <string>

#include "engine/batch/matcher.hpp"
#include "engine/schedule/simulation.hpp"
#include "loaders/dataset.hpp"

namespace colmatch::writers {

/// The explanation of job `j` (its status, its category's steps, its reason), as text.
std::string explain_job(const loaders::Dataset& ds, const MatchOutcome& m, uint32_t j);

/// Job `j`'s eligibility alone (colmatch explain --eligibility): rejected and why, or its category's
/// steps and eligible taskers, with no dispatch outcome (that needs every job of the batch). `m` needs
/// its categories and eligibility only.
std::string explain_job_eligibility(const loaders::Dataset& ds, const MatchOutcome& m, uint32_t j);

/// The explanation of category `c` (its steps and eligible taskers), as text; `room` false leaves out
/// the room on the eligible taskers (a simulation's capacity is not the batch match's).
std::string explain_category(const loaders::Dataset& ds, const MatchOutcome& m, size_t c, bool room = true);

/// The explanation of job `j` in simulation `r` (colmatch explain --simulate): when it started, where,
/// whether by backfill; or, pending, the reason at the last cycle that considered it (held, waiting
/// for a dependency, throttled by which credential and limit, behind a higher-priority job, would
/// delay a reservation, no free capacity, no eligible tasker, a priority gap) with the run's last
/// cycle time; under Slurm's priority/multifactor (`policy`, the run's) its priority then with each factor,
/// as `sprio -l` shows them; then its category's eligibility steps from `m` (a batch match of the same
/// dataset, for its categories and steps).
std::string explain_simulated_job(const loaders::Dataset& ds, const SimResult& r, const MatchOutcome& m, uint32_t j,
                                  const SimConfig& policy);

}  // namespace colmatch::writers
