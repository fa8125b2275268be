// libFuzzer targets for `--format sge` (issue 25), one per kind of text, chosen at build time by
// COLMATCH_FUZZ_SGE_PART:
//   "conf":       the input is qconf-sc --8<-- qconf-se --8<-- qconf-shgrp --8<-- qconf-sq --8<-- qselect
//                 (missing parts are datasets/sge/farm80's; farm80 has no qselect.txt), a farm of the fuzzer's;
//   "qstat":      the input is qstat-r.xml on farm80 (running jobs' charges, pending jobs matched);
//   "accounting": the input is an accounting file replayed on farm80 (matched and simulated, bounded);
//   "jobs":       the input is a --jobs file of qsub lines on farm80 (Grid Engine's host rules, -w verdicts);
//   "xml":        the input is read by each qstat/qhost XML reader, then is farm80's qstat-f.xml and
//                 qstat-j.xml in turn;
//   "shares":     the input is qconf-ssconf --8<-- qconf-suser --8<-- qconf-sprj --8<-- qconf-su --8<--
//                 qconf-sstree --8<-- sge-share-mon on datasets/sge/tickets-6's dump (the ticket policies'
//                 settings, holders, share tree and its usage, issue 43).
// Each loads through the format registry as the CLI does, then matches.
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "engine/schedule/simulation.hpp"
#include "loaders/errors.hpp"
#include "loaders/formats.hpp"
#include "loaders/sge_xml.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace colmatch;
namespace fs = std::filesystem;

namespace {

// A fresh copy of a bundled dump (farm80's unless `base` says) for this process, its files replaced by the
// fuzzer's where given.
std::string dump_with(const std::vector<std::pair<std::string, std::string_view>>& files,
                      const std::string& base = "farm80") {
  const fs::path dir = fs::temp_directory_path() / ("colmatch-fuzz-sge-" + std::to_string(::getpid()));
  static bool copied = false;
  if (!copied) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (const auto& e : fs::directory_iterator(std::string(COLMATCH_SOURCE_DIR) + "/datasets/sge/" + base))
      fs::copy(e.path(), dir / e.path().filename(), fs::copy_options::overwrite_existing);
    copied = true;
  }
  static std::vector<std::pair<std::string, std::string>> originals;  // restored before each input
  for (auto& [name, text] : originals) std::ofstream(dir / name, std::ios::binary | std::ios::trunc) << text;
  originals.clear();
  for (const auto& [name, text] : files) {
    std::ifstream in(dir / name, std::ios::binary);
    originals.emplace_back(name, std::string(std::istreambuf_iterator<char>(in), {}));
    std::ofstream(dir / name, std::ios::binary | std::ios::trunc)
        .write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  return dir.string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::run([&] {
    const std::string part = COLMATCH_FUZZ_SGE_PART;
    const std::string_view all(reinterpret_cast<const char*>(data), size);
    loaders::FormatArgs args;
    if (part == "conf" || part == "shares") {
      static const std::vector<const char*> kConf = {"qconf-sc.txt", "qconf-se.txt", "qconf-shgrp.txt", "qconf-sq.txt",
                                                     "qselect.txt"};
      static const std::vector<const char*> kShares = {"qconf-ssconf.txt", "qconf-suser.txt",  "qconf-sprj.txt",
                                                       "qconf-su.txt",     "qconf-sstree.txt", "sge-share-mon.txt"};
      std::vector<std::pair<std::string, std::string_view>> files;
      std::string_view rest = all;
      for (const char* name : part == "conf" ? kConf : kShares) {
        const size_t at = rest.find(fuzz::kSeparator);
        files.emplace_back(name, rest.substr(0, at));
        if (at == std::string_view::npos) break;
        rest = rest.substr(at + fuzz::kSeparator.size());
      }
      args["dump"] = part == "conf" ? dump_with(files) : dump_with(files, "tickets-6/farm");
    } else if (part == "qstat") {
      args["dump"] = dump_with({{"qstat-r.xml", all}});
    } else if (part == "xml") {  // every XML reader on the same text (issue 45: two of them crashed on
      // an element outside the one they expect), then the dump with it as each XML file in turn
      const std::string path = fuzz::temp_file("any.xml", all);
      for (const auto& read : std::initializer_list<std::function<void()>>{
               [&] { (void)loaders::sge::read_qstat_jobs(path); }, [&] { (void)loaders::sge::read_queue_states(path); },
               [&] { (void)loaders::sge::read_qhost(path); }, [&] { (void)loaders::sge::read_job_details(path); }})
        try {
          read();
        } catch (const loaders::LoadError&) {}
      for (const char* name : {"qstat-f.xml", "qstat-j.xml"}) try {
          args["dump"] = dump_with({{name, all}});
          fuzz::match(loaders::load_format(*loaders::find_format("sge"), args));
        } catch (const loaders::LoadError&) {}
      return;
    } else if (part == "jobs") {  // qsub lines for --jobs (issue 43): options, quotes, ranges, -w
      args["dump"] = dump_with({});
      args["jobs"] = fuzz::temp_file("jobs", all);
    } else {
      args["dump"] = dump_with({});
      args["accounting"] = fuzz::temp_file("accounting", all);
    }
    const loaders::Dataset ds = loaders::load_format(*loaders::find_format("sge"), args);
    const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, &ds.in_use);
    if (m.dispatch.assigned + m.dispatch.pending + m.dispatch.rejected != ds.jobs.size()) std::abort();
    if (part == "accounting") {
      SimConfig policy;
      policy.until = 864000;
      const loaders::Dataset t =
          loaders::load_format(*loaders::find_format("sge"), args, {}, loaders::LoadMode::OverTime);
      (void)simulate(t.catalog, t.taskers, t.jobs, policy, kernels::active());
    }
  });
}
