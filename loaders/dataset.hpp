// A loaded farm: the attribute catalog, the taskers and the jobs, ready for the engine.
#pragma once

#include <string>
#include <vector>

#include "engine/columns.hpp"

namespace colmatch::loaders {

struct Dataset {
  Catalog catalog;
  TaskerTable taskers;
  JobTable jobs;
  std::string name;                  ///< farm name (summary.json)
  std::string power_attribute;       ///< numeric attribute used as effective power; empty = "power" field
  std::vector<std::string> job_errors;  ///< one message per rejected job (file:line: field: reason)
};

}  // namespace colmatch::loaders
