// The native colmatch format (README, "Native format"):
//   farm.toml            name, [policy] power = "<numeric attribute>", [[attribute]] tables,
//                        [global] fixed values and [global.load] load values of the global level
//   hosts.jsonl[.gz]     optional: {"name": "node01", "attrs": {...fixed...}, "load": {...load values...}}
//   taskers.jsonl[.gz]   {"name": "...", "host": "node01", "power": 1.5, "attrs": {"arch": "lx-amd64"}}
//   jobs.jsonl[.gz]      {"id": "...", "owner": "...", "group": "...", "priority": 0, "submit": 0,
//                         "slots": 1, "requests": "arch==lx-amd64 && mem>=4G", "soft": "ssd==true",
//                         "resources": {"mem": "2G"}, "allocation_rule": "$fill_up"}
// JSON Lines are parsed with simdjson; TOML with toml++.
#pragma once

#include <string>

#include "loaders/dataset.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders {

/// Reads farm.toml into ds.catalog, ds.name and ds.power_attribute. Throws LoadError naming the file,
/// line and field (TOML syntax errors, unknown types or relops, Grid Engine catalog rules).
void read_farm_toml(const std::string& path, Dataset& ds);

/// Reads taskers into ds.taskers (catalog must be loaded), with the hosts of `hosts_path` (optional,
/// "" for none) and the global values of farm.toml. A tasker's "host" that no hosts file line declares
/// is a host without values of its own. Throws LoadError on malformed JSON, unknown attributes, values
/// of the wrong type, duplicate names, and overrides the Grid Engine rules forbid (see TaskerBuilder).
/// Empty lines are skipped.
void read_taskers_jsonl(const std::string& path, Dataset& ds, const ProgressFn& progress = {},
                        const std::string& hosts_path = "");

/// Reads jobs into ds.jobs. Malformed JSON, a missing or duplicate id, or an unreadable file throw
/// LoadError; a job whose request or resources are invalid (unknown attribute, wrong type or unit,
/// a relop the type forbids) is kept as rejected with the reason, also appended to ds.job_errors.
void read_jobs_jsonl(const std::string& path, Dataset& ds, const ProgressFn& progress = {});

/// Writers: the same formats, so any import can be saved and read back to the same dataset.
/// Each writes to a temporary name and renames it into place. Throw LoadError on I/O failure.
void write_farm_toml(const std::string& path, const Dataset& ds);
void write_taskers_jsonl(const std::string& path, const Dataset& ds);
/// Writes the hosts file; returns false (and writes nothing) when no host has a value of its own.
bool write_hosts_jsonl(const std::string& path, const Dataset& ds);
void write_jobs_jsonl(const std::string& path, const Dataset& ds);

/// Writes `content` to `path` atomically: a temporary file in the same folder, then rename.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace colmatch::loaders
