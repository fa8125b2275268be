// Slurm's main scheduling pass (issue 26, issue 48): held jobs released at once on the oracle's clusters
// (bench/peers/slurm_oracle.sh batch: datasets/slurm/*-slurm.tsv), and what colmatch's match makes of the
// same lines, job by job.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/batch/matcher.hpp"
#include "loaders/slurm.hpp"
#include "tests/loaders/slurm_test_data.hpp"

using namespace colmatch;
using namespace colmatch::slurm_test;
namespace fs = std::filesystem;

namespace {

// Slurm's main scheduling pass (src/slurmctld/job_scheduler.c): held jobs released at once on the c100
// cluster (bench/peers/slurm_oracle.sh batch), and what Slurm made of each (job, state, node, reason).
// colmatch's match must give every job the same outcome: node by node (ConsecutiveBestFit on the CPUs
// free at that moment) and reason by reason (blocking queues). Returns how many jobs had each outcome.
using Outcomes = std::map<std::string, size_t>;
const std::string kHeld = "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions";
// The dump `name` as its batch ran: `c100@builtin` is the c100 dump (taken under sched/backfill) with
// SchedulerType sched/builtin, the scheduler the oracle ran that batch under (SCHEDULER=sched/builtin,
// datasets/slurm/README.md), copied to a temporary folder; any other name is the dump as it is.
std::string dump_as_run(const std::string& name) {
  const size_t at = name.find('@');
  if (at == std::string::npos) return kData + name;
  const fs::path dir = fs::temp_directory_path() / ("colmatch-slurm-" + std::to_string(::getpid()) + "-" + name);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(kData + name.substr(0, at)))
    if (e.path().filename() != "scontrol-config.txt")
      fs::copy(e.path(), dir / e.path().filename(), fs::copy_options::overwrite_existing);
  std::ifstream in(kData + name.substr(0, at) + "/scontrol-config.txt");
  std::ofstream out(dir / "scontrol-config.txt");
  for (std::string line; std::getline(in, line);)
    out << (line.rfind("SchedulerType ", 0) == 0 ? "SchedulerType           = sched/" + name.substr(at + 1) : line)
        << "\n";
  return dir.string();
}

// What slurmctld said when each line of the job files was submitted as written, not held
// (bench/peers/slurm_oracle.sh submit; datasets/slurm/README.md): line -> "accepted" or "error: ...". The
// c100 clusters (flat and tiers differ in weights and tiers only, which no submit checks) and c10k.
const std::map<std::string, std::string>& submit_verdicts(const std::string& dump) {
  static std::map<std::string, std::map<std::string, std::string>> cache;
  const std::string cluster = dump.rfind("c10k", 0) == 0 ? "c10k" : "c100";
  auto& out = cache[cluster];
  if (out.empty()) out = read_verdicts(cluster + "-jobs-submit-slurm.tsv");
  return out;
}

// The oracle submits a batch held (sbatch -H) and releases it; colmatch reads the same lines as submitted
// without -H. A job whose line slurmctld refuses when submitted not held (submit_verdicts: "Requested node
// configuration is not available") is rejected with Slurm's message, whatever the released batch said of
// it (BadConstraints, or Priority behind a blocked partition); true then.
bool expect_refused_at_submit(const loaders::Dataset& ds, const MatchOutcome& m, uint32_t j, const std::string& line,
                              const std::string& dump) {
  if (line.empty()) return false;  // the dump's own queue: accepted jobs
  const auto& verdicts = submit_verdicts(dump);
  const auto v = verdicts.find(line);
  EXPECT_NE(v, verdicts.end()) << "no recorded submit verdict for " << line;
  if (v == verdicts.end() || v->second.find("not available") == std::string::npos) return false;
  EXPECT_EQ(m.dispatch.status[j], JobStatus::Rejected);
  EXPECT_NE(why_rejected(ds, j).find("Requested node configuration is not available"), std::string::npos);
  return true;
}

// `dump` (c100 by default; see dump_as_run) with `jobs` (sbatch lines; "": the dump's queue); rows of `answers`
// whose job is in `apart` are counted as "apart" instead of compared (a difference the test names), those
// refused at submit (expect_refused_at_submit: Slurm's BadConstraints, and jobs it left Priority behind a
// blocked partition that its submit would have refused) as "refused at submit".
Outcomes expect_main_pass(const std::string& jobs, const std::string& answers, const std::string& dump = "c100",
                          const std::set<std::string>& apart = {}) {
  const std::string dir = dump_as_run(dump);
  const loaders::Dataset ds = loaders::load_slurm(dir, jobs.empty() ? "" : kData + jobs);
  if (dir.rfind(kData, 0) != 0) fs::remove_all(dir);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, &ds.in_use, ds.dispatch);
  std::map<std::string, uint32_t> index;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) index.emplace(std::string(ds.jobs.id[j]), j);
  std::vector<std::string> lines;  // the job file's lines (job j on line j + 1)
  if (!jobs.empty()) {
    std::ifstream job_file(kData + jobs);
    for (std::string line; std::getline(job_file, line);) lines.push_back(line);
  }
  std::ifstream in(kData + answers);
  Outcomes outcomes;
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> f = tsv_fields(line, 4);
    std::string id = f[0], reason = f[3];
    const std::string &state = f[1], &node = f[2];
    if (apart.count(id)) {
      ++outcomes["apart"];
      continue;
    }
    if (const size_t b = id.find("_["); b != std::string::npos)  // a pending array: its first task
      id = id.substr(0, b + 1) + id.substr(b + 2, id.find_first_of(",-%]", b + 2) - b - 2);
    if (!index.count(id)) {
      ADD_FAILURE() << "no job " << id << ": " << line;
      continue;
    }
    const uint32_t j = index.at(id);
    SCOPED_TRACE(line);
    if (reason.rfind("ReqNodeNotAvail", 0) == 0) reason = "ReqNodeNotAvail";  // then the nodes it waits for
    if (expect_refused_at_submit(ds, m, j, j < lines.size() ? lines[j] : "", dump)) {
      ++outcomes["refused at submit"];
      continue;
    }
    if (state == "CONFIGURING") {
      EXPECT_EQ(m.dispatch.status[j], JobStatus::Assigned);
      std::set<std::string> got;  // every node of the job (-N K: K of them)
      for (uint32_t a = 0; a < m.dispatch.alloc_count[j]; ++a)
        got.insert(std::string(ds.taskers.names[m.dispatch.allocations[m.dispatch.alloc_first[j] + a].tasker]));
      EXPECT_EQ(got, split(node));
    } else {
      EXPECT_EQ(m.dispatch.status[j], JobStatus::Pending);
      const PendingReason want =
          reason == "BadConstraints" || reason == "PartitionTimeLimit" || reason == "PartitionNodeLimit"
              ? PendingReason::NoEligibleTasker
          : reason == "Resources"       ? PendingReason::NoFreeCapacity
          : reason == "Priority"        ? PendingReason::BehindHigherPriority
          : reason == "ReqNodeNotAvail" ? PendingReason::EligibleHeld
                                        : PendingReason::TaskersHeld;
      EXPECT_EQ(m.dispatch.reason[j], want);
    }
    ++outcomes[state == "CONFIGURING" ? "started" : reason];
  }
  return outcomes;
}

}  // namespace

// 150 jobs (datasets/slurm/c100-batch.jobs; the queue dumped as c100-batch/): Slurm started 57 and left 4
// BadConstraints (no node could ever run them), 1 Resources (job 62: its partition `all` blocks, and
// every node with it), 85 Priority behind it, and 3 with "Nodes required for job are DOWN, DRAINED or
// reserved for jobs in higher priority partitions" (the first of partitions amd, short and gpu then).
TEST(SlurmMainPass, ABatchReleasedAtOnceIsPlacedAsSlurmDoes) {
  EXPECT_EQ(expect_main_pass("c100-batch.jobs", "c100-batch-slurm.tsv"),
            (Outcomes{{"started", 57}, {"Priority", 81}, {"Resources", 1}, {"refused at submit", 8}, {kHeld, 3}}));
}

// 300 jobs of one partition each, most in the smaller partitions (bench/peers/slurm_requests.py --batch
// 300 2611): partitions block one by one while the others go on starting jobs. Slurm started 114; 3
// Resources, 164 Priority, 3 BadConstraints, and 16 ReqNodeNotAvail: their partition has nodes left but
// every node eligible for them is held for a blocked partition (they wait without blocking theirs).
// Also --prefer as 22.05.8 does it: the preferred features tried instead of --constraint first (job 71,
// `-C skylake&ssd --prefer milan`, starts on a milan node).
TEST(SlurmMainPass, PartitionsBlockOneByOneAndReqNodeNotAvailBlocksNothing) {
  EXPECT_EQ(
      expect_main_pass("c100-batch2.jobs", "c100-batch2-slurm.tsv"),
      (Outcomes{
          {"started", 114}, {"Priority", 154}, {"ReqNodeNotAvail", 16}, {"Resources", 3}, {"refused at submit", 13}}));
}

// 120 jobs of 1 to 6 nodes (-N K; the generator is in the README of datasets/slurm): Slurm picks a job's
// K nodes as _eval_nodes does (runs of adjacent nodes with room, the best run by weight and sufficiency
// first, its first nodes). Slurm started 50 (their node lists), 55 Priority, 7 ReqNodeNotAvail, 4
// Resources, 4 BadConstraints (more nodes than the partition could ever give, or no such node).
TEST(SlurmMainPass, MultiNodeJobsGetSlurmsNodes) {
  EXPECT_EQ(
      expect_main_pass("c100-batch3.jobs", "c100-batch3-slurm.tsv"),
      (Outcomes{
          {"started", 50}, {"Priority", 50}, {"ReqNodeNotAvail", 7}, {"Resources", 4}, {"refused at submit", 9}}));
}

// The queue of datasets/slurm/c100-queue (123 jobs, two arrays; the dump's squeue.json) released at once.
// Jobs asking memory per CPU get the node Slurm counts most tightly: under --mem-per-cpu a node offers the
// CPUs its free memory pays for (job 109, `-n 3 --mem-per-cpu=500`: n054 and n087 both offer 6, and n054
// comes first; by free CPUs alone n087 wins and the jobs after it move). And Slurm says ReqNodeNotAvail
// only when none of the job's unheld nodes by partition and features is busy (node_scheduler.c
// _pick_best_nodes: `!runable_avail && !nodes_busy`): job 118 (`--gres=gpu:v100:1`, every v100 node held)
// is Resources and blocks partition all, for n096 runs the --exclusive job 107. Slurm started 100 and left
// 11 Priority, 5 ReqNodeNotAvail (the array 117 among them), 2 Resources, 5 BadConstraints, 1
// PartitionTimeLimit (`-t 2:30:00 -p short`, MaxTime 1 h) and 1 "Nodes required...". The queue ran under
// sched/backfill, whose main pass takes job records: job 102 (`--prefer ssd -p all`, every ssd node held)
// is ReqNodeNotAvail with its preferred features, which fails no partition, and its --constraint record
// then starts it on n024 (JobTable::Fallback), so job 103 takes n001 and job 115 (`-N 3
// [icelake|skylake]`) n[049,061,093].
TEST(SlurmMainPass, MemoryPerCpuAndBusyNodesAsSlurmCountsThem) {
  EXPECT_EQ(expect_main_pass("", "c100-queue-slurm.tsv", "c100-queue"), (Outcomes{{"started", 100},
                                                                                  {"Priority", 11},
                                                                                  {"ReqNodeNotAvail", 5},
                                                                                  {"Resources", 2},
                                                                                  {"BadConstraints", 5},
                                                                                  {"PartitionTimeLimit", 1},
                                                                                  {kHeld, 1}}));
}

// --prefer as slurmctld 22.05.8's main pass has it (datasets/slurm/c100-prefer.jobs: the 20 gpu nodes taken
// by --exclusive jobs, then 7 jobs; sched/builtin, so the main pass walks the job list): the job is
// scheduled by its preferred features instead of its --constraint, and its --constraint is not tried
// after (under job records it is once the preferred nodes are all held: MemoryPerCpuAndBusyNodesAsSlurmCountsThem,
// job 102): preferred features no node of its partition has
// leave it BadConstraints (jobs 21, `-C eth&bigmem --prefer intel -p amd`, and 24, `-c 2 --prefer intel -p
// amd`, while job 22, `-c 1 -p amd`, starts), preferred nodes all busy leave it Resources and block its
// partition (23 in short, 26 in all; 25 and 27 behind them are Priority).
TEST(SlurmMainPass, PreferIsTriedInsteadOfTheConstraint) {
  EXPECT_EQ(expect_main_pass("c100-prefer.jobs", "c100-prefer-slurm.tsv", "c100@builtin"),
            (Outcomes{{"started", 21}, {"refused at submit", 2}, {"Resources", 2}, {"Priority", 2}}));
}

// PriorityTier (datasets/slurm/c100-tiers: the 100-node cluster with short at PriorityTier 3 and gpu at 2,
// the others 1; 40 jobs): when partitions differ in tier, slurmctld 22.05.8's main pass sorts its queue by
// the partition's tier first (job_scheduler.c sort_job_queue2), so every short job goes before every gpu
// job, and those before the jobs of all, amd and big, whatever the order they came in: jobs 6-10 (`-N 6
// --exclusive -p short`) start before jobs 1-5 (`-N 12 --exclusive -p all`, submitted first), 34 blocks
// short, 13 gpu (short's exclusive jobs took gpu nodes below n050), 4 all; amd's and big's jobs then find
// every node held by all ("Nodes required..."); job 38 (`-p short,amd`) finds short blocked, and amd too
// where its record of tier 1 comes (Priority). Fails with the tier left out of the order (jobs 1-5 first).
TEST(SlurmMainPass, PartitionsOfAHigherPriorityTierGoFirst) {
  EXPECT_EQ(expect_main_pass("c100-tiers.jobs", "c100-tiers-slurm.tsv", "c100-tiers"),
            (Outcomes{{"started", 16}, {"Resources", 3}, {"Priority", 19}, {kHeld, 2}}));
}

// A job of partitions of different tiers has a queue record at each tier's place (datasets/slurm/
// c100-tiers2.jobs, on the c100-tiers cluster): job 3 (`-p short,amd`) is tried in short right after job 1
// filled it, and in amd only after job 2 (`-N 25 --exclusive -p amd`, submitted before it) failed amd, so it
// pends Priority; tried in both at its short place it would have started in amd. Job 6 (`-p gpu,amd`)
// starts in gpu at tier 2, before job 4 of all.
TEST(SlurmMainPass, AJobOfSeveralTiersIsTriedAtEachTiersPlace) {
  EXPECT_EQ(expect_main_pass("c100-tiers2.jobs", "c100-tiers2-slurm.tsv", "c100-tiers"),
            (Outcomes{{"started", 6}, {"Resources", 1}, {"Priority", 2}}));
}

// A matching OR over several nodes (datasets/slurm/c100-matching-or.jobs: 23 --exclusive jobs leave two
// milan nodes free, then 11 jobs of -N 2 to 30): every node of a job has the same choice, the choices
// tried in the order written (node_scheduler.c _pick_best_nodes: one select per choice of the XOR
// list). Job 24 (-N 3 [milan|rome]) gets three rome nodes, job 25 (-N 2 [milan|rome]) the two milan
// ones; job 30 (-N 5 [skylake|rome|icelake] -p short) five skylake ones. A job no single choice could
// hold (31: -N 30 [milan|rome], 25 nodes each; 33: -N 20 [skylake|icelake] -p short) is BadConstraints,
// though the choices together have enough, and blocks nothing (32 and 34 after them start).
TEST(SlurmMainPass, MatchingOrGivesEveryNodeOneChoice) {
  EXPECT_EQ(expect_main_pass("c100-matching-or.jobs", "c100-matching-or-slurm.tsv", "c100@builtin"),
            (Outcomes{{"started", 32}, {"refused at submit", 2}}));
}

// Node count ranges, -N MIN-MAX (datasets/slurm/c100-ranges.jobs, 24 jobs released at once under
// sched/builtin): slurmctld 22.05.8 aims at MAX (node_scheduler.c get_node_cnts: req_nodes = max_nodes), adds
// node sets lightest first until the nodes available in them (up, not held whole, with room or not) reach MAX,
// and takes what cons_tres _eval_nodes gives there, at least MIN (_enough_nodes): `-N 1-3 -c 2` three nodes,
// `-N 30-40 --exclusive` 40, `-N 3-50 --exclusive -C skylake` the 4 skylake nodes left idle. A MAX over the
// partition's MaxNodes pends PartitionNodeLimit (`-N 2-8 -p big`, MaxNodes 4), `-N 40-60` with fewer than 40
// nodes free pends Resources and blocks partition all (the next one there Priority), and `-N 2-3 -p gpu` with the
// gpu nodes all taken waits for them (kHeld).
TEST(SlurmMainPass, NodeCountRangesTakeWhatTheirNodeSetsGive) {
  EXPECT_EQ(expect_main_pass("c100-ranges.jobs", "c100-ranges-slurm.tsv", "c100@builtin"),
            (Outcomes{{"started", 19}, {"PartitionNodeLimit", 2}, {"Resources", 1}, {"Priority", 1}, {kHeld, 1}}));
  // the lightest nodes (weight 1) all up but 3 with 4 CPUs free (datasets/slurm/c100-range-sets.jobs):
  // `-N 2-6 -c 8` takes the 3 with room and 3 of weight 10, not the 3 alone, and `-N 1-40 -c 2` 33 + 7
  EXPECT_EQ(expect_main_pass("c100-range-sets.jobs", "c100-range-sets-slurm.tsv", "c100@builtin"),
            (Outcomes{{"started", 35}}));
}

// The CPUs scontrol show job -d gave each node of each job of a batch (`answers`: "ID<TAB>Nodes=n[039,087]
// CPU_IDs=28-99 Mem=1000 GRES=", one line per set of nodes), against colmatch's match of the same batch: for
// every job placed as N tasks over K nodes (FitUnit::total), its tasks there times its CPUs a task. Returns how
// many nodes were compared (not those of the jobs in `apart`).
size_t expect_cpus_per_node(const std::string& jobs, const std::string& answers,
                            const std::set<std::string>& apart = {}) {
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100", kData + jobs);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, &ds.in_use, ds.dispatch);
  std::map<std::string, std::map<std::string, double>> slurm;  // job -> node -> CPUs
  std::ifstream in(kData + answers);
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> f = tsv_fields(line, 2);
    const std::string nodes = f[1].substr(6, f[1].find(' ') - 6);  // after "Nodes="
    const size_t at = f[1].find("CPU_IDs=") + 8;
    double cpus = 0;  // CPU_IDs=0-2,5: 4
    std::istringstream ids(f[1].substr(at, f[1].find(' ', at) - at));
    for (std::string r; std::getline(ids, r, ',');) {
      const size_t dash = r.find('-');
      cpus += dash == std::string::npos ? 1 : std::stod(r.substr(dash + 1)) - std::stod(r.substr(0, dash)) + 1;
    }
    for (const std::string& n : split(nodes)) slurm[f[0]][n] = cpus;
  }
  size_t compared = 0;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    const JobTable::FitUnit u = ds.jobs.fit_unit_of(j);
    const std::string id(ds.jobs.id[j]);
    if (!(u.total > 0) || m.dispatch.status[j] != JobStatus::Assigned || apart.count(id)) continue;
    SCOPED_TRACE("job " + id);
    std::map<std::string, double> got;
    for (uint32_t a = 0; a < m.dispatch.alloc_count[j]; ++a) {
      const Allocation& x = m.dispatch.allocations[m.dispatch.alloc_first[j] + a];
      got[std::string(ds.taskers.names[x.tasker])] = x.slots * u.fit;
    }
    EXPECT_EQ(got, slurm[id]);
    compared += got.size();
  }
  return compared;
}

// -n N over -N K nodes with N > K (datasets/slurm/c100-tasks-over-nodes, c100-uneven; sched/builtin): slurmctld
// 22.05.8 does not split the tasks evenly. cons_tres _eval_nodes counts the CPUs of each run; each node it takes
// gets what _cpus_to_use lets it, all its free CPUs but one task for each node still to come, so the node
// picked first (the best run's, or the insufficient run with the most free) takes the most: `-N 2 -n 4` ran
// 3 on n006 and 1 on n009, `-n 5 -N 2` 4 + 1, `-N 2 -n 200` 128 on n087 and 72 on n039, `-n 33 -N 4
// --mem-per-cpu=200` 30 + 1 + 1 + 1. scontrol show job -d's CPUs per node equal colmatch's tasks there times -c.
TEST(SlurmMainPass, TasksOverNodesAsSlurmGivesThem) {
  EXPECT_EQ(expect_main_pass("c100-tasks-over-nodes.jobs", "c100-tasks-over-nodes-slurm.tsv", "c100@builtin"),
            (Outcomes{{"started", 5}}));
  EXPECT_EQ(expect_cpus_per_node("c100-tasks-over-nodes.jobs", "c100-tasks-over-nodes-cpus.tsv"), 9u);
  // Job 21 (`-n 11 -N 3 -c 10 --mem-per-cpu=100`): its third node n006 with 14 CPUs free counts 10 under
  // --mem-per-cpu (a whole number of tasks' CPUs, cons_tres _can_job_run_on_node), as many as n015's 10, and the
  // first of equals in node order is the best fit.
  EXPECT_EQ(expect_main_pass("c100-uneven.jobs", "c100-uneven-slurm.tsv", "c100@builtin"),
            (Outcomes{{"started", 23}, {"PartitionNodeLimit", 2}}));
  EXPECT_EQ(expect_cpus_per_node("c100-uneven.jobs", "c100-uneven-cpus.tsv"), 23u);
}

// -n with --ntasks-per-node and no -N, and GPUs per task (datasets/slurm/c100-tasks-per-node.jobs,
// sched/builtin; scontrol show job -d): `-n 8 --ntasks-per-node=2` ran on 4 nodes of 2 CPUs, `-n 5
// --ntasks-per-node=2` on 3 nodes of 2 (6 tasks: Slurm rounds up), `-N 1 -n 3 --gpus-per-task=1` on an a100
// node (3 GPUs), `--gpus-per-node=2 --cpus-per-gpu=16 --mem-per-gpu=1000` took 32 CPUs and 2000 MiB.
TEST(SlurmMainPass, TasksPerNodeAndGpusPerTaskAsSlurmCountsThem) {
  // apart: job 5 (`-N 2 --ntasks-per-node=2 --gpus-per-task=1 -c 2`), two GPUs a node: Slurm took two a100
  // nodes of 4 GPUs (n060, n090), colmatch two v100 nodes of 2 (n015, n045), all of weight 1; how cons_tres
  // weighs a node's GPUs for --gpus-per-task is not modelled
  EXPECT_EQ(expect_main_pass("c100-tasks-per-node.jobs", "c100-tasks-per-node-slurm.tsv", "c100@builtin", {"5"}),
            (Outcomes{{"started", 6}, {"apart", 1}}));
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100", kData + "c100-tasks-per-node.jobs");
  const size_t cpus = static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("cpus")));
  const size_t mem = static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("mem")));
  const size_t gpu = static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("gres/gpu")));
  EXPECT_EQ(ds.jobs.slots[0], 4u);
  EXPECT_EQ(ds.jobs.amount.at(cpus, 0), 2.0);
  EXPECT_EQ(ds.jobs.slots[2], 3u);
  EXPECT_EQ(ds.jobs.amount.at(gpu, 3), 3.0);
  EXPECT_EQ(ds.jobs.amount.at(cpus, 5), 32.0);
  EXPECT_EQ(ds.jobs.amount.at(mem, 5), 2000.0 * 1024 * 1024);
}

// A matching OR of groups (datasets/slurm/c100-groups.jobs, sched/builtin): each choice in parentheses is
// one choice, every node of the job satisfies the same one, tried in the order written. `-N 12
// [(amd&ssd)|(intel&eth)]` takes 12 intel eth nodes (10 amd ssd ones are too few), `-N 2 [(intel&ib)|amd]&gpu`
// two intel ib gpu ones, `[(amd|gpu)|ssd]` amd ones, `-N 40 [(intel&ib)|(amd&eth)]` (34 and 17) never runs
// (refused at submit), `-N 20 [(amd&eth)|(intel&ib)]` twenty intel ib ones.
TEST(SlurmMainPass, MatchingOrOfGroupsGivesEveryNodeOneGroup) {
  EXPECT_EQ(expect_main_pass("c100-groups.jobs", "c100-groups-slurm.tsv", "c100@builtin"),
            (Outcomes{{"started", 13}, {"refused at submit", 1}}));
}

// -w (datasets/slurm/c100-nodelist.jobs): a job that names its nodes takes every one of them (job 4, -w
// n[020-022]: three nodes; job 5, -N 3 -w n[030-032]), and when it cannot run it holds them for the rest
// of the pass and blocks no partition (job_scheduler.c: req_node_bitmap covering min_nodes): job 2 (-w
// n010, busy with the --exclusive job 1) is Resources and job 3 after it starts; job 6 (-w n[010,011])
// finds n010 held (ReqNodeNotAvail) and holds n011, so job 7 (-w n011) is ReqNodeNotAvail too. Apart: job 9
// (-N 2 -w n040: n040 and one more, Slurm n[009,040]), which colmatch rejects.
TEST(SlurmMainPass, NamedNodesAreHeldNotThePartition) {
  EXPECT_EQ(expect_main_pass("c100-nodelist.jobs", "c100-nodelist-slurm.tsv", "c100@builtin"),
            (Outcomes{{"started", 7}, {"Resources", 1}, {"ReqNodeNotAvail", 2}}));
}

// Node counts in constraints and -w naming fewer nodes than -N (datasets/slurm/c100-counts.jobs, 40 jobs
// released at once): slurmctld 22.05.8 picks each count's nodes first (node_scheduler.c _get_req_features:
// `ssd*2` two ssd nodes by the node choice, `[amd*2&intel*2]` two amd then two intel apart from them), then
// the rest of -N with the picked nodes required (cons_tres _eval_nodes); the feature expression then filters
// no node (job 4, `ssd*2&ib`, runs on eth n015). -N below the counts is BadConstraints (jobs 3, 9), as is a
// count above the feature's nodes (13). A -w job of more nodes than it names takes them and others (17:
// n[040,090]) and, when it cannot run, blocks its partition as any job (36: Resources), where one naming
// all its nodes holds them (35). Job 39 (`ssd*2`, every ssd node held by gpu's block) is ReqNodeNotAvail.
TEST(SlurmMainPass, NodeCountsPickTheirNodesFirst) {
  EXPECT_EQ(
      expect_main_pass("c100-counts.jobs", "c100-counts-slurm.tsv", "c100@builtin", {"38"}),
      (Outcomes{{"started", 32}, {"apart", 1}, {"refused at submit", 4}, {"Resources", 2}, {"ReqNodeNotAvail", 1}}));
}

// -n N without -N (datasets/slurm/c100-tasks.jobs, 26 jobs released at once): slurmctld 22.05.8 spreads the
// tasks over as few nodes as its selection gives (cons_tres _eval_nodes with one node at least): the best
// run's best fit node when one holds every task left, else the run's nodes each with what it can take
// (job 1, `-n 200`: n006 with 128, then n015 with the other 72, where a best fit holds them); scontrol show
// job -d gave the CPUs per node of jobs 1-8, colmatch's tasks per node times -c equal them (README). Job 20
// (`-n 400`) takes 17 nodes. A job without --mem would take a node's whole memory (not modelled: every job
// here has --mem-per-cpu).
TEST(SlurmMainPass, TasksSpreadOverAsFewNodesAsSlurmGives) {
  EXPECT_EQ(expect_main_pass("c100-tasks.jobs", "c100-tasks-slurm.tsv", "c100@builtin"),
            (Outcomes{{"started", 21}, {"Resources", 1}, {"Priority", 4}}));
  // on the one-weight cluster runs are long: the best fit node of a run that holds every task left (job 2,
  // `-n 100`: n006 of 128 CPUs in the run n001-n010), else the run's nodes from its first (job 5, `-n 300`:
  // n002-n010)
  EXPECT_EQ(expect_main_pass("c100-flat-tasks.jobs", "c100-flat-tasks-slurm.tsv", "c100-flat"),
            (Outcomes{{"started", 15}}));
}

// A job without --mem or --mem-per-cpu under CR_Core_Memory with no DefMemPerCPU or DefMemPerNode takes a
// node's whole memory (datasets/slurm/c100-nomem.jobs, 15 jobs released at once; scontrol show job -d:
// MinMemoryNode=0, Mem=256000 on n024): it needs a node where no job holds memory, and leaves none to others
// (job 2, `-c 2`, takes the idle n024, not n009 where job 1 holds 1000 MiB; job 3 with --mem goes to n009).
TEST(SlurmMainPass, AJobWithoutMemoryTakesANodesWholeMemory) {
  EXPECT_EQ(expect_main_pass("c100-nomem.jobs", "c100-nomem-slurm.tsv", "c100@builtin"), (Outcomes{{"started", 15}}));
}

// A partition of OverSubscribe=EXCLUSIVE gives every job of it its nodes whole, as --exclusive does
// (datasets/slurm/c100-excl: `short` = n001-n050 EXCLUSIVE, 59 jobs released at once under sched/builtin):
// five `-p short -c 1` jobs take a node each (n024, n033, n048, n003, n018), never n009 where three `-p all`
// jobs share; later `-p all` jobs join those on n009, not a node a short job holds; `-p short,all` takes a
// node whole in short (n021), `-p all,short` shares n009 (a job of several partitions is judged by its
// first, as squeue reports it); 40 more short jobs fill the partition until one (55) finds no node.
// Job 55 is apart: Resources here, Priority in Slurm, whose fifo pass (sched/builtin, job_scheduler.c
// _schedule, "test job in next part") kept the partition iterator of job 16 (`-p all,short`, started in
// its first) and tried job 55 again in that iterator's next partition, short, failed by job 55 itself
// (slurmctld's log: "JobId=55 unable to schedule in Partition=short (per _failed_partition())").
TEST(SlurmMainPass, AnExclusivePartitionGivesItsJobsWholeNodes) {
  EXPECT_EQ(expect_main_pass("c100-excl.jobs", "c100-excl-slurm.tsv", "c100-excl", {"55"}),
            (Outcomes{{"started", 56}, {"Priority", 2}, {"apart", 1}}));
}

// The same on a cluster of one weight (datasets/slurm/c100-flat: FLAT=1 for slurm_cluster.py), where runs of
// adjacent nodes are long: a job's other nodes come from the run holding its required ones, up from the
// first of them, then down (cons_tres _eval_nodes: job 1, `-N 3 -w n010`, n[010-012]; job 2, `-N 4 -w
// n[020,023]`, n[020-023]).
TEST(SlurmMainPass, RequiredNodesBringTheirRun) {
  EXPECT_EQ(expect_main_pass("c100-flat.jobs", "c100-flat-slurm.tsv", "c100-flat"),
            (Outcomes{{"started", 22}, {"refused at submit", 2}, {"Resources", 1}}));
}

// Jobs of several partitions (datasets/slurm/c100-partitions.jobs: the 20 gpu nodes taken by --exclusive
// jobs, then jobs of two or three partitions, then short filled): slurmctld queues one record per
// partition and tries them in the order written, each failure failing that partition. Job 21 (-p
// gpu,short) finds no room in gpu, blocks it and starts in short, so job 22 (-p gpu) is Priority; job 24
// (-p amd,short -C intel) can never run in amd and starts in short; job 25 (-p amd,gpu -C intel) stays
// BadConstraints (never in amd, gpu blocked); job 73 (-p short,amd) after short blocked starts in amd, job
// 74 (-p short,gpu) is Priority. Slurm started 65 and left 9 Priority, 1 Resources, 1 BadConstraints.
TEST(SlurmMainPass, JobsOfSeveralPartitionsTryEachInTurn) {
  EXPECT_EQ(expect_main_pass("c100-partitions.jobs", "c100-partitions-slurm.tsv", "c100@builtin"),
            (Outcomes{{"started", 65}, {"Priority", 9}, {"Resources", 1}, {"BadConstraints", 1}}));
}

// 520 held jobs released at once on the 10,000-node cluster (datasets/slurm/c10k-batch.jobs, with jobs of
// 500 to 3,000 nodes; the main pass allowed 50 s, bench/peers/slurm_oracle.sh). Every job as Slurm left it:
// - a job with GRES counts on a node only the CPUs of the tasks it may run there (cons_tres
//   gres_select_filter_sock_core): whole tasks of -c CPUs; job 30 (`-C [bigmem|ssd] -c 16
//   --gres=gpu:a100:1`) takes n00570 (24 free CPUs: one task of 16) before n03240 (16 free), both 16;
// - --prefer never runnable in the partition: BadConstraints (jobs 66, 162, 188);
// - a job of K nodes whose partition has fewer than K nodes left (the others held for blocked partitions) is
//   "Nodes required for job are DOWN, DRAINED or reserved..." and blocks it (job 260, -N 1500); one with
//   fewer than K of its eligible nodes unheld is ReqNodeNotAvail and blocks nothing (job 208, -N 1000);
// - more nodes than the partition has: PartitionNodeLimit (job 364, -N 3000 -p gpu).
// Slurm started 283 and left 178 Priority, 28 BadConstraints, 28 ReqNodeNotAvail, 1 Resources, 1 "Nodes
// required..." and 1 PartitionNodeLimit.
TEST(SlurmMainPass, TenThousandNodesReleasedAtOnce) {
  EXPECT_EQ(expect_main_pass("c10k-batch.jobs", "c10k-batch-slurm.tsv", "c10k@builtin"),
            (Outcomes{{"started", 283},
                      {"Priority", 170},
                      {"refused at submit", 36},
                      {"ReqNodeNotAvail", 28},
                      {"Resources", 1},
                      {kHeld, 1},
                      {"PartitionNodeLimit", 1}}));
}

// SchedulerParameters' limits on every pass, in `match`'s one pass too (job_scheduler.c _schedule; seen on
// slurmctld 22.05.8 with the same jobs over time, Simulation.SlurmSchedMaxJobStartEndsAPass and
// SlurmPartitionJobDepthSkipsLaterRecordsOfAPartition): sched_max_job_start=2 starts two and leaves the
// rest untried (Priority); partition_job_depth=1 tries one record of each partition: one job of short and
// the one of amd start, the other short jobs and both records of a job of short and amd pend (Priority).
TEST(SlurmMainPass, SchedMaxJobStartAndPartitionJobDepthEndThePass) {
  const std::string jobs = temp_file("limits.jobs",
                                     "-p short -c 1 --mem=100\n-p short -c 1 --mem=100\n-p short -c 1 --mem=100\n"
                                     "-p amd -c 1 --mem=100\n-p short,amd -c 1 --mem=100\n");
  auto pass = [&](const std::string& params) {
    const fs::path dir = fs::temp_directory_path() / ("colmatch-limits-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    for (const char* f : {"scontrol-node.txt.gz", "scontrol-partition.txt"})
      fs::copy_file(kData + "c100/" + f, dir / f, fs::copy_options::overwrite_existing);
    std::ofstream(dir / "scontrol-config.txt") << "Configuration data as of 2026-11-29T12:00:00\n"
                                                  "SchedulerType           = sched/builtin\n"
                                                  "SchedulerParameters     = "
                                               << params << "\n";
    const loaders::Dataset ds = loaders::load_slurm(dir.string(), jobs);
    fs::remove_all(dir);
    const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, &ds.in_use, ds.dispatch);
    std::string got;  // a letter a job: S started, P pending behind higher priority, ? anything else
    for (uint32_t j = 0; j < ds.jobs.size(); ++j)
      got += m.dispatch.status[j] == JobStatus::Assigned                   ? 'S'
             : m.dispatch.reason[j] == PendingReason::BehindHigherPriority ? 'P'
                                                                           : '?';
    return got;
  };
  EXPECT_EQ(pass("batch_sched_delay=0"), "SSSSS");
  EXPECT_EQ(pass("sched_max_job_start=2"), "SSPPP");
  EXPECT_EQ(pass("partition_job_depth=1"), "SPPSP");
  EXPECT_EQ(pass("partition_job_depth=2,sched_max_job_start=3"), "SSPSP");
  fs::remove(jobs);
}
