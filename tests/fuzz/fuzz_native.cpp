// libFuzzer targets for the native format, chosen at build time by COLMATCH_FUZZ_NATIVE_PART:
//   farm     the input is farm.toml (read with the demo taskers and jobs);
//   taskers  the input is hosts.jsonl --8<-- taskers.jsonl (with the demo farm.toml and jobs);
//   jobs     the input is jobs.jsonl (with the demo farm and taskers).
// Whatever loads is matched.
#include <cstring>

#include "loaders/native.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace colmatch;

#define DEMO COLMATCH_SOURCE_DIR "/datasets/demo/"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::run([&] {
    const std::string_view part = COLMATCH_FUZZ_NATIVE_PART;
    loaders::NativePaths p{DEMO "farm.toml", "", DEMO "taskers.jsonl", DEMO "jobs.jsonl"};
    if (part == "farm") {
      p.farm = fuzz::temp_file("farm.toml", std::string_view(reinterpret_cast<const char*>(data), size));
    } else if (part == "taskers") {
      const auto [hosts, taskers] = fuzz::split(data, size);
      p.hosts = fuzz::temp_file("hosts.jsonl", hosts);
      p.taskers = fuzz::temp_file("taskers.jsonl", taskers);
    } else {
      p.jobs = fuzz::temp_file("jobs.jsonl", std::string_view(reinterpret_cast<const char*>(data), size));
    }
    fuzz::match(loaders::load_native(p));
  });
}
