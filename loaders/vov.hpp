// `--format vov`: an Altair Accelerator farm (issue 10). taskers.tcl and resources.tcl in the Tcl subset
// of loaders/vov_tcl.hpp, jobs.jsonl one job per line:
//   {"id": "j1", "resources": "RAM/4000 License:spice", "command": "vov spice x.sp", "owner": "john",
//    "group": "regression", "priority": "normal", "expected_duration": 32,
//    "submit": 0, "runtime": 30, "walltime": 60}          (every field but id optional)
// Each job's list is expanded as seed 000 says (engine/model/vov.hpp) and compiled to the engine's request:
//  - a resource name some tasker offers with a quantity (`name#N`, `name/N`) is a numeric complex
//    attribute of the same name: a tasker offering `name` has it unbounded (MAXINT), `name#N` has N; a
//    job's `name` is `name >= 1`, `name#N` is `name >= N`, `!name` is the negation (a tasker without
//    it passes);
//  - every other name (offered only as an attribute, `linux64`, `License:x`, or by no tasker) is an
//    element of one set-valued attribute `resources` (string, dictionary-encoded, its elements
//    indexed): a job's `name`, `name#N` or `name/N` is `resources==name`, true where the tasker's set
//    holds it (MAXINT >= N). A farm with thousands of such names has one column, not one per name, and
//    a clause on a rare name marks the few sets holding it;
//  - a name some tasker offers as `name/N` is a consumable of N there; a job's `name/N` at the top level
//    of its list charges N (inside an OR or a NOT it only needs N configured);
//  - every tasker offers `CPUS/<-CPUS>` (each job takes CPUS/1 unless it asks for more), `PERCENT/100`
//    and `TIMELEFT` unbounded; the eligible tasker with the greatest -power wins (seed 000);
//  - a counted map M is a farm-wide pool, the consumable `map:M` on the global level with its count: a
//    job that maps through it holds one unit, taken in dispatch order in a match and given back when the
//    job ends in simulate; a job finding none left waits (no free capacity, `map:M`);
//  - a cycle in the maps rejects the job naming its path; an expansion curtailed past the depth of 30 is
//    matched as VOV matches it, and the job carries the note `depth limit` (VOV curtails silently:
//    results.csv says so beside its outcome, summary.json counts such jobs under "notes");
//  - a job waiting for a counted map with no unit left is pending for no free capacity, and its reason
//    names the map's pool ("the global pool of map:License:spice has 0 left, 1 needed").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/model/vov.hpp"
#include "loaders/dataset.hpp"
#include "loaders/line_reader.hpp"
#include "loaders/vov_options.hpp"

namespace colmatch::loaders {

/// Loads the farm and its jobs. `resources_tcl` may be empty. Throws LoadError naming file, line and
/// field (or command) for bad input, among them a tasker's `@NAME@` with no definition; a job whose
/// resources do not parse, whose maps loop before any counted map or whose `$NAME` has no definition,
/// or whose list is past VovOptions::max_expanded_resources, is kept as rejected with the reason.
/// Memory: the jobs' own columns, plus what is distinct (kinds, expansions within that bound, one pool
/// per counted map some job holds, per category one charge per consumable).
Dataset load_vov(const std::string& taskers_tcl, const std::string& resources_tcl, const std::string& jobs_jsonl,
                 const ProgressFn& progress = {}, const VovOptions& options = {});

/// farm.toml has an `[accelerator]` table: the native files describe an Altair Accelerator farm (read
/// with load_vov_native, not as Grid Engine attributes). Throws LoadError for bad TOML.
bool is_accelerator_farm(const std::string& farm_toml);

/// How `simulate` schedules an Accelerator farm where its policy says nothing (issue 27): backfill =
/// "greedy", as Accelerator's dispatcher goes through the buckets (job categories) by priority and
/// dispatches each one that can run, a bucket that cannot waiting without holding back the others.
SimConfig accelerator_policy_defaults();

/// The same farm as load_vov, in the native files (`--farm`), so that an Accelerator farm is described
/// in colmatch's own format with nothing compiled away:
///   farm.toml       name = "...", [policy] (simulation keys and [policy.vov]), and
///                   [accelerator] with [[accelerator.map]] name = "License:spice", count = 2,
///                   map = "EXPR" (count and map optional: vtk_resourcemap_set's NAME COUNT -map)
///   taskers.jsonl   {"name": "n1", "host": "n1", "resources": "linux64 RAM/8000 @STD@", "cpus": 4,
///                    "power": 100}   (name or host, the other defaults to it; cpus 1, power 1)
///   jobs.jsonl      as load_vov's (resources, command, owner, group, priority, expected_duration, ...)
/// `policy` (--policy, may be empty) gives [policy.vov] instead of farm.toml's. Throws LoadError naming
/// file, line and field for bad input (unknown keys too); jobs as load_vov.
Dataset load_vov_native(const std::string& farm_toml, const std::string& taskers_jsonl, const std::string& jobs_jsonl,
                        const ProgressFn& progress = {}, const std::string& policy = "");

/// A tasker's list with its `@NAME@` symbols replaced (see VovOptions::symbols); nested symbols are
/// replaced up to 8 deep. Throws std::invalid_argument naming the symbol when it has no definition,
/// when it nests deeper, when the list grows past 65,536 bytes or takes more than 65,536 replacements.
std::string replace_tasker_symbols(const std::string& resources, const std::string& host, uint32_t cpus,
                                   const VovOptions& options);

}  // namespace colmatch::loaders
