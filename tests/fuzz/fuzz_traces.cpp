// libFuzzer targets for the two-file trace formats, chosen at build time by COLMATCH_FUZZ_FORMAT
// ("google2011", "openb", "dirac" or "swf"): the input is FIRST --8<-- SECOND (machine events / task
// events, nodes / pods, resources / JDL; an SWF log is one file, or with a second part a CERIT-SC log and
// its machines file), loaded through the format registry as
// the CLI does, then matched (an SWF log also simulated; a Google trace also loaded over time, with its
// machine events, and simulated).
#include <map>

#include "engine/schedule/simulation.hpp"
#include "loaders/formats.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace colmatch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::run([&] {
    const std::string format = COLMATCH_FUZZ_FORMAT;
    const auto [first, second] = fuzz::split(data, size);
    static const std::map<std::string, std::pair<std::string, std::string>> options{
        {"google2011", {"machines", "tasks"}},
        {"openb", {"nodes", "pods"}},
        {"dirac", {"resources", "jdl"}},
        {"swf", {"log", "machines"}}};  // an SWF log alone, or a CERIT-SC log and its machines file
    const auto& [a, b] = options.at(format);
    loaders::FormatArgs args{{a, fuzz::temp_file(a, first)}};
    if (format != "swf" || !second.empty()) args[b] = fuzz::temp_file(b, second);
    const loaders::Dataset ds = loaders::load_format(*loaders::find_format(format), args);
    fuzz::match(ds);
    SimConfig policy;  // over time, bounded to 10 simulated days
    policy.backfill = BackfillPolicy::Easy;
    policy.until = 864000;
    if (format == "swf") (void)simulate(ds.catalog, ds.taskers, ds.jobs, policy, kernels::active());
    if (format == "google2011") {
      const loaders::Dataset t =
          loaders::load_format(*loaders::find_format(format), args, {}, loaders::LoadMode::OverTime);
      (void)simulate(t.catalog, t.taskers, t.jobs, policy, kernels::active(), t.farm);
    }
  });
}
