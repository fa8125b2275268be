// Internal to loaders/: what the Altair Accelerator reader's files share (loaders/vov.cpp reads the Tcl
// farm and jobs.jsonl and builds the dataset, loaders/vov_compile.cpp turns expansions into the engine's
// requests and choices, loaders/vov_native.cpp reads a farm in the native files with [accelerator]).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/jobs.hpp"
#include "engine/model/request.hpp"
#include "engine/model/vov.hpp"
#include "loaders/dataset.hpp"
#include "loaders/line_reader.hpp"
#include "loaders/vov_options.hpp"
#include "loaders/vov_tcl.hpp"

namespace colmatch::loaders {

// Where the farm's definitions were read, for errors: the taskers' file and the maps' file, and the
// field names they use there (Tcl: -resources, vtk_tasker_define, -map; native JSON/TOML: resources,
// name, map).
struct VovSources {
  std::string taskers, maps;
  bool native = false;
  const char* resources_field() const { return native ? "resources" : "-resources"; }
  const char* tasker_field() const { return native ? "name" : "vtk_tasker_define"; }
  const char* map_field() const { return native ? "accelerator.map.map" : "-map"; }
};

/// The dataset from the farm's definitions (`read_farm`, run beside the reading of `jobs_jsonl`, on
/// another thread; its errors come first) and the jobs: kinds expanded once each (seed 000), compiled
/// to prototypes, every job a copy of its kind's. Throws LoadError naming file, line and field.
Dataset build_vov(const std::function<VovTclFile()>& read_farm, const VovSources& src, const std::string& jobs_jsonl,
                  const ProgressFn& progress, const VovOptions& options);

/// An expanded list (vov::expand, held maps in place or none) as the engine's request over `cat`:
/// names with a numeric column are clauses `name >= N`, every other name an element of the set-valued
/// attribute `a_names`; with `top`, a top-level `name/N` of a consumable is a charge appended to
/// `charges` (attribute, amount) instead; a held map's marker asks nothing (the caller charges it).
Request compile_expansion(const vov::Expr& e, const Catalog& cat, uint32_t a_names, bool top,
                          std::vector<std::pair<uint32_t, double>>& charges);

/// A gated expansion (vov::expand_gated) as a choice of `protos` (JobBuilder::add_choice, set_gate): each
/// outcome's solutions compiled and interned once across the outcomes, the gate's maps as their
/// farm-wide pools (`map:NAME`). `cut` is set when some outcome had more than vov::kMaxSolutions.
/// Returns the choice's index. Throws ValueError as JobBuilder does.
uint32_t gated_choice_of(const vov::GatedExpansion& g, const Catalog& cat, uint32_t a_names, JobBuilder& protos,
                         uint8_t& cut);

}  // namespace colmatch::loaders
