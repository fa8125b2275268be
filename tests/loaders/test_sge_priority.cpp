// Grid Engine's job order read from a dump (issue 43 item 1): the priorities colmatch computes
// (engine/schedule/sge_priority.hpp) against those a real qmaster printed. bench/peers/sge_priority.sh
// built them on Son of Grid Engine 8.1.9 (Debian 12, simulated execution hosts): 32 pending jobs of
// bench/peers/sge_priority_jobs.txt on the oracle farm, prioritized by its scheduler, with Debian's
// scheduler weights (datasets/sge/prio-debian: weight_priority 0, urgency 0.5, ticket 0.5, waiting time
// 0.278) and with the manual's (prio-manual: 1, 0.1, 0.01, 0). Each folder holds the dump (farm/), and
// qstat -pri -xml, qstat -urg -xml as the scheduler left them, and started.xml what one scheduling run
// started once the queues were enabled.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engine/batch/dispatch.hpp"
#include "engine/batch/matcher.hpp"
#include "engine/match/explain.hpp"
#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"
#include "loaders/sge.hpp"
#include "loaders/sge_farm.hpp"
#include "loaders/sge_xml.hpp"

using namespace colmatch;

namespace {

const std::string kData = std::string(COLMATCH_SOURCE_DIR) + "/datasets/sge/";

// A recorded file of a run, NAME or NAME.gz (the larger runs keep theirs gzipped), found as a dump's are.
std::string recorded(const std::string& run, const char* name) { return loaders::sge::dump_file(kData + run, name); }

// job number -> the priority qstat printed (5 decimals), in qstat's order (the scheduler's)
std::vector<std::pair<std::string, double>> printed(const std::string& run) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& q : loaders::sge::read_qstat_jobs(recorded(run, "qstat-pri.xml")))
    out.emplace_back(q.number, std::stod(q.prio));
  return out;
}

class SgePriorityOracle : public ::testing::TestWithParam<const char*> {};

// Every job's prio within qstat's rounding (5 decimals), and the order colmatch dispatches in equal to the
// order qstat lists them (the scheduler's: prio descending, then submission, then job number).
// The dump's jobs are read with the priority qstat -r printed for them zeroed, as it is for jobs no
// scheduling run has seen yet: colmatch computes the priority, it does not copy it.
TEST_P(SgePriorityOracle, EveryJobsPriorityAndTheOrderAreGridEngines) {
  const std::string dir = ::testing::TempDir() + "/sge_prio_" + GetParam();
  std::filesystem::remove_all(dir);
  std::filesystem::copy(kData + GetParam() + "/farm", dir, std::filesystem::copy_options::recursive);
  {
    std::ifstream in(dir + "/qstat-r.xml");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (size_t at = text.find("<JAT_prio>"); at != std::string::npos; at = text.find("<JAT_prio>", at + 1))
      text.replace(at + 10, text.find('<', at + 10) - (at + 10), "0.00000");
    std::ofstream(dir + "/qstat-r.xml") << text;
  }
  const loaders::Dataset ds = loaders::load_sge(dir, "");
  std::map<std::string, uint32_t> row;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) row[std::string(ds.jobs.id[j])] = j;
  const auto sge = printed(GetParam());
  ASSERT_EQ(sge.size(), 32u);
  ASSERT_EQ(ds.jobs.size(), 32u);
  for (const auto& [number, prio] : sge) {
    ASSERT_TRUE(row.count(number)) << number;
    EXPECT_NEAR(ds.jobs.priority[row[number]], prio, 5.001e-6) << "job " << number;
    EXPECT_NE(ds.explain_priority(row[number]).find(fmt::format("prio {:.5f}", prio)), std::string::npos)
        << ds.explain_priority(row[number]);
  }
  // the order, over the jobs colmatch keeps (a slot range is still rejected)
  std::vector<std::string> want, got;
  for (const auto& [number, prio] : sge)
    if (!ds.jobs.rejected(row[number])) want.push_back(number);
  for (const uint32_t j : dispatch_order(ds.jobs)) got.emplace_back(ds.jobs.id[j]);
  EXPECT_EQ(got, want);
  // and what one scheduling run started once the queues were enabled: the same jobs, each on the same
  // master queue instance with the same slots in all (slot ranges the most that fit)
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, &ds.in_use, ds.dispatch);
  std::map<std::string, std::string> started, assigned;
  for (const auto& q : loaders::sge::read_qstat_jobs(kData + GetParam() + "/started.xml"))
    if (!q.queue.empty()) started[q.number] = q.queue + ":" + q.slots;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    if (m.dispatch.status[j] != JobStatus::Assigned) continue;
    uint32_t slots = 0;
    for (uint32_t a = 0; a < m.dispatch.alloc_count[j]; ++a)
      slots += m.dispatch.allocations[m.dispatch.alloc_first[j] + a].slots;
    assigned[std::string(ds.jobs.id[j])] =
        ds.taskers.names[m.dispatch.allocations[m.dispatch.alloc_first[j]].tasker] + ":" + std::to_string(slots);
  }
  EXPECT_EQ(assigned, started);
}

INSTANTIATE_TEST_SUITE_P(Runs, SgePriorityOracle, ::testing::Values("prio-debian", "prio-manual"));

// The weights are qconf-ssconf.txt's: without the file, the manual's defaults (the prio-manual run's
// weights give the same priorities); a weight that is not a number is refused naming file, line and key.
TEST(SgePriority, TheWeightsAreTheDumpsAndAMalformedOneIsNamed) {
  const std::string dir = ::testing::TempDir() + "/sge_prio_weights";
  std::filesystem::remove_all(dir);
  std::filesystem::copy(kData + "prio-manual/farm", dir, std::filesystem::copy_options::recursive);
  std::filesystem::remove(dir + "/qconf-ssconf.txt");
  const loaders::Dataset plain = loaders::load_sge(dir, "");
  const loaders::Dataset manual = loaders::load_sge(kData + "prio-manual/farm", "");
  for (uint32_t j = 0; j < plain.jobs.size(); ++j)
    EXPECT_NEAR(plain.jobs.priority[j], manual.jobs.priority[j], 1e-12);  // the same weights
  {
    std::ofstream out(dir + "/qconf-ssconf.txt");
    out << "algorithm default\nweight_urgency 0.1x\n";
  }
  try {
    loaders::load_sge(dir, "");
    FAIL() << "a malformed weight was read";
  } catch (const loaders::LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("qconf-ssconf.txt:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("weight_urgency"), std::string::npos) << e.what();
  }
}

}  // namespace

// `--jobs FILE` (issue 43 item 5): the harness's own qsub lines asked without a dump of them. Under the
// manual's weights (no waiting-time term) each job's priority is the one the qmaster gave the same line,
// and the line qsub refused (`-soft -l lic=1`: "soft requests on consumables like "lic" are not
// supported") is rejected saying so; Grid Engine numbered the others in line order.
TEST(SgeJobsFile, QsubLinesGetGridEnginesPrioritiesAndItsRefusal) {
  const std::string jobs = ::testing::TempDir() + "/sge_prio_jobs.txt";
  {
    std::ifstream in(std::string(COLMATCH_SOURCE_DIR) + "/bench/peers/sge_priority_jobs.txt");
    std::ofstream out(jobs);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("sleep ", 0) != 0) out << line << "\n";  // the harness's pauses
  }
  const loaders::Dataset ds = loaders::load_sge(kData + "prio-manual/farm", "", {}, loaders::LoadMode::Snapshot, jobs);
  auto sge = printed("prio-manual");
  std::sort(sge.begin(), sge.end(),
            [](const auto& a, const auto& b) { return std::stoi(a.first) < std::stoi(b.first); });
  ASSERT_EQ(ds.jobs.size(), 33u);
  size_t k = 0;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    if (ds.jobs.rejected(j) &&
        ds.jobs.reject_reason[ds.jobs.reject[j]].find("soft requests on consumables like "
                                                      "\"lic\" are not supported") != std::string::npos) {
      EXPECT_EQ(ds.jobs.id[j], "16");
      continue;
    }
    ASSERT_LT(k, sge.size());
    EXPECT_NEAR(ds.jobs.priority[j], sge[k].second, 5.001e-6)
        << "line job " << ds.jobs.id[j] << ", Grid Engine's job " << sge[k].first;
    ++k;
  }
  EXPECT_EQ(k, sge.size());
}

// A --jobs line is read as qsub reads its arguments: quotes keep a value whole; an option without its
// value or a quote left open is an error naming the file and line; a -p out of qsub's range and an option
// colmatch does not read reject the job with the reason.
TEST(SgeJobsFile, LinesAreReadAsQsubReadsThem) {
  const std::string jobs = ::testing::TempDir() + "/sge_jobs_lines.txt";
  auto load = [&](const std::string& text) {
    std::ofstream(jobs) << text;
    return loaders::load_sge(kData + "prio-manual/farm", "", {}, loaders::LoadMode::Snapshot, jobs);
  };
  const loaders::Dataset ds = load(
      "# a comment\n\n-l 'arch_s=x86_64' -p 10\n-p 2000\n-now y -N x -cwd\n-l lic=1 -verify\n-h -P proj\n"
      "-soft -q all.q@node0002\n");
  ASSERT_EQ(ds.jobs.size(), 6u);
  auto reason = [&](uint32_t j) { return ds.jobs.rejected(j) ? ds.jobs.reject_reason[ds.jobs.reject[j]] : ""; };
  EXPECT_EQ(reason(0), "");
  EXPECT_EQ(ds.jobs.request_text[ds.jobs.request[0]], "arch_s==\"x86_64\"");
  EXPECT_NE(reason(1).find(":4: job 2: -p 2000: the priority must be a whole number from -1023 to 1024"),
            std::string::npos)
      << reason(1);
  EXPECT_EQ(reason(2), "");
  EXPECT_NE(reason(3).find("option '-verify' is not one colmatch reads"), std::string::npos) << reason(3);
  EXPECT_EQ(ds.jobs.notes.value(ds.jobs.note[4]), "held");
  EXPECT_EQ(reason(5), "");
  EXPECT_GT(ds.jobs.priority[0], ds.jobs.priority[2]);  // -p 10 over -p 0
  for (const char* bad : {"-l\n", "-pe smp\n", "-l 'arch_s=x86\n"}) {
    try {
      load(std::string("-p 1\n") + bad);
      FAIL() << bad;
    } catch (const loaders::LoadError& e) {
      EXPECT_NE(std::string(e.what()).find("sge_jobs_lines.txt:2"), std::string::npos) << e.what();
    }
  }
}

// qsub refuses a job asking a parallel environment the cluster does not have ("the requested parallel
// environment does not exist"): it never exists in Grid Engine, so it widens no other job's urgency range
// (it was counted there with its -l lic=30's urgency: the others' normalized urgency, and so their order
// against jobs of other weights, shifted).
TEST(SgeJobsFile, AJobQsubRefusesIsNotInTheUrgencyRange) {
  const std::string jobs = ::testing::TempDir() + "/sge_jobs_refused_pe.txt";
  auto load = [&](const std::string& text) {
    std::ofstream(jobs) << text;
    return loaders::load_sge(kData + "prio-manual/farm", "", {}, loaders::LoadMode::Snapshot, jobs);
  };
  const loaders::Dataset plain = load("-l arch_s=x86_64\n-pe smp 2\n-p 5\n");
  const loaders::Dataset refused = load("-pe nope 8 -l lic=30\n-l arch_s=x86_64\n-pe smp 2\n-p 5\n");
  ASSERT_EQ(refused.jobs.size(), 4u);
  ASSERT_TRUE(refused.jobs.rejected(0));
  EXPECT_NE(refused.jobs.reject_reason[refused.jobs.reject[0]].find("nope"), std::string::npos);
  for (uint32_t j = 0; j < 3; ++j)
    EXPECT_EQ(refused.jobs.priority[j + 1], plain.jobs.priority[j]) << "line job " << plain.jobs.id[j];
}

// A PE's slot total (sge_pe(5) `slots`: its jobs' slots together, over the whole cluster) binds where it
// is below its queues' slots. `MPI_SLOTS=3 bench/peers/sge_priority.sh` (datasets/sge/pe-total): five
// jobs of bench/peers/sge_pe_total_jobs.txt released into one scheduling run; Grid Engine started
// the first mpi job of 2 slots and the mpi job of 1 and left the second mpi job of 2 and the last mpi
// job pending (3 of 3 mpi slots in use), the smp job beside them. colmatch starts the same jobs on the
// same queue instances with the same slots (without the total it started all but the last).
TEST(SgePeTotal, APeSlotTotalBindsAsInGridEngine) {
  const loaders::Dataset ds = loaders::load_sge(kData + "pe-total/farm", "");
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, &ds.in_use, ds.dispatch);
  std::map<std::string, std::string> got, want;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    std::string& g = got[std::string(ds.jobs.id[j])];
    if (m.dispatch.status[j] != JobStatus::Assigned) {
      g = "pending";
      continue;
    }
    for (uint32_t a = 0; a < m.dispatch.alloc_count[j]; ++a) {
      const Allocation& x = m.dispatch.allocations[m.dispatch.alloc_first[j] + a];
      g += fmt::format("{}{}:{}", a ? "+" : "", ds.taskers.names[x.tasker], x.slots);
    }
  }
  for (const auto& q : loaders::sge::read_qstat_jobs(kData + "pe-total/started.xml"))
    want[q.number] = q.queue.empty() ? "pending" : q.queue + ":" + q.slots;
  EXPECT_EQ(got, want);
  EXPECT_EQ(want.at("116"), "pending");
}

// Where one scheduling run of a real qmaster put each job, slot by slot: qstat -g t's lines (a MASTER or
// SLAVE line per slot, the job's id on the first line of each queue instance; pending jobs without one).
std::map<std::string, std::map<std::string, int>> slots_in_g_t(const std::string& path) {
  std::map<std::string, std::map<std::string, int>> want;
  std::ifstream in(path);
  std::string line, job;
  for (int n = 0; std::getline(in, line); ++n) {
    if (n < 2) continue;  // the header and its rule
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (w.size() == 9 || w.size() == 7) job = w[0];  // id prior name user state date time [queue master]
    if (w.size() == 7) want[job];                    // pending
    if (w.size() == 9) ++want[job][w[7]];
    if (w.size() == 2) ++want[job][w[0]];
  }
  return want;
}

// The queue instance of each started job's MASTER line in qstat -g t (its master task).
std::map<std::string, std::string> masters_in_g_t(const std::string& path) {
  std::map<std::string, std::string> master;
  std::ifstream in(path);
  std::string line, job;
  for (int n = 0; std::getline(in, line); ++n) {
    if (n < 2) continue;
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (w.size() == 9 || w.size() == 7) job = w[0];
    if (w.size() == 9 && w[8] == "MASTER") master[job] = w[7];
    if (w.size() == 2 && w[1] == "MASTER") master[job] = w[0];
  }
  return master;
}

// colmatch's master of each assigned job of a dump: its first allocation.
std::map<std::string, std::string> masters_matched(const loaders::Dataset& ds) {
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, &ds.in_use, ds.dispatch);
  std::map<std::string, std::string> got;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j)
    if (m.dispatch.status[j] == JobStatus::Assigned && m.dispatch.alloc_count[j] > 0)
      got[std::string(ds.jobs.id[j])] = ds.taskers.names[m.dispatch.allocations[m.dispatch.alloc_first[j]].tasker];
  return got;
}

// colmatch's match of a dump, the same way: per job, per queue instance, its slots.
std::map<std::string, std::map<std::string, int>> slots_matched(const loaders::Dataset& ds) {
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, &ds.in_use, ds.dispatch);
  std::map<std::string, std::map<std::string, int>> got;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    auto& g = got[std::string(ds.jobs.id[j])];
    if (m.dispatch.status[j] != JobStatus::Assigned) continue;
    for (uint32_t a = 0; a < m.dispatch.alloc_count[j]; ++a) {
      const Allocation& x = m.dispatch.allocations[m.dispatch.alloc_first[j] + a];
      g[ds.taskers.names[x.tasker]] += static_cast<int>(x.slots);
    }
  }
  return got;
}

// The jobs a dump notes "held" (qstat's hqw): `match` places them as if released (it answers where they
// would go), the qmaster leaves them; compared apart.
std::set<std::string> held_jobs(const loaders::Dataset& ds) {
  std::set<std::string> out;
  const auto held = ds.jobs.notes.find("held");
  for (uint32_t j = 0; held && j < ds.jobs.size(); ++j)
    if (ds.jobs.note[j] == *held) out.insert(std::string(ds.jobs.id[j]));
  return out;
}

// Parallel jobs over a host's queue instances (issue 43 item 3): bench/peers/sge_pe_hosts.sh recorded
// where a real qmaster put ten jobs of every allocation rule in one scheduling run, slot by slot
// (datasets/sge/pe-hosts/started-g-t.txt, qstat -g t) on a farm where two hosts have two queue instances:
// `-pe smp 6` ($pe_slots) on all.q@node0003:4 + q2.q@node0003:2, `-pe mpi 6` ($fill_up) host after host,
// `-pe rr 3` ($round_robin) a slot on each of three hosts, `-pe two 4` (allocation_rule 2) pending with
// no two hosts of two free slots, and the ranges `smp 2-8` and `mpi 2-20` the most that fit (7 on one
// host, 2 over two). colmatch puts every slot on the same queue instances.
TEST(SgePeHosts, EveryRuleAndRangeLandsWhereGridEnginePutsIt) {
  const auto want = slots_in_g_t(kData + "pe-hosts/started-g-t.txt");
  ASSERT_EQ(want.size(), 10u);
  const loaders::Dataset ds = loaders::load_sge(kData + "pe-hosts/farm", "");
  EXPECT_EQ(slots_matched(ds), want);
  // the master task: on the last instance the first host gave slots from (`-pe smp 6`: q2.q@node0003)
  EXPECT_EQ(masters_matched(ds), masters_in_g_t(kData + "pe-hosts/started-g-t.txt"));
  // a pending job's reason says the shape it waits for room in, not "none with room now" (taskers have room)
  const Categories cats = categorize(ds.catalog, ds.jobs);
  std::map<std::string, std::string> shape;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j)
    shape[std::string(ds.jobs.id[j])] = host_rule_shape(cats, cats.of_job[j]);
  EXPECT_EQ(shape.at("146"), "6 slots on one host ($pe_slots)");
  EXPECT_EQ(shape.at("147"), "6 slots host after host ($fill_up)");
  EXPECT_EQ(shape.at("148"), "3 slots, one a host in turn ($round_robin)");
  EXPECT_EQ(shape.at("149"), "4 slots, 2 a host (allocation_rule 2)");
  EXPECT_EQ(shape.at("150"), "2 to 8 slots on one host ($pe_slots)");
  EXPECT_EQ(shape.at("153"), "") << "a sequential job";
}

// Grid Engine's queue sort (issue 43 item 2): bench/peers/sge_queue_sort.sh on the same farm with
// load_formula over the hosts' `cores` (node0001 16, node0002 32, node0003 8, node0004 4) and seq_no
// all.q 1-4 by host, q2.q@node0003 13, q2.q@node0004 1. queue_sort_method load (sort-load: hosts by
// cores, then seq_no: sequential jobs on q2.q@node0004 first) and seqno with -cores (sort-seqno: seq_no,
// then the most cores; a $pe_slots job tries the hosts by their load: `-pe smp 3` on node0002, not on
// node0004 which comes first in the queue order). Eight jobs each, slot by slot as the qmaster put them.
class SgeQueueSort : public ::testing::TestWithParam<const char*> {};
TEST_P(SgeQueueSort, JobsLandWhereTheLoadFormulaSendsThem) {
  const auto want = slots_in_g_t(kData + GetParam() + "/started-g-t.txt");
  ASSERT_EQ(want.size(), 8u);
  const loaders::Dataset ds = loaders::load_sge(kData + GetParam() + "/farm", "");
  EXPECT_EQ(slots_matched(ds), want);
  EXPECT_EQ(masters_matched(ds), masters_in_g_t(kData + GetParam() + "/started-g-t.txt"));
}
INSTANTIATE_TEST_SUITE_P(Runs, SgeQueueSort, ::testing::Values("sort-load", "sort-seqno"));

// One recorded run of datasets/sge/load-adjust-*: the qmaster's slots per job (qstat -g t) and the dump
// loaded for `match`, which must carry a load correction. (Tests name its parts by reference: clang 14
// lambdas cannot capture structured bindings.)
struct CorrectedRun {
  std::string dir;
  std::map<std::string, std::map<std::string, int>> want;
  loaders::Dataset ds;
};
CorrectedRun corrected_run(const std::string& name, size_t jobs) {
  CorrectedRun r{kData + name, {}, {}};
  r.want = slots_in_g_t(r.dir + "/started-g-t.txt");
  EXPECT_EQ(r.want.size(), jobs) << name;
  r.ds = loaders::load_sge(r.dir + "/farm", "");
  EXPECT_NE(r.ds.dispatch.load_correction, nullptr) << name;
  return r;
}

// Grid Engine's job_load_adjustments within one scheduling run (issue 43 item 2): bench/peers/sge_load_adjust.sh
// gave the four simulated hosts this machine's load values (one sge_execd, copied by load_report_host: the same
// np_load_avg and num_proc 2 on each) and queue_sort_method load with load_formula np_load_avg+cores*0.02
// (node0001 .32, node0002 .64, node0003 .16, node0004 .08 above the common load); job_load_adjustments
// np_load_avg=0.50, so each slot a job takes adds 0.25 to its host's load for the jobs after it. The qmaster
// spread the 13 jobs over the hosts as the corrected loads say (`-pe mpi 6` on node0004, then the
// sequential jobs on node0003, node0001, node0003, `-pe smp 3` on node0001, ...); without the correction
// colmatch put 2 of 13 there.
TEST(SgeLoadCorrection, EachSlotMovesItsHostInTheQueueSortAsGridEngineDoes) {
  CorrectedRun r = corrected_run("load-adjust-load", 13);
  const std::string& run = r.dir;
  auto& want = r.want;
  loaders::Dataset& ds = r.ds;
  ASSERT_NE(ds.dispatch.load_correction, nullptr);
  const LoadCorrection& lc = *ds.dispatch.load_correction;
  ASSERT_EQ(lc.names, std::vector<std::string>({"np_load_avg", "cores"}));
  for (size_t h = 0; h < ds.taskers.host_names.size(); ++h) {
    EXPECT_DOUBLE_EQ(lc.per_slot[h * 2], 0.25) << "0.50 / num_proc 2, " << ds.taskers.host_names[h];
    EXPECT_EQ(lc.per_slot[h * 2 + 1], 0.0) << "cores is no load value";
  }
  EXPECT_TRUE(lc.load_first);
  EXPECT_EQ(slots_matched(ds), want);
  EXPECT_EQ(masters_matched(ds), masters_in_g_t(run + "/started-g-t.txt"));
  ds.dispatch.load_correction = nullptr;  // every job sees the loads as dumped
  EXPECT_NE(slots_matched(ds), want);
  // over time the correction is not applied, and a warning says so
  const loaders::Dataset timed = loaders::load_sge(run + "/farm", "", {}, loaders::LoadMode::OverTime);
  EXPECT_EQ(timed.dispatch.load_correction, nullptr);
  EXPECT_TRUE(std::any_of(timed.taskers.warnings.begin(), timed.taskers.warnings.end(), [](const std::string& w) {
    return w.find("job_load_adjustments np_load_avg=0.50: not applied over time") != std::string::npos;
  }));
}

// Under queue_sort_method seqno a parallel job tries the hosts in the order of their first queue instance
// with a free slot in the queue sort, (seq_no, corrected host load), as for every allocation rule: the
// qmaster's queue list is one list (sge_select_queue.c parallel_tag_queues_suitable4job numbers the hosts
// by it). datasets/sge/load-adjust-seqno: job 63 (`-pe smp 3`) went to node0003, seq_no 3, where
// node0004 (seq_no 4) had the least load.
TEST(SgeLoadCorrection, UnderSeqnoParallelJobsTakeHostsInTheQueueOrder) {
  const CorrectedRun r = corrected_run("load-adjust-seqno", 13);
  const std::string& run = r.dir;
  const auto& want = r.want;
  const loaders::Dataset& ds = r.ds;
  ASSERT_NE(ds.dispatch.load_correction, nullptr);
  EXPECT_FALSE(ds.dispatch.load_correction->load_first);
  EXPECT_EQ(slots_matched(ds), want);
  EXPECT_EQ(masters_matched(ds), masters_in_g_t(run + "/started-g-t.txt"));
}

// A queue instance whose host's corrected load reaches one of its load_thresholds is in load alarm for the
// rest of the run (sge_select_queue.c sge_load_alarm, sge_split_queue_load): datasets/sge/load-adjust-alarm
// (all.q and q2.q with load_thresholds np_load_avg=1.75, np_load_avg dumped about 0.9, 0.25 a slot): 26
// sequential jobs for 24 slots, and the qmaster stopped each host once its corrected load reached 1.75.
TEST(SgeLoadCorrection, AnInstanceInLoadAlarmTakesNoMoreJobsInTheRun) {
  CorrectedRun r = corrected_run("load-adjust-alarm", 26);
  ASSERT_NE(r.ds.dispatch.load_correction, nullptr);
  const LoadCorrection& lc = *r.ds.dispatch.load_correction;
  ASSERT_EQ(lc.threshold_first.size(), r.ds.taskers.size() + 1);
  ASSERT_EQ(lc.thresholds.size(), r.ds.taskers.size());  // one each: np_load_avg >= 1.75
  EXPECT_EQ(lc.names[lc.thresholds[0].value], "np_load_avg");
  EXPECT_DOUBLE_EQ(lc.thresholds[0].limit, 1.75);
  size_t pending = 0;
  for (const auto& [job, slots] : r.want) pending += slots.empty();
  EXPECT_GT(pending, 2u) << "the alarm left slots free";
  EXPECT_EQ(slots_matched(r.ds), r.want);
  LoadCorrection without = lc;
  without.threshold_first.clear();
  without.thresholds.clear();
  r.ds.dispatch.load_correction = std::make_shared<const LoadCorrection>(without);
  EXPECT_NE(slots_matched(r.ds), r.want);
  // a threshold that is no NAME=VALUE, or whose value is not the complex's type: file, line and field
  for (const char* bad : {"np_load_avg=high", "np_load_avg"}) {
    const std::string dir = ::testing::TempDir() + "/sge_load_alarm_bad";
    std::filesystem::remove_all(dir);
    std::filesystem::copy(r.dir + "/farm", dir, std::filesystem::copy_options::recursive);
    std::ifstream in(dir + "/qconf-sq.txt");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = text.find("np_load_avg=1.75");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 16, bad);
    std::ofstream(dir + "/qconf-sq.txt") << text;
    try {
      loaders::load_sge(dir, "");
      ADD_FAILURE() << bad << " accepted";
    } catch (const loaders::LoadError& e) {
      EXPECT_EQ(e.field, "load_thresholds") << bad;
      EXPECT_EQ(e.line, static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n') + 1));
    }
  }
}

// A job running when the run begins carries its load correction into it, decayed (load_correction.c
// correct_load): datasets/sge/load-adjust-running (load_adjustment_decay_time 0:1:0) has job 11 (`-pe smp
// 4`) running on node0004 since 38 s before the run (34 s before the dump), and nine sequential jobs that
// the qmaster placed n3 n1 n3 n4 n1 n2 n3 n4 n1: node0004 (np_load_avg + cores 4 x 0.02) carried about
// 4 x 0.25 x (1 - 38/60) = 0.37 of correction. Without it node0004 takes the first job; undecayed, none.
TEST(SgeLoadCorrection, RunningJobsCarryTheirDecayedCorrectionIntoTheRun) {
  CorrectedRun r = corrected_run("load-adjust-running", 10);
  const std::string& run = r.dir;
  auto& want = r.want;
  loaders::Dataset& ds = r.ds;
  want.erase("11");  // running in the dump: not matched again
  ASSERT_NE(ds.dispatch.load_correction, nullptr);
  const LoadCorrection& lc = *ds.dispatch.load_correction;
  ASSERT_EQ(lc.initial.size(), ds.taskers.host_names.size());
  for (size_t h = 0; h < lc.initial.size(); ++h)  // 23:13:37 to the dump at 23:14:11: 4 x (1 - 34/60) = 1.7333
    EXPECT_DOUBLE_EQ(lc.initial[h], ds.taskers.host_names[h] == "node0004" ? 1.73 : 0.0) << ds.taskers.host_names[h];
  EXPECT_EQ(slots_matched(ds), want);
  EXPECT_EQ(masters_matched(ds), [&] {
    auto m = masters_in_g_t(run + "/started-g-t.txt");
    m.erase("11");
    return m;
  }());
  LoadCorrection without = lc, undecayed = lc;
  without.initial.clear();
  for (size_t h = 0; h < lc.initial.size(); ++h) undecayed.initial[h] = lc.initial[h] > 0 ? 4 : 0;
  ds.dispatch.load_correction = std::make_shared<const LoadCorrection>(without);
  EXPECT_NE(slots_matched(ds), want);
  ds.dispatch.load_correction = std::make_shared<const LoadCorrection>(undecayed);
  EXPECT_NE(slots_matched(ds), want);
  // past the decay time the job carries none: the dump taken 61 s after it started
  const std::string late = ::testing::TempDir() + "/sge_load_adjust_late";
  std::filesystem::remove_all(late);
  std::filesystem::copy(run + "/farm", late, std::filesystem::copy_options::recursive);
  std::ofstream(late + "/dump-time.txt") << 1796166817 + 61 << "\n";
  const loaders::Dataset after = loaders::load_sge(late, "");
  ASSERT_NE(after.dispatch.load_correction, nullptr);
  EXPECT_TRUE(after.dispatch.load_correction->initial.empty());
}

// qsub -w on --jobs lines (issue 43 item 4), against the answers of the real qmaster on the farm of
// datasets/sge/pe-hosts (asked by hand, 2026-11-29, Son of Grid Engine 8.1.9):
//   -w e -l arch_s=nosuch   "Unable to run job: error: no suitable queues"
//   -w v -l arch_s=x86_64   "verification: found suitable queue(s)" (nothing submitted)
//   -w v -l arch_s=nosuch   a line per host, then "verification: no suitable queues"
//   -w w -l arch_s=nosuch   "warning: no suitable queues", submitted
//   -l arch_s=nosuch        submitted (qsub's default is -w n)
//   -w e -pe smp 9 / smp 8  refused / submitted ($pe_slots: 8 on one host at most)
//   -w e -pe mpi 25 / 24    refused / submitted (24 slots in all)
//   -w v -pe two 10 / 8     no suitable / found (allocation_rule 2 on 4 hosts)
//   -w x                    qsub: invalid option argument "-w x"
TEST(SgeJobsFile, QsubVerificationAsGridEngineAnswers) {
  const std::string jobs = ::testing::TempDir() + "/sge_verify.txt";
  std::ofstream(jobs) << "-w e -l arch_s=nosuch\n-w v -l arch_s=x86_64\n-w v -l arch_s=nosuch\n-w w -l arch_s=nosuch\n"
                         "-l arch_s=nosuch\n-w e -pe smp 9\n-w e -pe smp 8\n-w e -pe mpi 25\n-w e -pe mpi 24\n"
                         "-w v -pe two 10\n-w v -pe two 8\n-w x\n";
  const loaders::Dataset ds = loaders::load_sge(kData + "pe-hosts/farm", "", {}, loaders::LoadMode::Snapshot, jobs);
  ASSERT_EQ(ds.jobs.size(), 12u);
  auto why = [&](uint32_t j) { return ds.jobs.rejected(j) ? ds.jobs.reject_reason[ds.jobs.reject[j]] : ""; };
  auto says = [&](uint32_t j, const char* text) {
    EXPECT_NE(why(j).find(text), std::string::npos) << "job " << j + 1 << ": " << why(j);
  };
  says(0, "qsub -w e: error: no suitable queues");
  says(1, "verification: found suitable queue(s)");
  says(2, "verification: no suitable queues");
  EXPECT_EQ(why(3), "");  // submitted, with a warning
  bool warned = false;
  for (const std::string& w : ds.taskers.warnings)
    warned = warned || w.find("job 4: qsub -w w: warning") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_EQ(why(4), "");
  says(5, "no suitable queues");
  EXPECT_EQ(why(6), "");
  says(7, "no suitable queues");
  EXPECT_EQ(why(8), "");
  says(9, "verification: no suitable queues");
  says(10, "verification: found suitable queue(s)");
  says(11, "-w x: not a verification level");
}

// The load formula as Son of Grid Engine evaluates it (sort_hosts.c): terms apart by + and -, each an
// operand or two joined by * / & | ^, a leading - negating the first; a value a host lacks makes its load
// 9999 (last). On the sort-load farm (queue_sort_method load, hosts' cores 16, 32, 8, 4): formulas of the
// same order give the same queue order as `cores`, `-cores` the hosts reversed, a name no host has seq_no alone.
TEST(SgeQueueSort, TheLoadFormulaIsEvaluatedAsGridEngineDoes) {
  const std::string dir = ::testing::TempDir() + "/sge_formula";
  auto order_with = [&](const std::string& formula) {
    std::filesystem::remove_all(dir);
    std::filesystem::copy(kData + "sort-load/farm", dir, std::filesystem::copy_options::recursive);
    std::ifstream in(dir + "/qconf-ssconf.txt");
    std::string text, line;
    while (std::getline(in, line))
      text += (line.rfind("load_formula", 0) == 0 ? "load_formula " + formula : line) + "\n";
    in.close();
    std::ofstream(dir + "/qconf-ssconf.txt") << text;
    return loaders::load_sge(dir, "").taskers.names;
  };
  const std::vector<std::string> cores = order_with("cores");
  EXPECT_EQ(cores.front(), "q2.q@node0004");  // the fewest cores, then seq_no
  EXPECT_EQ(cores.back(), "all.q@node0002");
  EXPECT_EQ(order_with("cores*2"), cores);
  EXPECT_EQ(order_with("cores/2+1"), cores);
  EXPECT_EQ(order_with("$cores-3"), cores);
  const std::vector<std::string> reversed = order_with("-cores");
  EXPECT_EQ(reversed.front(), "all.q@node0002");
  EXPECT_EQ(order_with("0-cores"), reversed);
  EXPECT_EQ(order_with("cores*nosuch"), order_with("nosuch")) << "a missing value: every host 9999";
  EXPECT_EQ(order_with("nosuch").front(), "all.q@node0001") << "seq_no alone (all.q@node0001 and q2.q@node0004 "
                                                               "tie at 1: the input order)";
}

// -pe's slot range list as qsub takes it and qstat prints it: `3,4` is 3-4 (qstat's way to print a range of
// two), pieces join (`2-3,4-6`), `-4` starts at 1, `2-` is open (at most every slot of the farm: 24 here);
// a list with gaps (`1,3`) is refused naming it, not read as 1-3.
TEST(SgeJobsFile, SlotRangeListsAreReadAsQsubReadsThem) {
  const std::string jobs = ::testing::TempDir() + "/sge_ranges.txt";
  std::ofstream(jobs) << "-pe mpi 3,4\n-pe mpi 2-3,4-6\n-pe mpi -4\n-pe mpi 2-\n-pe mpi 1,3\n-pe two 3-7\n";
  const loaders::Dataset ds = loaders::load_sge(kData + "pe-hosts/farm", "", {}, loaders::LoadMode::Snapshot, jobs);
  ASSERT_EQ(ds.jobs.size(), 6u);
  auto range = [&](uint32_t j) { return fmt::format("{}-{}", ds.jobs.pe_shape_of(j).min_slots, ds.jobs.slots[j]); };
  EXPECT_EQ(range(0), "3-4");
  EXPECT_EQ(range(1), "2-6");
  EXPECT_EQ(range(2), "1-4");
  EXPECT_EQ(range(3), "2-24");
  ASSERT_TRUE(ds.jobs.rejected(4));
  EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[4]].find("a slot range with gaps"), std::string::npos);
  EXPECT_EQ(range(5), "4-6") << "allocation_rule 2: the multiples of 2 in 3-7";
  EXPECT_EQ(ds.jobs.pe_shape_of(5).per_host, 2u);
}

// Seeded random jobs of every kind (bench/peers/sge_mixed.sh: sequential and parallel of every rule,
// ranges, requests of the farm's complexes, -q, soft requests, POSIX priorities) released into one
// scheduling run of the real qmaster under Debian's weights (urgency, tickets, waiting time): 60 jobs
// of up to 6 slots (mixed-1) and 40 of up to 2 (mixed-4, mixed-5: 15 and 13 of them start). Every job on
// the same queue instances with the same slots, or pending in both. (Found on the way: the hosts go in
// the order of their first queue instance with a free slot, not their first instance: a `-pe two 2` went
// to all.q@node0004 while node0003's first instance, all.q@node0003, was full.)
class SgeMixed : public ::testing::TestWithParam<const char*> {};
TEST_P(SgeMixed, RandomJobsLandWhereGridEnginePutsThem) {
  auto want = slots_in_g_t(kData + GetParam() + "/started-g-t.txt");
  ASSERT_GE(want.size(), 40u);
  const loaders::Dataset ds = loaders::load_sge(kData + GetParam() + "/farm", "");
  auto got = slots_matched(ds);
  auto masters = masters_matched(ds);
  const std::set<std::string> held = held_jobs(ds);
  for (const std::string& j : held) {
    EXPECT_TRUE(want.at(j).empty()) << "job " << j << ": held, yet Grid Engine started it";
    want.erase(j), got.erase(j), masters.erase(j);
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(masters, masters_in_g_t(kData + GetParam() + "/started-g-t.txt"));
}
// farm80-release: bench/peers/sge_farms.sh's farm80 (80 hosts, nested host groups, five cluster queues, 170
// queue instances) with 300 jobs of six users (bench/peers/sge_farm_requests.py release farm80 1 300:
// requests of the farm's values, up to 32 slots, tickets as tickets-1) released into one run: 292 of the
// 300 land slot by slot where Grid Engine put them; the other 8 are held jobs (above). Found with it:
// queue instances of equal seq_no and load go in the order Grid Engine makes them (a hostlist's own
// hosts and its groups' before their subgroups'), not by name: 223 of 300 before.
INSTANTIATE_TEST_SUITE_P(Runs, SgeMixed, ::testing::Values("mixed-1", "mixed-4", "mixed-5", "farm80-release"));

// qsub -masterq (issue 43; a dump's master_hard_req_queue): five parallel jobs of every rule with a master
// queue list, released into one scheduling run of the real qmaster (bench/peers/sge_masterq_jobs.txt,
// datasets/sge/masterq). Grid Engine's slot harvesting (sge_select_queue.c): until a host has given the
// master, a queue instance outside the -masterq list leaves the job's last slot for one inside it. So
// `-pe mpi 6 -masterq q2.q` ($fill_up) took all.q@node0001:4 + all.q@node0002:1 (not 2) and its master on
// q2.q@node0003; `-pe smp 3` one host with a q2.q instance; `-pe rr 3 -masterq q2.q@node0004` a second
// round to reach it. colmatch places every slot and every master where the qmaster did (it rejected them
// before: the dump's -masterq had been read as if absent, and then refused).
TEST(SgeMasterq, MasterQueuesAsGridEngineHarvestsThem) {
  const std::string g_t = kData + "masterq/started-g-t.txt";
  const loaders::Dataset ds = loaders::load_sge(kData + "masterq/farm", "");
  ASSERT_EQ(ds.jobs.size(), 6u);
  EXPECT_EQ(slots_matched(ds), slots_in_g_t(g_t));
  EXPECT_EQ(masters_matched(ds), masters_in_g_t(g_t));
  EXPECT_EQ(masters_matched(ds).at("495"), "q2.q@node0003");
  const Categories cats = categorize(ds.catalog, ds.jobs);
  EXPECT_EQ(host_rule_shape(cats, cats.of_job[0]),
            "6 slots host after host ($fill_up), the master on a -masterq queue");
  // the same lines asked with --jobs: the same places (ids by line), and what colmatch does not place yet
  const std::string jobs = ::testing::TempDir() + "/sge_masterq_jobs.txt";
  {
    std::ifstream in(std::string(COLMATCH_SOURCE_DIR) + "/bench/peers/sge_masterq_jobs.txt");
    std::ofstream out(jobs);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#') out << line << "\n";
    out << "-pe mpi 2-4 -masterq q2.q\n-pe mpi 2 -masterq nosuch.q\n";
  }
  const loaders::Dataset lines = loaders::load_sge(kData + "masterq/farm", "", {}, loaders::LoadMode::Snapshot, jobs);
  ASSERT_EQ(lines.jobs.size(), 8u);
  const auto placed = masters_matched(lines);
  EXPECT_EQ(placed.at("1"), "q2.q@node0003");
  EXPECT_EQ(placed.at("4"), "q2.q@node0004");
  auto reason = [&](uint32_t j) { return std::string(lines.jobs.reject_reason[lines.jobs.reject[j]]); };
  ASSERT_TRUE(lines.jobs.rejected(6) && lines.jobs.rejected(7));
  EXPECT_NE(reason(6).find("-masterq with a slot range: not placed yet"), std::string::npos) << reason(6);
  EXPECT_NE(reason(7).find("unknown queue \"nosuch.q\""), std::string::npos) << reason(7);
  // over time (simulate) a master apart is not placed: said so (498's $round_robin is refused first)
  const loaders::Dataset timed = loaders::load_sge(kData + "masterq/farm", "", {}, loaders::LoadMode::OverTime);
  for (uint32_t j = 0; j < 5; ++j) {
    ASSERT_TRUE(timed.jobs.rejected(j)) << timed.jobs.id[j];
    const std::string why(timed.jobs.reject_reason[timed.jobs.reject[j]]);
    EXPECT_NE(why.find(j == 3 ? "$round_robin" : "-masterq: the master apart is placed by match"), std::string::npos)
        << why;
  }
}

// -masterq beside -q (bench/peers/sge_masterq_q_jobs.txt on the pe-hosts farm, datasets/sge/masterq-q): Son of
// Grid Engine 8.1.9 lets a queue of the -masterq list in whether -q names it or not; such an instance gives one
// slot, the master's, until a host has given the master, and slave slots after (sge_select_queue.c's slot
// harvesting). Job 17, `-pe mpi 6 -q all.q@node0001 -masterq q2.q`: all.q@node0001:4, its master on
// q2.q@node0003:1, and a slave on q2.q@node0004 (a -masterq queue -q does not name); 18 and 19 ($pe_slots 4 and
// 5 beside -q all.q): a host's all.q and one slot of its q2.q; 21 (allocation_rule 2) pending. qsub refuses
// -masterq for a sequential job.
TEST(SgeMasterq, BesideAQueueListAsGridEngineHarvestsIt) {
  const std::string g_t = kData + "masterq-q/started-g-t.txt";
  const loaders::Dataset ds = loaders::load_sge(kData + "masterq-q/farm", "");
  ASSERT_EQ(ds.jobs.size(), 5u);
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) ASSERT_FALSE(ds.jobs.rejected(j)) << ds.jobs.id[j];
  const auto want = slots_in_g_t(g_t);
  EXPECT_EQ(slots_matched(ds), want);
  EXPECT_EQ(masters_matched(ds), masters_in_g_t(g_t));
  EXPECT_EQ(want.at("17").at("q2.q@node0004"), 1) << "a slave on a -masterq queue once the master was given";
  EXPECT_EQ(masters_in_g_t(g_t).at("17"), "q2.q@node0003");
  EXPECT_TRUE(want.at("21").empty());
  // the same lines asked with --jobs (ids by line): the same places; the sequential one refused as qsub did
  const std::string jobs = ::testing::TempDir() + "/sge_masterq_q_jobs.txt";
  {
    std::ifstream in(std::string(COLMATCH_SOURCE_DIR) + "/bench/peers/sge_masterq_q_jobs.txt");
    std::ofstream out(jobs);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#') out << line << "\n";
  }
  const loaders::Dataset lines = loaders::load_sge(kData + "masterq-q/farm", "", {}, loaders::LoadMode::Snapshot, jobs);
  ASSERT_EQ(lines.jobs.size(), 6u);
  std::map<std::string, std::map<std::string, int>> by_line;
  for (const auto& [id, slots] : slots_matched(lines))
    if (id != "6") by_line[std::to_string(std::stoi(id) + 16)] = slots;
  EXPECT_EQ(by_line, want);
  ASSERT_TRUE(lines.jobs.rejected(5));
  const std::string why(lines.jobs.reject_reason[lines.jobs.reject[5]]);
  EXPECT_NE(why.find("-masterq without -pe: qsub refuses it"), std::string::npos) << why;
  std::ifstream refused(kData + "masterq-q/refused.txt");
  const std::string said((std::istreambuf_iterator<char>(refused)), std::istreambuf_iterator<char>());
  EXPECT_NE(said.find("specification of master queue is not allowed for non-parallel jobs"), std::string::npos);
}

namespace {

// qstat -ext -xml's pending jobs: number -> tickets, otickets, ftickets, stickets as printed (whole,
// truncated).
std::map<std::string, std::array<double, 4>> printed_tickets(const std::string& path) {
  std::string text;
  loaders::LineReader in(path);
  for (std::string_view line; in.next(line);) text.append(line).push_back('\n');
  auto field = [&](size_t from, size_t to, const std::string& tag) {
    const size_t at = text.find("<" + tag + ">", from);
    EXPECT_LT(at, to) << tag;
    return text.substr(at + tag.size() + 2, text.find('<', at + 1) - at - tag.size() - 2);
  };
  std::map<std::string, std::array<double, 4>> out;
  for (size_t at = text.find("<job_list state=\"pending\">"); at != std::string::npos;
       at = text.find("<job_list state=\"pending\">", at + 1)) {
    const size_t end = text.find("</job_list>", at);
    out[field(at, end, "JB_job_number")] = {std::stod(field(at, end, "tickets")), std::stod(field(at, end, "otickets")),
                                            std::stod(field(at, end, "ftickets")),
                                            std::stod(field(at, end, "stickets"))};
  }
  return out;
}

// colmatch's tickets of a job as explain prints them: "(tckts T = otckt O + ftckt F[ + stckt S])", or 0s.
std::array<double, 4> explained_tickets(const std::string& text) {
  const size_t at = text.find("(tckts ");
  if (at == std::string::npos) return {0, 0, 0, 0};
  double t = 0, o = 0, f = 0, st = 0;
  EXPECT_GE(std::sscanf(text.c_str() + at, "(tckts %lf = otckt %lf + ftckt %lf + stckt %lf)", &t, &o, &f, &st), 3)
      << text;
  return {t, o, f, st};
}

}  // namespace

// Grid Engine's ticket policies (issue 43 item 1; engine/schedule/sge_tickets.hpp): functional shares of
// users, projects, departments and jobs (-js), override tickets of each and of the job (qalter -ot),
// against a real qmaster (bench/peers/sge_tickets.sh: bench/peers/sge_tickets_shares.txt's holders, 30
// seeded random jobs of six users of bench/peers/sge_tickets_jobs.py, the first 2-4 started before the
// others are submitted). tickets-1: Debian's weights with weight_tickets_functional 10000 (shared shares
// and override tickets, policy_hierarchy OFS); tickets-2: shares and override tickets not shared,
// max_functional_jobs_to_schedule 5 (the rest of a category gets its last value), hierarchy FO;
// tickets-3: weight_user 0.5, project 0, department 0.2, job 0.3, hierarchy NONE, weight_ticket 2.
// Every pending job's tickets as qstat -ext prints them (whole, truncated), its prio to qstat's 5
// decimals, the dispatch order qstat's, and what the next scheduling run started, slot by slot.
class SgeTicketsOracle : public ::testing::TestWithParam<const char*> {};
TEST_P(SgeTicketsOracle, EveryJobsTicketsPriorityAndStartAreGridEngines) {
  const std::string run = kData + GetParam();
  const loaders::Dataset ds = loaders::load_sge(run + "/farm", "");
  std::map<std::string, uint32_t> row;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) row[std::string(ds.jobs.id[j])] = j;
  const auto tickets = printed_tickets(recorded(GetParam(), "qstat-ext.xml"));
  ASSERT_GE(tickets.size(), 15u);  // (tickets-7: 16 written by hand)
  size_t with_tickets = 0;
  for (const auto& [number, want] : tickets) {
    ASSERT_TRUE(row.count(number)) << number;
    const std::string text = ds.explain_priority(row[number]);
    const std::array<double, 4> got = explained_tickets(text);
    // (qstat truncates; explain prints 6 digits: a sum that is an integer to them, 450, may be 449.99999999999994
    // in the qmaster's doubles as in ours, printed 449)
    for (int k = 0; k < 4; ++k)
      EXPECT_TRUE(std::floor(got[k] + 1e-3) == want[k] || std::floor(got[k] - 1e-3) == want[k])
          << "job " << number << ": " << text << ": qstat -ext printed " << want[k];
    with_tickets += want[0] > 0;
  }
  EXPECT_GE(with_tickets, 12u);
  const auto sge = printed(GetParam());
  for (const auto& [number, prio] : sge) {
    if (!row.count(number)) continue;  // running since the first batch
    EXPECT_NEAR(ds.jobs.priority[row[number]], prio, 5.001e-6) << "job " << number;
  }
  std::vector<std::string> want, got;
  for (const auto& [number, prio] : sge)
    if (row.count(number)) want.push_back(number);
  for (const uint32_t j : dispatch_order(ds.jobs)) got.emplace_back(ds.jobs.id[j]);
  EXPECT_EQ(got, want);
  auto started = slots_in_g_t(run + "/started-g-t.txt");
  std::erase_if(started, [&](const auto& e) { return !row.count(e.first); });  // running before: charges
  auto matched = slots_matched(ds);
  for (const std::string& j : held_jobs(ds)) started.erase(j), matched.erase(j);
  EXPECT_EQ(matched, started);
}
INSTANTIATE_TEST_SUITE_P(Runs, SgeTicketsOracle,
                         ::testing::Values("tickets-1", "tickets-2", "tickets-3", "tickets-4", "tickets-5", "tickets-6",
                                           "tickets-7", "farm80-release"));

// An array's pending tasks get tickets as Grid Engine gives them (sgeee.c): each of its first
// max_pending_tasks_per_job tasks counts as a job of its owner (with shared shares, each fewer than the
// one before), the rest none. tickets-1's job 418 (gu4, fshare 20 of department d1) made an array of 60
// tasks; the tasks past 50 share one input, so that a huge array costs what 51 tasks do.
TEST(SgeTickets, AnArraysFirstPendingTasksHaveTickets) {
  const std::string dir = ::testing::TempDir() + "/sge_tickets_array";
  std::filesystem::remove_all(dir);
  std::filesystem::copy(kData + "tickets-1/farm", dir, std::filesystem::copy_options::recursive);
  {
    std::ifstream in(dir + "/qstat-r.xml");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = text.find("<JB_job_number>418</JB_job_number>");
    ASSERT_NE(at, std::string::npos);
    const size_t slots = text.find("<slots>", at);
    text.insert(slots, "<tasks>1-60:1</tasks>\n      ");
    std::ofstream(dir + "/qstat-r.xml") << text;
  }
  const loaders::Dataset ds = loaders::load_sge(dir, "");
  std::vector<double> tickets;
  for (uint32_t t = 1; t <= 60; ++t) {
    for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
      if (ds.jobs.id[j] == fmt::format("418.{}", t)) tickets.push_back(explained_tickets(ds.explain_priority(j))[0]);
    }
  }
  ASSERT_EQ(tickets.size(), 60u);
  for (size_t k = 0; k < 50; ++k) {
    EXPECT_GT(tickets[k], 0) << "task " << k + 1;
    if (k == 0) continue;
    EXPECT_LE(tickets[k], tickets[k - 1]) << "task " << k + 1;
  }
  EXPECT_GT(tickets[0], tickets[49]);
  for (size_t k = 50; k < 60; ++k) EXPECT_EQ(tickets[k], 0) << "task " << k + 1;
}

// A ticket setting or holder Grid Engine would not print is an error naming file, line and field.
TEST(SgeTickets, AMalformedSettingOrHolderIsNamed) {
  const std::string dir = ::testing::TempDir() + "/sge_tickets_bad";
  const std::pair<const char*, std::string> cases[] = {
      {"qconf-ssconf.txt", "algorithm default\npolicy_hierarchy OFX\n"},
      {"qconf-ssconf.txt", "algorithm default\nweight_tickets_functional 1e308\n"},
      {"qconf-ssconf.txt", "algorithm default\nweight_user inf\n"},
      {"qconf-ssconf.txt", "algorithm default\nshare_functional_shares maybe\n"},
      {"qconf-suser.txt", "name gu1\noticket 0\nfshare -1\n"},
      {"qconf-sprj.txt", "name p1\noticket 4294967296\nfshare 1\n"},
      {"qconf-ssconf.txt", "algorithm default\ncompensation_factor -1\n"},
      {"qconf-sstree.txt", "id=0\nname=Root\nshares=x\n"},
      {"qconf-sstree.txt", "id=0\nname=Root\nchildnodes=1\nid=1\nname=a\nchildnodes=2\n"},
      {"qconf-sstree.txt", "id=0\nname=Root\nchildnodes=1,2\nid=1\nname=a\nchildnodes=2\nid=2\nname=b\n"},
      {"qconf-sstree.txt", "id=0\nname=Root\nid=0\nname=a\n"},
      {"qconf-sstree.txt", "name=Root\n"},
      {"qconf-sstree.txt", "id=0\nname=Root\nweight=1\n"},
      {"sge-share-mon.txt", "curr_time\tusage_time\tnode_name\tuser_name\tusage\n"},
      {"sge-share-mon.txt", "curr_time\tnode_name\tuser_name\tproject_name\tusage\n\n1\t/gu3\tgu3\t\t-2\n"},
  };
  const char* field[] = {"policy_hierarchy",
                         "weight_tickets_functional",
                         "weight_user",
                         "share_functional_shares",
                         "fshare",
                         "oticket",
                         "compensation_factor",
                         "shares",
                         "childnodes",
                         "childnodes",
                         "id",
                         "name",
                         "weight",
                         "project_name",
                         "usage"};
  const size_t line[] = {2, 2, 2, 2, 3, 2, 2, 3, 6, 6, 3, 1, 3, 1, 3};
  for (size_t i = 0; i < std::size(cases); ++i) {
    std::filesystem::remove_all(dir);
    std::filesystem::copy(kData + "tickets-4/farm", dir, std::filesystem::copy_options::recursive);
    std::ofstream(dir + "/" + cases[i].first) << cases[i].second;
    try {
      loaders::load_sge(dir, "");
      ADD_FAILURE() << "read: " << cases[i].second;
    } catch (const loaders::LoadError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(fmt::format("{}:{}", cases[i].first, line[i])), std::string::npos) << what;
      EXPECT_NE(what.find(field[i]), std::string::npos) << what;
    }
  }
}

// Across cluster queues too, instances equal in every sort key go in the qmaster's own order, which is
// the order the queues were made in (not their names'): farm80 with two more queues aaa.q and zzz.q made
// last on h0005, all three of short.q, aaa.q and zzz.q at seq_no 5; seven jobs `-l h=h0005` went 4 to
// short.q and 3 to aaa.q (datasets/sge/queue-ties, bench/peers/sge_queue_ties_jobs.txt). The dump's
// qselect.txt (qselect prints the instances in that order) gives it; without it colmatch has the names'
// order and fills aaa.q first.
TEST(SgeQueueSort, InstancesOfEqualKeysGoInTheQmastersOrder) {
  const auto want = slots_in_g_t(kData + "queue-ties/started-g-t.txt");
  ASSERT_EQ(want.size(), 7u);
  EXPECT_EQ(slots_matched(loaders::load_sge(kData + "queue-ties/farm", "")), want);
  const std::string dir = ::testing::TempDir() + "/sge_queue_ties";
  std::filesystem::remove_all(dir);
  std::filesystem::copy(kData + "queue-ties/farm", dir, std::filesystem::copy_options::recursive);
  std::filesystem::remove(dir + "/qselect.txt");
  const auto by_name = slots_matched(loaders::load_sge(dir, ""));
  EXPECT_EQ(by_name.at("811"), (std::map<std::string, int>{{"aaa.q@h0005", 1}}));
  std::ofstream(dir + "/qselect.txt") << "short.q@h0005\nshort.q@h0005\n";
  try {
    loaders::load_sge(dir, "");
    FAIL() << "an instance named twice was read";
  } catch (const loaders::LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("qselect.txt:2"), std::string::npos) << e.what();
  }
}
