// A loaded farm: the attribute catalog, the taskers and the jobs, ready for the engine. Only the model:
// no parser state (each loader keeps its own), no output concerns (loaders/writers/).
#pragma once

#include <functional>
#include <string>

#include "engine/batch/dispatch.hpp"
#include "engine/model/capacity.hpp"
#include "engine/schedule/events.hpp"
#include "engine/schedule/policy.hpp"

namespace colmatch::loaders {

struct Dataset {
  Catalog catalog;
  TaskerTable taskers;
  JobTable jobs;                ///< rejected jobs carry their reason (file:line: job: field: why) in jobs.reject_reason
  std::string name;             ///< farm name (summary.json)
  std::string power_attribute;  ///< numeric attribute used as effective power; empty = "power" field
  SimConfig policy;             ///< farm.toml's [policy] for `colmatch simulate` (policy_defaults elsewhere)
  /// What `simulate` takes where a policy says nothing: SimConfig's defaults, but backfill = greedy for
  /// Altair Accelerator farms (its dispatcher goes through the buckets and starts each that can run).
  SimConfig policy_defaults;
  FarmEvents farm;  ///< the taskers' changes over time (LoadMode::OverTime; empty otherwise)
  InUse in_use;     ///< what the farm's running jobs hold now (`match`; Grid Engine's qstat)
  /// How `match` dispatches this farm's jobs: GreatestPower and no blocking queue unless the format
  /// says otherwise (Slurm: ConsecutiveBestFit on the CPUs, partitions as blocking queues).
  DispatchOptions dispatch;
  /// How the format's scheduler computed job j's priority, one line for `explain --job` (Grid Engine's
  /// sge_priority(5) terms); empty when the format says nothing beyond JobTable::priority.
  std::function<std::string(uint32_t j)> explain_priority;
};

/// What a farm is loaded for: one matching instant (`match`: the taskers as they are then) or a run
/// over time (`simulate`: every tasker the farm ever has, with Dataset::farm saying when each is up).
/// Formats whose farm does not change over time load the same in both.
enum class LoadMode : uint8_t { Snapshot, OverTime };

}  // namespace colmatch::loaders
