// The queue of a real Slurm cluster as colmatch reads it (issue 26): `squeue --json` and `scontrol show
// job -o`, both dumped by tools/slurm-dump.sh from slurmctld 22.05.8 with the 123 held jobs of
// datasets/slurm/c100-queue.jobs in its queue (datasets/slurm/README.md). The two say the same jobs, and
// both are the jobs of the sbatch lines they were submitted from.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include "engine/batch/matcher.hpp"
#include "engine/schedule/simulation.hpp"
#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"
#include "loaders/slurm.hpp"
#include "loaders/slurm_scontrol_job.hpp"

using namespace colmatch;
namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(COLMATCH_SOURCE_DIR) + "/datasets/slurm/";
const std::string kQueue = kData + "c100-queue";

// Jobs a and b (of two loads of one cluster) are the same job with the same request: the same id, the same
// rejection, the same job category key, and the same taskers when matched.
void expect_same_jobs(const loaders::Dataset& a, const loaders::Dataset& b, const std::vector<uint32_t>& ja,
                      const std::vector<uint32_t>& jb) {
  const MatchOutcome ma = run_match(a.catalog, a.taskers, a.jobs, kernels::active(), {}, nullptr, a.dispatch);
  const MatchOutcome mb = run_match(b.catalog, b.taskers, b.jobs, kernels::active(), {}, nullptr, b.dispatch);
  ASSERT_EQ(ja.size(), jb.size());
  for (size_t i = 0; i < ja.size(); ++i) {
    const uint32_t x = ja[i], y = jb[i];
    SCOPED_TRACE(std::string(a.jobs.id[x]) + " / " + std::string(b.jobs.id[y]));
    EXPECT_EQ(a.jobs.rejected(x), b.jobs.rejected(y));
    if (a.jobs.rejected(x) || b.jobs.rejected(y)) continue;
    EXPECT_EQ(ma.categories.key[ma.categories.of_job[x]], mb.categories.key[mb.categories.of_job[y]]);
    EXPECT_EQ(ma.dispatch.tasker[x], mb.dispatch.tasker[y]);
    EXPECT_EQ(ma.dispatch.reason[x], mb.dispatch.reason[y]);
  }
}

// The job file `name` as the oracle submitted it, each line held (sbatch -H): a copy with -H before each
// line. Jobs submitted held are in the queue whatever they ask (slurmctld refuses at submit only what it
// tries to place), as the queue's dump holds them.
std::string held_lines(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("colmatch-held-" + std::to_string(::getpid()) + "-" + name);
  std::ifstream in(kData + name);
  std::ofstream out(p);
  for (std::string line; std::getline(in, line);) out << "-H " << line << "\n";
  return p.string();
}

std::vector<uint32_t> all_jobs(const loaders::Dataset& ds) {
  std::vector<uint32_t> out(ds.jobs.size());
  for (uint32_t j = 0; j < out.size(); ++j) out[j] = j;
  return out;
}

// A fresh copy of the c100-queue dump without its squeue.json, for a test to write its own.
fs::path queue_dump_without_squeue(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("colmatch-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(kQueue))
    if (e.path().filename() != "squeue.json.gz") fs::copy(e.path(), dir / e.path().filename());
  return dir;
}

// squeue --json of 22.05 (data_parser v0.0.38) rewritten in the shape Slurm 23.11 and later print
// (v0.0.40/41, from their parsers.c): numbers that may be unset or unlimited as {"set", "infinite",
// "number"} objects (22.05's null is set = false), job_state and shared as flag lists.
std::string as_slurm_23_11(const std::string& squeue_json) {
  std::string text;
  loaders::LineReader in(squeue_json);
  for (std::string_view line; in.next(line);) text.append(line).push_back('\n');
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parser.parse(text);
  static const std::set<std::string_view> kNoVal = {"priority",        "cpus",           "node_count", "tasks",
                                                    "max_nodes",       "tasks_per_node", "time_limit", "submit_time",
                                                    "memory_per_node", "memory_per_cpu"};
  std::string out = R"({"meta": {"plugin": {"data_parser": "data_parser/v0.0.40"}}, "jobs": [)";
  bool first_job = true;
  for (simdjson::dom::object job : doc["jobs"].get_array()) {
    out += first_job ? "{" : ", {";
    first_job = false;
    bool first = true;
    for (auto [key, value] : job) {
      out += fmt::format("{}\"{}\": ", first ? "" : ", ", key);
      first = false;
      if (kNoVal.count(key))
        out += value.is_null()
                   ? R"({"set": false, "infinite": false, "number": 0})"
                   : fmt::format(R"({{"set": true, "infinite": false, "number": {}}})", simdjson::minify(value));
      else if (key == "job_state")  // a flag beside the base state (and before it: the order is not relied on)
        out += "[\"REQUEUE_HOLD\", " + simdjson::minify(value) + "]";
      else if (key == "shared") out += value.is_null() ? "[]" : "[" + simdjson::minify(value) + "]";
      else out += simdjson::minify(value);
    }
    out += "}";
  }
  return out + "]}";
}

}  // namespace

// Slurm 23.02 and later print squeue --json differently (issue 45: every job was lost, exit 0): the same
// queue in 23.11's shape is the same 127 jobs with the same requests and placements.
TEST(SlurmQueue, SqueueJsonOfSlurm23IsReadAs22) {
  const fs::path dir = queue_dump_without_squeue("squeue23");
  std::ofstream(dir / "squeue.json") << as_slurm_23_11(kQueue + "/squeue.json.gz");
  const loaders::Dataset a = loaders::load_slurm(kQueue, "");
  const loaders::Dataset b = loaders::load_slurm(dir.string(), "");
  fs::remove_all(dir);
  ASSERT_EQ(a.jobs.size(), 127u);
  ASSERT_EQ(b.jobs.size(), 127u);
  for (uint32_t j = 0; j < a.jobs.size(); ++j) {
    SCOPED_TRACE(std::string(a.jobs.id[j]));
    EXPECT_EQ(a.jobs.id[j], b.jobs.id[j]);
    EXPECT_EQ(a.jobs.submit[j], b.jobs.submit[j]);
    EXPECT_EQ(a.jobs.owners.value(a.jobs.owner[j]), b.jobs.owners.value(b.jobs.owner[j]));
  }
  expect_same_jobs(a, b, all_jobs(a), all_jobs(b));
}

// scontrol show job -o and squeue --json of one queue: the same 127 jobs (123 submitted, two pending arrays
// of three tasks), ids, users, submit times, requests and placements.
TEST(SlurmQueue, ScontrolShowJobSaysWhatSqueueJsonSays) {
  const loaders::Dataset a = loaders::load_slurm(kQueue, "");  // squeue.json
  const loaders::Dataset b = loaders::load_slurm(kQueue, kQueue + "/scontrol-job.txt.gz");
  ASSERT_EQ(a.jobs.size(), 127u);
  ASSERT_EQ(b.jobs.size(), 127u);
  for (uint32_t j = 0; j < a.jobs.size(); ++j) {
    SCOPED_TRACE(std::string(a.jobs.id[j]));
    EXPECT_EQ(a.jobs.id[j], b.jobs.id[j]);
    EXPECT_EQ(a.jobs.owners.value(a.jobs.owner[j]), b.jobs.owners.value(b.jobs.owner[j]));
    EXPECT_EQ(a.jobs.submit[j], b.jobs.submit[j]) << "SubmitTime read as UTC: the dump was made with TZ=UTC";
  }
  EXPECT_EQ(a.jobs.id[115], "116_1");
  EXPECT_EQ(a.jobs.id[120], "117_7");
  expect_same_jobs(a, b, all_jobs(a), all_jobs(b));
}

// Both are the jobs of their sbatch lines: `-n 4 -c 2` is one node (squeue's node_count says 2: Slurm's
// estimate; tres_req_str's node=1 is what was asked), `-N 3 -n 3` three (node_count says 4), --gpus=1 is
// GPUs for the job (tres_per_job). The array lines are not sbatch lines colmatch reads (rejected there).
TEST(SlurmQueue, TheQueueIsTheJobsOfItsSbatchLines) {
  const std::string held = held_lines("c100-queue.jobs");
  const loaders::Dataset lines = loaders::load_slurm(kQueue, held);
  fs::remove(held);
  ASSERT_EQ(lines.jobs.size(), 123u);
  for (const std::string& jobs : {std::string(), kQueue + "/scontrol-job.txt.gz"}) {
    SCOPED_TRACE(jobs.empty() ? "squeue.json" : "scontrol-job.txt");
    const loaders::Dataset q = loaders::load_slurm(kQueue, jobs);
    std::vector<uint32_t> from_lines, from_queue;
    for (uint32_t j = 0; j < q.jobs.size(); ++j) {
      const std::string id(q.jobs.id[j]);
      if (id.find('_') != std::string::npos) continue;  // an array task
      from_queue.push_back(j);
      from_lines.push_back(static_cast<uint32_t>(std::stoul(id) - 1));  // Slurm numbered them in line order
    }
    ASSERT_EQ(from_queue.size(), 121u);
    expect_same_jobs(lines, q, from_lines, from_queue);
  }
}

// What scontrol show job -o says beyond one pending job: a running job is not matched again (a warning
// counts it), a pending array's tasks are jobs, a TresPerJob other than GPUs rejects its job saying so,
// and what cannot be read names file, line and field.
TEST(SlurmQueue, ScontrolJobsArraysRunningJobsAndErrors) {
  const fs::path p = fs::temp_directory_path() / ("colmatch-scontrol-job-" + std::to_string(::getpid()));
  auto write = [&](const std::string& text) { std::ofstream(p) << text; };
  write(
      "JobId=7 ArrayJobId=7 ArrayTaskId=2-4%1 UserId=alice(1000) Account=(null) QOS=normal JobState=PENDING "
      "Reason=Priority Priority=4294 SubmitTime=2026-11-26T16:14:46 TimeLimit=00:30:00 Partition=all "
      "NumNodes=1 NumCPUs=2 NumTasks=1 CPUs/Task=2 TRES=cpu=2,mem=1G,node=1,billing=2 MinMemoryNode=1G "
      "Features=(null) OverSubscribe=OK TresPerJob=gres:gpu:a100:1\n"
      "JobId=8 UserId=bob(1001) JobState=RUNNING Reason=None Partition=all NumNodes=1\n"
      "JobId=9 UserId=bob(1001) JobState=PENDING Reason=Priority SubmitTime=2026-11-26T16:14:47 Partition=all "
      "TRES=cpu=1,node=1 NumTasks=1 CPUs/Task=1 MinMemoryNode=100M TresPerJob=gres:mps:100\n");
  size_t running = 0;
  const auto jobs = loaders::slurm::read_scontrol_jobs(p.string(), running);
  EXPECT_EQ(running, 1u);
  ASSERT_EQ(jobs.size(), 2u) << "an array is one entry with its tasks (issue 45: not a copy per task)";
  ASSERT_EQ(jobs[0].count(), 3u);
  EXPECT_EQ(jobs[0].job_id(0), "7_2");
  EXPECT_EQ(jobs[0].job_id(2), "7_4");
  EXPECT_EQ(jobs[1].count(), 1u);
  EXPECT_EQ(jobs[1].job_id(0), "9");
  EXPECT_EQ(jobs[0].user, "alice");
  EXPECT_EQ(jobs[0].qos, "normal");
  EXPECT_EQ(jobs[0].account, "");
  EXPECT_EQ(jobs[0].priority, 4294);
  EXPECT_EQ(jobs[0].submit, 1795709686);
  bool gpus = false, time = false;
  for (const auto& [o, v] : jobs[0].request.options) {
    gpus = gpus || (o == "gpus" && v == "a100:1");
    time = time || (o == "time" && v == "00:30:00");
  }
  EXPECT_TRUE(gpus) << "GPUs per job, typed";
  EXPECT_TRUE(time);
  EXPECT_TRUE(jobs[0].request.error.empty());
  EXPECT_NE(jobs[1].request.error.find("TresPerJob"), std::string::npos) << jobs[1].request.error;
  EXPECT_TRUE(loaders::slurm::is_scontrol_jobs(p.string()));

  auto field_of = [&](const std::string& text) {
    write(text);
    try {
      loaders::slurm::read_scontrol_jobs(p.string(), running);
    } catch (const loaders::LoadError& e) {
      EXPECT_EQ(e.line, 1u);
      return e.field;
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(field_of("JobId=1 JobState=PENDING SubmitTime=yesterday\n"), "SubmitTime");
  EXPECT_EQ(field_of("JobId=1 ArrayJobId=1 ArrayTaskId=5-2 JobState=PENDING\n"), "ArrayTaskId");
  // the file's arrays are bounded together, not one by one: the second crosses 10M
  EXPECT_EQ(field_of("JobId=1 ArrayJobId=1 ArrayTaskId=1-6000000 JobState=PENDING\n"), "(no error)");
  write(
      "JobId=1 ArrayJobId=1 ArrayTaskId=1-6000000 JobState=PENDING\n"
      "JobId=2 ArrayJobId=2 ArrayTaskId=1-6000000 JobState=PENDING\n");
  try {
    loaders::slurm::read_scontrol_jobs(p.string(), running);
    ADD_FAILURE() << "12M tasks accepted";
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 2u);
    EXPECT_EQ(e.field, "ArrayTaskId");
  }
  EXPECT_EQ(field_of("NodeName=n001 State=IDLE\n"), "JobId");
  write("-N 2 -c 4\n");
  EXPECT_FALSE(loaders::slurm::is_scontrol_jobs(p.string())) << "sbatch lines";
  fs::remove(p);
}

// A job_id that is neither a number nor a string (an object, a list) was read as an empty id: refused,
// naming the field.
TEST(SlurmQueue, AJobIdThatIsNotAnIdIsRefused) {
  const fs::path dir = queue_dump_without_squeue("squeue-id");
  for (const std::string id : {R"({"a": 1})", "[1]", "null", R"("")", R"({"set": false, "number": 0})"}) {
    SCOPED_TRACE(id);
    std::ofstream(dir / "squeue.json") << R"({"jobs": [{"job_id": 1, "job_state": "PENDING"}, {"job_id": )" << id
                                       << R"(, "job_state": "PENDING"}]})";
    try {
      loaders::load_slurm(dir.string(), "");
      ADD_FAILURE() << "accepted";
    } catch (const loaders::LoadError& e) {
      EXPECT_NE(std::string(e.what()).find("jobs[1].job_id"), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}

// Node count ranges in the queue (datasets/slurm/c100-ranges: the c100 cluster with c100-ranges.jobs held in
// its queue): squeue.json says `-N 2-4 -c 8` as node_count 2 (tres_req_str node=2), max_nodes 4, cpus 8 and
// tasks 2 (cpus one node's: minimum_cpus_per_node), scontrol as NumNodes=2-4; both are the jobs of the lines.
TEST(SlurmQueue, NodeCountRangesAreReadAsRanges) {
  const std::string dir = kData + "c100-ranges";
  const std::string held = held_lines("c100-ranges.jobs");
  const loaders::Dataset lines = loaders::load_slurm(dir, held);
  fs::remove(held);
  ASSERT_EQ(lines.jobs.size(), 24u);
  for (const std::string& jobs : {std::string(), dir + "/scontrol-job.txt.gz"}) {
    SCOPED_TRACE(jobs.empty() ? "squeue.json" : "scontrol-job.txt");
    const loaders::Dataset q = loaders::load_slurm(dir, jobs);
    ASSERT_EQ(q.jobs.size(), 24u);
    EXPECT_EQ(q.jobs.slots[1], 4u);
    EXPECT_EQ(q.jobs.pe_shape_of(1).min_slots, 2u);
    expect_same_jobs(lines, q, all_jobs(lines), all_jobs(q));
  }
  // over time a range job is rejected naming why (the simulator places a fixed node count), the others run
  const loaders::Dataset q = loaders::load_slurm(dir, "");
  const SimResult sim = simulate(q.catalog, q.taskers, q.jobs, q.policy, kernels::active());
  size_t ranges = 0;
  for (uint32_t j = 0; j < q.jobs.size(); ++j) {
    if (q.jobs.rejected(j)) continue;
    const bool range = q.jobs.pe_shape_of(j).min_slots > 0;
    ranges += range;
    EXPECT_EQ(sim.reason[j] == SimReason::Rejected, range) << q.jobs.id[j];
    if (range) {
      EXPECT_NE(sim.detail[j].find("a node count range"), std::string::npos) << sim.detail[j];
    }
  }
  EXPECT_EQ(ranges, 24u);  // (every job of that queue)
}
