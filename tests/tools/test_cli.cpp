// The colmatch binary as a user runs it: exit status, messages, outputs, and no partial files.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <simdjson.h>

namespace fs = std::filesystem;

namespace {

const std::string kBin = COLMATCH_CLI;
const std::string kSrc = COLMATCH_SOURCE_DIR;

struct CliRun {
  int status;
  std::string out, err;
};

// `env`: a prefix for the command line (`env -u X Y=1 `), to run the CLI in another environment.
CliRun run(const std::string& args, const std::string& env = "") {
  const auto dir = fs::temp_directory_path();
  const std::string o = (dir / ("cli-out-" + std::to_string(getpid()))).string();
  const std::string e = (dir / ("cli-err-" + std::to_string(getpid()))).string();
  const int rc = std::system((env + kBin + " " + args + " >" + o + " 2>" + e).c_str());
  auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  CliRun r{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(o), slurp(e)};
  fs::remove(o);
  fs::remove(e);
  return r;
}

std::vector<std::string> lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Every JSON file a run wrote there parses with a strict parser (simdjson: no NaN, no infinity; issue
// 28), checked for every output folder of these tests before it is removed.
void expect_strict_json(const fs::path& dir) {
  std::error_code ec;
  for (const char* name : {"summary.json", "metrics.json"}) {
    const fs::path p = dir / name;
    if (!fs::is_regular_file(p, ec)) continue;
    simdjson::dom::parser parser;
    const auto doc = parser.load(p.string());
    EXPECT_EQ(doc.error(), simdjson::SUCCESS) << p << " is not strict JSON: " << simdjson::error_message(doc.error());
  }
}

struct Out {
  fs::path dir = fs::temp_directory_path() / ("cli-" + std::to_string(getpid()) + "-" + std::to_string(n++));
  Out() { fs::remove_all(dir); }
  ~Out() {
    expect_strict_json(dir);
    fs::remove_all(dir);
  }
  static inline int n = 0;
};

const std::string kDemo = "--farm " + kSrc + "/datasets/demo/farm.toml --taskers " + kSrc +
                          "/datasets/demo/taskers.jsonl --jobs " + kSrc + "/datasets/demo/jobs.jsonl";

TEST(Cli, MatchNativeWritesAllOutputs) {
  Out o;
  const CliRun r = run("match " + kDemo + " --out " + o.dir.string() + " --threads 1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"assigned\": 6"), std::string::npos) << r.out;
  const auto rows = lines((o.dir / "results.csv").string());
  ASSERT_EQ(rows.size(), 9u);
  EXPECT_EQ(rows[0], "job,status,tasker,slots,reason");
  EXPECT_EQ(rows[2], "2,assigned,all.q@node01,4,");
  // why: the first step of its eligibility chain that leaves no tasker, with its counts (issue 11)
  EXPECT_EQ(rows[6], "6,pending,,0,\"no eligible tasker: h_vmem>=32G matches 3 of 4, none of the 1 left before it\"");
  EXPECT_TRUE(fs::exists(o.dir / "summary.json"));
  EXPECT_TRUE(fs::exists(o.dir / "categories.csv"));
  for (const auto& f : fs::directory_iterator(o.dir)) EXPECT_NE(f.path().extension(), ".tmp");
}

// colmatch explain (issue 11): a pending job's category step by step, the first step that leaves no
// tasker marked; a job with eligible taskers but no room gets the room on them per consumable; an
// unknown job is an error.
TEST(Cli, ExplainSaysWhyAJobIsPending) {
  const auto r = run("explain " + kDemo + " --job 6");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("job 6: pending: no eligible tasker: h_vmem>=32G matches 3 of 4, none of the 1 left before it"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("h_vmem>=32G"), std::string::npos);
  EXPECT_NE(r.out.find("<- the first step that leaves none"), std::string::npos) << r.out;
  const auto a = run("explain " + kDemo + " --job 1");
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_NE(a.out.find("job 1: assigned to"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("room now on the eligible taskers"), std::string::npos) << a.out;
  const auto none = run("explain " + kDemo + " --job nosuch");
  EXPECT_EQ(none.status, 1);
  EXPECT_NE(none.err.find("no job 'nosuch'"), std::string::npos) << none.err;
  EXPECT_EQ(run("explain " + kDemo).status, 1) << "--job or --category is needed";
  // a category by its hash, as categories.csv names it
  Out out;
  ASSERT_EQ(run("match " + kDemo + " --out " + out.dir.string()).status, 0);
  const auto cats = lines((out.dir / "categories.csv").string());
  ASSERT_GE(cats.size(), 2u);
  EXPECT_NE(cats[0].find(",steps"), std::string::npos) << "categories.csv carries the step counts";
  const std::string hash = cats[1].substr(0, 16);
  const auto c = run("explain " + kDemo + " --category " + hash);
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.out.find("category " + hash), std::string::npos) << c.out;
  // DIRAC: the parameter no queue describes (a missing attribute makes a queue ineligible)
  const std::string dirac = "--format dirac --resources " + kSrc + "/datasets/demo/dirac/resources.json --jdl " + kSrc +
                            "/datasets/demo/dirac/jobs.jdl";
  const auto g = run("explain " + dirac + " --job gpu");
  ASSERT_EQ(g.status, 0) << g.err;
  EXPECT_NE(g.out.find("<- the first step that leaves none\n      no tasker describes GPUModel: a tasker without it "
                       "fails the step\n"),
            std::string::npos)
      << g.out;
}

// Slurm's main pass in the files a user reads (issue 26): results.csv gives each job Slurm's outcome in
// colmatch's words, summary.json counts the blocked ones, explain names the queue.
TEST(Cli, SlurmMainPassReasonsInResultsSummaryAndExplain) {
  const std::string slurm =
      "--format slurm --dump " + kSrc + "/datasets/slurm/c100-batch --jobs " + kSrc + "/datasets/slurm/c100-batch.jobs";
  Out out;
  const auto r = run("match " + slurm + " --out " + out.dir.string());
  // the lines as sbatch takes them (the oracle held them): 8 refused at submit, each named, exit status 2
  ASSERT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("colmatch: rejected: " + kSrc +
                       "/datasets/slurm/c100-batch.jobs:19: job 19: Requested node configuration is not available"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("\"pending_behind_higher_priority\": 81,\n  \"pending_taskers_held\": 3,"), std::string::npos)
      << r.out;
  const auto rows = lines((out.dir / "results.csv").string());
  ASSERT_EQ(rows.size(), 151u);
  EXPECT_EQ(rows[62].rfind("62,pending,,0,\"eligible but no free capacity", 0), 0u) << rows[62];
  EXPECT_EQ(rows[63], "63,pending,,0,behind a higher-priority job of its queue that cannot start (Slurm: Priority)");
  EXPECT_EQ(rows[69].rfind("69,pending,,0,\"every tasker of its queue is held", 0), 0u) << rows[69];
  EXPECT_EQ(rows[19].rfind("19,rejected,,0,", 0), 0u) << rows[19] << ": BadConstraints, refused at submit";
  const auto e = run("explain " + slurm + " --job 78");
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_NE(e.out.find("job 78: pending: every tasker of its queue is held for higher-priority jobs (Slurm: Nodes "
                       "required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions) "
                       "(queue short)"),
            std::string::npos)
      << e.out;
  // other formats' summaries keep their keys
  Out demo;
  const auto d = run("match " + kDemo + " --out " + demo.dir.string());
  EXPECT_EQ(d.out.find("pending_behind_higher_priority"), std::string::npos);
}

// "allocation_rule": "1" (Grid Engine's allocation_rule 1; what Slurm's -N K is): each slot on a tasker of
// its own, the per-slot charge on each; more slots than eligible taskers never run.
TEST(Cli, OneSlotPerTaskerSpreadsAJobOverTaskers) {
  const fs::path jobs = fs::temp_directory_path() / ("cli-one-per-" + std::to_string(getpid()) + ".jsonl");
  std::ofstream(jobs) << R"({"id": "a", "slots": 3, "allocation_rule": "1", "requests": "arch==lx-amd64", )"
                         R"("resources": {"h_vmem": "20G", "matlab": 1}})"
                         "\n"
                         R"({"id": "b", "slots": 4, "allocation_rule": "1", "requests": "arch==lx-amd64"})"
                         "\n"
                         R"({"id": "c", "slots": 2, "allocation_rule": "1", "requests": "arch==lx-amd64", )"
                         R"("resources": {"h_vmem": "40G"}})"
                         "\n";
  Out out;
  const auto r = run("match --farm " + kSrc + "/datasets/demo/farm.toml --taskers " + kSrc +
                     "/datasets/demo/taskers.jsonl --jobs " + jobs.string() + " --out " + out.dir.string());
  fs::remove(jobs);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto rows = lines((out.dir / "results.csv").string());
  ASSERT_EQ(rows.size(), 1u + 3 + 1 + 2);
  // the greatest effective power first (node04, the master: it holds a's licence), a slot on each
  EXPECT_EQ(rows[1], "a,assigned,gpu.q@node04,1,");
  EXPECT_EQ(rows[2], "a,assigned,all.q@node01,1,");
  EXPECT_EQ(rows[3], "a,assigned,all.q@node02,1,");
  EXPECT_EQ(rows[4], "b,pending,,0,no eligible tasker") << "4 slots, 3 amd64 taskers";
  // 40G on each of two: node02 has 12G of its 32G left after a, node04 108G and node01 44G
  EXPECT_EQ(rows[5], "c,assigned,gpu.q@node04,1,");
  EXPECT_EQ(rows[6], "c,assigned,all.q@node01,1,");
}

// colmatch explain --eligibility (issue 29): a job's category steps as the full explain gives them, read
// from the job's line alone: a later broken line is never read; a line naming the id elsewhere is not the
// job; a file writing the id with escapes is read whole; gzip too; no dispatch outcome.
TEST(Cli, ExplainEligibilityReadsTheJobsLineAlone) {
  Out gen;
  ASSERT_EQ(run("generate --taskers 300 --jobs 4000 --categories 60 --seed 7 --save " + gen.dir.string()).status, 0);
  const std::string farm =
      "--farm " + (gen.dir / "farm.toml").string() + " --taskers " + (gen.dir / "taskers.jsonl").string() + " --jobs ";
  auto steps = [](const std::string& text) {  // from the request on, without the room after the match
    const size_t from = text.find("request: "), room = text.find("room now on the eligible taskers");
    return from == std::string::npos ? std::string()
                                     : text.substr(from, room == std::string::npos ? room : room - from);
  };
  // a jobs file: the generated one, a line naming job7 as its owner first, and a broken line last
  const fs::path jobs = gen.dir / "jobs-more.jsonl";
  {
    std::ofstream out(jobs);
    out << "{\"id\": \"decoy\", \"owner\": \"job7\", \"requests\": \"\"}\n";
    std::ifstream in(gen.dir / "jobs.jsonl");
    out << in.rdbuf();
  }
  for (const std::string id : {"job0", "job7", "job2222", "job3999"}) {
    const auto full = run("explain " + farm + jobs.string() + " --job " + id);
    ASSERT_EQ(full.status, 0) << full.err;
    const auto fast = run("explain " + farm + jobs.string() + " --job " + id + " --eligibility");
    ASSERT_EQ(fast.status, 0) << fast.err;
    EXPECT_NE(fast.out.find("job " + id + ": eligibility only"), std::string::npos) << fast.out;
    EXPECT_EQ(steps(fast.out), steps(full.out)) << id;
    EXPECT_NE(steps(fast.out), "");
    EXPECT_EQ(fast.out.substr(fast.out.find("category "), 26), full.out.substr(full.out.find("category "), 26))
        << "the same category hash";
  }
  {
    std::ofstream out(jobs, std::ios::app);
    out << "{broken\n";
  }
  EXPECT_EQ(run("explain " + farm + jobs.string() + " --job job7").status, 1) << "the whole file is read";
  const auto fast = run("explain " + farm + jobs.string() + " --job job7 --eligibility");
  EXPECT_EQ(fast.status, 0) << fast.err;
  // an id written with an escape: the scan misses it, the whole file is read (and its broken line found)
  const fs::path escaped = gen.dir / "jobs-escaped.jsonl";
  {
    std::ofstream out(escaped);
    out << "{\"id\": \"\\u006aob1\", \"requests\": \"\"}\n";
  }
  const auto e = run("explain " + farm + escaped.string() + " --job job1 --eligibility");
  EXPECT_EQ(e.status, 0) << e.err;
  EXPECT_NE(e.out.find("job job1: eligibility only"), std::string::npos) << e.out;
  EXPECT_EQ(run("explain " + farm + escaped.string() + " --job job2 --eligibility").status, 1) << "no such job";
  // gzip
  ASSERT_EQ(std::system(("gzip -kf " + (gen.dir / "jobs.jsonl").string()).c_str()), 0);
  const auto gz = run("explain " + farm + (gen.dir / "jobs.jsonl.gz").string() + " --job job3999 --eligibility");
  EXPECT_EQ(gz.status, 0) << gz.err;
  EXPECT_EQ(steps(gz.out), steps(run("explain " + farm + (gen.dir / "jobs.jsonl").string() + " --job job3999").out));
  EXPECT_NE(run("explain " + kDemo + " --job 1 --eligibility --simulate").status, 0);
  EXPECT_NE(run("explain " + kDemo + " --eligibility").status, 0) << "--eligibility needs --job";
}

// colmatch explain --simulate (issue 11): a started job's start, wait and taskers; a pending one's reason
// at the last cycle that considered it: held, waiting for a dependency, throttled by which credential
// and limit; then its category's steps.
TEST(Cli, ExplainASimulatedJob) {
  Out dir;
  fs::create_directories(dir.dir);
  auto write = [&](const char* name, const std::string& text) { std::ofstream(dir.dir / name) << text; };
  write("farm.toml", "name = \"t\"\n[[attribute]]\nname = \"slots\"\ntype = \"int\"\nconsumable = true\n");
  write("taskers.jsonl", "{\"name\": \"n1\", \"attrs\": {\"slots\": 4}}\n");
  write("jobs.jsonl",
        "{\"id\": \"a\", \"owner\": \"alice\", \"runtime\": 100}\n"
        "{\"id\": \"b\", \"owner\": \"alice\", \"runtime\": 100}\n"
        "{\"id\": \"c\", \"owner\": \"bob\", \"runtime\": 100, \"hold\": true}\n"
        "{\"id\": \"d\", \"owner\": \"carol\", \"runtime\": 100, \"depends\": [\"b\"]}\n");
  write("policy.toml", "[policy]\n[[policy.throttle]]\ncredential = \"user\"\nmax_jobs = 1\n");
  const std::string in = "--simulate --farm " + (dir.dir / "farm.toml").string() + " --taskers " +
                         (dir.dir / "taskers.jsonl").string() + " --jobs " + (dir.dir / "jobs.jsonl").string() +
                         " --policy " + (dir.dir / "policy.toml").string() + " --until 50 --job ";
  auto a = run("explain " + in + "a");
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out.rfind("job a: started at 0 (submitted at 0, waited 0 s), ends at 100, on n1 (1 slots)\n", 0), 0u)
      << a.out;
  EXPECT_NE(a.out.find("eligibility, step by step over 1 taskers"), std::string::npos) << a.out;
  EXPECT_EQ(a.out.find("room now"), std::string::npos) << "a batch match's room is not the simulation's";
  auto b = run("explain " + in + "b");
  EXPECT_EQ(b.out.rfind("job b: pending at the end of the run (submitted at 0); at the last cycle that considered it "
                        "(t = 0): throttled: user alice max_jobs 1\n",
                        0),
            0u)
      << b.out;
  EXPECT_NE(b.out.find("held back by a credential limit at some time in the run"), std::string::npos) << b.out;
  EXPECT_NE(run("explain " + in + "c").out.find("(t = 0): held\n"), std::string::npos);
  EXPECT_NE(run("explain " + in + "d").out.find("(t = 0): waiting for a dependency\n"), std::string::npos);
  // without --until the throttled job starts when a ends
  const std::string all = in.substr(0, in.find(" --until"));
  EXPECT_NE(run("explain " + all + " --job b").out.find("job b: started at 100 (submitted at 0, waited 100 s)"),
            std::string::npos);
  // without --simulate a policy is read for its [policy.vov] only, but read: a missing file is an error
  const CliRun missing = run("explain " + kDemo + " --policy x.toml --job 1");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("x.toml"), std::string::npos) << missing.err;
}

// colmatch explain per Grid Engine level (issue 11): where a step's attribute has host or global values,
// how many taskers each level defines it for and how many of those pass there. big.q@node01 offers
// 128G at the queue level, but its host offers 64G: the host level decides (strict hierarchy).
TEST(Cli, ExplainCountsPerLevel) {
  Out dir;
  fs::create_directories(dir.dir);
  auto write = [&](const char* name, const std::string& text) { std::ofstream(dir.dir / name) << text; };
  write("farm.toml",
        "name = \"levels\"\n[[attribute]]\nname = \"arch\"\n[[attribute]]\nname = \"h_vmem\"\ntype = "
        "\"memory\"\nconsumable = true\n[[attribute]]\nname = \"lic\"\ntype = \"int\"\nconsumable = true\n"
        "per = \"job\"\n[[attribute]]\nname = \"ssd\"\ntype = \"boolean\"\n[global]\nlic = 2\n");
  write("hosts.jsonl",
        "{\"name\": \"node01\", \"attrs\": {\"h_vmem\": \"64G\", \"arch\": \"lx-amd64\"}}\n"
        "{\"name\": \"node02\", \"attrs\": {\"h_vmem\": \"16G\", \"arch\": \"lx-amd64\"}}\n");
  write("taskers.jsonl",
        "{\"name\": \"all.q@node01\", \"host\": \"node01\", \"attrs\": {\"h_vmem\": \"32G\"}}\n"
        "{\"name\": \"big.q@node01\", \"host\": \"node01\", \"attrs\": {\"h_vmem\": \"128G\"}}\n"
        "{\"name\": \"all.q@node02\", \"host\": \"node02\", \"attrs\": {\"h_vmem\": \"32G\"}}\n"
        "{\"name\": \"all.q@node03\", \"host\": \"node03\", \"attrs\": {\"h_vmem\": \"8G\", \"arch\": "
        "\"lx-arm64\", \"ssd\": true}}\n");
  write("jobs.jsonl",
        "{\"id\": \"1\", \"requests\": \"arch==lx-amd64\", \"resources\": {\"h_vmem\": \"20G\"}}\n"
        "{\"id\": \"2\", \"resources\": {\"h_vmem\": \"100G\", \"lic\": 3}}\n"
        "{\"id\": \"3\", \"requests\": \"ssd==true\"}\n");
  const std::string in = "--farm " + (dir.dir / "farm.toml").string() + " --hosts " +
                         (dir.dir / "hosts.jsonl").string() + " --taskers " + (dir.dir / "taskers.jsonl").string() +
                         " --jobs " + (dir.dir / "jobs.jsonl").string();
  const auto one = run("explain " + in + " --job 1");
  ASSERT_EQ(one.status, 0) << one.err;
  const std::string by = "      by level (each level that defines it must pass): ";
  EXPECT_NE(one.out.find(by + "host defines it on 3, 3 pass; queue defines it on 1, 0 pass\n"), std::string::npos)
      << one.out;  // arch: node03's queue value lx-arm64
  EXPECT_NE(one.out.find(by + "host defines it on 3, 2 pass; queue defines it on 4, 3 pass\n"), std::string::npos)
      << one.out;  // h_vmem>=20G: node02's 16G; node03's 8G
  const auto two = run("explain " + in + " --job 2");
  EXPECT_NE(two.out.find("h_vmem>=100G                                              0          0   <- the first "
                         "step that leaves none\n" +
                         by + "host defines it on 3, 0 pass; queue defines it on 4, 1 pass\n"),
            std::string::npos)
      << two.out;
  EXPECT_NE(two.out.find(by + "global defines it on 4, 0 pass\n"), std::string::npos) << two.out;
  // an attribute some taskers do not describe
  const auto three = run("explain " + in + " --job 3");
  EXPECT_NE(three.out.find("      1 of 4 taskers describe ssd; a tasker without it fails the step\n"),
            std::string::npos)
      << three.out;
  EXPECT_EQ(one.out.find("taskers describe"), std::string::npos) << "arch is described on every tasker";
  // a step on an attribute only the queue level defines gets no level line
  const auto demo = run("explain " + kDemo + " --job 6");
  EXPECT_EQ(demo.out.find("by level"), std::string::npos) << demo.out;
}

// Son of Grid Engine 8.1.9 accepts a host value under a global one (issue 8, class 9): the run goes on,
// with one warning per attribute on stderr; the seed's 6.0 design refuses it naming hosts.jsonl.
TEST(Cli, OverrideBelowTheGlobalLevelWarns) {
  Out dir;
  fs::create_directories(dir.dir);
  auto write = [&](const char* name, const std::string& text) { std::ofstream(dir.dir / name) << text; };
  const std::string attrs = "[[attribute]]\nname = \"arch\"\n[global]\narch = \"x86_64\"\n";
  write("farm.toml", "name = \"g\"\n" + attrs);
  write("farm60.toml", "name = \"g\"\n[policy]\ngrid_engine = \"6.0-design\"\n" + attrs);
  write("hosts.jsonl", "{\"name\": \"n1\", \"attrs\": {\"arch\": \"aarch64\"}}\n");
  write("taskers.jsonl", "{\"name\": \"q@n1\", \"host\": \"n1\"}\n");
  write("jobs.jsonl", "{\"id\": \"1\", \"requests\": \"arch==aarch64\"}\n");
  auto args = [&](const char* farm) {
    return "match --farm " + (dir.dir / farm).string() + " --hosts " + (dir.dir / "hosts.jsonl").string() +
           " --taskers " + (dir.dir / "taskers.jsonl").string() + " --jobs " + (dir.dir / "jobs.jsonl").string() +
           " --out " + (dir.dir / "out").string();
  };
  const auto r = run(args("farm.toml"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("colmatch: warning: attribute 'arch' (relop ==): host 'n1' (aarch64) overrides the global "
                       "value (x86_64)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("\"pending\": 1"), std::string::npos) << "the global x86_64 is checked too: " << r.out;
  const auto old = run(args("farm60.toml"));
  EXPECT_EQ(old.status, 1);
  EXPECT_NE(old.err.find((dir.dir / "hosts.jsonl").string() + ": attribute 'arch'"), std::string::npos) << old.err;
}

TEST(Cli, ForcedInstructionSetIsReported) {
  Out o;
  const CliRun r = run("match " + kDemo + " --out " + o.dir.string() + " --isa scalar");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"instruction_set\": \"scalar\""), std::string::npos) << r.out;
}

// The CLI starts itself again with glibc's huge-page tunable when the kernel gives transparent huge pages
// on request (tools/colmatch.cpp: restart_with_huge_pages), and says so in summary.json; COLMATCH_HUGEPAGES=0
// keeps it as started.
TEST(Cli, HeapGetsHugePagesWhenTheKernelGivesThemOnRequest) {
  std::string mode;
  if (std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled"); in) std::getline(in, mode);
  const bool always = mode.find("[always]") != std::string::npos;
  const bool on_request = mode.find("[madvise]") != std::string::npos;
  const std::string args = "simulate --format swf --log " + kSrc + "/datasets/samples/kth_sp2_head3000.swf.gz " +
                           "--policy " + kSrc + "/datasets/examples/easy.toml --write metrics --out ";
  auto huge = [](const CliRun& r) { return r.out.find("\"huge_pages\": true") != std::string::npos; };
  Out a, b;
  const CliRun asked = run(args + a.dir.string(), "env -u GLIBC_TUNABLES -u COLMATCH_HUGEPAGES ");
  ASSERT_EQ(asked.status, 0) << asked.err;
  EXPECT_EQ(huge(asked), always || on_request) << mode << "\n" << asked.out;
  const CliRun kept = run(args + b.dir.string(), "env -u GLIBC_TUNABLES COLMATCH_HUGEPAGES=0 ");
  ASSERT_EQ(kept.status, 0) << kept.err;
  EXPECT_EQ(huge(kept), always) << mode << "\n" << kept.out;
  if (!on_request) GTEST_SKIP() << "the kernel's mode is not madvise (" << mode << "): the restart is not tried";
}

// A log given as a FIFO or a pipe (`--log <(zcat log.gz)`) is read as the file it carries; and the running
// process is named colmatch, also after the huge-page restart (it exec'd /proc/self/exe and was named
// "exe": ps, top and pkill did not find it, nor did the sweep's test that kills a worker's run). The
// FIFO holds the run at its opening, after any restart, while its name is read.
TEST(Cli, ALogFromAFifoIsReadAndTheRunIsNamedColmatch) {
  std::signal(SIGPIPE, SIG_IGN);  // a run that ends early makes a write fail, not end the test
  Out o;
  const fs::path fifo = fs::temp_directory_path() / ("cli-fifo-" + std::to_string(getpid()) + ".swf");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string log = kSrc + "/datasets/samples/kth_sp2_head3000.swf.gz";  // gzip bytes through the FIFO
  const std::string out_file = (fs::temp_directory_path() / ("cli-fifo-out-" + std::to_string(getpid()))).string();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::unsetenv("GLIBC_TUNABLES");
    ::unsetenv("COLMATCH_HUGEPAGES");
    const int fd = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 1);
    ::execl(kBin.c_str(), kBin.c_str(), "simulate", "--format", "swf", "--log", fifo.c_str(), "--write", "metrics",
            "--out", o.dir.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // the FIFO opens for writing once the run has opened the log (ENXIO before); a run that ended first, or
  // that never opens it within a minute, fails the test instead of stalling it
  int w = -1, status = 0;
  bool ended = false;
  for (int tries = 0; w < 0 && !ended && tries < 6000; ++tries) {
    w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (w < 0) {
      ended = ::waitpid(pid, &status, WNOHANG) == pid;
      ::usleep(10000);
    }
  }
  if (w < 0 && !ended) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    ended = true;
  }
  if (w >= 0) ::fcntl(w, F_SETFL, ::fcntl(w, F_GETFL) & ~O_NONBLOCK);
  std::string comm;
  if (std::ifstream in("/proc/" + std::to_string(pid) + "/comm"); in) std::getline(in, comm);
  std::ifstream gz(log, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(gz)), std::istreambuf_iterator<char>());
  for (size_t at = 0; w >= 0 && at < bytes.size();) {
    const ssize_t n = ::write(w, bytes.data() + at, bytes.size() - at);
    if (n <= 0) break;
    at += static_cast<size_t>(n);
  }
  if (w >= 0) ::close(w);
  if (!ended) ::waitpid(pid, &status, 0);
  std::ifstream in(out_file);
  const std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(fifo);
  fs::remove(out_file);
  ASSERT_GE(w, 0) << "the run never opened its log";
  EXPECT_EQ(comm, "colmatch");
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << "\n" << out;
  EXPECT_NE(out.find("\"started\": 3000"), std::string::npos) << out;
}

TEST(Cli, BadTaskerFileFailsWithFileLineFieldAndNoOutput) {
  Out o;
  const auto bad = fs::temp_directory_path() / ("bad-taskers-" + std::to_string(getpid()) + ".jsonl");
  std::ofstream(bad) << "{\"name\":\"a\",\"attrs\":{\"slots\":4}}\n{\"name\":\"b\",\"attrs\":{\"slots\":\"four\"}}\n";
  const CliRun r = run("match --farm " + kSrc + "/datasets/demo/farm.toml --taskers " + bad.string() + " --jobs " +
                       kSrc + "/datasets/demo/jobs.jsonl --out " + o.dir.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(bad.string() + ":2: field 'attrs.slots'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(o.dir / "results.csv"));
  EXPECT_FALSE(fs::exists(o.dir / "summary.json"));
  fs::remove(bad);
}

TEST(Cli, UnreadableFileFails) {
  Out o;
  const CliRun r = run("match --format openb --nodes /nonexistent/nodes.csv --pods x.csv --out " + o.dir.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("/nonexistent/nodes.csv"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(o.dir / "results.csv"));
}

TEST(Cli, RejectedJobsGetARowAndExitStatusTwo) {
  Out o;
  const auto jobs = fs::temp_directory_path() / ("jobs-" + std::to_string(getpid()) + ".jsonl");
  std::ofstream(jobs) << "{\"id\":\"good\"}\n{\"id\":\"bad\",\"requests\":\"arch==x && nosuch>1\"}\n";
  const CliRun r = run("match --farm " + kSrc + "/datasets/demo/farm.toml --taskers " + kSrc +
                       "/datasets/demo/taskers.jsonl --jobs " + jobs.string() + " --out " + o.dir.string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(jobs.string() + ":2: job bad: field 'requests': unknown attribute 'nosuch'"), std::string::npos)
      << r.err;
  const auto rows = lines((o.dir / "results.csv").string());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].substr(0, 14), "good,assigned,");
  EXPECT_EQ(rows[2].substr(0, 13), "bad,rejected,");
  fs::remove(jobs);
}

TEST(Cli, GoogleSampleEveryJobExactlyOnce) {
  Out o;
  const CliRun r =
      run("match --format google2011 --machines " + kSrc + "/datasets/samples/google_machine_events.csv.gz --tasks " +
          kSrc + "/datasets/samples/google_task_events_job_mod25.csv.gz --out " + o.dir.string() + " --threads 2");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto rows = lines((o.dir / "results.csv").string());
  std::map<std::string, int> seen;
  for (size_t i = 1; i < rows.size(); ++i) ++seen[rows[i].substr(0, rows[i].find(','))];
  EXPECT_EQ(seen.size(), 24748u);
  for (const auto& [id, n] : seen) ASSERT_EQ(n, 1) << id;
}

TEST(Cli, ImportThenMatchGivesTheSameResults) {
  Out a, b, saved;
  const std::string openb = "--format openb --nodes " + kSrc + "/datasets/samples/openb_nodes.csv --pods " + kSrc +
                            "/datasets/samples/openb_pods_gpuspec20_head2000.csv";
  ASSERT_EQ(run("import " + openb + " --save " + saved.dir.string()).status, 0);
  ASSERT_EQ(run("match " + openb + " --out " + a.dir.string()).status, 0);
  const auto s = saved.dir.string();
  const CliRun r = run("match --farm " + s + "/farm.toml --taskers " + s + "/taskers.jsonl --jobs " + s +
                       "/jobs.jsonl --out " + b.dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(lines((a.dir / "results.csv").string()), lines((b.dir / "results.csv").string()));
}

TEST(Cli, HelpHasExamples) {
  const CliRun r = run("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("Examples:"), std::string::npos);
  EXPECT_NE(r.out.find("--format google2011"), std::string::npos);
}

}  // namespace

namespace {

// Progress on long loads goes to stderr only when it is a terminal: under a pseudo-terminal (script)
// a "loading" line appears, and it never does when stderr is a file (the tests above).
TEST(Cli, ProgressLineOnlyOnATerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "script(1) not installed";
  Out o;
  const auto log = fs::temp_directory_path() / ("tty-" + std::to_string(getpid()));
  const std::string cmd = kBin + " match --format google2011 --machines " + kSrc +
                          "/datasets/samples/google_machine_events.csv.gz --tasks " + kSrc +
                          "/datasets/samples/google_task_events_job_mod25.csv.gz --out " + o.dir.string();
  ASSERT_EQ(std::system(("script -qec '" + cmd + "' " + log.string() + " >/dev/null 2>&1").c_str()), 0);
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("loading "), std::string::npos) << ss.str().substr(0, 300);
  const CliRun plain = run(cmd.substr(kBin.size() + 1));
  EXPECT_EQ(plain.err.find("loading "), std::string::npos);
  fs::remove(log);
}

}  // namespace

namespace {

// colmatch simulate on the bundled KTH SP2 sample: every job in schedule.csv, each started one with its
// slots on nodes, outputs complete; EASY waits less than strict priority order on the same log.
std::string slurp_file(const fs::path& p);

// simulate --write (issue 46): metrics writes metrics.json and summary.json only, schedule adds
// schedule.csv, all (the default) the five files; metrics.json is the same bytes whichever is written, and
// a folder written with all and then with metrics holds only the later set (one set, nothing stale).
TEST(CliSimulate, WriteChoosesTheFilesAndTheMetricsAreTheSame) {
  const std::string log = "--format swf --log " + kSrc + "/datasets/samples/kth_sp2_head3000.swf.gz";
  Out out;
  const auto policy = out.dir.string() + "-easy.toml";
  std::ofstream(policy) << "[policy]\nbackfill = \"easy\"\n";
  std::string metrics;
  for (const auto& [write, files] : std::vector<std::pair<std::string, std::set<std::string>>>{
           {"all", {"cycles.csv", "metrics.json", "schedule.csv", "summary.json", "timeline.csv"}},
           {"schedule", {"metrics.json", "schedule.csv", "summary.json"}},
           {"metrics", {"metrics.json", "summary.json"}}}) {
    SCOPED_TRACE(write);
    const auto r = run("simulate " + log + " --policy " + policy + " --write " + write + " --out " + out.dir.string());
    ASSERT_EQ(r.status, 0) << r.err;
    std::set<std::string> have;
    for (const auto& e : fs::directory_iterator(out.dir)) have.insert(e.path().filename().string());
    EXPECT_EQ(have, files);
    if (metrics.empty()) metrics = slurp_file(out.dir / "metrics.json");
    else EXPECT_EQ(slurp_file(out.dir / "metrics.json"), metrics);
  }
  const auto bad = run("simulate " + log + " --write some --out " + out.dir.string() + "-bad");
  EXPECT_NE(bad.status, 0);
  EXPECT_FALSE(fs::exists(out.dir.string() + "-bad"));
  fs::remove(policy);
}

TEST(CliSimulate, KthSampleEveryJobOnceAndEasyWaitsLess) {
  const std::string log = "--format swf --log " + kSrc + "/datasets/samples/kth_sp2_head3000.swf.gz";
  Out strict, easy;
  const auto policy = strict.dir.string() + "-easy.toml";
  std::ofstream(policy) << "[policy]\nbackfill = \"easy\"\n";
  const auto a = run("simulate " + log + " --out " + strict.dir.string());
  ASSERT_EQ(a.status, 0) << a.err;
  const auto b = run("simulate " + log + " --policy " + policy + " --out " + easy.dir.string());
  ASSERT_EQ(b.status, 0) << b.err;
  fs::remove(policy);
  for (const char* f : {"schedule.csv", "metrics.json", "timeline.csv", "summary.json"})
    EXPECT_TRUE(fs::exists(easy.dir / f)) << f;
  const auto rows = lines((easy.dir / "schedule.csv").string());
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0], "job,submit,start,end,wait,tasker,slots,queue,user,status,reason");
  std::map<std::string, long> slots;
  for (size_t i = 1; i < rows.size(); ++i) {
    std::vector<std::string> f;
    std::stringstream ss(rows[i]);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    ASSERT_GE(f.size(), 10u) << rows[i];
    EXPECT_EQ(f[9], "started") << rows[i];
    slots[f[0]] += std::stol(f[6]);
  }
  EXPECT_EQ(slots.size(), 3000u) << "every job appears";
  auto mean_wait = [](const fs::path& metrics) {
    std::ifstream in(metrics);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string s = ss.str();
    const size_t at = s.find("\"mean\": ", s.find("\"wait_seconds\""));
    return std::stod(s.substr(at + 8));
  };
  EXPECT_LT(mean_wait(easy.dir / "metrics.json"), mean_wait(strict.dir / "metrics.json") / 2)
      << "EASY backfill cuts the mean wait at least in half on this log";
  EXPECT_NE(b.out.find("\"started\": 3000"), std::string::npos) << b.out;
}

// Issue 27: an Accelerator farm is scheduled as its dispatcher does, greedily (every bucket that can run
// dispatches; one that cannot holds back no other), unless its policy says otherwise; a policy file that
// holds only [policy.vov] keeps that default. On the demo farm: 3 of 8 jobs run ahead of one that waits,
// none under strict order.
TEST(CliSimulate, AcceleratorFarmsBackfillGreedilyByDefault) {
  const std::string farm = "--format vov --taskers " + kSrc + "/datasets/demo/vov/taskers.tcl --resources " + kSrc +
                           "/datasets/demo/vov/resources.tcl --jobs " + kSrc + "/datasets/demo/vov/jobs.jsonl";
  Out plain, strict, vov_only;
  const auto none = strict.dir.string() + "-none.toml", wrappers = vov_only.dir.string() + "-vov.toml";
  std::ofstream(none) << "[policy]\nbackfill = \"none\"\n";
  std::ofstream(wrappers) << "[policy.vov]\nwrappers = [\"vov\"]\n";
  // exit 2: the demo rejects two jobs on purpose (a map cycle, a bad list)
  ASSERT_EQ(run("simulate " + farm + " --out " + plain.dir.string()).status, 2);
  ASSERT_EQ(run("simulate " + farm + " --policy " + none + " --out " + strict.dir.string()).status, 2);
  ASSERT_EQ(run("simulate " + farm + " --policy " + wrappers + " --out " + vov_only.dir.string()).status, 2);
  fs::remove(none);
  fs::remove(wrappers);
  auto backfilled = [](const fs::path& dir) {
    const std::string m = slurp_file(dir / "metrics.json");
    return std::stol(m.substr(m.find("\"backfilled\": ") + 14));
  };
  EXPECT_EQ(backfilled(plain.dir), 3) << "greedy by default";
  EXPECT_EQ(backfilled(strict.dir), 0);
  EXPECT_EQ(backfilled(vov_only.dir), 3) << "a policy silent on backfill keeps the farm's default";
}

// metrics.json is a function of the inputs and the policy: two runs write the same bytes (what a sweep
// compares), while the wall-clock figures (seconds, cycle_ms) are in summary.json.
TEST(CliSimulate, MetricsAreTheSameBytesRunToRunTimingsInTheSummary) {
  const std::string log = "--format swf --log " + kSrc + "/datasets/samples/kth_sp2_head3000.swf.gz";
  Out a, b;
  ASSERT_EQ(run("simulate " + log + " --out " + a.dir.string()).status, 0);
  const auto r = run("simulate " + log + " --out " + b.dir.string() + " --threads 1");
  ASSERT_EQ(r.status, 0) << r.err;
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const std::string metrics = slurp(a.dir / "metrics.json");
  EXPECT_EQ(metrics, slurp(b.dir / "metrics.json"));
  EXPECT_EQ(metrics.find("_ms"), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("seconds\": {\"load"), std::string::npos) << metrics;
  const std::string summary = slurp(b.dir / "summary.json");
  EXPECT_NE(summary.find("\"cycle_ms\": {\"p50\": "), std::string::npos) << summary;
  EXPECT_EQ(summary, r.out) << "the summary printed is the one written";
}

// colmatch simulate on the bundled Google 2011 slice: the machines' events are applied during the run
// (summary counts every machine row ever up), every task has its rows, and utilisation is that of cpu.
TEST(CliSimulate, GoogleSampleWithMachineEvents) {
  Out out, snapshot;
  const std::string g = "--format google2011 --machines " + kSrc + "/datasets/samples/google_machine_events.csv.gz" +
                        " --tasks " + kSrc + "/datasets/samples/google_task_events_job_mod25.csv.gz";
  const auto r = run("simulate " + g + " --out " + out.dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto m = run("match " + g + " --out " + snapshot.dir.string());
  ASSERT_EQ(m.status, 0) << m.err;
  auto count = [](const std::string& json, const std::string& key) {
    const size_t at = json.find("\"" + key + "\": ");
    return at == std::string::npos ? -1L : std::stol(json.substr(at + key.size() + 4));
  };
  EXPECT_GT(count(r.out, "taskers"), count(m.out, "taskers")) << "simulate keeps machines removed before the end";
  std::set<std::string> jobs;
  const auto rows = lines((out.dir / "schedule.csv").string());
  for (size_t i = 1; i < rows.size(); ++i) jobs.insert(rows[i].substr(0, rows[i].find(',')));
  EXPECT_EQ(jobs.size(), 24748u) << "every task appears";
  std::ifstream in(out.dir / "metrics.json");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("\"utilisation_of\": \"cpu\""), std::string::npos) << ss.str();
}

TEST(CliSimulate, BadPolicyNamesFileLineAndKey) {
  Out out;
  const auto policy = out.dir.string() + "-bad.toml";
  std::ofstream(policy) << "[policy]\nbackfill = \"sideways\"\n";
  const auto r = run("simulate --format swf --log " + kSrc + "/datasets/samples/kth_sp2_head3000.swf.gz --policy " +
                     policy + " --out " + out.dir.string());
  fs::remove(policy);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(policy + ":2: field 'policy.backfill': expected none, easy, conservative or greedy"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out.dir)) << "no output on a fatal error";
}

// scheduler = "fbsng" from a policy file: every job of the KTH sample appears once, the FBSNG scheduler
// ran at most once per 5 s; a quota on a consumable the farm does not have names the policy file.
TEST(CliSimulate, FbsngPolicyOnKthSample) {
  Out out, bad;
  const auto policy = out.dir.string() + "-fbsng.toml";
  std::ofstream(policy) << "[policy]\nscheduler = \"fbsng\"\n[policy.fbsng.queues.\"*\"]\nSPG = 20\n";
  const std::string log = "--format swf --log " + kSrc + "/datasets/samples/kth_sp2_head3000.swf.gz";
  const auto r = run("simulate " + log + " --policy " + policy + " --out " + out.dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto rows = lines((out.dir / "schedule.csv").string());
  std::set<std::string> jobs;
  std::vector<double> starts;
  for (size_t i = 1; i < rows.size(); ++i) {
    jobs.insert(rows[i].substr(0, rows[i].find(',')));
    std::vector<std::string> f;
    std::stringstream ss(rows[i]);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    ASSERT_GE(f.size(), 3u);
    if (!f[2].empty()) starts.push_back(std::stod(f[2]));
  }
  EXPECT_EQ(jobs.size(), 3000u);
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  for (size_t i = 1; i < starts.size(); ++i) ASSERT_GE(starts[i] - starts[i - 1], 5.0) << "cycles 5 s apart at least";
  std::ofstream(policy) << "[policy]\nscheduler = \"fbsng\"\n[policy.fbsng.process_types.x]\nmax = { gpu = 1 }\n";
  const auto e = run("simulate " + log + " --policy " + policy + " --out " + bad.dir.string());
  fs::remove(policy);
  EXPECT_EQ(e.status, 1);
  EXPECT_NE(e.err.find(policy + ": FBSNG process type 'x': quota on 'gpu'"), std::string::npos) << e.err;
  EXPECT_FALSE(fs::exists(bad.dir)) << "no output on a fatal error";
}

// Out of memory is said as such, with the phase and the input's size (issue 28: a bare std::bad_alloc),
// and nothing is written. The address space is capped with `ulimit -v` (60 MB against a 72 MB input);
// skipped under the sanitizers, whose runtime reserves far more address space than that.
TEST(CliHostile, OutOfMemorySaysWhatRanOutWhereAndTheInputSize) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's runtime does not run under ulimit -v";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  GTEST_SKIP() << "a sanitizer's runtime does not run under ulimit -v";
#endif
#endif
  Out farm, out;
  ASSERT_EQ(run("generate --taskers 2000 --jobs 300000 --seed 1 --save " + farm.dir.string()).status, 0);
  const std::string in = "--farm " + (farm.dir / "farm.toml").string() + " --taskers " +
                         (farm.dir / "taskers.jsonl").string() + " --jobs " + (farm.dir / "jobs.jsonl").string();
  const std::string err = (farm.dir / "err").string();
  const int rc = std::system(
      ("ulimit -v 60000; " + kBin + " match " + in + " --out " + out.dir.string() + " >/dev/null 2>" + err).c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 1);
  std::ifstream e(err);
  std::string msg;
  std::getline(e, msg);
  EXPECT_NE(msg.find("colmatch: error: out of memory while loading (inputs 72."), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(out.dir)) << "nothing written";
  // generate has no input: its message names the size asked for (issue 45: "while starting (inputs 0.0 MB)")
  Out big;
  const int rc2 = std::system(("ulimit -v 400000; " + kBin + " generate --taskers 1000000 --jobs 20000000 --save " +
                               big.dir.string() + " >/dev/null 2>" + err)
                                  .c_str());
  ASSERT_TRUE(WIFEXITED(rc2));
  EXPECT_EQ(WEXITSTATUS(rc2), 1);
  std::ifstream e2(err);
  std::getline(e2, msg);
  EXPECT_NE(msg.find("out of memory while generating 1000000 taskers and 20000000 jobs"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(big.dir)) << "nothing written";
}

// An Accelerator farm of `taskers` taskers (-CPUS `cpus`) and `maps` counted maps, job i holding map i,
// matched with its address space capped at `cap_kb` (ulimit -v): the exit status (stderr in the test's
// failure message), and the folder. Skipped (nullopt) under the sanitizers, as above.
struct CappedRun {
  int status;
  std::vector<std::string> categories, results;
};
std::optional<CappedRun> match_held_maps_capped(int taskers, int cpus, int maps, int cap_kb) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return std::nullopt;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return std::nullopt;
#endif
#endif
  Out farm, out;
  fs::create_directories(farm.dir);
  {
    std::ofstream tcl(farm.dir / "t.tcl"), map_file(farm.dir / "r.tcl"), jobs(farm.dir / "j.jsonl");
    for (int i = 0; i < taskers; ++i) tcl << "vtk_tasker_define h" << i << " -CPUS " << cpus << "\n";
    for (int i = 0; i < maps; ++i) {
      map_file << "vtk_resourcemap_set L" << i << " 2\n";
      jobs << "{\"id\": \"" << i << "\", \"resources\": \"L" << i << "\"}\n";
    }
  }
  const std::string in = "--format vov --taskers " + (farm.dir / "t.tcl").string() + " --resources " +
                         (farm.dir / "r.tcl").string() + " --jobs " + (farm.dir / "j.jsonl").string();
  const std::string err = (farm.dir / "err").string();
  const int rc = std::system(("ulimit -v " + std::to_string(cap_kb) + "; " + kBin + " match " + in +
                              " --threads 2 --out " + out.dir.string() + " >/dev/null 2>" + err)
                                 .c_str());
  EXPECT_TRUE(WIFEXITED(rc));
  const CappedRun r{WEXITSTATUS(rc), lines((out.dir / "categories.csv").string()),
                    lines((out.dir / "results.csv").string())};
  EXPECT_EQ(r.status, 0) << slurp_file(err);
  return r;
}

long assigned(const std::vector<std::string>& results) {
  return std::count_if(results.begin(), results.end(),
                       [](const std::string& l) { return l.find(",assigned,") != std::string::npos; });
}

// A category's charges are stored sparsely (ChargeVector): 6,000 counted maps held one each by 6,000
// jobs made 6,000 categories x 6,000 consumables of doubles, 290 MB, and ran out of memory under a
// 150 MB cap; now it needs what the jobs hold (issue 28: 20,000 x 20,000 took 3.2 GB).
TEST(CliHostile, CountedMapsHeldOneByOneCostWhatTheJobsHold) {
  const auto r = match_held_maps_capped(1, 100000, 6000, 150000);
  if (!r) GTEST_SKIP() << "a sanitizer's runtime does not run under ulimit -v";
  EXPECT_EQ(r->categories.size(), 6001u) << "a category a map";
  EXPECT_EQ(assigned(r->results), 6000);
}

// A counted map is a farm-wide pool: it costs nothing per tasker (a Column's levels allocate their values
// on the first one set, and Capacity keeps a tasker-level pool only where some tasker has one). 2,000
// maps held by 2,000 jobs on 20,000 taskers took 16 bytes per map and tasker, 707 MB, and ran out of
// memory under a 200 MB cap; now 48 MB (issue 28).
TEST(CliHostile, CountedMapsCostNothingPerTasker) {
  const auto r = match_held_maps_capped(20000, 4, 2000, 200000);
  if (!r) GTEST_SKIP() << "a sanitizer's runtime does not run under ulimit -v";
  EXPECT_EQ(assigned(r->results), 2000);
}

// A simulation's timeline tracks at most 64 consumables (kTimelineConsumables), the first in catalog
// order, and summary.json says how many it left out: a farm of 20,000 Accelerator maps wrote 40,000
// columns a simulated minute (a day: 116 MB) and copied them all in every cycle (issue 28).
TEST(CliHostile, ATimelineTracksAtMost64Consumables) {
  Out farm, out;
  fs::create_directories(farm.dir);
  {
    std::ofstream(farm.dir / "t.tcl") << "vtk_tasker_define a -CPUS 1000\n";
    std::ofstream maps(farm.dir / "r.tcl"), jobs(farm.dir / "j.jsonl");
    for (int i = 0; i < 100; ++i) {
      maps << "vtk_resourcemap_set L" << i << " 1\n";
      jobs << "{\"id\": \"" << i << "\", \"resources\": \"L" << i << "\", \"runtime\": " << 60 * (i + 1) << "}\n";
    }
  }
  const auto r =
      run("simulate --format vov --taskers " + (farm.dir / "t.tcl").string() + " --resources " +
          (farm.dir / "r.tcl").string() + " --jobs " + (farm.dir / "j.jsonl").string() + " --out " + out.dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto timeline = lines((out.dir / "timeline.csv").string());
  ASSERT_GT(timeline.size(), 90u) << "a row a simulated minute";
  EXPECT_EQ(std::count(timeline[0].begin(), timeline[0].end(), ','), 2 + 2 * 64) << timeline[0].substr(0, 200);
  EXPECT_EQ(timeline[0].find("used_map:L99"), std::string::npos);
  EXPECT_NE(slurp_file(out.dir / "summary.json").find("\"timeline_consumables\": {\"tracked\": 64, \"of\": 102}"),
            std::string::npos);
  EXPECT_EQ(run("report " + out.dir.string()).status, 0);
}

// A figure that does not stay finite (a runtime of 1e308 s: its slot-seconds overflow, their share is
// inf / inf) is written as null, never as nan or inf, which are not JSON (issue 28: report and Python's
// metrics() refused colmatch's own folder). Out's destructor parses the files strictly.
TEST(CliSimulate, FiguresThatOverflowAreNullInTheJson) {
  Out o;
  fs::create_directories(o.dir);
  const std::string jobs = (o.dir / "jobs.jsonl").string();
  {
    std::ifstream in(kSrc + "/datasets/demo/jobs.jsonl");
    std::ofstream out(jobs);
    for (std::string l; std::getline(in, l);) {
      if (l.find("\"id\": \"2\", ") != std::string::npos) l.replace(l.find("\"owner\""), 0, "\"runtime\": 1e308, ");
      out << l << "\n";
    }
  }
  const auto r = run("simulate --farm " + kSrc + "/datasets/demo/farm.toml --taskers " + kSrc +
                     "/datasets/demo/taskers.jsonl --jobs " + jobs + " --out " + (o.dir / "out").string());
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(o.dir / "out" / "metrics.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string m = ss.str();
  EXPECT_NE(m.find("\"busy_slot_seconds\": null"), std::string::npos) << m;
  EXPECT_NE(m.find("\"utilisation\": null"), std::string::npos) << m;
  EXPECT_EQ(m.find("nan"), std::string::npos) << m;
  EXPECT_EQ(m.find("inf"), std::string::npos) << m;
  expect_strict_json(o.dir / "out");
}

// A policy the farm cannot take names the file it came from (SimConfig::source): a farm.toml's own
// [policy], and under explain --simulate as under simulate.
TEST(CliSimulate, APolicyErrorNamesTheFileItCameFrom) {
  Out o;
  fs::create_directories(o.dir);
  const std::string farm = (o.dir / "farm.toml").string();
  {
    std::ifstream in(kSrc + "/datasets/demo/farm.toml");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    const std::string power = "power = \"speed\"";
    text.replace(text.find(power), power.size(),
                 power + "\nscheduler = \"fbsng\"\n[policy.fbsng.process_types.atlas]\nmax = { nosuch = 1 }");
    std::ofstream(farm) << text;
  }
  const std::string in = "--farm " + farm + " --taskers " + kSrc + "/datasets/demo/taskers.jsonl --jobs " + kSrc +
                         "/datasets/demo/jobs.jsonl";
  const std::string want = farm + ": FBSNG process type 'atlas': quota on 'nosuch'";
  const auto s = run("simulate " + in + " --out " + (o.dir / "out").string());
  EXPECT_EQ(s.status, 1);
  EXPECT_NE(s.err.find(want), std::string::npos) << s.err;
  const auto e = run("explain --simulate " + in + " --job 1");
  EXPECT_EQ(e.status, 1);
  EXPECT_NE(e.err.find(want), std::string::npos) << e.err;
}

}  // namespace

namespace {

// An SWF log imported into the native format simulates to the same schedule.
TEST(CliSimulate, ImportedSwfSimulatesTheSame) {
  Out direct, native, saved;
  const std::string log = "--format swf --log " + kSrc + "/datasets/samples/kth_sp2_head3000.swf.gz";
  ASSERT_EQ(run("simulate " + log + " --out " + direct.dir.string()).status, 0);
  ASSERT_EQ(run("import " + log + " --save " + saved.dir.string()).status, 0);
  const auto s = saved.dir.string();
  const auto r = run("simulate --farm " + s + "/farm.toml --taskers " + s + "/taskers.jsonl --jobs " + s +
                     "/jobs.jsonl --out " + native.dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(lines((direct.dir / "schedule.csv").string()), lines((native.dir / "schedule.csv").string()));
}

}  // namespace

namespace {

// Careless command lines (issue 12): every one is a clear error with exit 1, none a crash or a stall.
TEST(CliHostile, UsageErrorsExitOneWithAMessage) {
  Out out;
  const std::string o = " --save " + out.dir.string();
  const std::vector<std::string> cases = {"match --bogus",
                                          "match " + kDemo,
                                          "generate --categories 0" + o,
                                          "generate --taskers -5" + o,
                                          "generate --jobs 0" + o,
                                          "match " + kDemo + " --threads 0 --out " + out.dir.string()};
  for (const std::string& args : cases) {
    const auto r = run(args);
    EXPECT_EQ(r.status, 1) << args << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
  }
  EXPECT_FALSE(fs::exists(out.dir)) << "nothing written";
  EXPECT_EQ(run("match --help").status, 0);
}

TEST(CliHostile, UnknownInstructionSetInTheEnvironmentIsAnError) {
  Out out;
  ::setenv("COLMATCH_ISA", "bogus", 1);  // inherited by the child process
  const auto r = run("match " + kDemo + " --out " + out.dir.string());
  ::unsetenv("COLMATCH_ISA");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("COLMATCH_ISA=bogus: expected scalar, sse2, avx2 or avx512"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out.dir));
}

TEST(CliHostile, AFolderGivenAsAFileIsAnError) {
  Out out;
  const auto folder = fs::temp_directory_path().string();
  const std::vector<std::string> cases = {
      "match --format dirac --resources " + kSrc + "/datasets/demo/dirac/resources.json --jdl " + folder,
      "match --farm " + folder + " --taskers " + kSrc + "/datasets/demo/taskers.jsonl --jobs " + kSrc +
          "/datasets/demo/jobs.jsonl",
      "match --farm " + kSrc + "/datasets/demo/farm.toml --taskers " + folder + " --jobs " + kSrc +
          "/datasets/demo/jobs.jsonl"};
  for (const std::string& args : cases) {
    const auto r = run(args + " --out " + out.dir.string());
    EXPECT_EQ(r.status, 1) << args;
    EXPECT_NE(r.err.find(folder + ": is a folder, not a file"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(out.dir));
}

// Decided: an empty taskers file is a farm with no taskers (every job pending, no eligible tasker); an
// empty jobs file is a run with nothing to place (outputs with their headers only). Both exit 0.
TEST(CliHostile, EmptyInputsAreValidRuns) {
  Out a, b;
  const std::string empty = (fs::temp_directory_path() / ("empty-" + std::to_string(getpid()) + ".jsonl")).string();
  std::ofstream(empty).close();
  const std::string farm = kSrc + "/datasets/demo/farm.toml";
  const auto no_taskers = run("match --farm " + farm + " --taskers " + empty + " --jobs " + kSrc +
                              "/datasets/demo/jobs.jsonl --out " + a.dir.string());
  EXPECT_EQ(no_taskers.status, 0) << no_taskers.err;
  const auto rows = lines((a.dir / "results.csv").string());
  ASSERT_EQ(rows.size(), 9u);
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_NE(rows[i].find(",pending,,0,no eligible tasker"), std::string::npos);
  const auto no_jobs = run("match --farm " + farm + " --taskers " + kSrc + "/datasets/demo/taskers.jsonl --jobs " +
                           empty + " --out " + b.dir.string());
  EXPECT_EQ(no_jobs.status, 0) << no_jobs.err;
  EXPECT_EQ(lines((b.dir / "results.csv").string()), std::vector<std::string>{"job,status,tasker,slots,reason"});
  fs::remove(empty);
}

}  // namespace

namespace {

std::vector<std::string> leftovers(const fs::path& out) {  // private folders left beside `out`
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(out.parent_path()))
    if (e.path().filename().string().rfind("." + out.filename().string() + ".new-", 0) == 0)
      found.push_back(e.path().string());
  return found;
}

// The output set is one transaction (issue 12): a later run replaces the whole set, so a pools.csv of an
// earlier run does not survive one that writes none; nothing private is left behind.
TEST(CliOutputSet, ALaterRunReplacesTheWholeSet) {
  Out out;
  ASSERT_EQ(run("match " + kDemo + " --pools --out " + out.dir.string()).status, 0);
  EXPECT_TRUE(fs::exists(out.dir / "pools.csv"));
  ASSERT_EQ(run("match " + kDemo + " --out " + out.dir.string()).status, 0);
  EXPECT_FALSE(fs::exists(out.dir / "pools.csv")) << "stale file of the previous run";
  EXPECT_TRUE(fs::exists(out.dir / "results.csv"));
  EXPECT_TRUE(leftovers(out.dir).empty());
}

TEST(CliOutputSet, ASecondRunOnTheSameFolderFailsClearly) {
  Out out;
  const fs::path lock = out.dir.parent_path() / ("." + out.dir.filename().string() + ".lock");
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);  // as a run in progress holds it
  const auto r = run("match " + kDemo + " --out " + out.dir.string());
  ::close(fd);
  fs::remove(lock);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("another colmatch run is writing this folder"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out.dir));
}

std::string slurp_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kGoogle = "--format google2011 --machines " + kSrc +
                            "/datasets/samples/google_machine_events.csv.gz" + " --tasks " + kSrc +
                            "/datasets/samples/google_task_events_job_mod25.csv.gz";

// A disk that fills up while the outputs are written: the file size limit (ulimit -f, SIGXFSZ ignored)
// makes every write past 8 blocks fail (EFBIG) as a full disk fails it (ENOSPC), through the same write
// path. Exit 1 naming the file, the previous set left whole, no private folder left behind.
TEST(CliOutputSet, AWriteFailureLeavesThePreviousSetWhole) {
  Out out;
  ASSERT_EQ(run("match " + kDemo + " --out " + out.dir.string()).status, 0);
  std::map<std::string, std::string> before;
  for (const auto& e : fs::directory_iterator(out.dir)) before[e.path().filename()] = slurp_file(e.path());
  const auto err = fs::temp_directory_path() / ("cli-full-" + std::to_string(getpid()));
  const std::string cmd = "sh -c 'trap \"\" XFSZ; ulimit -f 8; exec " + kBin + " match " + kGoogle + " --out " +
                          out.dir.string() + "' >/dev/null 2>" + err.string();
  const int rc = std::system(cmd.c_str());
  const std::string message = slurp_file(err);
  fs::remove(err);
  ASSERT_TRUE(WIFEXITED(rc)) << "killed by a signal: " << message;
  EXPECT_EQ(WEXITSTATUS(rc), 1) << message;
  EXPECT_NE(message.find("results.csv: write failed"), std::string::npos) << message;
  std::map<std::string, std::string> after;
  for (const auto& e : fs::directory_iterator(out.dir)) after[e.path().filename()] = slurp_file(e.path());
  EXPECT_EQ(after, before) << "the previous run's set is untouched";
  EXPECT_TRUE(leftovers(out.dir).empty());
  // the same into a folder that does not exist yet: no folder at all
  Out fresh;
  const int rc2 = std::system(("sh -c 'trap \"\" XFSZ; ulimit -f 8; exec " + kBin + " match " + kGoogle + " --out " +
                               fresh.dir.string() + "' >/dev/null 2>&1")
                                  .c_str());
  EXPECT_EQ(WIFEXITED(rc2) ? WEXITSTATUS(rc2) : -1, 1);
  EXPECT_FALSE(fs::exists(fresh.dir));
  EXPECT_TRUE(leftovers(fresh.dir).empty());
}

// `match` of the Google sample into `out`, sent `sig` after `delay_us`: its wait status (-1: no fork).
// Without a core file (SIGQUIT's default dumps one) and with its output to /dev/null.
int google_match_signalled(const fs::path& out, useconds_t delay_us, int sig) {
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    const struct rlimit no_core { 0, 0 };
    ::setrlimit(RLIMIT_CORE, &no_core);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl(kBin.c_str(), kBin.c_str(), "match", "--format", "google2011", "--machines",
            (kSrc + "/datasets/samples/google_machine_events.csv.gz").c_str(), "--tasks",
            (kSrc + "/datasets/samples/google_task_events_job_mod25.csv.gz").c_str(), "--out", out.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::usleep(delay_us);
  ::kill(pid, sig);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

// SIGTERM (and SIGINT) at any moment of a run: loading, matching or writing. Afterwards the folder
// holds either the previous set or the new one, whole (every job has its row), never a mix, and no
// private folder is left. A whole run is timed first; the signals are then sent at every tenth of that
// time (and finer over its last fifth, where the outputs are written), so they fall in each phase
// whatever the machine's speed or build; whichever phase one hits, the invariant is the same.
TEST(CliOutputSet, ASignalAtAnyMomentLeavesOneWholeSet) {
  Out out;
  ASSERT_EQ(run("match " + kDemo + " --out " + out.dir.string()).status, 0);
  const std::string demo_results = slurp_file(out.dir / "results.csv");
  Out timing;
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(run("match " + kGoogle + " --out " + timing.dir.string()).status, 0);
  const double whole_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  std::vector<double> fractions;
  for (int k = 0; k <= 10; ++k) fractions.push_back(k / 10.0);
  for (int k = 1; k < 10; ++k) fractions.push_back(0.8 + k / 50.0);
  int killed = 0, finished = 0;
  for (const int sig : {SIGTERM, SIGINT})
    for (const double fraction : fractions) {
      const auto delay_us = static_cast<useconds_t>(fraction * whole_us);
      const int status = google_match_signalled(out.dir, delay_us, sig);
      ASSERT_GE(status, 0);
      if (WIFSIGNALED(status)) ++killed;
      else ++finished;
      const std::string at = "signal " + std::to_string(sig) + " after " + std::to_string(delay_us) + " us";
      ASSERT_TRUE(leftovers(out.dir).empty()) << at;
      const std::string results = slurp_file(out.dir / "results.csv");
      if (results == demo_results) continue;  // the previous set, whole
      // else the new one, whole: every task of the sample has its row, and the summary says the same
      std::set<std::string> jobs;
      std::stringstream ss(results);
      std::string line;
      std::getline(ss, line);
      while (std::getline(ss, line)) jobs.insert(line.substr(0, line.find(',')));
      ASSERT_EQ(jobs.size(), 24748u) << at;
      ASSERT_NE(slurp_file(out.dir / "summary.json").find("\"jobs\": 24748"), std::string::npos) << at;
    }
  EXPECT_GT(killed, 0) << "some signals arrived while the run was going";
  std::printf("a whole run: %.0f us; killed %d runs, %d had finished\n", whole_us, killed, finished);
}

// Every catchable signal whose default ends the process cleans up as SIGTERM does (issue 45: SIGHUP,
// SIGQUIT, SIGUSR1, SIGALRM and SIGXFSZ left the private folder behind), sent over the run's second half
// where the outputs are written; a file size limit (ulimit -f) met mid-write is SIGXFSZ itself.
TEST(CliOutputSet, EveryTerminatingSignalLeavesNoPrivateFolder) {
  Out out;
  Out timing;
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(run("match " + kGoogle + " --out " + timing.dir.string()).status, 0);
  const double whole_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  int killed = 0;
  for (const int sig : {SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGXFSZ, SIGPIPE, SIGXCPU, SIGVTALRM, SIGPROF})
    for (const double fraction : {0.5, 0.7, 0.85, 0.95}) {
      const auto delay_us = static_cast<useconds_t>(fraction * whole_us);
      const int status = google_match_signalled(out.dir, delay_us, sig);
      ASSERT_GE(status, 0);
      if (WIFSIGNALED(status)) ++killed;
      ASSERT_TRUE(leftovers(out.dir).empty()) << "signal " << sig << " after " << delay_us << " us";
    }
  EXPECT_GT(killed, 0) << "some signals arrived while the run was going";
  Out limited;
  const int rc = std::system(("sh -c 'ulimit -f 8; exec " + kBin + " match " + kGoogle + " --out " +
                              limited.dir.string() + "' >/dev/null 2>&1")
                                 .c_str());
  EXPECT_TRUE(WIFSIGNALED(rc) || (WIFEXITED(rc) && WEXITSTATUS(rc) != 0)) << rc;
  EXPECT_TRUE(leftovers(limited.dir).empty()) << "SIGXFSZ from ulimit -f";
  EXPECT_FALSE(fs::exists(limited.dir));
}

// A run killed where no handler runs (SIGKILL, a power cut) leaves its private folder: the next run on
// the same output folder, holding its lock, removes it (a link at such a name is unlinked, its target
// untouched; another folder's private folders are not this run's to remove).
TEST(CliOutputSet, TheNextRunRemovesPrivateFoldersOfEndedRuns) {
  Out out;
  const fs::path parent = out.dir.parent_path();
  const std::string name = out.dir.filename().string();
  fs::create_directories(parent / ("." + name + ".new-4242deadbeef"));
  std::ofstream(parent / ("." + name + ".new-4242deadbeef") / "results.csv") << "job,status\n";
  const fs::path victim = out.dir.string() + "-victim";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, parent / ("." + name + ".new-link"));
  fs::create_directories(parent / ("." + name + "-other.new-1"));
  ASSERT_EQ(run("match " + kDemo + " --out " + out.dir.string()).status, 0);
  EXPECT_TRUE(leftovers(out.dir).empty());
  EXPECT_TRUE(fs::exists(victim));
  EXPECT_TRUE(fs::exists(parent / ("." + name + "-other.new-1")));
  fs::remove(victim);
  fs::remove_all(parent / ("." + name + "-other.new-1"));
}

// A killed `colmatch report` leaves its temporaries (.report-<pid>-<random>.<ext>.tmp): a later run
// replaces the folder with them (they were a file colmatch did not write: every later run failed), and a
// link planted at such a name is removed, its target untouched.
TEST(CliOutputSet, AKilledReportsTemporariesDoNotBlockTheNextRun) {
  Out out;
  ASSERT_EQ(run("match " + kDemo + " --out " + out.dir.string()).status, 0);
  std::ofstream(out.dir / ".report-4242-1f2e3d.png.tmp") << "half a figure";
  const fs::path victim = out.dir.string() + "-victim";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, out.dir / ".report-4242-1f2e3d.html.tmp");
  const auto r = run("match " + kDemo + " --out " + out.dir.string());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(fs::symlink_status(out.dir / ".report-4242-1f2e3d.png.tmp")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(out.dir / ".report-4242-1f2e3d.html.tmp")));
  std::ifstream in(victim);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "precious");
  fs::remove(victim);
  std::ofstream(out.dir / ".report.tmp") << "not one of report's names";
  EXPECT_EQ(run("match " + kDemo + " --out " + out.dir.string()).status, 1);
}

// A shared --out (issue 28): the lock beside it is made readable by all, and another user takes it
// read-only (a 0600 lock locked every other user out for ever); one they cannot read is an error saying
// whose it is. Run as root acting as user nobody; skipped where that cannot be done.
TEST(CliOutputSet, AnotherUsersLockIsTakenReadOnly) {
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  if (::geteuid() != 0 || std::system((as_nobody + kBin + " --help >/dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << "needs root and a binary that user nobody may run";
  Out shared;
  fs::create_directories(shared.dir);
  fs::permissions(shared.dir, fs::perms::all);
  ASSERT_EQ(run("match " + kDemo + " --out " + (shared.dir / "a").string()).status, 0);
  EXPECT_EQ(fs::status(shared.dir / ".a.lock").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  fs::remove_all(shared.dir / "a");  // root's lock stays; nobody's run makes the folder anew
  const std::string err = (shared.dir / "err").string();
  auto as_other = [&](const std::string& out) {
    const int rc = std::system(
        (as_nobody + kBin + " match " + kDemo + " --out " + (shared.dir / out).string() + " >/dev/null 2>" + err)
            .c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  EXPECT_EQ(as_other("a"), 0) << slurp_file(err);
  EXPECT_TRUE(fs::exists(shared.dir / "a" / "results.csv"));
  std::ofstream(shared.dir / ".b.lock") << "";
  fs::permissions(shared.dir / ".b.lock", fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(as_other("b"), 1);
  const auto msg = lines(err);
  ASSERT_FALSE(msg.empty());
  EXPECT_NE(msg[0].find("cannot open the lock file: Permission denied (it belongs to user 0 with mode 600"),
            std::string::npos)
      << msg[0];
}

TEST(CliOutputSet, AFolderWithOtherFilesOrSymlinksIsNotReplaced) {
  Out out;
  fs::create_directories(out.dir);
  std::ofstream(out.dir / "notes.txt") << "mine";
  auto r = run("match " + kDemo + " --out " + out.dir.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("holds 'notes.txt', which colmatch did not write"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(out.dir / "notes.txt"));
  EXPECT_TRUE(leftovers(out.dir).empty()) << "the private folder is removed on failure";
  fs::remove(out.dir / "notes.txt");
  // a symlink planted where an output goes is neither followed nor replaced
  const fs::path victim = out.dir.string() + "-victim";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, out.dir / "results.csv");
  r = run("match " + kDemo + " --out " + out.dir.string());
  EXPECT_EQ(r.status, 1);
  std::ifstream in(victim);
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "precious");
  fs::remove(victim);
}

}  // namespace

namespace {

// Issue 10: `--policy` reaches the Accelerator loader in match, simulate and explain: a `$` resource
// defined in [policy.vov.dollars] expands; without the policy the job is rejected naming the resource.
TEST(Cli, AcceleratorPolicyReachesTheLoader) {
  Out out;
  fs::create_directories(out.dir);
  const fs::path policy = out.dir / "p.toml", jobs = out.dir / "j.jsonl";
  std::ofstream(policy) << "[policy]\nbackfill = \"easy\"\n[policy.vov.dollars]\nBIG = \"RAMTOTAL#32000 | diskio\"\n";
  std::ofstream(jobs) << "{\"id\": \"a\", \"resources\": \"$BIG\", \"runtime\": 10}\n";
  const std::string d = kSrc + "/datasets/demo/vov/";
  const std::string in =
      "--format vov --taskers " + d + "taskers.tcl --resources " + d + "resources.tcl --jobs " + jobs.string() + " ";
  ASSERT_EQ(run("match " + in + "--policy " + policy.string() + " --out " + (out.dir / "m").string()).status, 0);
  EXPECT_EQ(lines(out.dir / "m" / "results.csv").at(1), "a,assigned,lnx01,1,");
  ASSERT_EQ(run("simulate " + in + "--policy " + policy.string() + " --out " + (out.dir / "s").string()).status, 0);
  EXPECT_EQ(lines(out.dir / "s" / "schedule.csv").at(1).substr(0, 21), "a,0,0,10,0,lnx01,1,,,");
  EXPECT_NE(run("explain " + in + "--policy " + policy.string() + " --job a")
                .out.find("(RAMTOTAL>=32000 || resources==\"diskio\")"),
            std::string::npos);
  // import takes the policy too (issue 28): the saved farm matches as the Accelerator input does
  ASSERT_EQ(run("import " + in + "--policy " + policy.string() + " --save " + (out.dir / "n").string()).status, 0);
  const std::string native = "--farm " + (out.dir / "n" / "farm.toml").string() + " --taskers " +
                             (out.dir / "n" / "taskers.jsonl").string() + " --jobs " +
                             (out.dir / "n" / "jobs.jsonl").string();
  ASSERT_EQ(run("match " + native + " --out " + (out.dir / "nm").string()).status, 0);
  EXPECT_EQ(lines(out.dir / "nm" / "results.csv").at(1), "a,assigned,lnx01,1,");
  const CliRun without = run("match " + in + "--out " + (out.dir / "w").string());
  EXPECT_EQ(without.status, 2) << "a rejected job";
  EXPECT_NE(without.err.find("no definition of the resource $BIG (define it in the policy's [policy.vov.dollars]"),
            std::string::npos)
      << without.err;
}

// A Grid Engine administrator's two commands (issue 25): the dump's waiting jobs matched against the
// farm as it is (running jobs holding their charges), then the month's accounting replayed; and import.
// A Slurm dump is not imported (issue 45: the native farm placed 137 jobs where the Slurm run placed 57,
// without a word): exit 1 saying why, before loading, nothing written; and an option of another format
// is refused (`--format sge --jobs` read the dump's own queue).
TEST(Cli, ImportRefusesWhatTheNativeFormatCannotHold) {
  Out i;
  const CliRun r = run("import --format slurm --dump " + kSrc + "/datasets/slurm/c100 --save " + i.dir.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("import --format slurm: a native farm cannot hold Slurm's main pass"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(i.dir));
  Out m;
  const CliRun other =
      run("match --format sge --dump " + kSrc + "/datasets/sge/farm80 --taskers /nonexistent --out " + m.dir.string());
  EXPECT_EQ(other.status, 1);
  EXPECT_NE(other.err.find("--taskers: is not an option of --format sge"), std::string::npos) << other.err;
  EXPECT_FALSE(fs::exists(m.dir));
}

TEST(Cli, GridEngineDumpMatchSimulateAndImport) {
  const std::string dump = kSrc + "/datasets/sge/farm80-busy";
  Out m;
  const CliRun r = run("match --format sge --dump " + dump + " --out " + m.dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"jobs\": 19"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("122 running jobs hold their charges"), std::string::npos) << r.err;
  const auto rows = lines((m.dir / "results.csv").string());
  ASSERT_EQ(rows.size(), 20u);  // header and every job (647 is an array: 647.2 and 647.3 wait)
  bool lic = false;
  for (const std::string& row : rows)
    lic = lic || row.find("waiting for lic: 0 of 10 free, 10 needed") != std::string::npos;
  EXPECT_TRUE(lic);
  Out s;
  const CliRun sim = run("simulate --format sge --dump " + kSrc + "/datasets/sge/farm80 --accounting " + kSrc +
                         "/datasets/sge/farm80-accounting.gz --out " + s.dir.string());
  ASSERT_EQ(sim.status, 0) << sim.err;
  EXPECT_NE(sim.out.find("\"started\": 157"), std::string::npos) << sim.out;
  Out i;
  const CliRun imp = run("import --format sge --dump " + dump + " --save " + i.dir.string());
  ASSERT_EQ(imp.status, 0) << imp.err;
  EXPECT_NE(imp.err.find("running jobs hold is not saved"), std::string::npos) << imp.err;
  for (const char* f : {"farm.toml", "hosts.jsonl", "taskers.jsonl", "jobs.jsonl"})
    EXPECT_TRUE(fs::exists(i.dir / f)) << f;
  const CliRun bad = run("match --format sge --dump " + kSrc + "/datasets/sge/nosuch --out " + m.dir.string() + "x");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("not a folder"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(m.dir.string() + "x"));
}

}  // namespace
