// `--format sge` (issue 25): qconf's text, qstat's XML and the accounting file with Grid Engine's meaning.
// Farms dumped from the real qmaster are in datasets/sge (README there); small hand-written pieces test
// what those dumps do not show and what must be refused.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "engine/batch/matcher.hpp"
#include "engine/schedule/simulation.hpp"
#include "loaders/errors.hpp"
#include "loaders/native.hpp"
#include "loaders/sge.hpp"
#include "loaders/sge_accounting.hpp"
#include "loaders/sge_conf.hpp"
#include "loaders/writers/native_writer.hpp"

using namespace colmatch;
namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(COLMATCH_SOURCE_DIR) + "/datasets/sge/";

// A folder of files that goes away with the test.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("colmatch-sge-" + std::to_string(::getpid()) + "-" +
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
  // farm80's dump with some files replaced
  std::string farm80_with(const std::map<std::string, std::string>& files) const {
    for (const auto& e : fs::directory_iterator(kData + "farm80"))
      fs::copy(e.path(), path / e.path().filename(), fs::copy_options::overwrite_existing);
    for (const auto& [name, text] : files) write(name, text);
    return path.string();
  }
};

uint32_t tasker(const loaders::Dataset& ds, const std::string& name) {
  for (uint32_t t = 0; t < ds.taskers.size(); ++t)
    if (ds.taskers.names[t] == name) return t;
  return kNone;
}

// The value of attribute `name` that tasker `t` sees on the given level.
double num(const loaders::Dataset& ds, const std::string& name, uint32_t t, char level) {
  const Column& c = ds.taskers.columns[*ds.catalog.find(name)];
  if (level == 'q') return c.has(t) ? c.queue().num(t) : NAN;
  if (level == 'h') return c.by_host().has(ds.taskers.host_of[t]) ? c.by_host().num(ds.taskers.host_of[t]) : NAN;
  return c.global().present ? c.global().num : NAN;
}

std::string str(const loaders::Dataset& ds, const std::string& name, uint32_t t, char level) {
  const Column& c = ds.taskers.columns[*ds.catalog.find(name)];
  if (level == 'q') return c.has(t) ? std::string(c.dict.value(c.queue().id(t))) : "-";
  const uint32_t h = ds.taskers.host_of[t];
  return c.by_host().has(h) ? std::string(c.dict.value(c.by_host().id(h))) : "-";
}

// ---- qconf's text ----

TEST(SgeConf, ContinuationLinesAndRecordsOneAfterAnother) {
  TempDir d;
  const std::string p = d.write("se.txt",
                                "hostname a\ncomplex_values x=1,y=2, \\\n                      z=3\nload_values NONE\n"
                                "hostname b\ncomplex_values NONE\n");
  const auto recs = loaders::sge::read_records(p, "hostname");
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].value("complex_values"), "x=1,y=2, z=3");
  EXPECT_EQ(recs[0].find("complex_values")->line, 2u);
  const std::string field = "complex_values";
  const auto vals = loaders::sge::split_values(recs[0].value("complex_values"), {p, 2, field});
  ASSERT_EQ(vals.size(), 3u);
  EXPECT_EQ(vals[2], (std::pair<std::string, std::string>{"z", "3"}));
  EXPECT_TRUE(loaders::sge::split_values("NONE", {p, 1, field}).empty());
  EXPECT_EQ(recs[1].line, 5u);
}

TEST(SgeConf, PerHostOverridesKeepTheirCommas) {
  const std::string p = "q.txt", field = "complex_values";
  const auto o = loaders::sge::split_overrides("NONE,[h1=a=1,b=2],[@g=c=3]", {p, 7, field});
  EXPECT_EQ(o.fallback, "NONE");
  ASSERT_EQ(o.specific.size(), 2u);
  EXPECT_EQ(o.specific[0], (std::pair<std::string, std::string>{"h1", "a=1,b=2"}));
  EXPECT_EQ(o.specific[1].first, "@g");
  for (const char* bad : {"1,[h1=2", "1,[h1]", "1,[h1=2],[h1=3]", "[h1=2]", "1,[h1=2]x"}) {
    SCOPED_TRACE(bad);
    try {
      loaders::sge::split_overrides(bad, {p, 7, field});
      FAIL() << "accepted";
    } catch (const loaders::LoadError& e) {
      EXPECT_EQ(e.line, 7u);
      EXPECT_EQ(e.field, "complex_values");
    }
  }
}

TEST(SgeConf, MalformedFilesNameFileLineAndField) {
  TempDir d;
  auto error_of = [&](const std::string& text, const char* first) {
    try {
      loaders::sge::read_records(d.write("x.txt", text), first);
    } catch (const loaders::LoadError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(error_of("slots 4\n", "qname").find("x.txt:1: field 'slots': a record starts with 'qname'"),
            std::string::npos);
  EXPECT_NE(error_of("qname a\nslots\n", "qname").find(":2: field 'slots': no value"), std::string::npos);
  EXPECT_NE(error_of("qname a\nslots 1\nslots 2\n", "qname").find(":3: field 'slots': given twice"), std::string::npos);
  EXPECT_NE(error_of("qname a\nslots 1 \\\n", "qname").find("cut short"), std::string::npos);
  try {
    loaders::sge::read_complexes(d.write("sc.txt", "#name shortcut\nmem m MEMORY <= YES\n"));
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 2u);
    EXPECT_EQ(e.field, "consumable");
  }
}

// ---- the farm ----

// farm80 as bench/peers/sge_farms.sh built it, level by level, against what the dump loads to.
TEST(SgeFarm80, ImportedFarmIsTheFarmTheOracleBuilt) {
  const loaders::Dataset ds = loaders::load_sge(kData + "farm80", "");
  // 80 all.q + 40 short.q (less the disabled short.q@h0003) + 8 gpu.q + 40 even.q; inter.q is INTERACTIVE
  EXPECT_EQ(ds.taskers.size(), 80u + 39u + 8u + 40u);
  EXPECT_EQ(tasker(ds, "short.q@h0003"), kNone);
  EXPECT_EQ(tasker(ds, "inter.q@h0010"), kNone);
  EXPECT_EQ(ds.catalog.reading, GridEngineReading::SoGE819);
  const std::string oses[] = {"rhel8", "rhel9", "ubuntu22"}, oscs[] = {"redhat", "ubuntu"};
  const double cores[] = {8, 16, 32, 64};
  const double G = 1024.0 * 1024 * 1024;
  for (int i = 1; i <= 80; ++i) {
    const std::string h = fmt::format("h{:04d}", i);
    SCOPED_TRACE(h);
    const uint32_t t = tasker(ds, "all.q@" + h);
    ASSERT_NE(t, kNone);
    // host level (complex_values of qconf -se)
    EXPECT_EQ(str(ds, "arch_s", t, 'h'), i > 60 ? "aarch64" : "x86_64");
    EXPECT_EQ(str(ds, "osc", t, 'h'), oscs[i % 2]);  // CSTRING: folded
    EXPECT_EQ(str(ds, "os", t, 'h'), oses[i % 3]);
    EXPECT_EQ(str(ds, "hostname", t, 'h'), h);
    EXPECT_EQ(str(ds, "rack", t, 'h'), fmt::format("rack{}", (i - 1) / 20 + 1));
    EXPECT_EQ(num(ds, "cores", t, 'h'), cores[i % 4]);
    EXPECT_EQ(num(ds, "scratch", t, 'h'), 100 * (1 + i % 3) * G);
    EXPECT_EQ(num(ds, "mem_c", t, 'h'), 64 * (1 + i % 2) * G);
    EXPECT_DOUBLE_EQ(num(ds, "speed", t, 'h'), 1.0 + (i % 10) / 10.0);
    EXPECT_EQ(num(ds, "fast", t, 'h'), i % 5 == 0 ? 1 : 0);
    // global level
    EXPECT_EQ(num(ds, "lic", t, 'g'), 10);
    // queue level: all.q's slots per group and host, tmo per group and host, INFINITY limits
    EXPECT_EQ(str(ds, "qname", t, 'q'), "all.q");
    EXPECT_EQ(num(ds, "slots", t, 'q'), i == 1 ? 2 : i > 60 ? 16 : 8);
    const double tmo = i == 5 ? 7200 : (i > 20 && i <= 40) ? 3600 : NAN;
    if (std::isnan(tmo)) {
      EXPECT_TRUE(std::isnan(num(ds, "tmo", t, 'q')));
    } else {
      EXPECT_EQ(num(ds, "tmo", t, 'q'), tmo);
    }
    EXPECT_EQ(num(ds, "h_rt", t, 'q'), std::numeric_limits<double>::max());
    EXPECT_EQ(num(ds, "seq_no", t, 'q'), 10);
    if (i <= 40 && i != 3) {  // short.q on @rack1 @rack2
      const uint32_t s = tasker(ds, "short.q@" + h);
      ASSERT_NE(s, kNone);
      EXPECT_EQ(num(ds, "slots", s, 'q'), 4);
      EXPECT_EQ(num(ds, "h_rt", s, 'q'), 3600);
      EXPECT_EQ(num(ds, "s_rt", s, 'q'), 3000);
      EXPECT_EQ(num(ds, "h_vmem", s, 'q'), (i > 20 ? 16 : 8) * G);
    }
    const bool gpu = i == 61 || i == 62 || i >= 75;  // @gpu holds @gpuextra
    const uint32_t g = tasker(ds, "gpu.q@" + h);
    ASSERT_EQ(g != kNone, gpu);
    if (gpu) {
      EXPECT_EQ(num(ds, "gpu", g, 'q'), i == 80 ? 4 : 2);
    }
    EXPECT_EQ(tasker(ds, "even.q@" + h) != kNone, i % 2 == 0);
  }
  // rank: lower seq_no first (gpu.q 1, short.q 5, all.q 10, even.q 30)
  EXPECT_EQ(ds.taskers.names[0].substr(0, 6), "gpu.q@");
  EXPECT_EQ(ds.taskers.names.back().substr(0, 7), "even.q@");
  // what is not represented is said, not guessed
  bool said_state = false, said_qtype = false;
  for (const std::string& w : ds.taskers.warnings) {
    said_state = said_state || w.find("1 queue instances left out: disabled") != std::string::npos;
    said_qtype = said_qtype || w.find("2 queue instances left out: their qtype has no BATCH") != std::string::npos;
  }
  EXPECT_TRUE(said_state);
  EXPECT_TRUE(said_qtype);
  // the scheduler's queue order: by seq_no and the hosts' load_formula (issue 43; checked against the
  // qmaster in tests/loaders/test_sge_priority.cpp). The oracle's hosts report no load: every host's
  // np_load_avg is missing (Grid Engine's 9999 for all), so seq_no alone orders them under either method.
  TempDir d;
  const std::string ssconf =
      "algorithm default\nschedule_interval 0:0:15\nqueue_sort_method {}\nload_formula np_load_avg\n";
  for (const char* method : {"seqno", "load"}) {
    const loaders::Dataset s =
        loaders::load_sge(d.farm80_with({{"qconf-ssconf.txt", fmt::format(fmt::runtime(ssconf), method)}}), "");
    EXPECT_EQ(s.taskers.names, ds.taskers.names) << method;
  }
  EXPECT_THROW(
      loaders::load_sge(d.farm80_with({{"qconf-ssconf.txt", fmt::format(fmt::runtime(ssconf), "random")}}), ""),
      loaders::LoadError);
}

// Where the administrator has `qhost -F -xml` rather than `qconf -se` for each host, the hosts come from
// it: the same farm on every level (farm80's qhost-F.xml, taken from the qmaster with no job running).
TEST(SgeFarm80, HostsFromQhostAreTheHostsOfQconf) {
  TempDir d;
  for (const auto& e : fs::directory_iterator(kData + "farm80"))
    if (e.path().filename() != "qconf-se.txt") fs::copy(e.path(), d.path / e.path().filename());
  const loaders::Dataset a = loaders::load_sge(kData + "farm80", "");
  const loaders::Dataset b = loaders::load_sge(d.path.string(), "");
  ASSERT_EQ(a.taskers.names, b.taskers.names);
  ASSERT_EQ(a.catalog.size(), b.catalog.size());
  size_t compared = 0;
  for (uint32_t attr = 0; attr < a.catalog.size(); ++attr) {
    const Column &x = a.taskers.columns[attr], &y = b.taskers.columns[attr];
    EXPECT_EQ(x.global().present, y.global().present) << a.catalog.at(attr).name;
    for (uint32_t t = 0; t < a.taskers.size(); ++t) {
      const uint32_t h = a.taskers.host_of[t];
      ASSERT_EQ(x.by_host().has(h), y.by_host().has(h)) << a.catalog.at(attr).name << " " << a.taskers.names[t];
      if (!x.by_host().has(h)) continue;
      if (is_numeric(a.catalog.at(attr).type)) {
        EXPECT_DOUBLE_EQ(x.by_host().num(h), y.by_host().num(h)) << a.catalog.at(attr).name;
      } else {
        EXPECT_EQ(x.dict.value(x.by_host().id(h)), y.dict.value(y.by_host().id(h))) << a.catalog.at(attr).name;
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 1000u);
}

// farm1000 as bench/peers/sge_farms.sh built it: every host's values, every queue's instances and its
// per-group and per-host values.
TEST(SgeFarm1000, ImportedFarmIsTheFarmTheOracleBuilt) {
  const loaders::Dataset ds = loaders::load_sge(kData + "farm1000", "");
  EXPECT_EQ(ds.taskers.size(), 1000u + 480u + 520u + 10u + 80u);
  const std::string oses[] = {"rhel8", "rhel9", "ubuntu22", "sles15"};
  const double cores[] = {16, 32, 64, 128}, G = 1024.0 * 1024 * 1024, T = G * 1024;
  for (int i = 1; i <= 1000; ++i) {
    const std::string h = fmt::format("n{:04d}", i);
    SCOPED_TRACE(h);
    const int rack = (i - 1) / 40 + 1;
    const uint32_t t = tasker(ds, "all.q@" + h);
    ASSERT_NE(t, kNone);
    EXPECT_EQ(str(ds, "arch_s", t, 'h'), i % 7 == 0 ? "aarch64" : "x86_64");
    EXPECT_EQ(str(ds, "os", t, 'h'), oses[i % 4]);
    EXPECT_EQ(num(ds, "cores", t, 'h'), cores[i % 4]);
    EXPECT_EQ(num(ds, "scratch", t, 'h'), 50 * (1 + i % 5) * G);
    EXPECT_EQ(num(ds, "mem_c", t, 'h'), 96 * (1 + i % 3) * G);
    EXPECT_DOUBLE_EQ(num(ds, "speed", t, 'h'), i % 3 + 0.5);
    EXPECT_EQ(str(ds, "rack", t, 'h'), fmt::format("rack{}", rack));
    EXPECT_EQ(num(ds, "slots", t, 'q'), i == 500 ? 4 : rack == 1 ? 32 : 16);
    const uint32_t l = tasker(ds, "long.q@" + h), s = tasker(ds, "short.q@" + h);
    ASSERT_EQ(l != kNone, rack <= 12);  // @west
    ASSERT_EQ(s != kNone, rack > 12);   // @east
    if (l != kNone) {
      EXPECT_EQ(num(ds, "h_rt", l, 'q'), 72 * 3600);
      EXPECT_EQ(num(ds, "slots", l, 'q'), 8);
    } else {
      EXPECT_EQ(num(ds, "h_rt", s, 'q'), 1800);
      EXPECT_EQ(num(ds, "slots", s, 'q'), 4);
    }
    const uint32_t g = tasker(ds, "gpu.q@" + h), m = tasker(ds, "mem.q@" + h);
    ASSERT_EQ(g != kNone, i > 990);
    if (g != kNone) {
      EXPECT_EQ(num(ds, "gpu", g, 'q'), i == 1000 ? 8 : 4);
    }
    ASSERT_EQ(m != kNone, rack == 3 || rack == 4);
    if (m != kNone) {
      EXPECT_EQ(num(ds, "h_vmem", m, 'q'), rack == 4 ? T : 512 * G);
    }
  }
}

TEST(SgeFarm, UnknownComplexesGroupsAndCyclesAreErrors) {
  TempDir d;
  auto error_of = [&](const std::map<std::string, std::string>& files) {
    TempDir inner;
    try {
      loaders::load_sge(inner.farm80_with(files), "");
    } catch (const loaders::LoadError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(error_of({{"qconf-shgrp.txt", "group_name @a\nhostlist @b\ngroup_name @b\nhostlist h0001 @a\n"}})
                .find("contain each other"),
            std::string::npos);
  EXPECT_NE(error_of({{"qconf-sq.txt", "qname x.q\nhostlist @nosuch\n"}}).find("qconf-sq.txt:2: field 'hostlist'"),
            std::string::npos);
  EXPECT_NE(error_of({{"qconf-sq.txt", "qname x.q\nhostlist h0001\ncomplex_values bogus=1\n"}})
                .find("qconf-sq.txt:3: field 'complex_values': 'bogus' is not a complex"),
            std::string::npos);
  EXPECT_NE(error_of({{"qconf-sq.txt", "qname x.q\nhostlist h0001\nslots 4,[h0001=many]\n"}}).find("qconf-sq.txt:3"),
            std::string::npos);
  EXPECT_NE(error_of({{"qconf-sc.txt", "gpu gpu RSMAP <= YES YES 0 0\n"}}).find("field 'type'"), std::string::npos);
  fs::remove_all(d.path);
  try {
    loaders::load_sge(d.path.string(), "");
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("not a folder"), std::string::npos);
  }
}

// Sizes bounded before the work (issue 45): a group naming a big subgroup many times adds it once (it
// was copied each time: 160 KB of qconf, 521 MB, 20 s), and a farm of more queue instances than
// kMaxQueueInstances is refused naming the queue that crosses it, before any instance is made (1,500
// queues on 10,000 hosts ran out of memory after 197 s).
TEST(SgeFarm, GroupsAndQueueInstancesAreBoundedBeforeTheWork) {
  std::string se = "hostname global\n";
  std::string all = "group_name @all\nhostlist";
  for (int h = 1; h <= 1000; ++h) {
    se += fmt::format("hostname x{:04}\ncomplex_values NONE\n", h);
    all += fmt::format(" x{:04}", h);
  }
  std::string big = "group_name @big\nhostlist";
  for (int i = 0; i < 20000; ++i) big += " @all";
  const std::string groups = all + "\n" + big + "\n";
  std::string queues;
  for (int q = 0; q < 3; ++q) queues += fmt::format("qname q{}\nhostlist @big @all @big\nslots 1\n", q);
  {
    TempDir d;
    const loaders::Dataset ds = loaders::load_sge(
        d.farm80_with({{"qconf-se.txt", se}, {"qconf-shgrp.txt", groups}, {"qconf-sq.txt", queues}}), "");
    EXPECT_EQ(ds.taskers.size(), 3000u) << "three queues on the same 1,000 hosts";
  }
  // (q0-q2 count @big and @all apart: 2,000 each, an upper bound; q1045 crosses 2^20)
  for (int q = 3; q < 1100; ++q) queues += fmt::format("qname q{}\nhostlist @all\nslots 1\n", q);
  TempDir d;
  try {
    loaders::load_sge(d.farm80_with({{"qconf-se.txt", se}, {"qconf-shgrp.txt", groups}, {"qconf-sq.txt", queues}}), "");
    FAIL() << "accepted";
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.field, "hostlist");
    EXPECT_NE(std::string(e.what()).find("queue q1045 makes the farm more than 1048576 queue instances"),
              std::string::npos)
        << e.what();
  }
}

// ---- jobs of qstat ----

// farm80 while 144 jobs ran or waited (datasets/sge/farm80-busy): the running ones hold their charges,
// the waiting ones are matched, held ones noted, arrays expanded into tasks.
TEST(SgeJobs, RunningJobsHoldCapacityWaitingJobsAreMatched) {
  const loaders::Dataset ds = loaders::load_sge(kData + "farm80-busy", "");
  EXPECT_EQ(ds.jobs.size(), 19u);  // the pending ones (qstat -r: 18 job_lists, an array of 2 tasks)
  std::set<std::string> ids;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) ids.insert(std::string(ds.jobs.id[j]));
  EXPECT_TRUE(ids.count("647.2") && ids.count("647.3"));
  ASSERT_FALSE(ds.in_use.empty());
  const size_t lic = static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find("lic")));
  double lic_held = 0;
  for (double x : ds.in_use.amount[lic]) lic_held += x;
  EXPECT_GT(lic_held, 0);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, &ds.in_use);
  const MatchOutcome idle = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  size_t waiting_for_capacity = 0, assigned = 0, assigned_idle = 0;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    ASSERT_EQ(ds.jobs.reject[j], kNone) << ds.jobs.reject_reason[ds.jobs.reject[j]];
    // eligibility is the configured farm's: the running jobs only take capacity
    EXPECT_GT(m.eligible[m.categories.of_job[j]].eligible.count(), 0u) << ds.jobs.id[j];
    assigned += m.dispatch.status[j] == JobStatus::Assigned;
    assigned_idle += idle.dispatch.status[j] == JobStatus::Assigned;
    waiting_for_capacity +=
        m.dispatch.status[j] == JobStatus::Pending && m.dispatch.reason[j] == PendingReason::NoFreeCapacity;
  }
  EXPECT_EQ(waiting_for_capacity, 14u);
  EXPECT_EQ(assigned, 5u);
  EXPECT_GT(assigned_idle, assigned) << "on the idle farm more of them start";
  EXPECT_EQ(ds.jobs.notes.size() > 0, true);
}

TEST(SgeJobs, RequestsColmatchCannotRepresentAreRejectedWithTheReason) {
  TempDir d;
  const std::string qstat = R"(<?xml version='1.0'?>
<job_info>
  <job_info>
    <job_list state="pending"><JB_job_number>1</JB_job_number><JB_owner>u</JB_owner><state>qw</state>
      <slots>2</slots><requested_pe name="mpi">2-8</requested_pe></job_list>
    <job_list state="pending"><JB_job_number>2</JB_job_number><JB_owner>u</JB_owner><state>qw</state>
      <hard_request name="nosuch">1</hard_request></job_list>
    <job_list state="pending"><JB_job_number>3</JB_job_number><JB_owner>u</JB_owner><state>Eqw</state></job_list>
    <job_list state="pending"><JB_job_number>4</JB_job_number><JB_owner>u</JB_owner><state>qw</state>
      <hard_req_queue>nosuch.q</hard_req_queue></job_list>
    <job_list state="pending"><JB_job_number>5</JB_job_number><JB_owner>u</JB_owner><state>hqw</state>
      <tasks>1-5:2</tasks><hard_request name="arch_s">x86*</hard_request></job_list>
    <job_list state="pending"><JB_job_number>6</JB_job_number><JB_owner>u</JB_owner><state>qw</state>
      <hard_request name="h_rt">1:00:00</hard_request></job_list>
    <job_list state="pending"><JB_job_number>7</JB_job_number><JB_owner>u</JB_owner><state>qw</state>
      <hard_request name="cores">100000 || hostname==h0042</hard_request></job_list>
    <job_list state="pending"><JB_job_number>8</JB_job_number><JB_owner>u</JB_owner><state>qw</state>
      <soft_request name="h_vmem">1G) || (arch=*</soft_request></job_list>
    <job_list state="pending"><JB_job_number>9</JB_job_number><JB_owner>u</JB_owner><state>qw</state>
      <hard_request name="cores">0x10</hard_request><hard_request name="h_cpu">1:0:0</hard_request></job_list>
  </job_info>
</job_info>
)";
  const loaders::Dataset ds = loaders::load_sge(d.farm80_with({{"qstat-r.xml", qstat}}), "");
  std::map<std::string, std::string> why;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j)
    why[std::string(ds.jobs.id[j])] = ds.jobs.reject[j] == kNone ? "" : ds.jobs.reject_reason[ds.jobs.reject[j]];
  // a slot range is Grid Engine's most that fit for `match` (issue 43); over time it is refused
  EXPECT_EQ(why.at("1"), "");
  const loaders::Dataset over_time =
      loaders::load_sge(d.farm80_with({{"qstat-r.xml", qstat}}), "", {}, loaders::LoadMode::OverTime);
  const std::string range = over_time.jobs.reject_reason[over_time.jobs.reject[0]];
  EXPECT_NE(range.find("slot range '2-8'"), std::string::npos) << range;
  EXPECT_NE(range.find("qstat-r.xml:4:"), std::string::npos) << "file and line of the job";
  EXPECT_NE(why.at("2").find("unknown resource"), std::string::npos);
  EXPECT_NE(why.at("3").find("error state"), std::string::npos);
  EXPECT_NE(why.at("4").find("unknown queue"), std::string::npos);
  EXPECT_EQ(why.at("5.1"), "");
  EXPECT_EQ(why.at("5.3"), "");
  EXPECT_EQ(why.at("5.5"), "");
  EXPECT_EQ(why.count("5.2"), 0u);
  // issue 45: a number is one number, not an expression pasted into the request (job 7 ran on h0042)
  EXPECT_NE(why.at("7").find("-l cores=100000 || hostname==h0042"), std::string::npos) << why.at("7");
  EXPECT_NE(why.at("8").find("-l h_vmem=1G) || (arch=*"), std::string::npos) << why.at("8");
  EXPECT_EQ(why.at("9"), "") << "qsub's own forms of a number are still read";
  const uint32_t six = ds.jobs.size() - 4;
  ASSERT_EQ(ds.jobs.id[six], "6");
  EXPECT_EQ(ds.jobs.walltime[six], 3600) << "h_rt is the job's time limit (simulate)";
  EXPECT_TRUE(std::isnan(ds.jobs.runtime[six])) << "a waiting job's runtime is unknown";
  for (const char* bad : {"<job_info><job_list><JB_name>x</JB_name></job_list></job_info>",  // no number
                          "<detailed_job_info/>", "<job_info><job_list>"}) {
    SCOPED_TRACE(bad);
    TempDir e;
    EXPECT_THROW(loaders::load_sge(e.farm80_with({{"qstat-r.xml", bad}}), ""), loaders::LoadError);
  }
  {  // issue 45: the bound on a dump's jobs (array tasks included) is one that can be held: 10M
    TempDir e;
    try {
      loaders::load_sge(e.farm80_with({{"qstat-r.xml",
                                        "<job_info><job_info><job_list state='pending'><JB_job_number>5"
                                        "</JB_job_number><state>qw</state><tasks>1-100000000:1</tasks>"
                                        "</job_list></job_info></job_info>"}}),
                        "");
      ADD_FAILURE() << "100M tasks accepted";
    } catch (const loaders::LoadError& x) {
      EXPECT_EQ(x.field, "tasks");
    }
  }
  // issue 45: a number qstat printed that is not one was read as 0 (a submission time 'yesterday': the epoch)
  const std::string one =
      "<job_info><job_info><job_list state='pending'><JB_job_number>1</JB_job_number>"
      "<JAT_prio>PRIO</JAT_prio><state>qw</state><slots>1</slots></job_list></job_info></job_info>";
  const std::string detail =
      "<detailed_job_info><djob_info><element><JB_job_number>1</JB_job_number>"
      "<JB_submission_time>WHEN</JB_submission_time></element></djob_info></detailed_job_info>";
  auto field_of = [&](const std::string& prio, const std::string& when) {
    TempDir e;
    auto with = [](std::string t, const std::string& k, const std::string& v) {
      return t.replace(t.find(k), k.size(), v);
    };
    try {
      loaders::load_sge(
          e.farm80_with({{"qstat-r.xml", with(one, "PRIO", prio)}, {"qstat-j.xml", with(detail, "WHEN", when)}}), "");
    } catch (const loaders::LoadError& x) {
      return fs::path(x.file).filename().string() + "|" + x.field;
    }
    return std::string("accepted");
  };
  EXPECT_EQ(field_of("0.5", "1700000000"), "accepted");
  EXPECT_EQ(field_of("0.5", "yesterday"), "qstat-j.xml|JB_submission_time");
  EXPECT_EQ(field_of("high", "1700000000"), "qstat-r.xml|JAT_prio");
  // a running job's start (its load correction decays from it) that is no time
  auto start_field = [&](const std::string& start) {
    TempDir e;
    try {
      loaders::load_sge(e.farm80_with({{"qstat-r.xml",
                                        "<job_info><job_info><job_list state='running'><JB_job_number>2"
                                        "</JB_job_number><state>r</state><JAT_start_time>" +
                                            start +
                                            "</JAT_start_time><queue_name>gpu.q@h0061</queue_name>"
                                            "<slots>1</slots></job_list></job_info></job_info>"}}),
                        "");
    } catch (const loaders::LoadError& x) {
      return fs::path(x.file).filename().string() + "|" + x.field;
    }
    return std::string("accepted");
  };
  EXPECT_EQ(start_field("2026-12-01T23:13:37"), "accepted");
  EXPECT_EQ(start_field("at noon"), "qstat-r.xml|JAT_start_time");
}

// ---- the accounting file ----

// The 157 records the qmaster wrote for the jobs it ran on farm80 (their times put back by
// bench/peers/sge_accounting_times.py): every record is a job; the queue instance Grid Engine gave it
// is one colmatch finds eligible for its recorded requests; the replay starts every one.
TEST(SgeAccounting, RealRecordsReplayWithNoJobLostOnTheirOwnInstances) {
  const loaders::Dataset ds = loaders::load_sge(kData + "farm80", kData + "farm80-accounting.gz");
  const auto records = loaders::sge::read_accounting(kData + "farm80-accounting.gz");
  ASSERT_EQ(records.size(), 157u);
  ASSERT_EQ(ds.jobs.size(), records.size());
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    const auto& r = records[j];
    SCOPED_TRACE(fmt::format("line {}: {}", r.line, r.category));
    ASSERT_EQ(ds.jobs.reject[j], kNone) << ds.jobs.reject_reason[ds.jobs.reject[j]];
    const uint32_t t = tasker(ds, r.qname + "@" + r.hostname);
    ASSERT_NE(t, kNone);
    EXPECT_TRUE(m.eligible[m.categories.of_job[j]].eligible.contains(t)) << "Grid Engine ran it there";
    EXPECT_EQ(ds.jobs.slots[j], r.slots);
  }
  const SimResult sim = simulate(ds.catalog, ds.taskers, ds.jobs, SimConfig{}, kernels::active());
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) EXPECT_FALSE(std::isnan(sim.start[j])) << ds.jobs.id[j];
}

TEST(SgeAccounting, FieldsCategoriesWithColonsAndReruns) {
  TempDir d;
  auto rec = [](const std::string& job, const std::string& task, const std::string& category, const std::string& start,
                const std::string& end) {
    std::vector<std::string> f(45, "0");
    f[0] = "all.q", f[1] = "h0001", f[2] = "grp", f[3] = "bob", f[4] = "name", f[5] = job, f[6] = "sge";
    f[7] = "-5", f[8] = "1700000000", f[9] = start, f[10] = end, f[13] = "42", f[31] = "proj", f[33] = "NONE";
    f[34] = "1", f[35] = task, f[39] = category;
    std::string s;
    for (size_t i = 0; i < f.size(); ++i) s += (i ? ":" : "") + f[i];
    return s + "\n";
  };
  const std::string p =
      d.write("accounting", "# comment\n" + rec("7", "0", "-l h_rt=1:00:00,arch_s=x86*", "1700000010", "1700000070") +
                                rec("7", "0", "NONE", "0", "0") + rec("8", "3", "-q all.q", "1", "1"));
  const auto recs = loaders::sge::read_accounting(p);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].category, "-l h_rt=1:00:00,arch_s=x86*");  // its colons belong to it
  EXPECT_EQ(recs[0].priority, -5);
  EXPECT_EQ(recs[0].project, "proj");
  EXPECT_EQ(recs[0].line, 2u);
  const loaders::Dataset ds = loaders::load_sge(kData + "farm80", p);
  ASSERT_EQ(ds.jobs.size(), 3u);
  EXPECT_EQ(ds.jobs.id[0], "7");
  EXPECT_EQ(ds.jobs.id[1], "7~2");  // a rerun is a record of its own
  EXPECT_EQ(ds.jobs.id[2], "8.3");
  EXPECT_EQ(ds.jobs.runtime[0], 60);
  EXPECT_EQ(ds.jobs.walltime[0], 3600);  // h_rt
  EXPECT_EQ(ds.jobs.runtime[1], 42);     // no start: ru_wallclock
  EXPECT_EQ(ds.jobs.reject[0], kNone) << ds.jobs.reject_reason[ds.jobs.reject[0]];
  for (const std::string& bad : std::vector<std::string>{
           "a:b:c\n", rec("9", "0", "-l", "1", "2"), rec("9", "x", "NONE", "1", "2"),
           // issue 45: `5~2` then two records of 5 were two jobs 5~2
           rec("5~2", "0", "NONE", "1", "2") + rec("5", "0", "NONE", "1", "2"), rec("", "0", "NONE", "1", "2"),
           rec("5.1", "0", "NONE", "1", "2"), rec("-5", "0", "NONE", "1", "2")}) {
    SCOPED_TRACE(bad);
    const std::string q = d.write("bad", bad);
    EXPECT_THROW(loaders::load_sge(kData + "farm80", q), loaders::LoadError);
  }
}

// ---- import ----

// `colmatch import --format sge` writes a native farm that matches identically.
TEST(SgeImport, NativeRoundTripMatchesIdentically) {
  EXPECT_EQ(writers::native_cannot_hold(loaders::load_sge(kData + "farm80", "")), "") << "a Grid Engine farm is saved";
  TempDir d;
  const loaders::Dataset ds = loaders::load_sge(kData + "farm80", kData + "farm80-accounting.gz");
  const bool hosts = writers::save_native(d.path.string(), ds);
  ASSERT_TRUE(hosts);
  const loaders::Dataset back =
      loaders::load_native({(d.path / "farm.toml").string(), (d.path / "hosts.jsonl").string(),
                            (d.path / "taskers.jsonl").string(), (d.path / "jobs.jsonl").string()});
  ASSERT_EQ(back.taskers.names, ds.taskers.names);
  const MatchOutcome a = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  const MatchOutcome b = run_match(back.catalog, back.taskers, back.jobs, kernels::active());
  ASSERT_EQ(a.categories.size(), b.categories.size());
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    EXPECT_EQ(a.eligible[a.categories.of_job[j]].eligible.to_vector(),
              b.eligible[b.categories.of_job[j]].eligible.to_vector())
        << ds.jobs.id[j];
    EXPECT_EQ(a.dispatch.tasker[j], b.dispatch.tasker[j]);
  }
}

// Grid Engine's host rules and slot ranges (issue 43) travel through the native format ("allocation_rule":
// "host $pe_slots", ..., "min_slots"): the saved farm places every slot where the dump does. The simulator
// places those of a fixed slot count and rejects the ranges naming why
// (the dump itself replays with $pe_slots and $fill_up).
TEST(SgeImport, HostRulesAndRangesTravelAndTheSimulatorPlacesTheFixedOnes) {
  const loaders::Dataset ds = loaders::load_sge(kData + "pe-hosts/farm", "");
  TempDir d;
  writers::save_native(d.path.string(), ds);
  const loaders::Dataset back = loaders::load_native(
      {(d.path / "farm.toml").string(), "", (d.path / "taskers.jsonl").string(), (d.path / "jobs.jsonl").string()});
  ASSERT_EQ(back.jobs.size(), ds.jobs.size());
  size_t host_rules = 0;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    EXPECT_EQ(back.jobs.rule[j], ds.jobs.rule[j]) << ds.jobs.id[j];
    EXPECT_EQ(back.jobs.pe_shape_of(j), ds.jobs.pe_shape_of(j)) << ds.jobs.id[j];
    host_rules += by_host(ds.jobs.rule[j]);
  }
  EXPECT_EQ(host_rules, 9u);  // every job but the sequential one
  const MatchOutcome a = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  const MatchOutcome b = run_match(back.catalog, back.taskers, back.jobs, kernels::active());
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    ASSERT_EQ(a.dispatch.alloc_count[j], b.dispatch.alloc_count[j]) << ds.jobs.id[j];
    for (uint32_t x = 0; x < a.dispatch.alloc_count[j]; ++x) {
      const Allocation& p = a.dispatch.allocations[a.dispatch.alloc_first[j] + x];
      const Allocation& q = b.dispatch.allocations[b.dispatch.alloc_first[j] + x];
      EXPECT_EQ(ds.taskers.names[p.tasker], back.taskers.names[q.tasker]);
      EXPECT_EQ(p.slots, q.slots);
    }
  }
  // over time the ranges are rejected naming why, and the others run (under a kept book of reservations too)
  const SimResult sim = simulate(back.catalog, back.taskers, back.jobs, back.policy, kernels::active());
  SimConfig book = back.policy;
  book.backfill = BackfillPolicy::Conservative;
  const SimResult booked = simulate(back.catalog, back.taskers, back.jobs, book, kernels::active());
  size_t ranges = 0, fixed = 0;
  for (uint32_t j = 0; j < back.jobs.size(); ++j) {
    SCOPED_TRACE(std::string(back.jobs.id[j]));
    if (!by_host(back.jobs.rule[j])) {
      EXPECT_FALSE(std::isnan(sim.start[j])) << "the sequential job runs";
      continue;
    }
    if (back.jobs.pe_shape_of(j).min_slots > 0) {
      ++ranges;
      EXPECT_EQ(sim.reason[j], SimReason::Rejected);
      EXPECT_NE(sim.detail[j].find("a Grid Engine slot range"), std::string::npos) << sim.detail[j];
      continue;
    }
    ++fixed;
    EXPECT_FALSE(std::isnan(sim.start[j])) << "a host rule of a fixed slot count runs";
    EXPECT_FALSE(std::isnan(booked.start[j])) << "under conservative backfill too";
  }
  EXPECT_GT(ranges, 0u);
  EXPECT_GT(fixed, 0u);
  // the dump itself over time: $pe_slots and $fill_up as before, the ranges refused
  const loaders::Dataset over_time = loaders::load_sge(kData + "pe-hosts/farm", "", {}, loaders::LoadMode::OverTime);
  for (uint32_t j = 0; j < over_time.jobs.size(); ++j) EXPECT_FALSE(by_host(over_time.jobs.rule[j]));
}

// qsub -masterq travels too ("master_queue": the master's request; "master_only_queue" beside -q): the saved
// farm places every slot and every master where the dump does (datasets/sge/masterq and masterq-q, where the
// qmaster put them). A master queue beside a slot range, or on a job of no host rule, a master-only queue
// without a master queue, or one that does not parse, is refused by the native reader naming the field.
TEST(SgeImport, MasterQueuesTravel) {
  TempDir d;
  for (const auto& [dump, only] : {std::pair<std::string, size_t>{"masterq", 0}, {"masterq-q", 5}}) {
    const loaders::Dataset ds = loaders::load_sge(kData + dump + "/farm", "");
    writers::save_native(d.path.string(), ds);
    const loaders::Dataset back =
        loaders::load_native({(d.path / "farm.toml").string(), (d.path / "hosts.jsonl").string(),
                              (d.path / "taskers.jsonl").string(), (d.path / "jobs.jsonl").string()});
    ASSERT_EQ(back.jobs.size(), ds.jobs.size());
    size_t masters = 0, master_only = 0;
    for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
      const JobTable::PeShape m = ds.jobs.pe_shape_of(j), n = back.jobs.pe_shape_of(j);
      ASSERT_EQ(m.master == kNone, n.master == kNone) << ds.jobs.id[j];
      ASSERT_EQ(m.master_only == kNone, n.master_only == kNone) << ds.jobs.id[j];
      if (m.master == kNone) continue;
      ++masters;
      EXPECT_EQ(ds.jobs.request_text[m.master], back.jobs.request_text[n.master]);
      if (m.master_only == kNone) continue;
      ++master_only;
      EXPECT_EQ(ds.jobs.request_text[m.master_only], back.jobs.request_text[n.master_only]);
    }
    EXPECT_EQ(masters, 5u) << dump;
    EXPECT_EQ(master_only, only) << dump;
    const MatchOutcome a = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
    const MatchOutcome b = run_match(back.catalog, back.taskers, back.jobs, kernels::active());
    for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
      ASSERT_EQ(a.dispatch.alloc_count[j], b.dispatch.alloc_count[j]) << ds.jobs.id[j];
      for (uint32_t x = 0; x < a.dispatch.alloc_count[j]; ++x) {  // the master first
        const Allocation& p = a.dispatch.allocations[a.dispatch.alloc_first[j] + x];
        const Allocation& q = b.dispatch.allocations[b.dispatch.alloc_first[j] + x];
        EXPECT_EQ(ds.taskers.names[p.tasker], back.taskers.names[q.tasker]);
        EXPECT_EQ(p.slots, q.slots);
      }
    }
  }
  std::ofstream((d.path / "bad.jsonl").string())
      << "{\"id\":\"r\",\"slots\":4,\"allocation_rule\":\"host "
         "$fill_up\",\"min_slots\":2,\"master_queue\":\"qname==\\\"q2.q\\\"\"}\n"
      << "{\"id\":\"s\",\"slots\":4,\"allocation_rule\":\"$fill_up\",\"master_queue\":\"qname==\\\"q2.q\\\"\"}\n"
      << "{\"id\":\"t\",\"slots\":4,\"allocation_rule\":\"host $fill_up\",\"master_queue\":\"qname==(\"}\n"
      << "{\"id\":\"u\",\"slots\":4,\"allocation_rule\":\"host "
         "$fill_up\",\"master_only_queue\":\"qname==\\\"q2.q\\\"\"}\n"
      << "{\"id\":\"v\",\"slots\":4,\"allocation_rule\":\"host $fill_up\",\"master_queue\":\"qname==\\\"q2.q\\\"\","
         "\"master_only_queue\":\"qname==(\"}\n";
  const loaders::Dataset bad =
      loaders::load_native({(d.path / "farm.toml").string(), (d.path / "hosts.jsonl").string(),
                            (d.path / "taskers.jsonl").string(), (d.path / "bad.jsonl").string()});
  ASSERT_EQ(bad.jobs.size(), 5u);
  for (uint32_t j = 0; j < 5; ++j) {
    ASSERT_TRUE(bad.jobs.rejected(j)) << bad.jobs.id[j];
    const std::string field = j < 3 ? "master_queue" : "master_only_queue";
    EXPECT_NE(std::string(bad.jobs.reject_reason[bad.jobs.reject[j]]).find(field), std::string::npos)
        << bad.jobs.reject_reason[bad.jobs.reject[j]];
  }
}

}  // namespace
