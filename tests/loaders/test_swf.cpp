// The SWF loader (loaders/swf.hpp): header, fields, the farm it builds, and bad lines.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "engine/schedule/simulation.hpp"
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
  // issue 45: the whole word is the count (`12garbage` was 12)
  for (const char* value : {"garbage", "12garbage", "4.5", "0x10", ""}) {
    SCOPED_TRACE(value);
    write("d.swf", std::string("; MaxNodes: ") + value + "\n1 0 5 100 4 -1 -1 4 3600 -1 1 7 3 -1 2 1 -1 -1\n");
    EXPECT_THROW(loaders::load_swf(header), loaders::LoadError);
  }
  fs::remove(short_line);
  fs::remove(bad);
  fs::remove(header);
}

// A header line or a machines file names how many taskers to build: more than 10^6 (10^5 for a machines
// file) is an error
// naming the line and field, not a run that builds ten million taskers for a handful of jobs (a 4 KB fuzz
// input with "; MaxNodes: 9999999" stalled the fuzz run); 10^6 itself is accepted.
TEST(Swf, NodeCountsAreBounded) {
  const std::string job = "1 0 5 100 4 -1 -1 4 3600 -1 1 7 3 -1 2 1 -1 -1\n";
  const auto huge = write("huge.swf", "; MaxNodes: 1000001\n" + job);
  try {
    loaders::load_swf(huge);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 1u);
    EXPECT_EQ(e.field, "MaxNodes");
  }
  const auto largest = write("largest.swf", "; MaxNodes: 1000000\n; MaxProcs: 2000000\n" + job);
  EXPECT_EQ(loaders::load_swf(largest).taskers.size(), 1000000u);
  // machines (a host name and properties per node): 10^5 nodes in all, whatever each line says
  const auto log = write("m.swf", "1 0 5 100 4 -1 -1 4 3600 -1 1 7 3 -1 2 1 -1 -1 {1} q_1d 1:ppn=1\n");
  const auto many = write("many.machines", "0 a 60000 4 1 5\n1 b 40000 4 1 5\n2 c 1 4 1 5\n");
  try {
    loaders::load_swf(log, {}, many);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 3u);
    EXPECT_EQ(e.field, "nodes");
  }
  for (const auto& p : {huge, largest, log, many}) fs::remove(p);
}

// Issue 12: one policy for duplicate job ids in every format: fatal, naming file, line, field and the
// first line (outputs name jobs by id, so two jobs with one id would be two rows no reader can tell apart).
// A count of processors that is not a whole number of slots, or out of range, is the job's rejection with
// its reason, never changed (issue 28: 1.5 and 2.9 processors ran as 1 and 2 slots; a CERIT-SC request of
// 10^10 slots ran as 1).
TEST(Swf, FractionalOrOutOfRangeCountsAreRejectedNotChanged) {
  const auto log = write("f.swf",
                         "; MaxNodes: 4\n; MaxProcs: 16\n"
                         "1 0 0 100 1.5 -1 -1 1.5 3600 -1 1 7 3 -1 2 1 -1 -1\n"
                         "2 0 0 100 2.9 -1 -1 2.9 3600 -1 1 7 3 -1 2 1 -1 -1\n"
                         "3 0 0 100 2 -1 -1 2 3600 -1 1 7 3 -1 2 1 -1 -1\n");
  const auto ds = loaders::load_swf(log, {});
  ASSERT_EQ(ds.jobs.size(), 3u);
  for (uint32_t j : {0u, 1u}) {
    ASSERT_TRUE(ds.jobs.rejected(j)) << j;
    EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[j]].find("is not a whole number of processors"), std::string::npos)
        << ds.jobs.reject_reason[ds.jobs.reject[j]];
  }
  EXPECT_FALSE(ds.jobs.rejected(2));
  EXPECT_EQ(ds.jobs.slots[2], 2u);
  const auto machines = write("g.machines", "0 zewura 2 80 1 5\n");
  const std::string f = " 1 1024 1 86400 -1 1 7 3 1 -1 1 1 1 {1,1} ";
  const auto cerit = write("g.swf", "1 0 0 100 1" + f + "q_1d 100000:ppn=100000\n2 0 0 100 1" + f + "q_1d 1:ppn=8\n");
  const auto dc = loaders::load_swf(cerit, {}, machines);
  ASSERT_TRUE(dc.jobs.rejected(0));
  EXPECT_NE(dc.jobs.reject_reason[dc.jobs.reject[0]].find(
                "field 'node request': 10000000000 slots, out of range (1 to 10^9)"),
            std::string::npos)
      << dc.jobs.reject_reason[dc.jobs.reject[0]];
  EXPECT_FALSE(dc.jobs.rejected(1));
  EXPECT_EQ(dc.jobs.slots[1], 8u);
  for (const auto& p : {log, machines, cerit}) fs::remove(p);
}

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
  // increasing whole numbers are looked up no more (none can repeat); ids in any other order still are: a
  // repeat after a decrease is found, and ids that differ as text (07 and 7) are two jobs
  const auto unordered = write("unordered.swf",
                               "; MaxNodes: 4\n; MaxProcs: 16\n"
                               "10 0 5 100 4 -1 -1 4 3600 -1 1 7 3 -1 2 1 -1 -1\n"
                               "7 1 5 100 4 -1 -1 4 3600 -1 1 7 3 -1 2 1 -1 -1\n"
                               "11 1 5 100 4 -1 -1 4 3600 -1 1 7 3 -1 2 1 -1 -1\n"
                               "10 2 5 100 4 -1 -1 4 3600 -1 1 7 3 -1 2 1 -1 -1\n");
  try {
    loaders::load_swf(unordered);
    FAIL() << "accepted a duplicate job number";
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 6u);
    EXPECT_NE(std::string(e.what()).find("duplicate job id '10' (first on line 3)"), std::string::npos) << e.what();
  }
  fs::remove(unordered);
  const auto distinct = write("distinct.swf",
                              "; MaxNodes: 4\n; MaxProcs: 16\n"
                              "1 0 5 100 4 -1 -1 4 3600 -1 1 7 3 -1 2 1 -1 -1\n"
                              "2 1 5 100 4 -1 -1 4 3600 -1 1 7 3 -1 2 1 -1 -1\n"
                              "02 1 5 100 4 -1 -1 4 3600 -1 1 7 3 -1 2 1 -1 -1\n");
  EXPECT_EQ(loaders::load_swf(distinct).jobs.size(), 3u);
  fs::remove(distinct);
}

// CERIT-SC wagap 2013 (issue 7): a machines file of clusters, and per job the node list, the queue name
// and a PBS node request after the 18 fields.
TEST(SwfCerit, MachinesAndPbsNodeRequests) {
  const auto machines = write("m.machines", "0\tzewura\t2\t80\t1\t529426432\n1\tzegox\t3\t12\t1\t94035968\n");
  const std::string f = " 1 1024 1 86400 -1 1 7 3 1 -1 1 1 1 {1,1} ";
  const auto log =
      write("c.swf",
            "; MaxNodes: 5\n"
            "1 0 0 100 64" +
                f + "q_1d 1:ppn=64:x86_64:cl_zewura#excl\n" + "2 0 0 100 12" + f + "q_2w 1:ppn=12\n" + "3 0 0 100 4" +
                f + "q_2h 2:ppn=2\n" + "4 0 0 100 5" + f + "q_2h 1:ppn=1+2:ppn=2\n" + "5 0 0 100 4" + f +
                "q_4h 1:ppn=4:^zewura1.cerit-sc.cz:cl_zewura\n" + "6 0 0 100 1" + f + "q_4h zewura2.cerit-sc.cz\n" +
                "7 0 0 100 1" + f + "q_4h 1:ppn=1.5\n" + "8 0 0 100 2" + f + "q_4h 2:infiniband\n");
  const auto ds = loaders::load_swf(log, {}, machines);
  ASSERT_EQ(ds.taskers.size(), 5u);
  EXPECT_EQ(ds.taskers.names[0], "zewura1.cerit-sc.cz");
  ASSERT_EQ(ds.jobs.size(), 8u);
  EXPECT_EQ(ds.jobs.slots[0], 80u) << "#excl on a cl_zewura node: all 80 of its slots";
  EXPECT_EQ(ds.jobs.rule[0], AllocationRule::PeSlots) << "one node: $pe_slots";
  EXPECT_EQ(ds.jobs.slots[1], 12u);
  EXPECT_EQ(ds.jobs.slots[2], 4u);
  EXPECT_EQ(ds.jobs.rule[2], AllocationRule::FillUp) << "two nodes: $fill_up over their slots";
  EXPECT_EQ(ds.jobs.slots[3], 5u) << "1 x 1 + 2 x 2";
  EXPECT_EQ(ds.jobs.queues.value(ds.jobs.queue[4]), "q_4h") << "the queue name is the class";
  ASSERT_TRUE(ds.jobs.rejected(6));
  EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[6]].find(":8: job 7: field 'node request': 'ppn=1.5'"),
            std::string::npos)
      << ds.jobs.reject_reason[ds.jobs.reject[6]];
  SimConfig policy;
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, policy, kernels::active(), ds.farm);
  auto tasker_of = [&](uint32_t j) { return ds.taskers.names[r.allocations[r.alloc_first[j]].tasker]; };
  EXPECT_EQ(tasker_of(0).substr(0, 6), "zewura");
  EXPECT_EQ(r.allocations[r.alloc_first[0]].slots, 80u);
  EXPECT_EQ(tasker_of(4), "zewura2.cerit-sc.cz") << "a cl_zewura node other than zewura1";
  EXPECT_EQ(tasker_of(5), "zewura2.cerit-sc.cz") << "the host it names";
  EXPECT_TRUE(std::isnan(r.start[7])) << "no node has the property infiniband";
  EXPECT_EQ(r.reason[7], SimReason::NoEligibleTasker);
  // without the three fields, --machines is an error naming the line; a bad machines line names its field
  const auto short_log = write("d.swf", "1 0 0 100 64 1 1024 1 86400 -1 1 7 3 1 -1 1 1 1\n");
  try {
    loaders::load_swf(short_log, {}, machines);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 1u);
    EXPECT_NE(std::string(e.what()).find("expected 21 fields with --machines"), std::string::npos) << e.what();
  }
  const auto bad = write("b.machines", "0 zewura 2 80 1 5\n1 zegox x 12 1 5\n");
  try {
    loaders::load_swf(log, {}, bad);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.file, bad);
    EXPECT_EQ(e.line, 2u);
    EXPECT_EQ(e.field, "nodes");
  }
  for (const auto& p : {machines, log, short_log, bad}) fs::remove(p);
}

// Two clusters whose nodes would have one host name (a cluster listed twice; node 11 of zewura and node 1
// of zewura1) are the machines file's error, naming its line and field (issue 28: it was "tasker
// 'zewura1.cerit-sc.cz' is defined twice", with no file or line).
TEST(SwfCerit, ClustersWhoseNodesShareAHostNameAreAnErrorOfTheirLine) {
  const auto log = write("e.swf", "1 0 0 100 1 1 1024 1 86400 -1 1 7 3 1 -1 1 1 1 {1,1} q_1d 1:ppn=1\n");
  for (const std::string text : {"0 zewura 2 80 1 5\n1 zegox 1 12 1 5\n2 zewura 1 80 1 5\n",
                                 "0 zewura 12 80 1 5\n1 zegox 1 12 1 5\n2 zewura1 2 8 1 5\n"}) {
    const auto machines = write("dup.machines", text);
    try {
      loaders::load_swf(log, {}, machines);
      FAIL() << text;
    } catch (const loaders::LoadError& e) {
      EXPECT_EQ(e.file, machines);
      EXPECT_EQ(e.line, 3u);
      EXPECT_EQ(e.field, "cluster");
      EXPECT_NE(std::string(e.what()).find("which line 1 names already"), std::string::npos) << e.what();
    }
    fs::remove(machines);
  }
  fs::remove(log);
}

// The full CERIT-SC log when ../shared has it (skipped otherwise): every job is read; the 25 requests
// of 1.5 processors per node are rejected naming the field; one job asks for infiniband, which no node
// is known to offer (the machines file names no properties); every other job starts.
TEST(SwfCerit, FullWagapLog) {
  const std::string dir = COLMATCH_SOURCE_DIR "/../shared/datasets/raw/cerit-sc-wagap-2013/";
  if (!fs::exists(dir + "wagap-2013.swf.gz")) GTEST_SKIP() << "no " << dir;
  const auto ds = loaders::load_swf(dir + "wagap-2013.swf.gz", {}, dir + "wagap-2013.swf.machines");
  EXPECT_EQ(ds.taskers.size(), 68u) << "20 zewura + 48 zegox nodes";
  ASSERT_EQ(ds.jobs.size(), 17900u);
  EXPECT_EQ(ds.jobs.reject_reason.size(), 25u);
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, SimConfig{}, kernels::active(), ds.farm);
  size_t started = 0;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) started += !std::isnan(r.start[j]);
  EXPECT_EQ(started, 17874u);
}

}  // namespace
