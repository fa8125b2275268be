// End-to-end on slices of the real traces bundled in datasets/samples (and on the full traces in
// ../shared/datasets/raw when present): every job has exactly one outcome, no tasker's capacity is
// exceeded, and every assigned tasker satisfies its job's constraints.
#include <cmath>
#include <filesystem>
#include <tuple>

#include <gtest/gtest.h>

#include "engine/batch/matcher.hpp"
#include "loaders/errors.hpp"
#include "loaders/traces.hpp"
#include "tests/reference/naive_matcher.hpp"

using namespace colmatch;

namespace {

const std::string kSamples = std::string(COLMATCH_SOURCE_DIR) + "/datasets/samples/";
const std::string kRaw = std::string(COLMATCH_SOURCE_DIR) + "/../shared/datasets/raw/";

void check_invariants(const loaders::Dataset& ds, const MatchOutcome& m) {
  const auto& cons = ds.catalog.consumables();
  std::vector<std::vector<double>> used(cons.size(), std::vector<double>(ds.taskers.size(), 0));
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    if (m.dispatch.status[j] != JobStatus::Assigned) {
      ASSERT_EQ(m.dispatch.tasker[j], kNone);
      ASSERT_TRUE(ds.jobs.rejected(j) || m.dispatch.reason[j] != PendingReason::None);
      continue;
    }
    const uint32_t t = m.dispatch.tasker[j];
    ASSERT_TRUE(naive::eligible(ds.catalog, ds.taskers, ds.jobs, t, j)) << ds.jobs.id[j];
    const auto need = naive::charge(ds.catalog, ds.jobs, j);
    for (size_t k = 0; k < cons.size(); ++k) used[k][t] += need[k];
  }
  for (size_t k = 0; k < cons.size(); ++k)
    for (uint32_t t = 0; t < ds.taskers.size(); ++t) {
      const double cap = ds.taskers.columns[cons[k]].queue().num(t);
      ASSERT_LE(used[k][t], cap * (1 + 1e-12) + 1e-12) << ds.taskers.names[t];
      ASSERT_NEAR(m.dispatch.capacity.queue_free(k)[t], cap - used[k][t], 1e-9 * std::max(1.0, cap));
    }
  EXPECT_EQ(m.dispatch.assigned + m.dispatch.pending + m.dispatch.rejected, ds.jobs.size());
}

// Writes `text` to a file of the temporary folder and returns its path.
std::filesystem::path temp_file(const std::string& name, const char* text) {
  const auto p = std::filesystem::temp_directory_path() / name;
  std::FILE* f = std::fopen(p.c_str(), "w");
  std::fputs(text, f);
  std::fclose(f);
  return p;
}

TEST(Google2011, SampleSliceEndToEnd) {
  const auto ds = loaders::load_google2011(kSamples + "google_machine_events.csv.gz",
                                           kSamples + "google_task_events_job_mod25.csv.gz");
  EXPECT_EQ(ds.jobs.size(), 24748u);  // distinct tasks with a SUBMIT in the slice (awk-counted)
  EXPECT_GT(ds.taskers.size(), 12000u);
  const auto m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  check_invariants(ds, m);
  EXPECT_GT(m.dispatch.assigned, 10000u);
  // the naive matcher agrees on a prefix of the taskers is too slow here; the differential tests cover it
}

TEST(Google2011, MachinesAsOfAChosenTime) {
  const auto all = loaders::load_google2011(kSamples + "google_machine_events.csv.gz",
                                            kSamples + "google_task_events_job_mod25.csv.gz", int64_t{0});
  const auto later = loaders::load_google2011(kSamples + "google_machine_events.csv.gz",
                                              kSamples + "google_task_events_job_mod25.csv.gz");
  EXPECT_GT(all.taskers.size(), 12000u);
  EXPECT_NE(all.taskers.size(), later.taskers.size()) << "machines are added and removed over the slice";
}

TEST(Google2011, FullTraceWhenPresent) {
  const std::string machines = kRaw + "google-clusterdata-2011-2/machine_events/part-00000-of-00001.csv.gz";
  const std::string tasks = kRaw + "google-clusterdata-2011-2/task_events/part-00000-of-00500.csv.gz";
  if (!std::filesystem::exists(machines) || !std::filesystem::exists(tasks)) GTEST_SKIP() << "shared traces absent";
  const auto ds = loaders::load_google2011(machines, tasks);
  EXPECT_EQ(ds.jobs.size(), 190926u);  // SOURCES.md: 190,926 tasks
  EXPECT_EQ(ds.taskers.size(), 12476u);
  const auto m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  EXPECT_EQ(m.categories.size(), 1459u);  // distinct cpu/memory requests
  check_invariants(ds, m);
}

TEST(Google2011, MalformedRowNamesFileLineAndField) {
  const auto p = temp_file("colmatch-bad-tasks.csv", "0,,1,0,,0,u,1,2,0.1,0.1,0,0\n0,,1,1,,zero,u,1,2,0.1,0.1,0,0\n");
  try {
    loaders::load_google2011(kSamples + "google_machine_events.csv.gz", p.string());
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 2u);
    EXPECT_EQ(e.field, "event type");
  }
  std::filesystem::remove(p);
}

// A negative request is a load error naming file, line and field (it once surfaced without them).
TEST(Google2011, NegativeRequestNamesFileLineAndField) {
  const auto p =
      temp_file("colmatch-negative-tasks.csv", "0,,1,0,,0,u,1,2,0.1,0.1,0,0\n0,,1,1,,0,u,1,2,-0.5,0.1,0,0\n");
  try {
    loaders::load_google2011(kSamples + "google_machine_events.csv.gz", p.string());
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.file, p.string());
    EXPECT_EQ(e.line, 2u);
    EXPECT_EQ(e.field, "CPU request");
  }
  std::filesystem::remove(p);
}

// For `simulate`: a task's runtime runs from its first SCHEDULE to the end event after it; a task still
// running when the events end runs to the last event; one never scheduled has no runtime.
TEST(Google2011, RuntimesFromScheduleToEndEvents) {
  const auto p = temp_file("colmatch-runtime-tasks.csv",
                           "0,,7,0,,0,u,1,2,0.1,0.1,0,0\n"   // task 7.0 submitted at 0
                           "0,,7,1,,0,u,1,2,0.1,0.1,0,0\n"   // task 7.1 submitted at 0
                           "0,,7,2,,0,u,1,2,0.1,0.1,0,0\n"   // task 7.2 submitted at 0, never scheduled
                           "1000000,,7,0,5,1,u,1,2,,,,\n"    // 7.0 scheduled at 1 s
                           "2000000,,7,1,5,1,u,1,2,,,,\n"    // 7.1 scheduled at 2 s
                           "5000000,,7,0,5,4,u,1,2,,,,\n"    // 7.0 finishes at 5 s
                           "9000000,,7,0,5,2,u,1,2,,,,\n");  // a later EVICT of 7.0 does not count; last event at 9 s
  const auto ds = loaders::load_google2011(kSamples + "google_machine_events.csv.gz", p.string());
  ASSERT_EQ(ds.jobs.size(), 3u);
  EXPECT_EQ(ds.jobs.runtime[0], 4.0);
  EXPECT_EQ(ds.jobs.runtime[1], 7.0) << "still running: until the last event read";
  EXPECT_TRUE(std::isnan(ds.jobs.runtime[2]));
  std::filesystem::remove(p);
}

// GPU milli-units are gpus x 1000: in 64-bit integers that overflowed for huge counts (UBSan).
TEST(OpenB, HugeGpuCountsDoNotOverflow) {
  const auto nodes = temp_file("colmatch-openb-nodes.csv",
                               "sn,cpu_milli,memory_mib,gpu,model\nn1,1000,1024,9223372036854775807,V100\n");
  const auto pods = temp_file("colmatch-openb-pods.csv",
                              "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,100,10,4611686018427387904,1000\n");
  try {  // no undefined behaviour, and an int beyond 2^53 is refused (it would not be exact)
    loaders::load_openb(nodes.string(), pods.string());
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 2u);
    EXPECT_EQ(e.field, "gpu");
    EXPECT_NE(std::string(e.what()).find("beyond 2^53"), std::string::npos) << e.what();
  }
  std::filesystem::remove(nodes);
  std::filesystem::remove(pods);
}

// Issue 12: a pod name given twice is fatal, naming the file, the line, the field and the first line (the
// policy of every format; it once gave two rows for one id).
TEST(OpenB, DuplicatePodNameIsFatalNamingBothLines) {
  const auto nodes = temp_file("colmatch-openb-nodes2.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,1000,1024,1,V100\n");
  const auto pods =
      temp_file("colmatch-openb-pods2.csv",
                "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,100,10,0,0\np2,100,10,0,0\np1,5,5,0,0\n");
  try {
    loaders::load_openb(nodes.string(), pods.string());
    FAIL() << "accepted a duplicate pod name";
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.file, pods.string());
    EXPECT_EQ(e.line, 4u);
    EXPECT_EQ(e.field, "name");
    EXPECT_NE(std::string(e.what()).find("duplicate job id 'p1' (first on line 2)"), std::string::npos) << e.what();
  }
  std::filesystem::remove(nodes);
  std::filesystem::remove(pods);
}

// Issue 12: string values past kMaxStringValue name file, line and field in both trace formats.
TEST(Traces, LongStringValuesNameLineAndField) {
  const std::string big(kMaxStringValue + 1, 'x');
  const auto nodes = temp_file("colmatch-openb-nodes3.csv",
                               ("sn,cpu_milli,memory_mib,gpu,model\nn1,1000,1024,1," + big + "\n").c_str());
  const auto pods =
      temp_file("colmatch-openb-pods3.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,100,10,0,0\n");
  const auto pods_long =
      temp_file("colmatch-openb-pods4.csv",
                ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np1,100,10,1,1000," + big + "\n").c_str());
  const auto ok_nodes =
      temp_file("colmatch-openb-nodes4.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,1000,1024,1,V100\n");
  auto expect = [](auto&& f, size_t line, const std::string& field) {
    try {
      f();
      ADD_FAILURE() << "accepted a value past the bound (" << field << ")";
    } catch (const loaders::LoadError& e) {
      EXPECT_EQ(e.line, line);
      EXPECT_EQ(e.field, field);
      EXPECT_NE(std::string(e.what()).find("at most 65536 are accepted"), std::string::npos) << e.what();
    }
  };
  expect([&] { loaders::load_openb(nodes.string(), pods.string()); }, 2, "model");
  expect([&] { loaders::load_openb(ok_nodes.string(), pods_long.string()); }, 2, "gpu_spec");
  const auto machines = temp_file("colmatch-g-machines.csv", ("0,1,0," + big + ",0.5,0.5\n").c_str());
  const auto tasks = temp_file("colmatch-g-tasks.csv", "");
  expect([&] { loaders::load_google2011(machines.string(), tasks.string()); }, 1, "platform");
  for (const auto& f : {nodes, pods, pods_long, ok_nodes, machines, tasks}) std::filesystem::remove(f);
}

TEST(OpenB, SampleEndToEndWithGpuModelConstraints) {
  const auto ds = loaders::load_openb(kSamples + "openb_nodes.csv", kSamples + "openb_pods_gpuspec20_head2000.csv");
  EXPECT_EQ(ds.taskers.size(), 1523u);
  EXPECT_EQ(ds.jobs.size(), 2000u);
  const auto m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  check_invariants(ds, m);
  // the naive matcher agrees on this real slice, placement by placement
  const auto ref = naive::run(ds.catalog, ds.taskers, ds.jobs);
  EXPECT_EQ(m.dispatch.tasker, ref.tasker);
  EXPECT_EQ(m.dispatch.reason, ref.reason);
  // pods with a gpu_spec landed on a listed model
  const uint32_t model = *ds.catalog.find("gpu_model");
  size_t constrained = 0;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    const std::string& req = ds.jobs.request_text[ds.jobs.request[j]];
    if (req.find("gpu_model") == std::string::npos || m.dispatch.tasker[j] == kNone) continue;
    ++constrained;
    const auto& col = ds.taskers.columns[model];
    EXPECT_NE(req.find(col.dict.value(col.queue().id(m.dispatch.tasker[j]))), std::string::npos) << req;
  }
  EXPECT_GT(constrained, 10u);
}

// For `simulate` (LoadMode::OverTime): every machine up at some time is a tasker, and the farm's events
// say when. Machine 1 is there from the start, is UPDATEd to more CPU, REMOVEd and ADDed back;
// machine 2 is ADDed at 3 s; machine 3 changes platform at 4 s and goes on as a new row "3#2".
TEST(Google2011, MachineEventsOverTimeBecomeFarmEvents) {
  const auto m = temp_file("colmatch-machines-over-time.csv",
                           "0,1,0,P,0.5,0.25\n"
                           "0,3,0,P,0.5,0.5\n"
                           "1000000,1,2,,1,\n"            // UPDATE: CPU 1 (memory kept)
                           "2000000,1,1,P,1,0.25\n"       // REMOVE
                           "3000000,2,0,Q,0.25,0.25\n"    // ADD machine 2
                           "4000000,3,2,Q,,\n"            // UPDATE: another platform
                           "5000000,1,0,P,0.5,0.25\n"     // ADD machine 1 back, CPU 0.5
                           "9000000,2,1,Q,0.25,0.25\n");  // REMOVE after the last task event: ignored
  const auto t = temp_file("colmatch-tasks-over-time.csv",
                           "0,,7,0,,0,u,1,2,0.1,0.1,0,0\n"
                           "6000000,,7,1,,0,u,1,2,0.1,0.1,0,0\n");
  const auto ds = loaders::load_google2011(m.string(), t.string(), std::nullopt, {}, loaders::LoadMode::OverTime);
  ASSERT_EQ(ds.taskers.size(), 4u);
  auto tasker = [&](const std::string& name) {
    for (uint32_t i = 0; i < ds.taskers.size(); ++i)
      if (ds.taskers.names[i] == name) return i;
    ADD_FAILURE() << name;
    return 0u;
  };
  const uint32_t t1 = tasker("1"), t2 = tasker("2"), t3 = tasker("3"), t3b = tasker("3#2");
  const auto cpu = *ds.catalog.find("cpu");
  EXPECT_EQ(ds.taskers.columns[cpu].queue().num(t1), 1.0) << "the column holds the largest CPU it ever has";
  ASSERT_EQ(ds.farm.down_at_start.size(), 4u);
  EXPECT_EQ(ds.farm.down_at_start[t1], 0);
  EXPECT_EQ(ds.farm.down_at_start[t2], 1) << "ADDed at 3 s";
  EXPECT_EQ(ds.farm.down_at_start[t3b], 1);
  using K = TaskerEvent::Kind;
  std::vector<std::tuple<double, uint32_t, K, double>> got;
  for (const TaskerEvent& e : ds.farm.events) got.emplace_back(e.time, e.tasker, e.kind, e.amount);
  const uint32_t k_cpu = static_cast<uint32_t>(ds.catalog.consumable_slot(cpu));
  const std::vector<std::tuple<double, uint32_t, K, double>> want{
      {0, t1, K::Configure, 0.5},  // starts at CPU 0.5 under its column's 1.0
      {1, t1, K::Configure, 1.0}, {2, t1, K::Down, 0}, {3, t2, K::Up, 0},         {4, t3, K::Down, 0},
      {4, t3b, K::Up, 0},         {5, t1, K::Up, 0},   {5, t1, K::Configure, 0.5}};
  EXPECT_EQ(got, want);
  for (const TaskerEvent& e : ds.farm.events)
    if (e.kind == K::Configure) {
      EXPECT_EQ(e.consumable, k_cpu);
    }
  const auto snapshot = loaders::load_google2011(m.string(), t.string());
  EXPECT_EQ(snapshot.taskers.size(), 3u) << "match: the machines up at the last task event (1, 2, 3)";
  EXPECT_TRUE(snapshot.farm.empty());
  const auto unordered = temp_file("colmatch-machines-unordered.csv", "5,1,0,P,0.5,0.25\n4,2,0,P,0.5,0.25\n");
  try {
    loaders::load_google2011(unordered.string(), t.string(), std::nullopt, {}, loaders::LoadMode::OverTime);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 2u);
    EXPECT_EQ(e.field, "time");
  }
  for (const auto& p : {m, t, unordered}) std::filesystem::remove(p);
}

}  // namespace
