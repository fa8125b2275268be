// Why a job category's jobs are not placed, as text (colmatch match's results.csv reasons, colmatch explain):
// the step of its eligibility chain that leaves no tasker, its capacity steps in the units requests use,
// and the farm-wide pools it waits for (Altair Accelerator's counted resource maps, Grid Engine's global
// consumables). From the counts match/eligibility.hpp computes; nothing here decides eligibility.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/match/categories.hpp"
#include "engine/match/eligibility.hpp"
#include "engine/model/capacity.hpp"
#include "engine/model/jobs.hpp"

namespace colmatch {

/// What a step checks, as text: the term's canonical text, `name>=charge` for a capacity step, or
/// `no name (forced, not requested)` for a forced step.
std::string describe_step(const Catalog& catalog, const Request& request, const ChargeVector& need,
                          const EligibilityStep& step);

/// What a job charging `need` waits for on the farm-wide (global) pools `capacity` holds now: for each
/// pool short of its charge, `<label or name>: <free> of <configured> free` (and `, <charge> needed`
/// when it needs more than 1); "" when none is short. Altair Accelerator: the counted map a job waits
/// for (issue 27, `License:spice: 0 of 4 free`).
std::vector<std::string> global_pool_waits(const Catalog& catalog, const Capacity& capacity, const ChargeVector& need);

/// The reason text's tail for a job waiting on farm-wide pools: "waiting for A: ... and B: ..." over its
/// charge `need`, or, for a job that chooses among solutions (`solutions_need`, one charge each), what
/// each solution waits for, " or " between; "" when no global pool is short.
std::string global_pool_wait_text(const Catalog& catalog, const Capacity& capacity, const ChargeVector& need,
                                  const std::vector<ChargeVector>* solutions_need = nullptr);

/// The short reason of a pending job of a category (results.csv), from its step counts: for no eligible
/// tasker, the first step that leaves none ("no eligible tasker: gpu_model==A100 matches 0 of 1523"); for
/// no free capacity, how many taskers are eligible and, given the `capacity` left after dispatch, the
/// farm-wide (global) pools it waits for (global_pool_wait_text: a licence, an Accelerator counted
/// resource map: "waiting for License:spice: 0 of 4 free"; `solutions_need` for a category that
/// chooses). `taskers`: the farm's size. A job that a gate keeps waiting (`gate_wait`, from gate_wait_text)
/// says only that.
/// `shape` (host_rule_shape): a Grid Engine parallel job's shape, said instead of "none with room now"
/// (its taskers may have room, not in that shape).
std::string pending_reason(const Catalog& catalog, const Request& request, const ChargeVector& need,
                           const CategoryEligibility& e, uint64_t taskers, bool no_eligible,
                           const Capacity* capacity = nullptr,
                           const std::vector<ChargeVector>* solutions_need = nullptr, const std::string& gate_wait = {},
                           const std::string& shape = {});

/// How a category of Grid Engine's host rules places its slots, for a pending reason: "6 slots on one host
/// ($pe_slots)", "2 to 8 slots host after host ($fill_up)", "3 slots, one a host in turn ($round_robin)",
/// "4 slots, 2 a host (allocation_rule 2)"; "" for any other rule.
std::string host_rule_shape(const Categories& cats, size_t c);

/// For a category whose choice has a gate (JobTable::Choice::gate) and whose outcome with the pools of
/// `capacity` is Wait: "waiting for <pool>: <free> of <configured> free"; else "".
std::string gate_wait_text(const Catalog& catalog, const JobTable& jobs, const Categories& cats, size_t c,
                           const Capacity& capacity);

}  // namespace colmatch
