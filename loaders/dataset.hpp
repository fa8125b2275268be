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

  /// Global-level values read from farm.toml, applied when the taskers are built.
  struct GlobalValue {
    uint32_t attr;
    std::string text;
    ValueKind kind;
    size_t line;  ///< in farm_path
  };
  std::vector<GlobalValue> global_values;
  std::string farm_path;
};

}  // namespace colmatch::loaders
