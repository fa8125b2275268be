// libFuzzer target: Altair Accelerator resource lists (engine/vov.hpp). The input is a job's resource
// list, then --8<-- and definitions, one per line: a map `NAME=EXPR` (or `NAME#COUNT`), a `$` resource
// `$NAME=LIST`, a tasker symbol `@NAME=LIST`; the list must parse or be refused with a ResourceError,
// print back to an equal list, and expand (maps that loop, nest deep or run out included, `$`
// resources) without a crash or a stall; read as a tasker's list, its `@NAME@` symbols are replaced
// (loaders/vov.hpp: nesting and size bounded) without a crash or a stall.
#include <string>

#include "engine/vov.hpp"
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
  });
}
