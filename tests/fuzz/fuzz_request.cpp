// libFuzzer target: the request parser (hard and soft requests) against the demo farm's catalog, then
// the request's eligibility over the demo taskers by the kernels and by the row path, which must agree.
#include "loaders/native.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace colmatch;

namespace {
const loaders::Dataset& demo() {
  static const loaders::Dataset ds = loaders::load_native({COLMATCH_SOURCE_DIR "/datasets/demo/farm.toml", "",
                                                           COLMATCH_SOURCE_DIR "/datasets/demo/taskers.jsonl",
                                                           COLMATCH_SOURCE_DIR "/datasets/demo/jobs.jsonl"});
  return ds;
}
// The same catalog read as the seed's Grid Engine 6.0 design (the demo farm follows SGE 8.1.9).
const Catalog& design60() {
  static const Catalog c = [] {
    Catalog x = demo().catalog;
    x.reading = GridEngineReading::Design60;
    return x;
  }();
  return c;
}
}  // namespace

// The input's last byte picks the reading (odd: 6.0-design), so both parsers are fuzzed.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const loaders::Dataset& ds = demo();
  const Catalog& catalog = size > 0 && (data[size - 1] & 1) ? design60() : ds.catalog;
  return fuzz::run([&] {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const Request r = parse_request(text, catalog);
    (void)canonical_text(r, catalog);
    const std::vector<double> need(catalog.consumables().size(), 0.0);
    const CategoryEligibility e = evaluate_category(catalog, ds.taskers, r, &r, need, kernels::active());
    for (uint32_t t = 0; t < ds.taskers.size(); ++t)
      if (e.eligible.contains(t) != tasker_eligible(catalog, ds.taskers, r, need, t)) std::abort();
  });
}
