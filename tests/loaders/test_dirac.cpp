#include <unistd.h>
#include <algorithm>
// DIRAC JobRequirements RFC (seed 003): requirements, matching rules, submit pools, inheritance.
#include <filesystem>
#include <fstream>
#include <future>

#include <gtest/gtest.h>

#include "engine/batch/matcher.hpp"
#include "loaders/dirac.hpp"
#include "loaders/errors.hpp"
#include "loaders/native.hpp"
#include "loaders/writers/native_writer.hpp"
#include "tests/reference/naive_matcher.hpp"

using namespace colmatch;
namespace fs = std::filesystem;

namespace {

const std::string kDir = std::string(COLMATCH_SOURCE_DIR) + "/datasets/demo/dirac/";

struct Loaded {
  loaders::Dataset ds = loaders::load_dirac(kDir + "resources.json", kDir + "jobs.jdl");
  MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());

  uint32_t job(const std::string& id) const {
    for (uint32_t j = 0; j < ds.jobs.size(); ++j)
      if (ds.jobs.id[j] == id) return j;
    return kNone;
  }
  std::vector<std::string> eligible(const std::string& id) const {
    std::vector<std::string> out;
    for (uint32_t t : m.eligible[m.categories.of_job[job(id)]].eligible.to_vector()) out.push_back(ds.taskers.names[t]);
    std::sort(out.begin(), out.end());
    return out;
  }
};

// The RFC's example: SoftwareTag = {"AppVersion1","AppVersion2"}; CPUModel = "Intel Xeon"; Memory = 4000.
// A list matches any of its values, the number is a capacity the queue must reach, the string must be
// equal. CERN's short queue has 2000 of Memory; ce02 is AMD.
TEST(SeedExamples, DiracRfcRequirementsExample) {
  const Loaded l;
  EXPECT_EQ(l.eligible("rfc-example"),
            (std::vector<std::string>{"LCG.CERN.ch/ce01.cern.ch/long", "LCG.IN2P3.fr/cccreamce.in2p3.fr/long",
                                      "LCG.RAL.uk/arc01.ral.uk/default"}));
  EXPECT_EQ(l.ds.jobs.request_text[l.ds.jobs.request[l.job("rfc-example")]],
            "CPUModel==\"Intel Xeon\" && Memory>=4000 && SoftwareTag=={\"AppVersion1\",\"AppVersion2\"}")
      << "requirements in name order, as the RFC sorts them for the submit pool";
}

TEST(Dirac, QueuesInheritFromCeAndSiteAndMayOverride) {
  const Loaded l;
  const auto& t = l.ds.taskers;
  auto value = [&](const std::string& tasker, const char* attr) {
    const Column& c = t.columns[*l.ds.catalog.find(attr)];
    for (uint32_t r = 0; r < t.size(); ++r)
      if (t.names[r] == tasker) return c.has(r) ? c.dict.value(c.queue().id(r)) : std::string("<absent>");
    return std::string("<no tasker>");
  };
  EXPECT_EQ(value("LCG.CERN.ch/ce01.cern.ch/short", "Platform"), "x86_64-el9") << "from the site";
  EXPECT_EQ(value("LCG.CERN.ch/ce01.cern.ch/short", "CPUModel"), "Intel Xeon") << "from the CE";
  EXPECT_EQ(value("LCG.RAL.uk/arc01.ral.uk/default", "Platform"), "aarch64-el9") << "the queue overrides the site";
  EXPECT_EQ(value("LCG.CERN.ch/ce02.cern.ch/grid", "SoftwareTag"), std::string("AppVersion1\x1f") + "AppVersion2")
      << "the CE's list overrides the site's";
  EXPECT_EQ(value("LCG.IN2P3.fr/cccreamce.in2p3.fr/long", "Platform"), "<absent>");
}

TEST(Dirac, SiteBannedSitePlatformCpuTimeAndMissingParameters) {
  const Loaded l;
  EXPECT_EQ(l.eligible("banned-cern"),
            (std::vector<std::string>{"LCG.IN2P3.fr/cccreamce.in2p3.fr/long", "LCG.RAL.uk/arc01.ral.uk/default"}));
  EXPECT_EQ(l.eligible("platform"), (std::vector<std::string>{"LCG.RAL.uk/arc01.ral.uk/default"}));
  EXPECT_EQ(l.eligible("site-list"), (std::vector<std::string>{"LCG.CERN.ch/ce02.cern.ch/grid"}));
  EXPECT_TRUE(l.eligible("gpu").empty()) << "a parameter no queue describes makes every queue ineligible";
  EXPECT_EQ(l.m.dispatch.reason[l.job("gpu")], PendingReason::NoEligibleTasker);
  for (uint32_t j = 0; j < l.ds.jobs.size(); ++j)
    for (uint32_t t = 0; t < l.ds.taskers.size(); ++t)
      EXPECT_EQ(l.m.eligible[l.m.categories.of_job[j]].eligible.contains(t),
                naive::eligible(l.ds.catalog, l.ds.taskers, l.ds.jobs, t, j));
}

std::string write(const std::string& name, const std::string& text) {
  const auto p = (fs::temp_directory_path() / (name + std::to_string(::getpid()))).string();
  std::ofstream(p) << text;
  return p;
}

TEST(Dirac, SubmitPoolIsTheHashOfSortedRequirements) {
  const auto jdl = write("pool.jdl", R"([ JobID = "a"; Requirements = [ Memory = 4000; CPUModel = "Intel Xeon"; ]; ]
[ JobID = "b"; Requirements = [ CPUModel = "Intel Xeon"; Memory = 4000; ]; ]
[ JobID = "c"; Requirements = [ CPUModel = "Intel Xeon"; Memory = 8000; ]; ])");
  const auto ds = loaders::load_dirac(kDir + "resources.json", jdl);
  EXPECT_EQ(ds.jobs.request[0], ds.jobs.request[1]) << "the same requirements in another order: one pool";
  EXPECT_NE(ds.jobs.request[0], ds.jobs.request[2]);
  fs::remove(jdl);
}

TEST(Dirac, ErrorsNameFileLineAndJob) {
  const auto bad_syntax =
      write("bad.jdl", "[ JobID = \"a\"; ]\n[ JobID = \"b\";\n  Requirements = [ Memory 4000; ];\n]\n");
  try {
    loaders::load_dirac(kDir + "resources.json", bad_syntax);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 3u) << e.what();
    EXPECT_EQ(e.field, "Memory") << e.what();
  }
  const auto wrong_type =
      write("type.jdl", "[ JobID = \"ok\"; ]\n[ JobID = \"x\"; Requirements = [ Memory = \"lots\"; ]; ]\n");
  const auto ds = loaders::load_dirac(kDir + "resources.json", wrong_type);
  ASSERT_EQ(ds.jobs.size(), 2u);
  EXPECT_FALSE(ds.jobs.rejected(0));
  ASSERT_TRUE(ds.jobs.rejected(1));
  EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[1]].find(":2: job x: field 'Requirements'"), std::string::npos)
      << ds.jobs.reject_reason[ds.jobs.reject[1]];
  fs::remove(bad_syntax);
  fs::remove(wrong_type);
}

// Issue 12: a queue defined twice in one CE (duplicate JSON keys) is a fatal error naming the file and
// the queue's path, not a bare "tasker is defined twice".
TEST(Dirac, QueueDefinedTwiceNamesFileAndPath) {
  const auto res =
      write("dup.json", R"({"Sites": {"S": {"CEs": {"ce": {"Queues": {"q": {"CPUTime": 1}, "q": {"CPUTime": 2}}}}}}})");
  const auto jdl = write("one.jdl", "[ JobID = \"a\"; ]\n");
  try {
    loaders::load_dirac(res, jdl);
    FAIL() << "accepted a queue defined twice";
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.file, res);
    EXPECT_EQ(e.field, "Sites.S.CEs.ce.Queues.q");
    EXPECT_NE(std::string(e.what()).find("queue defined twice"), std::string::npos) << e.what();
  }
  fs::remove(res);
  fs::remove(jdl);
}

// Issue 12: a job id given twice (JobID, or JobName without a JobID) is fatal, naming the JDL file, the
// record's line, the field and the first line: the same policy as every other format.
TEST(Dirac, DuplicateJobIdIsFatalNamingBothLines) {
  const auto res = write("ok.json", R"({"Sites": {"S": {"CEs": {"ce": {"Queues": {"q": {"CPUTime": 1}}}}}}})");
  const auto jdl = write("dup.jdl", "[ JobID = \"a\"; ]\n[ JobName = \"b\"; ]\n[ JobName = \"x\"; JobID = \"a\"; ]\n");
  try {
    loaders::load_dirac(res, jdl);
    FAIL() << "accepted a duplicate job id";
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.file, jdl);
    EXPECT_EQ(e.line, 3u);
    EXPECT_EQ(e.field, "JobID");
    EXPECT_NE(std::string(e.what()).find("duplicate job id 'a' (first on line 1)"), std::string::npos) << e.what();
  }
  const auto names = write("dupname.jdl", "[ JobName = \"b\"; ]\n[ JobName = \"b\"; ]\n");
  try {
    loaders::load_dirac(res, names);
    FAIL() << "accepted a duplicate job name";
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 2u);
    EXPECT_EQ(e.field, "JobName");
  }
  fs::remove(res);
  fs::remove(jdl);
  fs::remove(names);
}

// Issue 12: both DIRAC files may open with a UTF-8 byte-order mark, as every other input may.
TEST(Dirac, AByteOrderMarkIsSkipped) {
  const std::string bom = "\xEF\xBB\xBF";
  const auto res = write("bom.json", bom + R"({"Sites": {"S": {"CEs": {"ce": {"Queues": {"q": {"CPUTime": 1}}}}}}})");
  const auto jdl = write("bom.jdl", bom + "[ JobID = \"a\"; ]\n");
  const auto l = loaders::load_dirac(res, jdl);
  EXPECT_EQ(l.jobs.size(), 1u);
  EXPECT_EQ(l.jobs.id[0], "a");
  EXPECT_EQ(l.taskers.size(), 1u);
  fs::remove(res);
  fs::remove(jdl);
}

// Issue 12: a queue parameter longer than kMaxStringValue names the file and the parameter's path.
TEST(Dirac, LongValuesNameFileAndPath) {
  const auto res = write("long.json", R"({"Sites": {"S": {"CEs": {"ce": {"Queues": {"q": {"Tag": ")" +
                                          std::string(kMaxStringValue + 1, 'x') + R"("}}}}}}})");
  const auto jdl = write("one2.jdl", "[ JobID = \"a\"; ]\n");
  try {
    loaders::load_dirac(res, jdl);
    FAIL() << "accepted a value past the bound";
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.file, res);
    EXPECT_EQ(e.field, "Sites.S.CEs.ce.Queues.q.Tag");
    EXPECT_NE(std::string(e.what()).find("at most 65536 are accepted"), std::string::npos) << e.what();
  }
  fs::remove(res);
  fs::remove(jdl);
}

// Numbers a double cannot hold, or a processor count out of range, reject the job naming the field (they
// once escaped as a bare "stod" error ending the run).
TEST(Dirac, OutOfRangeNumbersRejectTheJob) {
  const auto jdl = write("numbers.jdl",
                         "[ JobID = \"tiny\"; Priority = 1e-400; ]\n[ JobID = \"many\"; NumberOfProcessors = 1e20; ]\n"
                         "[ JobID = \"ok\"; Priority = 3; NumberOfProcessors = 2; ]\n");
  const auto ds = loaders::load_dirac(kDir + "resources.json", jdl);
  ASSERT_EQ(ds.jobs.size(), 3u);
  ASSERT_TRUE(ds.jobs.rejected(0));
  EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[0]].find(":1: job tiny: field 'Priority'"), std::string::npos)
      << ds.jobs.reject_reason[ds.jobs.reject[0]];
  ASSERT_TRUE(ds.jobs.rejected(1));
  EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[1]].find("field 'NumberOfProcessors'"), std::string::npos);
  EXPECT_FALSE(ds.jobs.rejected(2));
  EXPECT_EQ(ds.jobs.slots[2], 2u);
  fs::remove(jdl);
}

// The JDL reader recurses once per list or record: 20,000 levels once crashed the loader.
TEST(Dirac, DeepNestingIsAnErrorNotACrash) {
  std::string records;
  for (int i = 0; i < 20000; ++i) records += "[ x = ";
  const auto deep = write("deep.jdl", "[ JobID = \"a\";\n  Requirements = " + records + "\n]\n");
  try {
    loaders::load_dirac(kDir + "resources.json", deep);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 2u) << e.what();
    EXPECT_EQ(e.field, "x") << e.what();  // the innermost field reached
    EXPECT_NE(std::string(e.what()).find("nest deeper than 64 levels"), std::string::npos) << e.what();
  }
  const auto lists = write("lists.jdl", "[ JobID = \"b\"; Site = " + std::string(20000, '{') + " ]\n");
  try {
    loaders::load_dirac(kDir + "resources.json", lists);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.field, "Site") << e.what();
    EXPECT_NE(std::string(e.what()).find("nest deeper than 64 levels"), std::string::npos) << e.what();
  }
  fs::remove(deep);
  fs::remove(lists);
}

TEST(Dirac, SetValuedAttributesRoundTripThroughTheNativeFormat) {
  const Loaded l;
  const auto dir = fs::temp_directory_path() / ("dirac-native-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  writers::save_native(dir.string(), l.ds);
  const loaders::Dataset back = loaders::load_native(
      {(dir / "farm.toml").string(), "", (dir / "taskers.jsonl").string(), (dir / "jobs.jsonl").string()});
  const auto m = run_match(back.catalog, back.taskers, back.jobs, kernels::active());
  EXPECT_EQ(m.dispatch.tasker, l.m.dispatch.tasker);
  for (size_t c = 0; c < m.eligible.size(); ++c)
    EXPECT_EQ(m.eligible[c].eligible.to_vector(), l.m.eligible[c].eligible.to_vector());
  fs::remove_all(dir);
}

// Issue 25: the resource tree in DIRAC's own CFG text (the configuration service's Resources section,
// sites under their grid, `+=`) gives the demo exactly the queues, eligibility and placements of its JSON.
TEST(DiracCfg, DemoTreeMatchesAsItsJson) {
  const auto json = loaders::load_dirac(kDir + "resources.json", kDir + "jobs.jdl");
  const auto cfg = loaders::load_dirac(kDir + "resources.cfg", kDir + "jobs.jdl");
  ASSERT_EQ(cfg.taskers.names, json.taskers.names);
  ASSERT_EQ(cfg.catalog.size(), json.catalog.size());
  const MatchOutcome a = run_match(json.catalog, json.taskers, json.jobs, kernels::active());
  const MatchOutcome b = run_match(cfg.catalog, cfg.taskers, cfg.jobs, kernels::active());
  for (uint32_t j = 0; j < json.jobs.size(); ++j) {
    EXPECT_EQ(a.eligible[a.categories.of_job[j]].eligible.to_vector(),
              b.eligible[b.categories.of_job[j]].eligible.to_vector())
        << json.jobs.id[j];
    EXPECT_EQ(a.dispatch.tasker[j], b.dispatch.tasker[j]);
    EXPECT_EQ(a.dispatch.reason[j], b.dispatch.reason[j]);
  }
}

// diraccfg's reading: a name on the line before its brace, a section opened twice is one, a later option
// replaces an earlier one, `+=` appends ", value", `#` lines are comments; a grid level is optional.
TEST(DiracCfg, SyntaxAsDiraccfgReadsIt) {
  const auto res =
      write("tree.cfg",
            "# comment\nSites\n{\n  S\n  {\n    Tag = a\n    Tag += b\n    CEs { ce { Queues { q {\n"
            "      CPUTime = 10\n      CPUTime = 20\n    } } } }\n  }\n  S\n  {\n    Extra = x, y ,,\n  }\n}\n");
  const auto jdl =
      write("one.jdl", "[ JobID = \"a\"; Requirements = [ CPUTime = 15; Tag = \"b\"; Extra = \"y\"; ]; ]\n");
  const auto ds = loaders::load_dirac(res, jdl);
  ASSERT_EQ(ds.taskers.size(), 1u);
  EXPECT_EQ(ds.taskers.names[0], "S/ce/q");
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  EXPECT_EQ(m.dispatch.status[0], JobStatus::Assigned) << "CPUTime 20 >= 15, Tag {a, b}, Extra {x, y}";
  EXPECT_TRUE(ds.catalog.at(*ds.catalog.find("Tag")).multi_valued);
  fs::remove(res);
  fs::remove(jdl);
}

// issue 45: options and sections were found by a linear search per option; a queue of 200,000 options
// took 82 s (quadratic; 400,000 options here, the old lookup: over 2 minutes). A stall guard, not a speed
// test: the linear reading takes about 2 s here, 4 s under the sanitizers; the guard waits 30.
TEST(DiracCfg, ManyOptionsInOneSectionAreReadInLinearTime) {
  std::string text = "Sites\n{\n  S\n  {\n    CEs\n    {\n      ce\n      {\n        Queues\n        {\n";
  text += "          q\n          {\n";
  constexpr int kOptions = 400000;
  for (int i = 0; i < kOptions; ++i) text += "            Opt" + std::to_string(i) + " = " + std::to_string(i) + "\n";
  text += "            Opt7 = 8\n          }\n        }\n      }\n    }\n  }\n}\n";
  const auto res = write("wide.cfg", text);
  const auto jdl = write("wide.jdl", "[ JobID = \"a\"; Requirements = [ Opt7 = 8; Opt399999 = 399999; ]; ]\n");
  auto load = std::async(std::launch::async, [&] { return loaders::load_dirac(res, jdl); });
  ASSERT_EQ(load.wait_for(std::chrono::seconds(30)), std::future_status::ready) << "stalled: not linear";
  const auto ds = load.get();
  ASSERT_EQ(ds.taskers.size(), 1u);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  EXPECT_EQ(m.dispatch.status[0], JobStatus::Assigned) << "a later option replaces an earlier one: Opt7 = 8";
  fs::remove(res);
  fs::remove(jdl);
}

TEST(DiracCfg, MalformedTextNamesFileLineAndSection) {
  const auto jdl = write("one.jdl", "[ JobID = \"a\"; ]\n");
  auto error_of = [&](const std::string& text) {
    const auto res = write("bad.cfg", text);
    std::string what = "accepted";
    try {
      loaders::load_dirac(res, jdl);
    } catch (const loaders::LoadError& e) {
      what = e.what();
    }
    fs::remove(res);
    return what;
  };
  EXPECT_NE(error_of("Sites\n{\n  S\n  {\n").find(":4: field 'Sites/S': section not closed"), std::string::npos);
  EXPECT_NE(error_of("Sites\n{\n}\n}\n").find(":4: '}' closes more sections"), std::string::npos);
  EXPECT_NE(error_of("Sites\n{\n  S\n  {\n    Tag += b\n  }\n}\n").find(":5: field 'Sites/S/Tag': '+='"),
            std::string::npos);
  EXPECT_NE(error_of("Sites\n{\n  stray words\n}\n").find("neither an option nor a section"), std::string::npos);
  EXPECT_NE(error_of("Other\n{\n}\n").find("no Sites section"), std::string::npos);
  // issue 45: a line without '=' was glued onto the next section's name ('junkCEs'): the site lost every
  // queue, exit 0. Named with its own line.
  EXPECT_NE(error_of("Sites\n{\n  S\n  {\n    junk\n    CEs\n    {\n    }\n  }\n}\n")
                .find(":5: field 'Sites/S': 'junk' is neither an option nor a section"),
            std::string::npos)
      << error_of("Sites\n{\n  S\n  {\n    junk\n    CEs\n    {\n    }\n  }\n}\n");
  EXPECT_NE(error_of("Sites\n{\n  a/b\n  {\n  }\n}\n").find("must not hold '/'"), std::string::npos);
  // issue 45: a number past a double's range was read as text (`CPUTime = 1e400` made every job's CPUTime
  // requirement a type error)
  EXPECT_NE(
      error_of("Sites\n{\n  S\n  {\n    CEs\n    {\n      ce\n      {\n        CPUTime = 1e400\n"
               "        Queues\n        {\n          q\n          {\n          }\n        }\n      }\n    }\n  }\n}\n")
          .find("field 'Sites/S/CEs/ce/CPUTime': '1e400' is a number beyond the range"),
      std::string::npos);
  std::string deep = "Sites\n";
  for (int i = 0; i < 100; ++i) deep += "{\nx" + std::to_string(i) + "\n";
  EXPECT_NE(error_of(deep).find("nested more than 64 deep"), std::string::npos);
  fs::remove(jdl);
}

}  // namespace
