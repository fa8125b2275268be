// The native colmatch format (README, "Native format"):
//   farm.toml            name, [policy] power = "<numeric attribute>", [[attribute]] tables
//   taskers.jsonl[.gz]   {"name": "...", "power": 1.5, "attrs": {"arch": "lx-amd64", "mem": "16G"}}
//   jobs.jsonl[.gz]      {"id": "...", "owner": "...", "group": "...", "priority": 0, "submit": 0,
//                         "slots": 1, "requests": "arch==lx-amd64 && mem>=4G", "resources": {"mem": "2G"}}
// JSON Lines are parsed with simdjson; TOML with toml++.
#pragma once

#include <string>

#include "loaders/dataset.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders {

/// Reads farm.toml into ds.catalog, ds.name and ds.power_attribute. Throws LoadError naming the file,
/// line and field (TOML syntax errors, unknown types or relops, Grid Engine catalog rules).
void read_farm_toml(const std::string& path, Dataset& ds);

/// Reads taskers into ds.taskers (catalog must be loaded). Throws LoadError on malformed JSON,
/// unknown attributes, values of the wrong type, duplicate names. Empty lines are skipped.
void read_taskers_jsonl(const std::string& path, Dataset& ds, const ProgressFn& progress = {});

/// Reads jobs into ds.jobs. Malformed JSON, a missing or duplicate id, or an unreadable file throw
/// LoadError; a job whose request or resources are invalid (unknown attribute, wrong type or unit,
/// a relop the type forbids) is kept as rejected with the reason, also appended to ds.job_errors.
void read_jobs_jsonl(const std::string& path, Dataset& ds, const ProgressFn& progress = {});

/// Writers: the same formats, so any import can be saved and read back to the same dataset.
/// Each writes to a temporary name and renames it into place. Throw LoadError on I/O failure.
void write_farm_toml(const std::string& path, const Dataset& ds);
void write_taskers_jsonl(const std::string& path, const Dataset& ds);
void write_jobs_jsonl(const std::string& path, const Dataset& ds);

/// Writes `content` to `path` atomically: a temporary file in the same folder, then rename.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace colmatch::loaders
