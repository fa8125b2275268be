// `--format vov` against the naive per-job expander and matcher (tests/reference/naive_vov.hpp) on
// thousands of seeded random Accelerator farms (issue 10): random tasker lists, random map graphs (with
// cycles, counted maps, maps of appended Tool:/User:/Group: resources, a chain deeper than the depth
// limit) and random job lists (OR, NOT, parentheses, `#N`, `/N`, `$` resources). Each farm is written as
// taskers.tcl, resources.tcl and jobs.jsonl and read by the loader, so the Tcl reader, the expansion
// per distinct list, the compiled requests, the category cache and dispatch are all on the path. Every
// job's outcome (tasker, pending kind, rejected) and its depth-limit note must agree.
#include <array>
#include <cmath>
#include <cstdio>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engine/batch/matcher.hpp"
#include "engine/schedule/simulation.hpp"
#include "loaders/native.hpp"
#include "loaders/vov.hpp"
#include "loaders/writers/native_writer.hpp"
#include "tests/reference/naive_vov.hpp"

using namespace colmatch;

namespace {

struct RandomFarm {
  std::vector<naive::VovTasker> taskers;
  std::map<std::string, naive::VovMap> maps;
  std::map<std::string, std::string> dollars;
  std::vector<naive::VovJob> jobs;
};

RandomFarm random_farm(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto chance = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
  RandomFarm f;
  const size_t n_maps = pick(9);
  // a resource a job or a map may name
  auto atom = [&](size_t map_from) -> std::string {
    switch (pick(8)) {
      case 0: return fmt::format("r{}", pick(6));
      case 1: return fmt::format("r{}#{}", pick(6), pick(6));
      case 2: return fmt::format("!r{}", pick(6));
      case 3: return fmt::format("c{}/{}", pick(2), 1 + pick(6));
      case 4:
        if (n_maps > 0) {
          const size_t to = chance(15) ? pick(n_maps) : map_from + pick(n_maps);  // mostly onward, a few back
          if (to < n_maps) return chance(15) ? fmt::format("m{}#{}", to, 1 + pick(3)) : fmt::format("m{}", to);
        }
        return "r0";
      case 5:  // a licence, a third of the time with a quantity: units of its map (issue 27)
        switch (pick(6)) {
          case 0: return fmt::format("License:L{}#{}", pick(3), pick(4));
          case 1: return fmt::format("License:L{}/{}", pick(3), 1 + pick(3));
          default: return fmt::format("License:L{}", pick(3));
        }
      case 6: return chance(20) ? "d0" : fmt::format("d{}", 10 + pick(10));
      default: return chance(50) ? fmt::format("CPUS/{}", 1 + pick(3)) : fmt::format("PERCENT/{}", 10 * (1 + pick(10)));
    }
  };
  auto list = [&](size_t map_from, size_t max_items) {
    std::string out;
    const size_t n = pick(max_items + 1);
    for (size_t i = 0; i < n; ++i) {
      if (!out.empty()) out += chance(25) ? " | " : " ";
      if (chance(10)) out += fmt::format("({} | {})", atom(map_from), atom(map_from));
      else if (chance(5)) out += fmt::format("!({} {})", atom(map_from), atom(map_from));
      else out += atom(map_from);
    }
    return out;
  };
  for (size_t i = 0; i < n_maps; ++i) {
    naive::VovMap m;
    if (chance(20)) m.count = pick(4);
    m.map = list(i + 1, 3);
    if (m.map->empty() && !m.count) m.map = "r1";
    f.maps[fmt::format("m{}", i)] = m;
  }
  for (size_t i = 0; i < 3; ++i) {
    naive::VovMap m;
    m.count = pick(5);
    if (chance(30)) m.map = fmt::format("r{}", pick(6));
    f.maps[fmt::format("License:L{}", i)] = m;
  }
  if (chance(60)) {  // a chain deeper than the depth limit allows: d0 -> d1 -> ... -> d19 -> r0 | r1,
                     // with an OR on the way (past the limit an OR keeps its first alternative)
    const size_t fork = 8 + pick(10);
    for (size_t i = 0; i < 20; ++i)
      f.maps[fmt::format("d{}", i)].map = i == 19     ? "r0 | r1"
                                          : i == fork ? fmt::format("r{} | d{}", pick(6), i + 1)
                                                      : fmt::format("d{}", i + 1);
  }
  if (chance(50)) f.maps["Tool:t0"].map = chance(50) ? "License:L0" : "r1 | r2";
  if (chance(50)) f.maps["User:u1"].count = pick(3);
  if (chance(50)) f.maps["Group:g0"].map = chance(50) ? "r3" : fmt::format("d{}", 5 + pick(5));
  if (chance(30)) f.maps["Priority:high"].map = "r4 | c0/1";
  if (chance(50)) f.dollars["D"] = list(0, 2);
  f.maps["loopa"].map = "loopb";  // a cycle some jobs reach after licences (the seed's order of stops)
  f.maps["loopb"].map = chance(50) ? "loopa" : "r2 loopa";

  const size_t n_taskers = 1 + pick(10);
  for (size_t t = 0; t < n_taskers; ++t) {
    naive::VovTasker k;
    k.name = fmt::format("t{}", t);
    k.cpus = static_cast<uint32_t>(1 + pick(4));
    k.power = static_cast<double>(1 + pick(4));
    for (size_t r = 0; r < 6; ++r) {
      if (!chance(40)) continue;
      if (!k.resources.empty()) k.resources += ' ';
      k.resources += chance(70) ? fmt::format("r{}", r) : fmt::format("r{}#{}", r, pick(6));
    }
    for (size_t c = 0; c < 2; ++c)
      if (chance(50)) k.resources += fmt::format(" c{}/{}", c, 1 + pick(8));
    if (chance(40)) k.resources += fmt::format(" d{}", 10 + pick(10));      // where a curtailed chain stops matters
    if (chance(30)) k.resources += fmt::format(" TIMELEFT#{}", pick(100));  // durations told apart by taskers
    f.taskers.push_back(k);
  }
  static const char* const commands[] = {"", "vov t0 run", "nc run -r big /tools/t1 x", "spice a.sp", "t0"};
  const size_t n_jobs = 1 + pick(40);
  for (size_t j = 0; j < n_jobs; ++j) {
    naive::VovJob job;
    job.id = fmt::format("j{}", j);
    job.resources = list(0, 4);
    if (chance(3))  // a cycle behind licences: removed only when the walk gets there
      job.resources += chance(50) ? fmt::format(" License:L{} loopa", pick(3))
                                  : fmt::format(" (License:L{} loopa | r{})", pick(3), pick(6));
    if (f.dollars.count("D") && chance(15)) job.resources += " $D";
    if (chance(2)) job.resources += " (r1";  // does not parse: rejected
    job.command = commands[pick(std::size(commands))];
    job.owner = chance(50) ? "u0" : "u1";
    job.group = chance(50) ? "g0" : "g1";
    job.priority = chance(20) ? "high" : "";
    job.expected_duration = static_cast<double>(pick(100));
    f.jobs.push_back(job);
  }
  return f;
}

// The farm as taskers.tcl, resources.tcl and jobs.jsonl text (with each job's submit time and runtime
// when `times`).
std::array<std::string, 3> files_of(const RandomFarm& f, bool times) {
  std::string taskers, resources, jobs;
  for (const auto& t : f.taskers)
    taskers += fmt::format("vtk_tasker_define {} -resources \"{}\" -CPUS {} -power {}\n", t.name, t.resources, t.cpus,
                           t.power);
  for (const auto& [name, m] : f.maps) {
    resources += "vovresourcemgr set " + name;
    if (m.count) resources += fmt::format(" -max {}", *m.count);
    if (m.map) resources += " -map \"" + *m.map + "\"";
    resources += '\n';
  }
  for (const auto& j : f.jobs) {
    jobs += fmt::format(
        "{{\"id\": \"{}\", \"resources\": \"{}\", \"command\": \"{}\", \"owner\": \"{}\", \"group\": \"{}\", "
        "\"priority\": \"{}\", \"expected_duration\": {}",
        j.id, j.resources, j.command, j.owner, j.group, j.priority, j.expected_duration);
    if (times) jobs += fmt::format(", \"submit\": {}, \"runtime\": {}", j.submit, j.runtime);
    jobs += "}\n";
  }
  return {taskers, resources, jobs};
}

// (each test writes files of its own names: ctest runs the two tests of this file side by side)
std::string write_file(const std::string& name, const std::string& text) {
  const std::string p = ::testing::TempDir() + "/colmatch-vovdiff-" + name;
  FILE* f = std::fopen(p.c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return p;
}

TEST(VovDifferential, LoaderAndEngineAgreeWithTheNaiveExpanderAndMatcher) {
  size_t native_farms = 0, round_trips = 0, cycles = 0, curtailed = 0, assigned = 0, no_room = 0,
         map_pools_exhausted = 0, jobs_seen = 0, choosing = 0, gated = 0, removed = 0;
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    const RandomFarm f = random_farm(seed);
    const std::array<std::string, 3> files = files_of(f, false);
    const std::string &taskers = files[0], &resources = files[1], &jobs = files[2];
    loaders::VovOptions options;
    options.dollars.insert(f.dollars.begin(), f.dollars.end());
    const loaders::Dataset ds = loaders::load_vov(write_file("t.tcl", taskers), write_file("r.tcl", resources),
                                                  write_file("j.jsonl", jobs), {}, options);
    const naive::VovOutcome ref = naive::vov_match(f.taskers, f.maps, f.dollars, f.jobs);
    const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
    if (seed % 20 == 0) {  // saved in the native format and read back (`import`, then `--farm`): the same
      const std::string dir = ::testing::TempDir() + "/colmatch-vovdiff-native";
      writers::save_native(dir, ds);
      const loaders::Dataset back =
          loaders::load_native({dir + "/farm.toml", "", dir + "/taskers.jsonl", dir + "/jobs.jsonl"});
      const MatchOutcome mb = run_match(back.catalog, back.taskers, back.jobs, kernels::active());
      ASSERT_EQ(mb.dispatch.status, m.dispatch.status) << "native round trip, seed " << seed;
      ASSERT_EQ(mb.dispatch.tasker, m.dispatch.tasker) << "native round trip, seed " << seed;
      ASSERT_EQ(back.jobs.note, ds.jobs.note) << "native round trip, seed " << seed;
      ++round_trips;
    }
    if (seed % 20 == 10) {  // the same farm raw in the native files (`--farm` with [accelerator]): the same
      auto quoted = [](const std::string& v) {
        std::string q = "\"";
        for (char c : v) q += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
        return q + "\"";
      };
      std::string farm = "name = \"vovdiff\"\n";
      if (!f.dollars.empty()) {
        farm += "[policy.vov.dollars]\n";
        for (const auto& [name, list] : f.dollars) farm += quoted(name) + " = " + quoted(list) + "\n";
      }
      farm += "[accelerator]\n";
      for (const auto& [name, rm] : f.maps) {
        farm += "[[accelerator.map]]\nname = " + quoted(name) + "\n";
        if (rm.count) farm += fmt::format("count = {}\n", *rm.count);
        if (rm.map) farm += "map = " + quoted(*rm.map) + "\n";
      }
      std::string native_taskers;
      for (const auto& t : f.taskers)
        native_taskers += fmt::format("{{\"name\": {}, \"resources\": {}, \"cpus\": {}, \"power\": {}}}\n",
                                      quoted(t.name), quoted(t.resources), t.cpus, t.power);
      const loaders::Dataset raw =
          loaders::load_native({write_file("farm.toml", farm), "", write_file("taskers.jsonl", native_taskers),
                                write_file("j.jsonl", jobs)});
      const MatchOutcome mr = run_match(raw.catalog, raw.taskers, raw.jobs, kernels::active());
      ASSERT_EQ(mr.dispatch.status, m.dispatch.status) << "native Accelerator farm, seed " << seed << "\n" << farm;
      ASSERT_EQ(mr.dispatch.tasker, m.dispatch.tasker) << "native Accelerator farm, seed " << seed;
      ASSERT_EQ(raw.jobs.note, ds.jobs.note) << "native Accelerator farm, seed " << seed;
      ASSERT_EQ(raw.jobs.reject_reason.size(), ds.jobs.reject_reason.size()) << seed;
      ++native_farms;
    }
    const std::string ctx = fmt::format("seed {}\n--- taskers.tcl\n{}--- resources.tcl\n{}--- jobs.jsonl\n{}", seed,
                                        taskers, resources, jobs);
    ASSERT_EQ(ds.jobs.size(), f.jobs.size());
    for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
      ++jobs_seen;
      choosing += ds.jobs.choice_of(j) != kNone;
      gated += ds.jobs.choice_of(j) != kNone && !ds.jobs.choices[ds.jobs.choice_of(j)].outcome.empty();
      std::string got;
      if (ds.jobs.rejected(j)) {
        got = "rejected";
        cycles += ds.jobs.reject_reason[ds.jobs.reject[j]].find("cycle") != std::string::npos;
      } else if (m.dispatch.status[j] == JobStatus::Rejected) {
        got = "rejected";  // removed when dispatched: its walk reached a cycle
        ++removed;
      } else if (m.dispatch.status[j] == JobStatus::Assigned) {
        got = "assigned";
        ++assigned;
      } else {
        got = m.dispatch.reason[j] == PendingReason::NoEligibleTasker ? "pending: no eligible tasker"
                                                                      : "pending: no room";
        if (got == "pending: no room") {
          ++no_room;
          for (const JobAmounts::Entry& e : ds.jobs.amount.of(j))
            map_pools_exhausted += ds.catalog.at(ds.catalog.consumables()[e.consumable]).name.starts_with("map:") &&
                                   std::isnan(m.dispatch.capacity.global_free(e.consumable)) == false &&
                                   m.dispatch.capacity.global_free(e.consumable) < 1;
        }
      }
      // (a gated job's pending kind is not compared: a map outside its gate that can never have the units
      // makes it "no eligible tasker" here, and stops the naive walk at dispatch, "no room")
      const bool is_gated = ds.jobs.choice_of(j) != kNone && !ds.jobs.choices[ds.jobs.choice_of(j)].outcome.empty();
      if (is_gated && got.starts_with("pending") && ref.status[j].starts_with("pending")) got = ref.status[j];
      ASSERT_EQ(got, ref.status[j]) << "job " << f.jobs[j].id << " (" << f.jobs[j].resources << ")\n" << ctx;
      if (got == "assigned") {
        ASSERT_EQ(ds.taskers.names[m.dispatch.tasker[j]], ref.tasker[j]) << "job " << f.jobs[j].id << "\n" << ctx;
      }
      if (got != "rejected") {
        ASSERT_EQ(ds.jobs.note[j] != kNone, ref.curtailed[j]) << "job " << f.jobs[j].id << "\n" << ctx;
        curtailed += ref.curtailed[j];
      }
    }
  }
  // the random farms exercise what they are for
  std::printf(
      "jobs %zu, assigned %zu, no room %zu (a map pool empty %zu), cycle rejections %zu, curtailed %zu, choosing %zu, "
      "gated %zu (removed when dispatched %zu)\n",
      jobs_seen, assigned, no_room, map_pools_exhausted, cycles, curtailed, choosing, gated, removed);
  EXPECT_EQ(round_trips, 100u);
  EXPECT_EQ(native_farms, 100u) << "farms read raw from the native files with [accelerator]";
  EXPECT_GT(jobs_seen, 30000u);
  EXPECT_GT(assigned, 5000u);
  EXPECT_GT(no_room, 1000u);
  EXPECT_GT(map_pools_exhausted, 200u);
  EXPECT_GT(cycles, 50u);
  EXPECT_GT(curtailed, 100u);
  EXPECT_GT(choosing, 1000u) << "jobs whose ORs hold counted maps";
  EXPECT_GT(gated, 800u) << "jobs whose walk meets a cycle after counted maps";
  EXPECT_GT(removed, 200u);
}

// Counted maps decided at dispatch over time (issue 27): the same random farms, their jobs given submit
// times and runtimes, replayed by `simulate` (the Accelerator's default, greedy) and by the naive
// dispatcher (tests/reference/naive_vov: at every event each waiting job that can start does, in
// order); licences run out and come back mid-run, OR jobs take one alternative. Every job's start and
// tasker must agree.
TEST(VovDifferential, SimulationAgreesWithTheNaiveDispatcherOverTime) {
  size_t started = 0, waited = 0, jobs_seen = 0, removed = 0;
  for (uint64_t seed = 1; seed <= 600; ++seed) {
    RandomFarm f = random_farm(seed);
    std::mt19937_64 rng(seed * 7919);
    for (naive::VovJob& j : f.jobs) {
      j.submit = static_cast<double>(rng() % 40);
      j.runtime = static_cast<double>(1 + rng() % 30);
    }
    const std::array<std::string, 3> files = files_of(f, true);
    const std::string &taskers = files[0], &resources = files[1], &jobs = files[2];
    loaders::VovOptions options;
    options.dollars.insert(f.dollars.begin(), f.dollars.end());
    const loaders::Dataset ds = loaders::load_vov(write_file("sim-t.tcl", taskers), write_file("sim-r.tcl", resources),
                                                  write_file("sim-j.jsonl", jobs), {}, options);
    const naive::VovSchedule ref = naive::vov_simulate(f.taskers, f.maps, f.dollars, f.jobs);
    const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, ds.policy, kernels::active(), ds.farm);
    const std::string ctx = fmt::format("seed {}\n--- taskers.tcl\n{}--- resources.tcl\n{}--- jobs.jsonl\n{}", seed,
                                        taskers, resources, jobs);
    for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
      ++jobs_seen;
      removed += r.reason[j] == SimReason::Removed;
      const bool ran = !std::isnan(r.start[j]);
      ASSERT_EQ(ran, !std::isnan(ref.start[j])) << "job " << f.jobs[j].id << " (" << f.jobs[j].resources << ")\n"
                                                << ctx;
      if (!ran) continue;
      ++started;
      waited += r.start[j] > ds.jobs.submit[j];
      ASSERT_EQ(r.start[j], ref.start[j]) << "job " << f.jobs[j].id << " (" << f.jobs[j].resources << ")\n" << ctx;
      ASSERT_EQ(ds.taskers.names[r.allocations[r.alloc_first[j]].tasker], ref.tasker[j])
          << "job " << f.jobs[j].id << "\n"
          << ctx;
    }
  }
  std::printf("jobs %zu, started %zu (%zu after waiting), removed when considered %zu\n", jobs_seen, started, waited,
              removed);
  EXPECT_GT(started, 5000u);
  EXPECT_GT(removed, 100u);
  EXPECT_GT(waited, 1000u);
}

}  // namespace
