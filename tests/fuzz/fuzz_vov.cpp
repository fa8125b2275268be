// libFuzzer target: Altair Accelerator resource lists (engine/model/vov.hpp). The input is a job's resource
// list, then --8<-- and definitions, one per line: a map `NAME=EXPR` (or `NAME#COUNT`), a `$` resource
// `$NAME=LIST`, a tasker symbol `@NAME=LIST`; the list must parse or be refused with a ResourceError,
// print back to an equal list, and expand (maps that loop, nest deep or run out included, `$`
// resources) without a crash or a stall; read as a tasker's list, its `@NAME@` symbols are replaced
// (loaders/vov.hpp: nesting and size bounded) without a crash or a stall; its scheduling solutions and,
// should its walk meet a cycle, the outcomes per combination of the maps before it, within their bounds.
#include <string>

#include "engine/model/vov.hpp"
#include "loaders/vov.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace colmatch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::run([&] {
    const auto [list, defs] = fuzz::split(data, size);
    const vov::Expr e = vov::parse_resources(list);
    if (vov::to_text(vov::parse_resources(vov::to_text(e))) != vov::to_text(e)) std::abort();
    std::map<std::string, vov::ResourceMap, std::less<>> maps;
    loaders::VovOptions options;
    for (size_t at = 0; at < defs.size();) {
      const size_t nl = std::min(defs.find('\n', at), defs.size());
      const std::string_view line = defs.substr(at, nl - at);
      at = nl + 1;
      const size_t eq = line.find('='), hash = line.find('#');
      if ((line.starts_with('$') || line.starts_with('@')) && eq != std::string_view::npos && eq > 1) {
        (line[0] == '$' ? options.dollars : options.symbols)[std::string(line.substr(1, eq - 1))] =
            std::string(line.substr(eq + 1));
        continue;
      }
      if (eq != std::string_view::npos && eq > 0)
        maps[std::string(line.substr(0, eq))].map = vov::parse_resources(line.substr(eq + 1));
      else if (hash != std::string_view::npos && hash > 0)
        maps[std::string(line.substr(0, hash))].count = line.size() - hash;
    }
    vov::JobResources job;
    job.resources = std::string(list);
    job.command = "vov /usr/bin/time /tools/bin/spice -b x.sp";
    job.owner = "john";
    job.group = "g";
    try {  // as a tasker's list: symbols replaced within the bounds, or refused
      if (loaders::replace_tasker_symbols(std::string(list), "host1", 4, options).size() > 65536 + 4096) std::abort();
    } catch (const std::invalid_argument&) {}
    size_t calls = 0;
    const vov::Expansion x = vov::expand(
        job, maps, [&](std::string_view, double) { return ++calls % 3 != 0; }, options.dollars);
    if (x.max_depth_count > 4096) std::abort();  // bounded by the input's size
    // issue 27: the scheduling solutions (bounded at kMaxSolutions), what they ask together, and the walk
    // of a list that meets a cycle, decided per combination of the counted maps before it (at most 8)
    const vov::Expansion marked = vov::expand(
        job, maps, [](std::string_view, double) { return true; }, options.dollars, vov::Wrappers::standard(), true);
    bool cut = false;
    const std::vector<vov::Solution> sols = vov::solutions(marked.expanded, vov::kMaxSolutions, cut);
    if (sols.empty() || sols.size() > vov::kMaxSolutions) std::abort();
    if (vov::chooses(marked.expanded) != (sols.size() > 1 || cut) && !cut) std::abort();
    (void)vov::without_held(marked.expanded);
    if (marked.outcome == vov::Expansion::Outcome::Cycle) {
      const vov::GatedExpansion g = vov::expand_gated(job, maps, options.dollars, vov::Wrappers::standard(), 8);
      if (g.gate.size() > 8 || (!g.too_wide && g.by_mask.size() != (size_t{1} << g.gate.size()))) std::abort();
    }
  });
}
