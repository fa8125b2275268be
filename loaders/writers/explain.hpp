// `colmatch explain`: why one job (or one job category) is where it is, from the match that was run:
// each step of its category's eligibility chain with the taskers passing it alone and those left after
// it, the first step that leaves none, soft tiers, and for a job with eligible taskers but no room,
// the largest free amount of each charged consumable on them (issue 11).
#pragma once

#include <string>

#include "engine/matcher.hpp"
#include "loaders/dataset.hpp"

namespace colmatch::writers {

/// The explanation of job `j` (its status, its category's steps, its reason), as text.
std::string explain_job(const loaders::Dataset& ds, const MatchOutcome& m, uint32_t j);

/// The explanation of category `c` (its steps and eligible taskers), as text.
std::string explain_category(const loaders::Dataset& ds, const MatchOutcome& m, size_t c);

}  // namespace colmatch::writers
