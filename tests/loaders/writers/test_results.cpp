// Result writers (loaders/writers/results.hpp, text.hpp): one row per allocation, pending and rejected
// rows with reasons, RFC 4180 quoting, categories, pools only when asked, summary.json, write errors.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "datasets/synth/synthetic.hpp"
#include "engine/batch/matcher.hpp"
#include "loaders/writers/native_writer.hpp"
#include "loaders/writers/results.hpp"
#include "loaders/writers/text.hpp"

using namespace colmatch;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct MatchRun {
  loaders::Dataset ds;
  MatchOutcome m;
  fs::path dir = fs::temp_directory_path() / ("colmatch-results-" + std::to_string(::getpid()));
  MatchRun() {
    const uint32_t slots = ds.catalog.add(consumable_attribute("slots", AttrType::Int));
    AttributeDef d;
    d.name = "arch";
    const uint32_t arch = ds.catalog.add(d);
    ds.name = "farm \"x\"";
    TaskerBuilder tb(ds.catalog);
    for (int i = 0; i < 3; ++i) {
      tb.add("q@n" + std::to_string(i), 3.0 - i);
      tb.set(slots, "2");
      tb.set(arch, "lx");
    }
    ds.taskers = std::move(tb).build();
    JobBuilder jb(ds.catalog);
    jb.add("a,b", "u", "g", 0, 0, 3);  // $fill_up over two taskers: two rows
    jb.set_rule(AllocationRule::FillUp);
    jb.add("q\"uote", "u", "g", 0, 1, 1);
    jb.set_request("arch==sparc");     // no eligible tasker
    jb.add("big", "u", "g", 0, 2, 5);  // eligible nowhere: 5 slots on one tasker of 2
    jb.add("bad", "u", "g", 0, 3, 1);
    jb.reject(3, "jobs.jsonl:4: job bad: field 'requests': unknown attribute 'gpu', really");
    ds.jobs = std::move(jb).build();
    m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
    fs::remove_all(dir);
  }
  ~MatchRun() { fs::remove_all(dir); }
};

TEST(Results, OneRowPerAllocationThenPendingAndRejectedWithReasons) {
  MatchRun r;
  writers::RunInfo info;
  info.format = "native";
  writers::write_results(r.dir.string(), r.ds, r.m, info);
  EXPECT_EQ(slurp(r.dir / "results.csv"),
            "job,status,tasker,slots,reason\n"
            "\"a,b\",assigned,q@n0,2,\n"
            "\"a,b\",assigned,q@n1,1,\n"
            "\"q\"\"uote\",pending,,0,\"no eligible tasker: arch==\"\"sparc\"\" matches 0 of 3\"\n"
            "big,pending,,0,no eligible tasker: slots>=5 matches 0 of 3\n"
            "bad,rejected,,0,\"jobs.jsonl:4: job bad: field 'requests': unknown attribute 'gpu', really\"\n");
  const std::string cats = slurp(r.dir / "categories.csv");
  EXPECT_EQ(std::count(cats.begin(), cats.end(), '\n'), static_cast<long>(1 + r.m.categories.size()));
  EXPECT_TRUE(cats.find(",roaring,") != std::string::npos || cats.find(",dense,") != std::string::npos) << cats;
  EXPECT_FALSE(fs::exists(r.dir / "pools.csv")) << "pools only when asked";
  const std::string summary = slurp(r.dir / "summary.json");
  EXPECT_NE(summary.find("\"farm\": \"farm \\\"x\\\"\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"assigned\": 1,"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"rejected\": 1,"), std::string::npos) << summary;
  for (const auto& e : fs::directory_iterator(r.dir))
    EXPECT_NE(e.path().extension(), ".tmp") << "no temporary file is left behind";
}

// categories.csv formatted beforehand (beside dispatch, as the CLI does) is the one write_results formats.
TEST(Results, CategoriesFormattedBeforehandAreWrittenAsTheyAre) {
  MatchRun r;
  writers::RunInfo info;
  writers::write_results(r.dir.string(), r.ds, r.m, info);
  const std::string results = slurp(r.dir / "results.csv"), cats = slurp(r.dir / "categories.csv");
  writers::write_results(r.dir.string(), r.ds, r.m, info, writers::categories_csv(r.ds, r.m));
  EXPECT_EQ(slurp(r.dir / "results.csv"), results);
  EXPECT_EQ(slurp(r.dir / "categories.csv"), cats);
  writers::write_results(r.dir.string(), r.ds, r.m, info, "category,given\n");
  EXPECT_EQ(slurp(r.dir / "categories.csv"), "category,given\n") << "the text given, not formatted again";
}

TEST(Results, PoolsListTheEligibleTaskersOfEachRequest) {
  MatchRun r;
  writers::RunInfo info;
  info.pools = true;
  writers::write_results(r.dir.string(), r.ds, r.m, info);
  const std::string pools = slurp(r.dir / "pools.csv");
  EXPECT_EQ(pools.substr(0, pools.find('\n')), "pool,jobs,eligible,taskers,requirements");
  EXPECT_NE(pools.find(fmt::format("{:016x},2,3,q@n0;q@n1;q@n2,true\n", fnv1a("true"))), std::string::npos) << pools;
  EXPECT_NE(pools.find(fmt::format("{:016x},1,0,,\"arch==\"\"sparc\"\"\"\n", fnv1a("arch==\"sparc\""))),
            std::string::npos)
      << "the pool is named by the FNV-1a hash of its canonical requirements\n"
      << pools;
}

TEST(Results, WriteFailuresAreWriteErrors) {
  MatchRun r;
  fs::create_directories(r.dir);
  std::ofstream(r.dir / "file") << "x";
  EXPECT_THROW(writers::write_results((r.dir / "file").string(), r.ds, r.m, writers::RunInfo{}), writers::WriteError);
  EXPECT_THROW(writers::write_file_atomic((r.dir / "no" / "such" / "dir.csv").string(), "x"), writers::WriteError);
}

TEST(Text, CsvAndJsonEscaping) {
  std::string out;
  writers::csv_field(out, "plain");
  out += ',';
  writers::csv_field(out, "a\"b,c\nd");
  EXPECT_EQ(out, "plain,\"a\"\"b,c\nd\"");
  EXPECT_EQ(writers::json_string("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  out.clear();
  writers::csv_field(out, "\"\"x\"");  // quotes first, twice in a row, last
  writers::csv_field(out, "cr\r");
  writers::csv_field(out, "");
  EXPECT_EQ(out, "\"\"\"\"\"x\"\"\"\"cr\r\"");
}

// results.csv is formatted in pieces of 8,192 jobs in parallel and written in order: the file equals
// results_csv() (one pass) for a farm of several pieces whose jobs are assigned, pending for either
// reason (each with the reason of its category, quoted once) and rejected.
TEST(Results, PiecesAreWrittenInOrder) {
  loaders::Dataset ds;
  const uint32_t slots = ds.catalog.add(consumable_attribute("slots", AttrType::Int));
  AttributeDef d;
  d.name = "arch";
  const uint32_t arch = ds.catalog.add(d);
  TaskerBuilder tb(ds.catalog);
  for (int i = 0; i < 50; ++i) {
    tb.add(fmt::format("q@n{}", i), i);
    tb.set(slots, "4");
    tb.set(arch, i % 2 ? "lx" : "sol");
  }
  ds.taskers = std::move(tb).build();
  JobBuilder jb(ds.catalog);
  for (int j = 0; j < 30000; ++j) {
    const uint32_t k = jb.add(fmt::format("job,{}", j), "u", "g", 0, j, 1 + j % 3);
    jb.set_request(j % 5 == 0 ? "arch==\"sp,arc\"" : j % 2 ? "arch==lx" : "arch==sol");
    if (j % 997 == 0) jb.reject(k, fmt::format("bad \"{}\"", j));
  }
  ds.jobs = std::move(jb).build();
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  const fs::path dir = fs::temp_directory_path() / fmt::format("colmatch-results-pieces-{}", ::getpid());
  fs::remove_all(dir);
  writers::RunInfo info;
  writers::write_results(dir.string(), ds, m, info);
  const std::string want = writers::results_csv(ds, m), got = slurp(dir / "results.csv");
  fs::remove_all(dir);
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want) << "the pieces are out of order or differ";
  for (const char* row : {"\"job,0\",rejected,,0,\"bad \"\"0\"\"\"\n", "\"job,1\",assigned,q@n",
                          "\"job,5\",pending,,0,\"no eligible tasker: arch==\"\"sp,arc\"\" matches 0 of 50\"\n",
                          ",pending,,0,\"eligible but no free capacity: 25 eligible taskers, none with room now\"\n"})
    EXPECT_NE(got.find(row), std::string::npos) << row;
  EXPECT_EQ(std::count(got.begin(), got.end(), '\n'), 30001) << "one row per job (each asks for one tasker)";
}

// categories.csv formats its rows in parallel: one row per category, in category order, each naming its
// own hash, job count and request (3,000 categories, more than a thread's share).
TEST(Results, CategoryRowsAreInCategoryOrder) {
  loaders::Dataset ds;
  AttributeDef d;
  d.name = "arch";
  const uint32_t arch = ds.catalog.add(d);
  TaskerBuilder tb(ds.catalog);
  for (int i = 0; i < 20; ++i) {
    tb.add(fmt::format("t{}", i), i);
    tb.set(arch, fmt::format("v{}", i));
  }
  ds.taskers = std::move(tb).build();
  JobBuilder jb(ds.catalog);
  for (int j = 0; j < 9000; ++j) {
    jb.add(fmt::format("j{}", j), "u", "g", 0, j);
    jb.set_request(fmt::format("arch==v{}", (j * 7) % 3000));
  }
  ds.jobs = std::move(jb).build();
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  ASSERT_EQ(m.categories.size(), 3000u);
  const std::string csv = writers::categories_csv(ds, m);
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "category,jobs,slots,eligible_taskers,representation,request,steps");
  for (size_t c = 0; c < m.categories.size(); ++c) {
    ASSERT_TRUE(std::getline(in, line)) << "row " << c;
    std::string request;  // as a CSV field
    writers::csv_field(request, ds.jobs.request_text[m.categories.request[c]]);
    ASSERT_EQ(line.rfind(fmt::format("{:016x},{},1,", m.categories.hash[c], m.categories.job_count[c]), 0), 0u)
        << "row " << c << ": " << line;
    ASSERT_NE(line.find(request), std::string::npos) << "row " << c << ": " << line;
  }
  EXPECT_FALSE(std::getline(in, line)) << "one row per category";
}

}  // namespace

// save_native writes taskers.jsonl and jobs.jsonl in pieces of rows (issue 45: import built each file as one
// string and ran out of memory where match of the same jobs fit): the files are byte for byte the texts
// the *_text functions make, over several pieces.
TEST(NativeWriter, FilesWrittenInPiecesAreTheWholeTexts) {
  synth::SynthSpec spec;
  spec.taskers = 40000;
  spec.jobs = 50000;
  spec.categories = 50;
  spec.seed = 3;
  const loaders::Dataset ds = synth::generate(spec);
  const fs::path dir = fs::temp_directory_path() / ("colmatch-native-pieces-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  writers::save_native(dir.string(), ds);
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(slurp(dir / "taskers.jsonl"), writers::taskers_jsonl_text(ds));
  EXPECT_EQ(slurp(dir / "jobs.jsonl"), writers::jobs_jsonl_text(ds));
  EXPECT_EQ(slurp(dir / "farm.toml"), writers::farm_toml_text(ds));
  fs::remove_all(dir);
}
