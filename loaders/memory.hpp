// A farm and its jobs given as columns in memory, without files (the Python module's colmatch.Farm,
// issue 11): farm.toml's text for the complex attributes, one array per tasker attribute, and the jobs'
// requests as strings in the native request syntax. The same rules as the native format apply (types,
// units, the Grid Engine catalog and level rules, request parsing); only the carrier differs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "loaders/dataset.hpp"

namespace colmatch::loaders {

/// One tasker attribute's values, one per tasker (row order): numbers (numeric attributes; NaN = the
/// tasker does not have it) or texts (any attribute: numeric ones in their units, "4G"; nullopt = does
/// not have it; a set-valued attribute's items separated by ',').
struct AttributeColumn {
  std::string name;
  std::vector<double> numbers;
  std::vector<std::optional<std::string>> texts;
};

/// The inputs. Every per-tasker vector is empty or holds one value per tasker name; every per-job
/// vector is empty (its default) or holds one value per job id.
struct MemoryInputs {
  std::string farm_toml;  ///< farm.toml's text: name, [policy], [[attribute]], [global]
  std::vector<std::string> tasker_names;
  std::vector<double> tasker_power;       ///< default 1 (or [policy] power's attribute)
  std::vector<std::string> tasker_hosts;  ///< default: no host
  std::vector<AttributeColumn> attributes;
  std::vector<std::string> job_ids, requests, soft, owners, groups, queues, accounts;
  std::vector<double> slots, priority, submit, runtime, walltime;  ///< slots default 1, times NaN
  /// Consumables the jobs request (per slot or per job as the attribute says), one AttributeColumn per
  /// consumable, a value per job (numbers, or texts in the attribute's units; NaN or nullopt = not
  /// requested: the attribute's default applies).
  std::vector<AttributeColumn> resources;
};

/// Builds the Dataset. Errors are LoadError naming the input ("farm", "taskers" or "jobs"), the row
/// (1-based, as a line) and the field ("attrs.arch", "slots"): a vector of the wrong length, an
/// unknown attribute, a value of the wrong type or out of range, a duplicate tasker name or job id.
/// A job whose request does not parse is kept as rejected, as in every format. O(taskers x columns +
/// jobs) plus request parsing (once per distinct request text).
Dataset load_memory(const MemoryInputs& in);

}  // namespace colmatch::loaders
