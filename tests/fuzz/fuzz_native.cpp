// libFuzzer targets for the native format, chosen at build time by COLMATCH_FUZZ_NATIVE_PART:
//   farm     the input is farm.toml (read with the demo taskers and jobs; with the Accelerator demo's
//            when it has an [accelerator] table);
//   taskers  the input is hosts.jsonl --8<-- taskers.jsonl (with the demo farm.toml and jobs); a first
//            part "accelerator" reads the second as an Accelerator farm's taskers (datasets/demo/vov_native);
//   jobs     the input is jobs.jsonl (with the demo farm and taskers), read in parallel pieces of 64 bytes
//            and line by line (read_jobs_jsonl_sequential): the same table or the same error, else abort;
//            each of its first 8 jobs that find_job_jsonl (explain --eligibility) finds must be the
//            job the readers read;
//            a first part "accelerator" reads the second as an Accelerator farm's jobs (the parallel reader
//            of loaders/vov.cpp).
// Whatever loads is matched.
#include <cstring>

#include "loaders/errors.hpp"
#include "loaders/native.hpp"
#include "loaders/writers/native_writer.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace colmatch;

#define DEMO COLMATCH_SOURCE_DIR "/datasets/demo/"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::run([&] {
    const std::string_view part = COLMATCH_FUZZ_NATIVE_PART;
    loaders::NativePaths p{DEMO "farm.toml", "", DEMO "taskers.jsonl", DEMO "jobs.jsonl"};
    const loaders::NativePaths vov{DEMO "vov_native/farm.toml", "", DEMO "vov_native/taskers.jsonl",
                                   DEMO "vov_native/jobs.jsonl"};
    if (part == "farm") {
      const std::string_view text(reinterpret_cast<const char*>(data), size);
      if (text.find("[accelerator]") != std::string_view::npos) p = vov;
      p.farm = fuzz::temp_file("farm.toml", text);
    } else if (part == "taskers") {
      const auto [hosts, taskers] = fuzz::split(data, size);
      if (hosts == "accelerator") p = vov;
      else p.hosts = fuzz::temp_file("hosts.jsonl", hosts);
      p.taskers = fuzz::temp_file("taskers.jsonl", taskers);
    } else {
      const std::string_view text(reinterpret_cast<const char*>(data), size);
      if (text.starts_with("accelerator\n--8<--\n")) {
        p = vov;
        p.jobs = fuzz::temp_file("jobs.jsonl", fuzz::split(data, size).second);
      } else {
        p.jobs = fuzz::temp_file("jobs.jsonl", text);
        loaders::Dataset ds;
        ds.catalog = loaders::read_farm_toml(p.farm).catalog;
        auto outcome = [&](auto&& read) {  // the table as written, or the error
          try {
            ds.jobs = read();
            return writers::jobs_jsonl_text(ds);
          } catch (const loaders::LoadError& e) {
            return std::string("error: ") + e.what();
          }
        };
        const std::string parallel = outcome([&] { return loaders::read_jobs_jsonl(p.jobs, ds.catalog, {}, 64); });
        if (parallel != outcome([&] { return loaders::read_jobs_jsonl_sequential(p.jobs, ds.catalog); })) std::abort();
        // explain --eligibility's scan: a job it finds is the job as the readers read it (dependencies
        // aside: it reads no other line), or it finds none (the caller then reads the file)
        if (!parallel.starts_with("error: ")) {
          const JobTable all = loaders::read_jobs_jsonl_sequential(p.jobs, ds.catalog);
          std::vector<std::string> rows;
          for (size_t at = 0; at < parallel.size();) {
            const size_t end = parallel.find('\n', at);
            rows.emplace_back(parallel.substr(at, end - at));
            at = end == std::string::npos ? parallel.size() : end + 1;
          }
          for (uint32_t j = 0; j < all.size() && j < 8; ++j) {
            std::optional<JobTable> one = loaders::find_job_jsonl(p.jobs, ds.catalog, all.id[j]);
            if (!one) continue;
            if (one->size() != 1 || one->id[0] != all.id[j]) std::abort();
            if (!all.depends[j].empty() || rows.size() != all.size()) continue;
            loaders::Dataset d1;
            d1.catalog = ds.catalog;
            d1.jobs = std::move(*one);
            if (writers::jobs_jsonl_text(d1) != rows[j] + "\n") std::abort();
          }
        }
      }
    }
    fuzz::match(loaders::load_native(p));
  });
}
