// libFuzzer targets for the two-file trace formats, chosen at build time by COLMATCH_FUZZ_FORMAT
// ("google2011", "openb" or "dirac"): the input is FIRST --8<-- SECOND (machine events / task events,
// nodes / pods, resources / JDL), loaded through the format registry as the CLI does, then matched.
#include <map>

#include "loaders/formats.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace colmatch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::run([&] {
    const std::string format = COLMATCH_FUZZ_FORMAT;
    const auto [first, second] = fuzz::split(data, size);
    static const std::map<std::string, std::pair<std::string, std::string>> options{
        {"google2011", {"machines", "tasks"}}, {"openb", {"nodes", "pods"}}, {"dirac", {"resources", "jdl"}}};
    const auto& [a, b] = options.at(format);
    loaders::FormatArgs args{{a, fuzz::temp_file(a, first)}, {b, fuzz::temp_file(b, second)}};
    fuzz::match(loaders::load_format(*loaders::find_format(format), args));
  });
}
