#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engine/batch/matcher.hpp"
#include "loaders/errors.hpp"
#include "loaders/native.hpp"
#include "loaders/policy.hpp"
#include "loaders/writers/native_writer.hpp"
#include "tests/reference/naive_matcher.hpp"

using namespace colmatch;
namespace fs = std::filesystem;

namespace {

const std::string kDemo = std::string(COLMATCH_SOURCE_DIR) + "/datasets/demo/";

class TempDir {
 public:
  TempDir()
      : path_(fs::temp_directory_path() /
              ("colmatch-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name, const std::string& content) const {
    const auto p = (path_ / name).string();
    std::ofstream(p) << content;
    return p;
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

loaders::Dataset load_demo(const std::string& jobs = kDemo + "jobs.jsonl") {
  return loaders::load_native({kDemo + "farm.toml", "", kDemo + "taskers.jsonl", jobs});
}

TEST(Native, ReadsTheDemoFarm) {
  const auto ds = load_demo();
  EXPECT_EQ(ds.name, "demo");
  EXPECT_EQ(ds.catalog.size(), 10u);
  EXPECT_EQ(ds.taskers.size(), 4u);
  EXPECT_EQ(ds.jobs.size(), 8u);
  EXPECT_EQ(ds.taskers.names[0], "gpu.q@node04") << "rank order: speed 4.0 first (policy power = speed)";
  const auto mem = *ds.catalog.find("h_vmem");
  EXPECT_EQ(ds.taskers.columns[mem].queue().num(0), 128.0 * 1024 * 1024 * 1024);
  EXPECT_TRUE(ds.jobs.reject_reason.empty());
}

TEST(Native, DemoMatchesAsWorkedOut) {
  const auto ds = load_demo();
  const auto m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  auto where = [&](uint32_t j) {
    return m.dispatch.tasker[j] == kNone ? std::string("-") : ds.taskers.names[m.dispatch.tasker[j]];
  };
  EXPECT_EQ(where(0), "all.q@node01");  // amd64 with ssd: node01 only
  EXPECT_EQ(where(1), "all.q@node01");  // debian12 caseless; 4 slots x 2G
  EXPECT_EQ(where(2), "gpu.q@node04");  // *.gov|*.fr: node03 or node04; node04 has more power
  EXPECT_EQ(where(3), "gpu.q@node04");  // walltime >= 12h and (rhel9 or speed > 3), matlab licence
  EXPECT_EQ(where(4), "all.q@node02");  // host names are caseless
  EXPECT_EQ(m.dispatch.reason[5], PendingReason::NoEligibleTasker);  // 32G per slot: node03 has 16G
  EXPECT_EQ(where(6), "all.q@node01");                               // matlab: node04's only licence is taken by job 4
  EXPECT_EQ(m.dispatch.reason[7], PendingReason::NoEligibleTasker);
}

TEST(Native, WriteThenReadGivesTheSameDataset) {
  const auto ds = load_demo();
  TempDir dir;
  writers::write_farm_toml(dir.path("farm.toml"), ds);
  writers::write_taskers_jsonl(dir.path("taskers.jsonl"), ds);
  writers::write_jobs_jsonl(dir.path("jobs.jsonl"), ds);
  const loaders::Dataset back =
      loaders::load_native({dir.path("farm.toml"), "", dir.path("taskers.jsonl"), dir.path("jobs.jsonl")});
  EXPECT_EQ(back.taskers.names, ds.taskers.names);
  EXPECT_EQ(back.taskers.power, ds.taskers.power);
  for (uint32_t a = 0; a < ds.catalog.size(); ++a) {
    EXPECT_EQ(back.catalog.at(a).name, ds.catalog.at(a).name);
    EXPECT_EQ(back.catalog.at(a).type, ds.catalog.at(a).type);
    EXPECT_EQ(back.catalog.at(a).scope, ds.catalog.at(a).scope);
    EXPECT_EQ(naive::queue_values(back.taskers.columns[a], back.taskers.size()),
              naive::queue_values(ds.taskers.columns[a], ds.taskers.size()));
    EXPECT_EQ(back.taskers.columns[a].queue().present(), ds.taskers.columns[a].queue().present());
  }
  EXPECT_EQ(back.jobs.id, ds.jobs.id);
  EXPECT_EQ(back.jobs.request_text, ds.jobs.request_text);
  EXPECT_EQ(back.jobs.slots, ds.jobs.slots);
  const auto a = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  const auto b = run_match(back.catalog, back.taskers, back.jobs, kernels::active());
  EXPECT_EQ(a.dispatch.tasker, b.dispatch.tasker);
}

void expect_load_error(const std::function<void()>& f, const std::string& file, size_t line, const std::string& field,
                       const std::string& words) {
  try {
    f();
    FAIL() << "no error";
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.file, file) << e.what();
    EXPECT_EQ(e.line, line) << e.what();
    EXPECT_EQ(e.field, field) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(Native, FarmErrorsNameFileLineAndField) {
  TempDir d;
  const auto bad_type = d.file("a.toml", "name = \"x\"\n[[attribute]]\nname = \"arch\"\ntype = \"strnig\"\n");
  expect_load_error([&] { loaders::read_farm_toml(bad_type); }, bad_type, 2, "type", "unknown type");
  const auto bad_rule = d.file("b.toml", "[[attribute]]\nname = \"arch\"\ntype = \"string\"\nrelop = \"<=\"\n");
  expect_load_error([&] { loaders::read_farm_toml(bad_rule); }, bad_rule, 1, "attribute",
                    "allows only the relops == and !=");
  const auto syntax = d.file("c.toml", "[[attribute]]\nname = \n");
  expect_load_error([&] { loaders::read_farm_toml(syntax); }, syntax, 2, "", "");
  expect_load_error([&] { loaders::read_farm_toml(d.path("missing.toml")); }, d.path("missing.toml"), 0, "",
                    "could not be opened");
}

// Which Grid Engine the farm's requests follow (issue 8): real SGE 8.1.9 by default, the seed's 6.0
// design on request; the reading travels with an imported farm (a DIRAC farm keeps literal values).
TEST(Native, GridEngineReadingFromThePolicy) {
  TempDir d;
  const std::string attr = "[[attribute]]\nname = \"arch\"\n";
  EXPECT_EQ(loaders::read_farm_toml(d.file("a.toml", attr)).catalog.reading, GridEngineReading::SoGE819);
  const auto design = d.file("b.toml", "[policy]\ngrid_engine = \"6.0-design\"\n" + attr);
  EXPECT_EQ(loaders::read_farm_toml(design).catalog.reading, GridEngineReading::Design60);
  const auto real = d.file("c.toml", "[policy]\ngrid_engine = \"8.1.9\"\n" + attr);
  EXPECT_EQ(loaders::read_farm_toml(real).catalog.reading, GridEngineReading::SoGE819);
  const auto bad = d.file("e.toml", "[policy]\ngrid_engine = \"6.1\"\n" + attr);
  expect_load_error([&] { loaders::read_farm_toml(bad); }, bad, 2, "policy.grid_engine", "expected \"8.1.9\"");
  // one request, read both ways: the blank and the wildcard
  const auto jobs = d.file("j.jsonl",
                           "{\"id\":\"a\",\"requests\":\"arch==\\\"lx-*\\\"\"}\n"
                           "{\"id\":\"b\",\"requests\":\"arch==\\\"lx amd64\\\"\"}\n");
  const auto taskers = d.file("t.jsonl", "{\"name\":\"q\",\"attrs\":{\"arch\":\"lx-amd64\"}}\n");
  const auto sge = loaders::load_native({d.path("a.toml"), "", taskers, jobs});
  const auto seed = loaders::load_native({design, "", taskers, jobs});
  const auto ms = run_match(sge.catalog, sge.taskers, sge.jobs, kernels::active());
  const auto md = run_match(seed.catalog, seed.taskers, seed.jobs, kernels::active());
  EXPECT_EQ(ms.dispatch.status[0], JobStatus::Assigned) << "8.1.9: lx-* is a pattern on a string attribute";
  EXPECT_EQ(md.dispatch.status[0], JobStatus::Pending) << "6.0 design: a string compares exactly";
  ASSERT_TRUE(sge.jobs.rejected(1)) << "8.1.9: a blank ends the value";
  EXPECT_NE(sge.jobs.reject_reason[sge.jobs.reject[1]].find("a blank ends a Grid Engine value; 'amd64' follows it"),
            std::string::npos)
      << sge.jobs.reject_reason[sge.jobs.reject[1]];
  EXPECT_FALSE(seed.jobs.rejected(1));
  // saved and read back, a 6.0-design farm stays one
  loaders::Dataset copy = loaders::load_native({design, "", taskers, jobs});
  writers::save_native(d.path("saved"), copy);
  EXPECT_EQ(loaders::read_farm_toml(d.path("saved") + "/farm.toml").catalog.reading, GridEngineReading::Design60);
}

TEST(Native, TaskerErrorsNameFileLineAndField) {
  TempDir d;
  const auto ds = loaders::read_farm_toml(kDemo + "farm.toml");
  const auto unknown =
      d.file("t1.jsonl", "{\"name\":\"a\",\"attrs\":{\"arch\":\"x\"}}\n\n{\"name\":\"b\",\"attrs\":{\"gpu\":1}}\n");
  expect_load_error([&] { loaders::read_taskers_jsonl(unknown, ds); }, unknown, 3, "attrs.gpu", "unknown attribute");
  const auto wrong = d.file("t2.jsonl", "{\"name\":\"a\",\"attrs\":{\"h_vmem\":\"lots\"}}\n");
  expect_load_error([&] { loaders::read_taskers_jsonl(wrong, ds); }, wrong, 1, "attrs.h_vmem", "not a memory value");
  const auto malformed = d.file("t3.jsonl", "{\"name\":\"a\",\n");
  expect_load_error([&] { loaders::read_taskers_jsonl(malformed, ds); }, malformed, 1, "", "malformed JSON");
  const auto dup = d.file("t4.jsonl", "{\"name\":\"a\"}\n{\"name\":\"a\"}\n");
  expect_load_error([&] { loaders::read_taskers_jsonl(dup, ds); }, dup, 2, "name", "defined twice");
}

TEST(Native, BadJobRequestsAreRejectedAndTheRunGoesOn) {
  TempDir d;
  const auto jobs = d.file("j.jsonl",
                           "{\"id\":\"ok\",\"requests\":\"arch==lx-amd64\"}\n"
                           "{\"id\":\"bad-attr\",\"requests\":\"gpu==1\"}\n"
                           "{\"id\":\"bad-unit\",\"resources\":{\"h_vmem\":\"4X\"}}\n"
                           "{\"id\":\"bad-relop\",\"requests\":\"arch<x\"}\n");
  const auto ds = load_demo(jobs);
  ASSERT_EQ(ds.jobs.size(), 4u);
  EXPECT_FALSE(ds.jobs.rejected(0));
  for (uint32_t j = 1; j < 4; ++j) ASSERT_TRUE(ds.jobs.rejected(j)) << j;
  const auto& r1 = ds.jobs.reject_reason[ds.jobs.reject[1]];
  EXPECT_NE(r1.find(jobs + ":2: job bad-attr: field 'requests': unknown attribute 'gpu'"), std::string::npos) << r1;
  const auto& r2 = ds.jobs.reject_reason[ds.jobs.reject[2]];
  EXPECT_NE(r2.find(":3: job bad-unit: field 'resources.h_vmem'"), std::string::npos) << r2;
  EXPECT_EQ(ds.jobs.reject_reason.size(), 3u) << "one reason per rejected job, stored once";
  const auto m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  EXPECT_EQ(m.dispatch.status[0], JobStatus::Assigned);
  EXPECT_EQ(m.dispatch.rejected, 3u);
}

// One check per value type, whatever the value was written as (issue 12): a JSON number gets the checks
// the same value as text gets; capacities and requests are never negative or infinite.
TEST(Native, NumbersAreCheckedTheSameAsTextOrJson) {
  TempDir d;
  const auto farm = loaders::read_farm_toml(kDemo + "farm.toml");
  for (const char* bad :
       {"{\"name\":\"a\",\"attrs\":{\"h_vmem\":-5}}", "{\"name\":\"a\",\"attrs\":{\"h_vmem\":\"-5\"}}",
        "{\"name\":\"a\",\"attrs\":{\"h_vmem\":\"1e308T\"}}", "{\"name\":\"a\",\"attrs\":{\"slots\":-1}}",
        "{\"name\":\"a\",\"attrs\":{\"slots\":2.5}}"}) {
    const auto p = d.file("t.jsonl", std::string(bad) + "\n");
    EXPECT_THROW(loaders::read_taskers_jsonl(p, farm), loaders::LoadError) << bad;
  }
  const auto jobs = d.file("j.jsonl",
                           "{\"id\":\"n\",\"resources\":{\"h_vmem\":-5}}\n"
                           "{\"id\":\"t\",\"resources\":{\"h_vmem\":\"-5\"}}\n"
                           "{\"id\":\"ok\",\"resources\":{\"h_vmem\":\"2G\"}}\n");
  const JobTable t = loaders::read_jobs_jsonl(jobs, farm.catalog);
  EXPECT_TRUE(t.rejected(0)) << "as a JSON number";
  EXPECT_TRUE(t.rejected(1)) << "as text";
  EXPECT_FALSE(t.rejected(2));
  const auto inf_default =
      d.file("inf.toml", "[[attribute]]\nname = \"lic\"\ntype = \"double\"\nconsumable = true\ndefault = inf\n");
  EXPECT_THROW(loaders::read_farm_toml(inf_default), loaders::LoadError);
}

// Issue 12: a tasker's string value longer than kMaxStringValue is a load error naming line and field.
TEST(Native, LongStringValuesNameLineAndField) {
  TempDir d;
  const auto farm = loaders::read_farm_toml(kDemo + "farm.toml");
  const auto p = d.file("long.jsonl",
                        "{\"name\":\"ok\",\"attrs\":{\"arch\":\"lx-amd64\"}}\n{\"name\":\"a\",\"attrs\":{\"arch\":\"" +
                            std::string(kMaxStringValue + 1, 'x') + "\"}}\n");
  expect_load_error([&] { loaders::read_taskers_jsonl(p, farm); }, p, 2, "attrs.arch", "at most 65536 are accepted");
}

TEST(Native, JobFileErrorsAreFatal) {
  TempDir d;
  const auto farm = loaders::read_farm_toml(kDemo + "farm.toml");
  const auto& ds = farm.catalog;
  const auto noid = d.file("j1.jsonl", "{\"id\":\"a\"}\n{\"owner\":\"x\"}\n");
  expect_load_error([&] { loaders::read_jobs_jsonl(noid, ds); }, noid, 2, "id", "needs an id");
  const auto dup = d.file("j2.jsonl", "{\"id\":\"a\"}\n{\"id\":\"a\"}\n");
  expect_load_error([&] { loaders::read_jobs_jsonl(dup, ds); }, dup, 2, "id", "duplicate job id 'a' (first on line 1)");
  const auto slots = d.file("j3.jsonl", "{\"id\":\"a\",\"slots\":0}\n");
  expect_load_error([&] { loaders::read_jobs_jsonl(slots, ds); }, slots, 1, "slots", "whole number");
  const auto typo = d.file("j4.jsonl", "{\"id\":\"a\",\"request\":\"x\"}\n");
  expect_load_error([&] { loaders::read_jobs_jsonl(typo, ds); }, typo, 1, "request", "unknown key");
}

}  // namespace

namespace {

const char* kLevelsFarm = R"(name = "levels"
[global]
lic = 2
cores = 64
[global.load]
mem_free = "100G"

[[attribute]]
name = "arch"
[[attribute]]
name = "cores"
type = "int"
relop = "<="
[[attribute]]
name = "mem_free"
type = "memory"
relop = "<="
[[attribute]]
name = "lic"
type = "int"
consumable = true
per = "job"
)";

TEST(NativeLevels, GlobalHostsAndLoadValuesRoundTrip) {
  TempDir d;
  const auto farm = loaders::read_farm_toml(d.file("farm.toml", kLevelsFarm));
  loaders::Dataset ds;
  ds.catalog = farm.catalog;
  ds.name = farm.name;
  const auto hosts = d.file(
      "hosts.jsonl",
      "{\"name\":\"h1\",\"attrs\":{\"arch\":\"lx-amd64\",\"mem_free\":\"1G\"},\"load\":{\"mem_free\":\"0.5G\"}}\n"
      "{\"name\":\"h2\",\"load\":{\"arch\":\"lx-arm64\",\"cores\":16}}\n");
  const auto taskers = d.file("taskers.jsonl",
                              "{\"name\":\"q@h1\",\"host\":\"h1\",\"attrs\":{\"cores\":8}}\n"
                              "{\"name\":\"q@h2\",\"host\":\"h2\"}\n"
                              "{\"name\":\"q@h3\",\"host\":\"h3\"}\n");
  ds.taskers = loaders::read_taskers_jsonl(taskers, farm, hosts);
  const TaskerTable& t = ds.taskers;
  ASSERT_EQ(t.host_names, (std::vector<std::string>{"h1", "h2", "h3"}));
  const Column& mem = t.columns[*ds.catalog.find("mem_free")];
  EXPECT_EQ(mem.by_host().num(0), 0.5 * 1024 * 1024 * 1024) << "fixed 1G with load 0.5G: the smaller";
  EXPECT_TRUE(mem.global().present);
  EXPECT_EQ(t.columns[*ds.catalog.find("lic")].global().num, 2);
  // round trip through the writers
  writers::write_farm_toml(d.path("farm2.toml"), ds);
  writers::write_taskers_jsonl(d.path("taskers2.jsonl"), ds);
  ASSERT_TRUE(writers::write_hosts_jsonl(d.path("hosts2.jsonl"), ds));
  loaders::Dataset back;
  back.taskers = loaders::read_taskers_jsonl(d.path("taskers2.jsonl"), loaders::read_farm_toml(d.path("farm2.toml")),
                                             d.path("hosts2.jsonl"));
  for (uint32_t a = 0; a < ds.catalog.size(); ++a) {
    EXPECT_EQ(back.taskers.columns[a].by_host().nums(), t.columns[a].by_host().nums()) << a;
    EXPECT_EQ(back.taskers.columns[a].by_host().present(), t.columns[a].by_host().present()) << a;
    EXPECT_EQ(back.taskers.columns[a].global().present, t.columns[a].global().present) << a;
    EXPECT_EQ(back.taskers.columns[a].global().num, t.columns[a].global().num) << a;
  }
  EXPECT_EQ(back.taskers.host_of, t.host_of);
}

// Grid Engine 6.0's override rule (the seed's reading): a forbidden override is an error naming both
// levels, and the file of the lower value (hosts.jsonl for a host's); Son of Grid Engine 8.1.9 accepts
// it with one warning per attribute and checks every level (issue 8, class 9).
TEST(NativeLevels, ForbiddenOverrideIsAnErrorNamingTheLevels) {
  TempDir d;
  const std::string levels = kLevelsFarm;  // its first line is the name, then [global]
  const size_t eol = levels.find('\n') + 1;
  const std::string design = levels.substr(0, eol) + "[policy]\ngrid_engine = \"6.0-design\"\n" + levels.substr(eol);
  const auto ds = loaders::read_farm_toml(d.file("farm.toml", design));
  const auto hosts = d.file("hosts.jsonl", "{\"name\":\"h1\",\"load\":{\"arch\":\"lx-amd64\"}}\n");
  const auto taskers =
      d.file("taskers.jsonl", "{\"name\":\"q@h1\",\"host\":\"h1\",\"attrs\":{\"arch\":\"lx-arm64\"}}\n");
  try {
    loaders::read_taskers_jsonl(taskers, ds, hosts);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.file, taskers);
    EXPECT_NE(
        std::string(e.what()).find("attribute 'arch' (relop ==): tasker 'q@h1' (lx-arm64) overrides host 'h1' (load)"),
        std::string::npos)
        << e.what();
  }
  // a host's value over the global one: the error names hosts.jsonl, where the value is
  const auto big_host = d.file("hosts2.jsonl", "{\"name\":\"h1\",\"attrs\":{\"cores\":128}}\n");
  const auto plain = d.file("taskers2.jsonl", "{\"name\":\"q@h1\",\"host\":\"h1\"}\n");
  try {
    loaders::read_taskers_jsonl(plain, ds, big_host);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.file, big_host) << e.what();
    EXPECT_NE(std::string(e.what()).find("host 'h1' (128) overrides the global value (64)"), std::string::npos)
        << e.what();
  }
  const auto wide = d.file("t2.jsonl", "{\"name\":\"q\",\"attrs\":{\"cores\":128}}\n");
  EXPECT_THROW(loaders::read_taskers_jsonl(wide, ds), loaders::LoadError) << "128 cores under a global 64";
  // Son of Grid Engine 8.1.9 (the default): accepted, one warning per attribute, every level checked
  const auto sge = loaders::read_farm_toml(d.file("farm819.toml", kLevelsFarm));
  const TaskerTable t = loaders::read_taskers_jsonl(taskers, sge, hosts);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(t.warnings[0].find("Grid Engine 8.1.9 accepts it"), std::string::npos) << t.warnings[0];
  const TaskerTable w = loaders::read_taskers_jsonl(wide, sge);
  ASSERT_EQ(w.warnings.size(), 1u);
  JobBuilder jb(sge.catalog);
  jb.add("j", "u", "g", 0, 0);
  jb.set_request("cores>=100");
  const JobTable jobs = std::move(jb).build();
  const auto m = run_match(sge.catalog, w, jobs, kernels::active());
  EXPECT_EQ(m.dispatch.status[0], JobStatus::Pending) << "the global 64 is checked too";
  const auto bad_global = d.file("farm3.toml", "[global]\nnosuch = 1\n[[attribute]]\nname = \"arch\"\n");
  try {
    loaders::read_farm_toml(bad_global);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 2u);
    EXPECT_EQ(e.field, "global.nosuch");
  }
}

}  // namespace

namespace {

TEST(Native, SoftRequestsAreReadAndBadOnesRejected) {
  TempDir d;
  const auto jobs = d.file("soft.jsonl",
                           "{\"id\":\"s\",\"soft\":\"ssd==true && arch==lx-arm64\"}\n"
                           "{\"id\":\"bad\",\"soft\":\"nosuch==1\"}\n");
  const auto ds = load_demo(jobs);
  ASSERT_FALSE(ds.jobs.rejected(0));
  EXPECT_EQ(ds.jobs.request_text[ds.jobs.soft[0]], "arch==\"lx-arm64\" && ssd==1");
  ASSERT_TRUE(ds.jobs.rejected(1));
  EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[1]].find("field 'soft': unknown attribute 'nosuch'"),
            std::string::npos);
  const auto m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  EXPECT_EQ(ds.taskers.names[m.dispatch.tasker[0]], "short.q@node03") << "the only tasker violating neither";
}

// Moab credentials of simulate: class (queue), account and QoS are read, written back and read again;
// the [policy] table gives credential priorities and QoS throttles, and names file, line and key when
// one is wrong.
TEST(Native, CredentialsAndCredentialPolicyRoundTrip) {
  TempDir dir;
  const auto jobs =
      dir.file("jobs.jsonl",
               "{\"id\":\"a\",\"owner\":\"u\",\"queue\":\"short\",\"account\":\"proj\",\"qos\":\"high\"}\n"
               "{\"id\":\"b\",\"owner\":\"u\"}\n");
  const auto ds = loaders::load_native({kDemo + "farm.toml", "", kDemo + "taskers.jsonl", jobs});
  ASSERT_EQ(ds.jobs.size(), 2u);
  EXPECT_EQ(ds.jobs.qos_names.value(ds.jobs.qos[0]), "high");
  EXPECT_EQ(ds.jobs.qos_names.value(ds.jobs.qos[1]), "");
  EXPECT_EQ(ds.jobs.accounts.value(ds.jobs.account[0]), "proj");
  writers::write_jobs_jsonl(dir.path("back.jsonl"), ds);
  const auto back = loaders::load_native({kDemo + "farm.toml", "", kDemo + "taskers.jsonl", dir.path("back.jsonl")});
  EXPECT_EQ(back.jobs.qos_names.value(back.jobs.qos[0]), "high");
  EXPECT_EQ(back.jobs.queues.value(back.jobs.queue[0]), "short");

  const auto policy = dir.file("policy.toml",
                               "[policy]\n"
                               "[policy.credential_priority]\n"
                               "qos = { high = 1000, low = -5 }\n"
                               "user = { alice = 10 }\n"
                               "[[policy.throttle]]\n"
                               "credential = \"qos\"\n"
                               "name = \"low\"\n"
                               "max_jobs = 2\n");
  const SimConfig p = loaders::read_policy_toml(policy);
  ASSERT_EQ(p.credential_priorities.size(), 3u);
  size_t qos = 0;
  for (const auto& cp : p.credential_priorities)
    if (cp.kind == CredentialKind::QoS) qos += cp.name == "high" ? cp.priority == 1000 : cp.priority == -5;
  EXPECT_EQ(qos, 2u);
  ASSERT_EQ(p.throttles.size(), 1u);
  EXPECT_EQ(p.throttles[0].kind, CredentialKind::QoS);
  EXPECT_EQ(p.throttles[0].max_jobs, 2u);
  const auto bad = dir.file("bad.toml", "[policy.credential_priority]\nproject = { x = 1 }\n");
  expect_load_error([&] { loaders::read_policy_toml(bad); }, bad, 2, "policy.credential_priority.project",
                    "unknown credential kind");
  const auto bad_value = dir.file("bad2.toml", "[policy.credential_priority]\nqos = { high = \"lots\" }\n");
  expect_load_error([&] { loaders::read_policy_toml(bad_value); }, bad_value, 2, "policy.credential_priority.qos.high",
                    "expected a finite number");
}

// Compression of the book (issue 47): off by default, `compression = true` turns it on, anything but a
// boolean is refused naming file, line and key.
TEST(Native, PolicyCompressionIsABoolean) {
  TempDir dir;
  EXPECT_FALSE(loaders::read_policy_toml(dir.file("off.toml", "[policy]\nbackfill = \"conservative\"\n")).compression);
  EXPECT_TRUE(
      loaders::read_policy_toml(dir.file("on.toml", "[policy]\nbackfill = \"conservative\"\ncompression = true\n"))
          .compression);
  const auto bad = dir.file("bad.toml", "[policy]\nbackfill = \"conservative\"\ncompression = \"yes\"\n");
  expect_load_error([&] { loaders::read_policy_toml(bad); }, bad, 3, "policy.compression", "expected true or false");
}

// fuzz_policy found it (issue 28, every number read is what it says): a float where a whole number is
// read (`reservation_depth = 1e20`, an Accelerator map's `count = 1e20`) was converted by toml++ to an
// integer out of range, undefined behaviour; each is refused naming file, line and key, and a farm's
// [global] float keeps its value.
TEST(Native, AFloatWhereAWholeNumberIsReadIsRefused) {
  TempDir dir;
  for (const char* v : {"1e20", "2.0", "-1e300", "4.5"}) {
    const auto policy =
        dir.file("depth.toml", fmt::format("[policy]\nbackfill = \"easy\"\nreservation_depth = {}\n", v));
    expect_load_error([&] { loaders::read_policy_toml(policy); }, policy, 3, "policy.reservation_depth",
                      "expected a whole number");
  }
  const auto farm =
      dir.file("farm.toml", "name = \"x\"\n[accelerator]\n[[accelerator.map]]\nname = \"L\"\ncount = 1e20\n");
  const auto taskers = dir.file("taskers.jsonl", "{\"name\": \"a\"}\n");
  const auto jobs = dir.file("jobs.jsonl", "{\"id\": \"1\"}\n");
  expect_load_error(
      [&] {
        loaders::load_native({farm, "", taskers, jobs});
      },
      farm, 5, "accelerator.map.count", "expected a whole count");
}

}  // namespace

// Moab's utilized availability (issue 7): a job's "utilization" (the fraction of each charge it uses)
// and a tasker's "utilized" amounts (used there by other than jobs) are read, written back the same,
// and bad values are named: a fraction outside [0, 1] rejects the job; a non-consumable or a negative
// amount on a tasker is an error naming line and field. resource_availability takes the three values.
TEST(Native, UtilizationAndUtilizedRoundTrip) {
  TempDir dir;
  const auto taskers =
      dir.file("taskers.jsonl",
               "{\"name\":\"q@a\",\"attrs\":{\"slots\":8,\"h_vmem\":\"16G\"}}\n"
               "{\"name\":\"q@b\",\"attrs\":{\"slots\":4},\"utilized\":{\"slots\":1,\"h_vmem\":\"2G\"}}\n");
  const auto jobs = dir.file("jobs.jsonl",
                             "{\"id\":\"a\",\"utilization\":{\"slots\":0.25}}\n"
                             "{\"id\":\"b\",\"utilization\":{\"slots\":1.5}}\n"
                             "{\"id\":\"c\",\"utilization\":{\"arch\":0.5}}\n"
                             "{\"id\":\"d\"}\n");
  const auto ds = loaders::load_native({kDemo + "farm.toml", "", taskers, jobs});
  const uint32_t slots = static_cast<uint32_t>(ds.catalog.consumable_slot(*ds.catalog.find("slots")));
  const uint32_t mem = static_cast<uint32_t>(ds.catalog.consumable_slot(*ds.catalog.find("h_vmem")));
  EXPECT_EQ(ds.jobs.utilization.at(slots, 0), 0.25);
  EXPECT_TRUE(ds.jobs.rejected(1));
  EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[1]].find("utilization.slots"), std::string::npos);
  EXPECT_TRUE(ds.jobs.rejected(2)) << "arch is not a consumable";
  EXPECT_TRUE(std::isnan(ds.jobs.utilization.at(slots, 3)));
  ASSERT_EQ(ds.farm.load.size(), ds.catalog.consumables().size());
  const uint32_t b = ds.taskers.names[0] == "q@b" ? 0 : 1;
  EXPECT_EQ(ds.farm.load[slots][b], 1.0);
  EXPECT_EQ(ds.farm.load[slots][1 - b], 0.0);
  EXPECT_EQ(ds.farm.load[mem][b], 2.0 * 1024 * 1024 * 1024);
  writers::save_native(dir.path("out"), ds);
  const auto back =
      loaders::load_native({dir.path("out/farm.toml"), "", dir.path("out/taskers.jsonl"), dir.path("out/jobs.jsonl")});
  EXPECT_EQ(back.farm.load, ds.farm.load);
  EXPECT_EQ(back.jobs.utilization.at(slots, 0), 0.25);

  const auto bad = dir.file("bad.jsonl",
                            "{\"name\":\"q@a\",\"attrs\":{\"slots\":8}}\n"
                            "{\"name\":\"q@b\",\"utilized\":{\"arch\":1}}\n");
  expect_load_error(
      [&] {
        loaders::load_native({kDemo + "farm.toml", "", bad, jobs});
      },
      bad, 2, "utilized.arch", "not a consumable");
  const auto neg = dir.file("neg.jsonl", "{\"name\":\"q@a\",\"utilized\":{\"slots\":-1}}\n");
  expect_load_error(
      [&] {
        loaders::load_native({kDemo + "farm.toml", "", neg, jobs});
      },
      neg, 1, "utilized.slots", "negative");
  for (const char* v : {"dedicated", "utilized", "combined"}) {
    const auto p = dir.file(std::string(v) + ".toml", fmt::format("[policy]\nresource_availability = \"{}\"\n", v));
    const SimConfig pol = loaders::read_policy_toml(p);
    EXPECT_EQ(pol.availability, std::string(v) == "dedicated"  ? ResourceAvailability::Dedicated
                                : std::string(v) == "utilized" ? ResourceAvailability::Utilized
                                                               : ResourceAvailability::Combined);
  }
  const auto wrong = dir.file("wrong.toml", "[policy]\nresource_availability = \"measured\"\n");
  expect_load_error([&] { loaders::read_policy_toml(wrong); }, wrong, 2, "policy.resource_availability",
                    "dedicated, utilized or combined");
}

// JobIds (loaders/errors.hpp), the duplicate-id check of every loader: 200,000 ids (the table grows
// eight times), ids that are prefixes of one another and the empty id are all distinct; a repeat of any
// of them, early or late, names its line and the line of the first.
TEST(JobIds, FindsEveryRepeatAmongManyIds) {
  loaders::JobIds ids;
  ids.add("f", 1, "id", "");
  for (size_t i = 0; i < 200000; ++i) ids.add("f", i + 2, "id", fmt::format("{}", i));
  for (const char* p : {"a", "aa", "aaa", "a\na"}) ids.add("f", 300000, "id", p);
  for (const auto& [id, first] : std::vector<std::pair<std::string, size_t>>{
           {"0", 2}, {"199999", 200001}, {"", 1}, {"aa", 300000}, {"12345", 12347}}) {
    try {
      ids.add("f", 400000, "id", id);
      ADD_FAILURE() << "no error for '" << id << "'";
    } catch (const loaders::LoadError& e) {
      EXPECT_EQ(e.line, 400000u);
      EXPECT_NE(std::string(e.what()).find(fmt::format("(first on line {})", first)), std::string::npos) << e.what();
    }
  }
  ids.add("f", 400001, "id", "200000");  // new
}
