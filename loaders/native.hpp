// The native colmatch format (docs/formats/native.md):
//   farm.toml            name, [policy] power = "<numeric attribute>", [[attribute]] tables,
//                        [global] fixed values and [global.load] load values of the global level
//   hosts.jsonl[.gz]     optional: {"name": "node01", "attrs": {...fixed...}, "load": {...load values...}}
//   taskers.jsonl[.gz]   {"name": "...", "host": "node01", "power": 1.5, "attrs": {"arch": "lx-amd64"},
//                         "utilized": {"slots": 2}}   (used by other than jobs: Moab's R.Utilized)
//   jobs.jsonl[.gz]      {"id": "...", "owner": "...", "group": "...", "priority": 0, "submit": 0,
//                         "slots": 1, "requests": "arch==lx-amd64 && mem>=4G", "soft": "ssd==true",
//                         "resources": {"mem": "2G"}, "allocation_rule": "$fill_up",
//                         "utilization": {"slots": 0.25}}   (the fraction of its charge it uses)
// JSON Lines are parsed with simdjson; TOML with toml++.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/dataset.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders {

/// What farm.toml says: the catalog, the farm's name and policy, and the global-level values (applied
/// when the taskers are built; each remembers its line for error messages).
struct FarmFile {
  std::string path;
  Catalog catalog;
  std::string name = "farm";
  std::string power_attribute;  ///< [policy] power: numeric attribute used as effective power, or empty
  SimConfig policy;             ///< the other [policy] keys (loaders/policy.hpp)
  struct GlobalValue {
    uint32_t attr;
    std::string text;
    ValueKind kind;
    size_t line;
  };
  std::vector<GlobalValue> globals;
};

/// Reads farm.toml. Throws LoadError naming the file, line and field (TOML syntax errors, unknown
/// keys, types or relops, Grid Engine catalog rules).
FarmFile read_farm_toml(const std::string& path);

/// The same from farm.toml's text held in memory; errors name `source` as their file.
FarmFile read_farm_toml_text(std::string_view text, const std::string& source);

/// Reads taskers (queue level) with the hosts of `hosts_path` (optional, "" for none) and the global
/// values of `farm`. A tasker's "host" that no hosts file line declares is a host without values of its
/// own. Throws LoadError on malformed JSON, unknown attributes, values of the wrong type, duplicate
/// names, and overrides the Grid Engine rules forbid (see TaskerBuilder). Empty lines are skipped.
/// A tasker's "utilized" amounts of consumables (what other than jobs uses there, for `simulate` under
/// resource_availability "utilized" or "combined") go to `utilized` when given: per consumable
/// (catalog.consumables() order), per tasker, or left empty when no tasker names one; a negative
/// amount or a non-consumable is an error naming line and field.
TaskerTable read_taskers_jsonl(const std::string& path, const FarmFile& farm, const std::string& hosts_path = "",
                               const ProgressFn& progress = {}, std::vector<std::vector<double>>* utilized = nullptr);

/// Reads jobs against `catalog`. Malformed JSON, a missing or duplicate id, or an unreadable file throw
/// LoadError; a job whose request or resources are invalid (unknown attribute, wrong type or unit,
/// a relop the type forbids) is kept as rejected, its reason (file:line: job: field: why) in
/// JobTable::reject_reason.
/// Read in parallel pieces (oneTBB): each job line reduced to its kind (the line but for its id, submit
/// time, runtime and walltime), one prototype read per kind and copied (JobBuilder::add_copies), ids
/// checked for repeats over the pieces; the errors and the table are those of
/// read_jobs_jsonl_sequential (tests/loaders/test_native.cpp compares them on random files).
/// Memory beyond the table: each kind's key and first line, and a piece's columns per job. `piece_bytes`:
/// the size of the pieces (4 MiB; tests make them small to have many).
JobTable read_jobs_jsonl(const std::string& path, const Catalog& catalog, const ProgressFn& progress = {},
                         size_t piece_bytes = size_t{4} << 20);

/// read_jobs_jsonl one line and one job at a time: the reference the parallel reader is tested against.
JobTable read_jobs_jsonl_sequential(const std::string& path, const Catalog& catalog, const ProgressFn& progress = {});

/// The job of jobs.jsonl `path` whose id is `id`, read as read_jobs_jsonl reads its line, as a one-job
/// table (its dependencies left out), or nullopt when the scan does not find it: `colmatch explain
/// --eligibility` on a file of millions of jobs. The file's pieces are searched in parallel for the
/// quoted id (memmem); only lines holding it are parsed, the first whose "id" is `id` is the job's, and
/// no other line is checked. Throws LoadError when that line is bad otherwise (an unknown key...).
/// nullopt also for an id that JSON must escape, or a line that writes it with escapes or does not
/// parse: the caller then reads the whole file (which reports such a line). Reads plain or gzip files.
std::optional<JobTable> find_job_jsonl(const std::string& path, const Catalog& catalog, std::string_view id,
                                       const ProgressFn& progress = {});

/// Sets `farm`'s global-level values on `b` (each error names farm.toml's line).
void apply_globals(const FarmFile& farm, TaskerBuilder& b);

/// A Dataset of `farm`'s catalog, name, power attribute and policy with these taskers and jobs.
Dataset dataset_from(FarmFile&& farm, TaskerTable taskers, JobTable jobs);

/// The native inputs of one run.
struct NativePaths {
  std::string farm, hosts, taskers, jobs;  ///< hosts may be empty
};

/// Reads all of them into one Dataset (the same errors as the readers above). A farm.toml with an
/// `[accelerator]` table describes an Altair Accelerator farm: read by load_vov_native (loaders/vov.hpp;
/// a hosts file is then an error; `policy`, the --policy file or "", gives its [policy.vov]).
Dataset load_native(const NativePaths& paths, const ProgressFn& progress = {}, const std::string& policy = "");

/// A Dataset of the native inputs with the one job `id` of the jobs file (find_job_jsonl), or nullopt
/// when the scan does not find it or the farm is an Accelerator one (the caller then loads everything).
std::optional<Dataset> load_native_job(const NativePaths& paths, std::string_view id, const ProgressFn& progress = {});

}  // namespace colmatch::loaders
