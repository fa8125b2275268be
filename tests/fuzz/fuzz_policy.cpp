// libFuzzer target for the policy file of `colmatch simulate` (loaders/policy: Moab's keys and FBSNG's
// queues, process types, quotas and requirements): each input is a policy TOML; one accepted by the
// loader is simulated over the first 300 jobs of the bundled KTH sample, given three queues by size and
// three accounts (so FBSNG queues, quotas and requirements all bite), for at most 10 simulated days.
#include <string>

#include "engine/schedule/simulation.hpp"
#include "loaders/policy.hpp"
#include "loaders/swf.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace colmatch;

namespace {

const loaders::Dataset& kth_head() {
  static const loaders::Dataset ds = [] {
    loaders::Dataset d =
        loaders::load_swf(std::string(COLMATCH_SOURCE_DIR) + "/datasets/samples/kth_sp2_head3000.swf.gz");
    for (uint32_t j = 0; j < d.jobs.size(); ++j) {
      if (j >= 300) d.jobs.reject.set(j, 0);  // rejected with the first reason: out of the run
      const uint32_t p = d.jobs.slots[j];
      d.jobs.queue.set(j, d.jobs.queues.intern(p <= 1 ? "q1" : p <= 16 ? "q2" : "q3"));
      d.jobs.account.set(j, d.jobs.accounts.intern("p" + std::to_string(j % 3)));
    }
    if (d.jobs.reject_reason.empty()) d.jobs.reject_reason.push_back("out of the fuzzed slice");
    return d;
  }();
  return ds;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::run([&] {
    const std::string path = fuzz::temp_file("policy.toml", {reinterpret_cast<const char*>(data), size});
    SimConfig policy = loaders::read_policy_toml(path);
    policy.until = 864000;
    const loaders::Dataset& ds = kth_head();
    const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, policy, kernels::active());
    for (uint32_t j = 0; j < ds.jobs.size(); ++j)
      if (r.start[j] < ds.jobs.submit[j]) std::abort();  // started before its submit: a finding
  });
}
