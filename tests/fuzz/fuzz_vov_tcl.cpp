// libFuzzer target: the Tcl subset of Accelerator's taskers.tcl and resources.tcl (loaders/vov_tcl.hpp).
// Every input is read or refused with a LoadError; each tasker's resource list is then parsed as a
// tasker's, each map as a job's (refusals are clean too).
#include "engine/model/vov.hpp"
#include "loaders/vov_tcl.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace colmatch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::run([&] {
    const loaders::VovTclFile f =
        loaders::parse_vov_tcl(std::string(reinterpret_cast<const char*>(data), size), "fuzz.tcl");
    for (const auto& t : f.taskers) (void)vov::parse_resources(t.resources, false);
    for (const auto& m : f.maps)
      if (m.map) (void)vov::parse_resources(*m.map);
  });
}
