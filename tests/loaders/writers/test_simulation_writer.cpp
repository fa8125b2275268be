// metrics.json of `colmatch simulate` (loaders/writers/simulation_writer.hpp): utilisation is what the
// started jobs held over what the taskers offered while they were up.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "engine/schedule/simulation.hpp"
#include "loaders/writers/simulation_writer.hpp"

using namespace colmatch;

namespace {

// Two taskers of 2 slots and 4 GB; the second is down until 50 s. Job a takes 2 slots and 1 GB on the
// first for 100 s, job b 2 slots and 3 GB on the second from 50 s to 100 s. Over the makespan (100 s)
// the farm offers 2 x 100 + 2 x 50 = 300 slot-seconds and 4 x 100 + 4 x 50 = 600 GB-seconds; the jobs
// hold 200 + 100 = 300 slot-seconds and 100 + 150 = 250 GB-seconds.
TEST(SimulationMetrics, UtilisationFollowsTheTaskersThatAreUp) {
  loaders::Dataset ds;
  const uint32_t slots = ds.catalog.add(consumable_attribute("slots", AttrType::Int));
  const uint32_t mem = ds.catalog.add(consumable_attribute("mem", AttrType::Memory, ConsumeScope::PerJob));
  TaskerBuilder tb(ds.catalog);
  for (const char* name : {"t0", "t1"}) {
    tb.add(name, 1.0);
    tb.set_number(slots, 2);
    tb.set_number(mem, 4);
  }
  ds.taskers = std::move(tb).build();
  JobBuilder jb(ds.catalog);
  jb.add("a", "u", "g", 0, 0, 2);
  jb.set_amount(mem, 1);
  jb.set_times(100, 100);
  jb.add("b", "u", "g", 0, 0, 2);
  jb.set_amount(mem, 3);
  jb.set_times(50, 50);
  ds.jobs = std::move(jb).build();
  ds.farm.down_at_start = {0, 1};
  ds.farm.events = {{50, 1, TaskerEvent::Kind::Up, 0, 0}};
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, SimConfig{}, kernels::active(), ds.farm);
  ASSERT_EQ(r.start[1], 50);
  const std::string m = writers::simulation_metrics_json(ds, r);
  EXPECT_NE(m.find("\"utilisation\": 1.000000,"), std::string::npos) << m;
  EXPECT_NE(m.find("\"utilisation_of\": \"slots\","), std::string::npos) << m;
  EXPECT_NE(m.find("\"utilisation_per_consumable\": {\"slots\": 1.000000, \"mem\": 0.416667}"), std::string::npos) << m;
  EXPECT_NE(m.find("\"offered_slot_seconds\": 300,"), std::string::npos) << m;
  // without the farm's events the second tasker would count as up all along: 400 slot-seconds offered
  ds.farm = {};
  const std::string frozen = writers::simulation_metrics_json(ds, r);
  EXPECT_NE(frozen.find("\"offered_slot_seconds\": 400,"), std::string::npos) << frozen;
}

// A share of the slot-seconds counts what a job's allocations hold: `a`, 6 tasks over 2 nodes of 4 slots
// (Slurm's -n 6 -N 2: 4 + 2), holds 6 slots for 100 s, `b` 2 for 100 s: u1 has 0.75 of them (counted as its
// 2 nodes, 0.5).
TEST(SimulationMetrics, SharesCountTheSlotsAJobsAllocationsHold) {
  loaders::Dataset ds;
  const uint32_t slots = ds.catalog.add(consumable_attribute("slots", AttrType::Int));
  TaskerBuilder tb(ds.catalog);
  for (const char* name : {"t0", "t1", "t2"}) {
    tb.add(name, 1.0);
    tb.set_number(slots, 4);
  }
  ds.taskers = std::move(tb).build();
  JobBuilder jb(ds.catalog);
  jb.add("a", "u1", "g", 0, 0, 2);
  jb.set_rule(AllocationRule::OnePerTasker);
  jb.set_times(100, 100);
  jb.set_fit_unit(1, 0, 0, 6);
  jb.add("b", "u2", "g", 0, 0, 2);
  jb.set_times(100, 100);
  ds.jobs = std::move(jb).build();
  SimConfig pol;
  pol.allocation = AllocationPolicy::ConsecutiveBestFit;
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, pol, kernels::active());
  ASSERT_EQ(r.start[0], 0);
  ASSERT_EQ(r.start[1], 0);
  const std::string m = writers::simulation_metrics_json(ds, r);
  EXPECT_NE(m.find("\"u1\": {\"starts\": 1, \"slot_share\": 0.750000}"), std::string::npos) << m;
}

// timeline.csv: the last cycle of each simulated minute, with what running jobs hold and what the taskers
// that are up offer then. t1 comes up at 90 s; a runs 200 s on t0, b 100 s on t1 from 90 s.
TEST(SimulationTimeline, OfferedFollowsTheTaskersThatAreUp) {
  loaders::Dataset ds;
  const uint32_t slots = ds.catalog.add(consumable_attribute("slots", AttrType::Int));
  TaskerBuilder tb(ds.catalog);
  for (const char* name : {"t0", "t1"}) {
    tb.add(name, 1.0);
    tb.set_number(slots, 2);
  }
  ds.taskers = std::move(tb).build();
  JobBuilder jb(ds.catalog);
  jb.add("a", "u", "g", 0, 0, 2);
  jb.set_times(200, 200);
  jb.add("b", "u", "g", 0, 0, 2);
  jb.set_times(100, 100);
  ds.jobs = std::move(jb).build();
  ds.farm.down_at_start = {0, 1};
  ds.farm.events = {{90, 1, TaskerEvent::Kind::Up, 0, 0}};
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, SimConfig{}, kernels::active(), ds.farm);
  ASSERT_EQ(r.start[1], 90);
  EXPECT_EQ(writers::timeline_csv(ds, r),
            "time,running,queued,used_slots,offered_slots\n"
            "0,1,1,2,2\n"
            "90,2,0,4,4\n"
            "200,0,0,0,4\n");
  // cycles.csv: one row per simulated minute with cycles, the cycles adding up to the run's
  const std::string cycles = writers::cycles_csv(r);
  ASSERT_EQ(cycles.rfind("time,cycles,scheduler_us,max_cycle_us\n", 0), 0u) << cycles;
  ASSERT_EQ(r.cycle_seconds.size(), r.cycles);
  uint64_t total = 0, rows = 0;
  for (size_t at = cycles.find('\n') + 1; at < cycles.size(); at = cycles.find('\n', at) + 1, ++rows)
    total += std::stoull(cycles.substr(cycles.find(',', at) + 1));
  EXPECT_EQ(total, r.cycles);
  EXPECT_EQ(rows, 3u) << cycles;  // minutes 0, 1 and 3
}

// schedule.csv is formatted in pieces of 8,192 jobs in parallel and written in order: the file equals
// schedule_csv() for a run of several pieces with started, pending and rejected jobs.
TEST(SimulationSchedule, PiecesAreWrittenInOrder) {
  loaders::Dataset ds;
  const uint32_t slots = ds.catalog.add(consumable_attribute("slots", AttrType::Int));
  TaskerBuilder tb(ds.catalog);
  for (int t = 0; t < 20; ++t) {
    tb.add("t" + std::to_string(t), 1.0);
    tb.set_number(slots, 4);
  }
  ds.taskers = std::move(tb).build();
  JobBuilder jb(ds.catalog);
  for (int j = 0; j < 20000; ++j) {
    const uint32_t k = jb.add("job," + std::to_string(j), "u", "g", 0, j, 1 + j % 5);  // 5 slots: never
    jb.set_times(10 + j % 7, 20);
    if (j % 1001 == 0) jb.reject(k, "bad \"" + std::to_string(j) + "\"");
  }
  ds.jobs = std::move(jb).build();
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, SimConfig{}, kernels::active(), ds.farm);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("colmatch-schedule-pieces-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  writers::write_simulation(dir.string(), ds, r, writers::SimRunInfo{});
  std::ifstream in(dir / "schedule.csv", std::ios::binary);
  const std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove_all(dir);
  const std::string want = writers::schedule_csv(ds, r);
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want) << "the pieces are out of order or differ";
  for (const char* row : {"\"job,0\",0,,,,,0,,u,rejected,\"bad \"\"0\"\"\"\n", "\"job,1\",1,1,12,0,t0,2,,u,started,\n",
                          "\"job,4\",4,,,,,0,,u,pending,no eligible tasker\n"})
    EXPECT_NE(got.find(row), std::string::npos) << row;
}

}  // namespace
