// The SWF loader (loaders/swf.hpp): header, fields, the farm it builds, and bad lines.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "loaders/errors.hpp"
#include "loaders/swf.hpp"

using namespace colmatch;
namespace fs = std::filesystem;

namespace {

std::string write(const std::string& name, const std::string& text) {
  const auto p = (fs::temp_directory_path() / ("colmatch-swf-" + std::to_string(::getpid()) + name)).string();
  std::ofstream(p) << text;
  return p;
}

TEST(Swf, HeaderFieldsAndFarm) {
  const auto p = write("a.swf",
                       "; MaxNodes: 4\n; MaxProcs: 32\n;\n"
                       "1 0 5 100 16 -1 -1 16 3600 -1 1 7 3 -1 2 1 -1 -1\n"
                       "2 10 0 50 -1 -1 -1 4 -1 -1 1 8 3 -1 1 1 -1 -1\n"
                       "3 20 0 -1 8 -1 -1 8 60 -1 5 7 3 -1 1 1 -1 -1\n"
                       "4 30 0 10 0 -1 -1 0 60 -1 5 7 3 -1 1 1 -1 -1\n");
  const auto ds = loaders::load_swf(p);
  ASSERT_EQ(ds.taskers.size(), 4u);
  const auto slots = *ds.catalog.find("slots");
  EXPECT_EQ(ds.taskers.columns[slots].queue().num(0), 8) << "32 processors on 4 nodes";
  ASSERT_EQ(ds.jobs.size(), 4u);
  EXPECT_EQ(ds.jobs.slots[0], 16u) << "allocated processors";
  EXPECT_EQ(ds.jobs.slots[1], 4u) << "requested when allocated is -1";
  EXPECT_EQ(ds.jobs.runtime[0], 100);
  EXPECT_EQ(ds.jobs.walltime[0], 3600);
  EXPECT_TRUE(std::isnan(ds.jobs.walltime[1])) << "-1: no estimate";
  EXPECT_EQ(ds.jobs.owners.value(ds.jobs.owner[0]), "u7");
  EXPECT_EQ(ds.jobs.queues.value(ds.jobs.queue[0]), "q2");
  EXPECT_EQ(ds.jobs.rule[0], AllocationRule::FillUp) << "jobs spread over nodes";
  ASSERT_TRUE(ds.jobs.rejected(2));
  EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[2]].find(":6: job 3: field 'run time': unknown"), std::string::npos);
  ASSERT_TRUE(ds.jobs.rejected(3));
  EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[3]].find("no processors"), std::string::npos);
  fs::remove(p);
}

TEST(Swf, MalformedLinesNameLineAndField) {
  const auto short_line = write("b.swf", "1 0 5 100 16\n");
  EXPECT_THROW(loaders::load_swf(short_line), loaders::LoadError);
  const auto bad = write("c.swf", "1 0 5 lots 16 -1 -1 16 3600 -1 1 7 3 -1 2 1 -1 -1\n");
  try {
    loaders::load_swf(bad);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 1u);
    EXPECT_EQ(e.field, "run time");
  }
  const auto header = write("d.swf", "; MaxNodes: -3\n");
  EXPECT_THROW(loaders::load_swf(header), loaders::LoadError);
  fs::remove(short_line);
  fs::remove(bad);
  fs::remove(header);
}

// Issue 12: one policy for duplicate job ids in every format: fatal, naming file, line, field and the
// first line (outputs name jobs by id, so two jobs with one id would be two rows no reader can tell apart).
TEST(Swf, DuplicateJobNumberIsFatalNamingBothLines) {
  const auto dup = write("dup.swf",
                         "; MaxNodes: 4\n; MaxProcs: 16\n"
                         "7 0 5 100 4 -1 -1 4 3600 -1 1 7 3 -1 2 1 -1 -1\n"
                         "8 1 5 100 4 -1 -1 4 3600 -1 1 7 3 -1 2 1 -1 -1\n"
                         "7 2 5 100 4 -1 -1 4 3600 -1 1 7 3 -1 2 1 -1 -1\n");
  try {
    loaders::load_swf(dup);
    FAIL() << "accepted a duplicate job number";
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.file, dup);
    EXPECT_EQ(e.line, 5u);
    EXPECT_EQ(e.field, "job number");
    EXPECT_NE(std::string(e.what()).find("duplicate job id '7' (first on line 3)"), std::string::npos) << e.what();
  }
  fs::remove(dup);
}

}  // namespace
