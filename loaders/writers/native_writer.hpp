// Writers of the native format (docs/formats/native.md): any loaded Dataset can be saved and read
// back by loaders/native.hpp to the same catalog, taskers and jobs.
#pragma once

#include <string>

#include "loaders/dataset.hpp"

namespace colmatch::writers {

/// farm.toml: name, [policy], [global] (levels' combined values, written as fixed values), attributes.
void write_farm_toml(const std::string& path, const loaders::Dataset& ds);
/// taskers.jsonl, in input order, queue-level values only.
void write_taskers_jsonl(const std::string& path, const loaders::Dataset& ds);
/// hosts.jsonl; returns false (and writes nothing) when no host has a value of its own.
bool write_hosts_jsonl(const std::string& path, const loaders::Dataset& ds);
/// jobs.jsonl, in input order; a rejected job keeps its reason under "rejected".
void write_jobs_jsonl(const std::string& path, const loaders::Dataset& ds);

/// The texts of the four files (hosts: empty when no host has a value of its own).
std::string farm_toml_text(const loaders::Dataset& ds);
std::string taskers_jsonl_text(const loaders::Dataset& ds);
std::string hosts_jsonl_text(const loaders::Dataset& ds);
std::string jobs_jsonl_text(const loaders::Dataset& ds);

/// Why the native format cannot hold what `ds` schedules by, or "" when a saved farm matches as `ds`
/// does: the native farm dispatches by greatest power with no blocking queue, so a Slurm farm's
/// partitions as blocking queues, ConsecutiveBestFit and --mem-per-cpu limits (DispatchOptions) would be
/// lost and its jobs placed differently (issue 45: 137 jobs placed where Slurm places 57).
std::string native_cannot_hold(const loaders::Dataset& ds);

/// All of the above into folder `dir` as one OutputSet (text.hpp). Returns true when hosts.jsonl was
/// written. Throws WriteError.
bool save_native(const std::string& dir, const loaders::Dataset& ds);

}  // namespace colmatch::writers
