// `--format vov` (loaders/vov.hpp, issue 10): the demo Accelerator farm (datasets/demo/vov) matched and
// simulated: maps expanded per job, the greatest-power eligible tasker, a licence pool taken in dispatch
// order and given back when the job ends, a cycle and a bad list rejected naming the job.
#include <cmath>

#include <gtest/gtest.h>

#include "engine/matcher.hpp"
#include "engine/simulation.hpp"
#include "loaders/errors.hpp"
#include "loaders/vov.hpp"

using namespace colmatch;

namespace {

const std::string kDir = COLMATCH_SOURCE_DIR "/datasets/demo/vov/";

loaders::Dataset demo() { return loaders::load_vov(kDir + "taskers.tcl", kDir + "resources.tcl", kDir + "jobs.jsonl"); }

TEST(VovFormat, DemoFarmMatches) {
  const loaders::Dataset ds = demo();
  ASSERT_EQ(ds.taskers.size(), 4u);
  EXPECT_EQ(ds.taskers.names[0], "lnx01") << "greatest power first";
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  auto tasker = [&](uint32_t j) { return ds.taskers.names[m.dispatch.tasker[j]]; };
  EXPECT_EQ(tasker(0), "lnx01") << "spice: the greatest-power tasker";
  EXPECT_EQ(m.dispatch.status[1], JobStatus::Pending) << "the one spice licence is taken";
  EXPECT_EQ(m.dispatch.reason[1], PendingReason::NoFreeCapacity);
  EXPECT_EQ(tasker(2), "lnx01") << "Tool:hsim maps to License:hsim linux64";
  EXPECT_EQ(tasker(3), "lnx02") << "fast (RAMTOTAL#32000 | diskio) and !diskio";
  EXPECT_EQ(tasker(4), "sol01");
  ASSERT_TRUE(ds.jobs.rejected(5));
  EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[5]].find("job 6: field 'resources': a cycle in the resource maps: "
                                                          "loopa -> loopb -> loopa"),
            std::string::npos);
  EXPECT_EQ(m.dispatch.reason[6], PendingReason::NoEligibleTasker) << "RAM/100000 fits nowhere";
  ASSERT_TRUE(ds.jobs.rejected(7));
  EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[7]].find(":8: job 8: field 'resources': column 18"), std::string::npos)
      << ds.jobs.reject_reason[ds.jobs.reject[7]];
  // the licence pool is global, one unit per job; TIMELEFT from the expected duration
  const auto lic = ds.catalog.find("map:License:spice");
  ASSERT_TRUE(lic);
  EXPECT_EQ(ds.taskers.columns[*lic].global().num, 1);
  EXPECT_EQ(ds.jobs.request_text[ds.jobs.request[0]], "TIMELEFT>=60");
}

TEST(VovFormat, LicencesComeBackWhenJobsEnd) {
  const loaders::Dataset ds = demo();
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, SimPolicy{}, kernels::active(), ds.farm);
  EXPECT_EQ(r.start[0], 0);
  EXPECT_EQ(r.start[1], 100) << "job 2 waits for job 1's spice licence";
  EXPECT_TRUE(std::isnan(r.start[6]));
}

TEST(VovFormat, BadFilesNameFileLineAndField) {
  const std::string dir = ::testing::TempDir();
  auto write = [&](const std::string& name, const std::string& text) {
    const std::string p = dir + "/colmatch-vov-" + name;
    FILE* f = std::fopen(p.c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
    return p;
  };
  const auto taskers = write("t.tcl", "vtk_tasker_define a -resources \"x | y\"\n");
  const auto jobs = write("j.jsonl", "{\"id\": \"1\"}\n");
  try {
    loaders::load_vov(taskers, "", jobs);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 1u);
    EXPECT_EQ(e.field, "-resources");
  }
  const auto good = write("g.tcl", "vtk_tasker_define a\n");
  const auto bad_jobs = write("b.jsonl", "{\"id\": \"1\"}\n{\"id\": \"2\", \"cores\": 3}\n");
  try {
    loaders::load_vov(good, "", bad_jobs);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 2u);
    EXPECT_EQ(e.field, "cores");
  }
}

}  // namespace
