// `--format vov`: an Altair Accelerator farm (issue 10). taskers.tcl and resources.tcl in the Tcl subset
// of loaders/vov_tcl.hpp, jobs.jsonl one job per line:
//   {"id": "j1", "resources": "RAM/4000 License:spice", "command": "vov spice x.sp", "owner": "john",
//    "group": "regression", "priority": "normal", "expected_duration": 32,
//    "submit": 0, "runtime": 30, "walltime": 60}          (every field but id optional)
// Each job's list is expanded as seed 000 says (engine/vov.hpp) and compiled to the engine's request:
//  - a resource name is a numeric complex attribute of the same name: a tasker offering `name` has it
//    unbounded (MAXINT), `name#N` has N; a job's `name` is `name >= 1`, `name#N` is `name >= N`,
//    `!name` is the negation (a tasker without it passes);
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

#include <string>

#include "loaders/dataset.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders {

/// Loads the farm and its jobs. `resources_tcl` may be empty. Throws LoadError naming file, line and
/// field (or command) for bad input; a job whose resources do not parse or whose maps loop is kept as
/// rejected with the reason.
Dataset load_vov(const std::string& taskers_tcl, const std::string& resources_tcl, const std::string& jobs_jsonl,
                 const ProgressFn& progress = {});

}  // namespace colmatch::loaders
