// A loaded farm: the attribute catalog, the taskers and the jobs, ready for the engine. Only the model:
// no parser state (each loader keeps its own), no output concerns (loaders/writers/).
#pragma once

#include <string>

#include "engine/simulation.hpp"

namespace colmatch::loaders {

struct Dataset {
  Catalog catalog;
  TaskerTable taskers;
  JobTable jobs;                ///< rejected jobs carry their reason (file:line: job: field: why) in jobs.reject_reason
  std::string name;             ///< farm name (summary.json)
  std::string power_attribute;  ///< numeric attribute used as effective power; empty = "power" field
  SimPolicy policy;             ///< farm.toml's [policy] for `colmatch simulate` (defaults elsewhere)
};

}  // namespace colmatch::loaders
