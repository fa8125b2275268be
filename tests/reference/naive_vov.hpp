// The reference for Altair Accelerator farms (issue 10): a naive per-job expander and matcher. Each job's
// list is expanded on its own (no sharing between jobs), by recursion over the resource names, following
// seed 000 as colmatch reads it (engine/model/vov.hpp): appended Priority:, Tool:, User:, Group:, `$`
// resources, maps replaced until a name is in none, counted maps held, cycles, the depth count of 30,
// TIMELEFT. The expanded expression is then evaluated against every tasker's own resource list, and the
// job goes to the eligible tasker with room and the greatest power (ties: the one defined first). No
// columns, no categories, no catalog: `--format vov` is compared against this. Shares only the
// notation's parser and the tool rule (vov::parse_resources, vov::tool_of), tested on their own.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace colmatch::naive {

/// One tasker: what vtk_tasker_define says.
struct VovTasker {
  std::string name;
  std::string resources;  ///< its list (an AND of tokens)
  uint32_t cpus = 1;
  double power = 1;
};

/// One resource map: units farm-wide and/or the expression it maps to.
struct VovMap {
  std::optional<uint64_t> count;
  std::optional<std::string> map;
};

/// One job, as jobs.jsonl says.
struct VovJob {
  std::string id, resources, command, owner, group, priority;
  double expected_duration = 0;
  double submit = 0, runtime = 1;  ///< seconds (vov_simulate); runtime > 0
};

/// The outcome per job, in input order: the tasker's name when assigned; otherwise empty and `status`
/// says why ("pending: no eligible tasker", "pending: no room", "rejected").
struct VovOutcome {
  std::vector<std::string> tasker;
  std::vector<std::string> status;
  std::vector<bool> curtailed;  ///< the expansion passed the depth count of 30
};

/// Per job, in input order: when it started (NaN: never) and on which tasker.
struct VovSchedule {
  std::vector<double> start;
  std::vector<std::string> tasker;
};

/// Matches `jobs` in input order (they share one priority and submit time) on a farm whose maps and `$`
/// resources are `maps` and `dollars`. O(jobs x taskers x list size).
VovOutcome vov_match(const std::vector<VovTasker>& taskers, const std::map<std::string, VovMap>& maps,
                     const std::map<std::string, std::string>& dollars, const std::vector<VovJob>& jobs);

/// Replays `jobs` over time as Accelerator's dispatcher does (`backfill = "greedy"`): at every submit
/// and every end (ends first), each waiting job in order of submit time (then input order) that can be
/// placed now starts, as vov_match places it; a job holds its charges and its counted maps' units until
/// it ends (start + runtime). O(events x jobs x taskers x list size).
VovSchedule vov_simulate(const std::vector<VovTasker>& taskers, const std::map<std::string, VovMap>& maps,
                         const std::map<std::string, std::string>& dollars, const std::vector<VovJob>& jobs);

}  // namespace colmatch::naive
