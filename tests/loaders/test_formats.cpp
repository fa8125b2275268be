// The input-format registry (loaders/formats.hpp): names, options, required-option errors, and that
// loading through it gives what the format's own loader gives.
#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "loaders/errors.hpp"
#include "loaders/formats.hpp"
#include "loaders/native.hpp"
#include "loaders/traces.hpp"

using namespace colmatch;

namespace {

const std::string kData = std::string(COLMATCH_SOURCE_DIR) + "/datasets/";

TEST(Formats, RegistryNamesEveryFormatOnceNativeFirst) {
  std::vector<std::string> names;
  for (const auto& f : loaders::input_formats()) {
    names.push_back(f.name);
    EXPECT_FALSE(f.description.empty());
    EXPECT_FALSE(f.options.empty());
    EXPECT_TRUE(f.load) << f.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"native", "google2011", "openb", "dirac", "vov", "swf", "sge", "slurm"}));
  EXPECT_EQ(loaders::find_format("openb")->name, "openb");
  EXPECT_EQ(loaders::find_format("pbs"), nullptr);
}

TEST(Formats, MissingRequiredOptionIsNamed) {
  try {
    loaders::load_format(*loaders::find_format("openb"), {{"nodes", kData + "samples/openb_nodes.csv"}});
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.file, "--pods");
    EXPECT_NE(std::string(e.what()).find("is required with --format openb"), std::string::npos) << e.what();
  }
  // an optional option may be left out (--hosts), a malformed number may not (--at)
  EXPECT_NO_THROW(loaders::load_format(*loaders::find_format("native"), {{"farm", kData + "demo/farm.toml"},
                                                                         {"taskers", kData + "demo/taskers.jsonl"},
                                                                         {"jobs", kData + "demo/jobs.jsonl"}}));
  EXPECT_THROW(loaders::load_format(*loaders::find_format("google2011"),
                                    {{"machines", kData + "samples/google_machine_events.csv.gz"},
                                     {"tasks", kData + "samples/google_task_events_job_mod25.csv.gz"},
                                     {"at", "soon"}}),
               loaders::LoadError);
}

// An option of another format is refused naming it (issue 45: `--format sge --jobs /nonexistent` read
// the dump's own queue and exited 0; --jobs is Grid Engine's own since issue 43, --taskers is not).
TEST(Formats, AnOptionOfAnotherFormatIsRefused) {
  try {
    loaders::load_format(*loaders::find_format("sge"), {{"dump", kData + "sge/farm80"}, {"taskers", "/nonexistent"}});
    FAIL() << "accepted";
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.file, "--taskers");
    EXPECT_NE(std::string(e.what()).find("is not an option of --format sge"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(loaders::load_format(*loaders::find_format("sge"),
                                       {{"dump", kData + "sge/farm80"}, {"policy", kData + "examples/easy.toml"}}))
      << "--policy is every format's";
}

// Every file a format's loader reads reports progress, those its readers open without the callback too
// (issue 45: the Python module's Ctrl-C, which checks from the progress callback, waited 73 s for a whole
// Grid Engine or Slurm dump to load): and a callback that throws ends the load there.
TEST(Formats, EveryFileOfADumpReportsProgressAndCanBeInterrupted) {
  struct Stop {};
  for (const auto& [format, args] : std::vector<std::pair<std::string, loaders::FormatArgs>>{
           {"sge", {{"dump", kData + "sge/farm80-busy"}}},
           {"slurm", {{"dump", kData + "slurm/c100-queue"}}},
           {"dirac", {{"resources", kData + "demo/dirac/resources.cfg"}, {"jdl", kData + "demo/dirac/jobs.jdl"}}}}) {
    SCOPED_TRACE(format);
    std::set<std::string> files;
    const loaders::ProgressFn note = [&](const std::string& path, uint64_t, uint64_t) {
      files.insert(std::filesystem::path(path).filename().string());
    };
    loaders::load_format(*loaders::find_format(format), args, note);
    if (format == "sge") {
      for (const char* f : {"qconf-sc.txt", "qconf-sq.txt", "qconf-se.txt.gz", "qstat-r.xml.gz", "qstat-f.xml.gz"})
        EXPECT_TRUE(files.count(f)) << f;
    } else if (format == "slurm") {
      for (const char* f : {"scontrol-node.txt.gz", "scontrol-partition.txt", "squeue.json.gz"})
        EXPECT_TRUE(files.count(f)) << f;
    } else {
      EXPECT_TRUE(files.count("resources.cfg"));
    }
    const loaders::ProgressFn stop = [](const std::string&, uint64_t, uint64_t) { throw Stop{}; };
    EXPECT_THROW(loaders::load_format(*loaders::find_format(format), args, stop), Stop);
  }
}

TEST(Formats, LoadingThroughTheRegistryEqualsTheLoader) {
  const auto a = loaders::load_format(
      *loaders::find_format("openb"),
      {{"nodes", kData + "samples/openb_nodes.csv"}, {"pods", kData + "samples/openb_pods_gpuspec20_head2000.csv"}});
  const auto b =
      loaders::load_openb(kData + "samples/openb_nodes.csv", kData + "samples/openb_pods_gpuspec20_head2000.csv");
  EXPECT_EQ(a.taskers.names, b.taskers.names);
  EXPECT_EQ(a.jobs.id, b.jobs.id);
  EXPECT_EQ(a.jobs.request_text, b.jobs.request_text);
}

}  // namespace
