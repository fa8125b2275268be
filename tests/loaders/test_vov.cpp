// `--format vov` (loaders/vov.hpp, issue 10): the demo Accelerator farm (datasets/demo/vov) matched and
// simulated: maps expanded per job, the greatest-power eligible tasker, a licence pool taken in dispatch
// order and given back when the job ends, a cycle and a bad list rejected naming the job.
#include <array>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <zlib.h>

#include "engine/batch/matcher.hpp"
#include "engine/model/vov.hpp"
#include "engine/schedule/simulation.hpp"
#include "loaders/errors.hpp"
#include "loaders/native.hpp"
#include "loaders/policy.hpp"
#include "loaders/vov.hpp"
#include "loaders/writers/results.hpp"
#include "loaders/writers/simulation_writer.hpp"

using namespace colmatch;

namespace {

const std::string kDir = COLMATCH_SOURCE_DIR "/datasets/demo/vov/";

loaders::Dataset demo() { return loaders::load_vov(kDir + "taskers.tcl", kDir + "resources.tcl", kDir + "jobs.jsonl"); }

// Two taskers: big1 (linux big, power 3) and small1 (linux small, power 1), 4 CPUs each.
constexpr const char* kBigAndSmall =
    "vtk_tasker_define big1 -resources \"linux big\" -CPUS 4 -power 3\n"
    "vtk_tasker_define small1 -resources \"linux small\" -CPUS 4 -power 1\n";

// Writes `text` to a file named `prefix` + `name` in the test's temporary folder; returns its path.
std::string write_file(const std::string& prefix, const std::string& name, const std::string& text) {
  const std::string p = ::testing::TempDir() + "/" + prefix + name;
  FILE* f = std::fopen(p.c_str(), "wb");
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  return p;
}

TEST(VovFormat, DemoFarmMatches) {
  const loaders::Dataset ds = demo();
  ASSERT_EQ(ds.taskers.size(), 4u);
  EXPECT_EQ(ds.taskers.names[0], "lnx01") << "greatest power first";
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  auto tasker = [&](uint32_t j) { return ds.taskers.names[m.dispatch.tasker[j]]; };
  EXPECT_EQ(tasker(0), "lnx01") << "spice: the greatest-power tasker";
  EXPECT_EQ(m.dispatch.status[1], JobStatus::Pending) << "the one spice licence is taken";
  EXPECT_EQ(m.dispatch.reason[1], PendingReason::NoFreeCapacity);
  EXPECT_EQ(tasker(2), "lnx01") << "Tool:hsim maps to License:hsim linux64";
  EXPECT_EQ(tasker(3), "lnx02") << "fast (RAMTOTAL#32000 | diskio) and !diskio";
  EXPECT_EQ(tasker(4), "sol01");
  ASSERT_TRUE(ds.jobs.rejected(5));
  EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[5]].find("job 6: field 'resources': a cycle in the resource maps: "
                                                          "loopa -> loopb -> loopa"),
            std::string::npos);
  EXPECT_EQ(m.dispatch.reason[6], PendingReason::NoEligibleTasker) << "RAM/100000 fits nowhere";
  ASSERT_TRUE(ds.jobs.rejected(7));
  EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[7]].find(":8: job 8: field 'resources': column 18"), std::string::npos)
      << ds.jobs.reject_reason[ds.jobs.reject[7]];
  // the licence pool is global, one unit per job; TIMELEFT from the expected duration
  const auto lic = ds.catalog.find("map:License:spice");
  ASSERT_TRUE(lic);
  EXPECT_EQ(ds.taskers.columns[*lic].global().num, 1);
  // jobs 1 and 2 differ only by duration (60 s, none), which no tasker's TIMELEFT tells apart (every one
  // offers MAXINT): one kind, showing the smaller
  EXPECT_EQ(ds.jobs.request_text[ds.jobs.request[0]], "TIMELEFT>=0");
  EXPECT_EQ(ds.jobs.request[0], ds.jobs.request[1]);
}

TEST(VovFormat, LicencesComeBackWhenJobsEnd) {
  const loaders::Dataset ds = demo();
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, SimConfig{}, kernels::active(), ds.farm);
  EXPECT_EQ(r.start[0], 0);
  EXPECT_EQ(r.start[1], 100) << "job 2 waits for job 1's spice licence";
  EXPECT_TRUE(std::isnan(r.start[6]));
}

TEST(VovFormat, BadFilesNameFileLineAndField) {
  auto write = [](const std::string& name, const std::string& text) { return write_file("colmatch-vov-", name, text); };
  const auto taskers = write("t.tcl", "vtk_tasker_define a -resources \"x | y\"\n");
  const auto jobs = write("j.jsonl", "{\"id\": \"1\"}\n");
  try {
    loaders::load_vov(taskers, "", jobs);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 1u);
    EXPECT_EQ(e.field, "-resources");
  }
  const auto good = write("g.tcl", "vtk_tasker_define a\n");
  const auto bad_jobs = write("b.jsonl", "{\"id\": \"1\"}\n{\"id\": \"2\", \"cores\": 3}\n");
  try {
    loaders::load_vov(good, "", bad_jobs);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 2u);
    EXPECT_EQ(e.field, "cores");
  }
}

// The farm's files are read beside jobs.jsonl, on another thread: an error in them (a command, a
// tasker's list, a tasker named twice, a map's list, each in Tcl and in the native files) comes first,
// however far into a large jobs file the jobs' own error is, as a reader taking the farm first gives.
TEST(VovFormat, FarmErrorsComeBeforeJobErrorsThoughReadAtOnce) {
  auto write = [](const std::string& name, const std::string& text) { return write_file("colmatch-vov-", name, text); };
  std::string many;
  for (int i = 0; i < 60000; ++i) many += fmt::format("{{\"id\": \"{}\", \"resources\": \"x\"}}\n", i);
  const auto late_bad = write("late.jsonl", many + "{\"id\": \"z\", \"cores\": 3}\n");
  const auto first_bad = write("first.jsonl", "{\"id\": \"z\", \"cores\": 3}\n" + many);
  const auto good_jobs = write("good.jsonl", many);
  struct Case {
    std::string taskers, resources;
    size_t line;
    std::string field;
  };
  const Case cases[] = {
      {write("cmd.tcl", "vtk_tasker_define a\nputs hi\n"), "", 2, "puts"},
      {write("list.tcl", "vtk_tasker_define a -resources \"x | y\"\n"), "", 1, "-resources"},
      {write("twice.tcl", "vtk_tasker_define a\nvtk_tasker_define a\n"), "", 2, "vtk_tasker_define"},
      {write("ok.tcl", "vtk_tasker_define a\n"), write("maps.tcl", "vtk_resourcemap_set m 1 -map \"(x\"\n"), 1, "-map"},
  };
  for (const Case& c : cases)
    for (const std::string& jobs : {late_bad, first_bad, good_jobs}) {
      try {
        loaders::load_vov(c.taskers, c.resources, jobs);
        ADD_FAILURE() << c.taskers << " " << jobs;
      } catch (const loaders::LoadError& e) {
        EXPECT_EQ(e.file, c.resources.empty() ? c.taskers : c.resources) << jobs << ": " << e.what();
        EXPECT_EQ(e.line, c.line) << e.what();
        EXPECT_EQ(e.field, c.field) << e.what();
      }
    }
  try {  // a good farm: the jobs' error
    loaders::load_vov(cases[3].taskers, "", late_bad);
    ADD_FAILURE();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.file, late_bad);
    EXPECT_EQ(e.line, 60001u);
  }
  // the native files: farm.toml's map, taskers.jsonl's tasker named twice
  const auto farm = write("farm.toml", "[[accelerator.map]]\nname = \"m\"\nmap = \"(x\"\n");
  const auto ok_farm = write("ok.toml", "[[accelerator.map]]\nname = \"m\"\ncount = 1\n");
  const auto taskers = write("t.jsonl", "{\"name\": \"a\"}\n");
  const auto twice = write("twice.jsonl", "{\"name\": \"a\"}\n{\"name\": \"a\"}\n");
  for (const auto& [f, t, file, line] :
       {std::tuple{farm, taskers, farm, size_t{1}}, std::tuple{ok_farm, twice, twice, size_t{2}}})
    try {
      loaders::load_native({f, "", t, late_bad});
      ADD_FAILURE() << f << " " << t;
    } catch (const loaders::LoadError& e) {
      EXPECT_EQ(e.file, file) << e.what();
      EXPECT_EQ(e.line, line) << e.what();
    }
}

// The jobs file is read in parallel pieces of 4 MiB: a file of several pieces gives the errors a reader
// going line by line would give (the first in the file: a repeated id before a bad line, a bad line
// before a repeated id, both occurrences of an id in different pieces), and its jobs in file order with
// each kind's request and a rejected kind's reason naming each job's own line.
TEST(VovFormat, AJobsFileOfManyPiecesReadsAsOneLineByLine) {
  std::vector<std::string> written;
  auto write = [&](const std::string& name, const std::string& text) {
    written.push_back(write_file("colmatch-vov-pieces-", name, text));
    return written.back();
  };
  const auto taskers = write("t.tcl", "vtk_tasker_define a -resources \"big\"\n");
  const std::string pad(200, 'p');  // ~240 bytes a line: 40,000 lines are two pieces and more
  auto line = [&](int id, const std::string& res) {
    return fmt::format("{{\"id\": \"{}\", \"resources\": \"{}\", \"command\": \"{}\"}}\n", id, res, pad);
  };
  auto jobs_file = [&](const std::string& name, int repeat_at, int repeat_of, int bad_at, int repeat2_at = 0,
                       int repeat2_of = 0) {
    std::string text;
    for (int i = 1; i <= 40000; ++i) {
      if (i == bad_at) text += "{\"id\": \"x\", \"cores\": 3}\n";
      else
        text += line(i == repeat_at    ? repeat_of
                     : i == repeat2_at ? repeat2_of
                                       : i,
                     i % 3 == 0   ? "big"
                     : i % 3 == 1 ? "small"
                                  : "(oops");
    }
    return write(name, text);
  };
  auto error_of = [&](const std::string& jobs) -> std::pair<size_t, std::string> {
    try {
      loaders::load_vov(taskers, "", jobs);
    } catch (const loaders::LoadError& e) {
      return {e.line, e.what()};
    }
    return {0, ""};
  };
  auto [line1, what1] = error_of(jobs_file("dup-first.jsonl", 30000, 3, 35000));
  EXPECT_EQ(line1, 30000u);
  EXPECT_NE(what1.find("duplicate job id '3' (first on line 3)"), std::string::npos) << what1;
  auto [line2, what2] = error_of(jobs_file("bad-first.jsonl", 30000, 3, 29999));
  EXPECT_EQ(line2, 29999u);
  EXPECT_NE(what2.find("field 'cores'"), std::string::npos) << what2;
  auto [line3, what3] = error_of(jobs_file("dup-far.jsonl", 39999, 17, 0));
  EXPECT_EQ(line3, 39999u) << what3;
  // two ids repeated (in different buckets of the parallel check): the earlier repeat is named
  for (const auto& [at1, of1, at2, of2] : {std::array<int, 4>{30000, 3, 20000, 10}, {20000, 3, 30000, 10}}) {
    auto [line4, what4] = error_of(jobs_file("dup-two.jsonl", at1, of1, 0, at2, of2));
    const int of = at1 == 20000 ? of1 : of2;
    EXPECT_EQ(line4, 20000u) << what4;
    EXPECT_NE(what4.find(fmt::format("duplicate job id '{}' (first on line {})", of, of)), std::string::npos) << what4;
  }
  const loaders::Dataset ds = loaders::load_vov(taskers, "", jobs_file("good.jsonl", 0, 0, 0));
  ASSERT_EQ(ds.jobs.size(), 40000u);
  for (uint32_t j = 0; j < 40000; ++j) {
    ASSERT_EQ(ds.jobs.id[j], std::to_string(j + 1));
    const int i = static_cast<int>(j + 1);
    if (i % 3 == 2) {
      ASSERT_TRUE(ds.jobs.rejected(j));
      ASSERT_NE(ds.jobs.reject_reason[ds.jobs.reject[j]].find(fmt::format(":{}: job {}: field 'resources'", i, i)),
                std::string::npos)
          << ds.jobs.reject_reason[ds.jobs.reject[j]];
    } else {
      ASSERT_FALSE(ds.jobs.rejected(j));
      ASSERT_EQ(ds.jobs.request_text[ds.jobs.request[j]],
                i % 3 == 0 ? "TIMELEFT>=0 && resources==\"big\"" : "TIMELEFT>=0 && resources==\"small\"")
          << i;
    }
  }
  // the kinds are numbered as the file shows them whatever the threads: the same requests, in the same
  // order, on one thread and on four (pieces read in another interleaving)
  for (const int threads : {1, 4}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    const loaders::Dataset again = loaders::load_vov(taskers, "", written.back());
    EXPECT_EQ(again.jobs.request, ds.jobs.request) << threads << " threads";
    EXPECT_EQ(again.jobs.request_text, ds.jobs.request_text) << threads << " threads";
  }
  for (const std::string& p : written) std::remove(p.c_str());  // 10 MB each
}

// A piece with simdjson's padding readable after it (every piece of a mapped file but its last) is read
// as one stream of documents (parse_many); a piece that is anything but one valid object on each line
// that is not blank is read line by line instead. Each case below, first in a file of several pieces
// (the stream) and alone in a file of one piece (line by line), gives the same jobs (ids, requests,
// rejections) or the same error (line, field, message).
TEST(VovFormat, JobsReadAsAStreamEqualJobsReadLineByLine) {
  const std::string taskers = write_file("colmatch-vov-stream-", "t.tcl", "vtk_tasker_define a -resources \"big\"\n");
  std::string filler;  // after the case: 4.5 MB, so that the case is in the first of two pieces or more
  for (int i = 0; filler.size() < (size_t{9} << 19); ++i)
    filler += fmt::format("{{\"id\": \"filler{}\", \"resources\": \"big\"}}\n", i);
  using namespace std::string_literals;
  const std::string cases[] = {
      // one object on each line that is not blank
      R"({"id": "a", "resources": "big"})"
      "\n"
      R"({"id": "a2", "resources": "small | big"})",
      "  {\"id\": \"b\"}  \t\n\n   \n\t\r\n{\"id\": \"b2\"}",
      "{\"id\": \"c\"}\r\n{\"id\": \"c2\"}\r",
      R"({"id": "d\u00e9\n", "owner": "x", "resources": "(oops"})",
      R"({"id": 5, "resources": "big"})",
      R"({"resources": "big", "id": "e", "id": "e2"})",
      "\xEF\xBB\xBF{\"id\": \"bom\"}\n{\"id\": \"bom2\"}",
      // anything else
      R"({"id": "f"} {"id": "g"})",
      R"({"id": "h"}{"id": "i"})",
      "{\"id\": \"j0\"}\n{\"id\":\n\"j\"}",
      R"({"id": "k"} x)",
      R"({"id": "l")",
      R"(["m"])",
      R"("n")",
      "5",
      "null",
      "{\"id\": \"o\x01\"}",
      "{\"id\": \"p\xff\"}",
      "{\"id\": \"q\"}\0"s,
      "{\"id\": \"r0\"}\n\xEF\xBB\xBF{\"id\": \"r\"}",
      "{\"id\": \"v0\"}\n\v\n{\"id\": \"v\"}",
      R"({"id": "s", "cores": 1})",
      R"({"id": ""})",
      R"({"id": "t", "resources": 3})",
      R"({"id": "u", "runtime": -1})",
      "{\"id\": \"w0\"}\n}",
      "{\"id\": \"x0\"}\n{",
      "{\"id\": \"y0\"}\n{\"id\": \"y\"}\n]",
  };
  auto outcome = [&](const std::string& jobs, size_t first_jobs) {
    std::vector<std::string> out;
    try {
      const loaders::Dataset ds = loaders::load_vov(taskers, "", jobs);
      for (uint32_t j = 0; j < ds.jobs.size() && j < first_jobs; ++j) {
        std::string why = ds.jobs.rejected(j) ? ds.jobs.reject_reason[ds.jobs.reject[j]] : "";
        if (const size_t at = why.find(jobs); at != std::string::npos) why.erase(at, jobs.size());
        out.push_back(std::string(ds.jobs.id[j]) + " | " + ds.jobs.request_text[ds.jobs.request[j]] + " | " + why);
      }
    } catch (const loaders::LoadError& e) {
      std::string what = e.what();
      what.erase(0, e.file.size());
      out.push_back(fmt::format("error {} '{}' {}", e.line, e.field, what));
    }
    return out;
  };
  int n = 0;
  for (const std::string& c : cases) {
    const std::string alone = write_file("colmatch-vov-stream-", "alone.jsonl", c + "\n");
    const std::vector<std::string> want = outcome(alone, SIZE_MAX);
    const std::string first = write_file("colmatch-vov-stream-", "first.jsonl", c + "\n" + filler);
    EXPECT_EQ(outcome(first, want.size()), want) << "case " << n << ": " << c;
    ++n;
  }
  std::remove(write_file("colmatch-vov-stream-", "first.jsonl", "").c_str());
}

// A piece keeps a time column only once a job in it gives that time (none is kept while every job's is
// the default: submit 0, runtime and walltime unknown): times given on a few lines, in some pieces and
// not others, land on their own jobs, every other job keeping the default (-0 kept as given).
TEST(VovFormat, TimesGivenOnFewLinesLandOnTheirOwnJobs) {
  const std::string taskers = write_file("colmatch-vov-times-", "t.tcl", "vtk_tasker_define a\n");
  std::string text;
  const int n = 60000;  // ~80 bytes a line: two pieces
  for (int i = 0; i < n; ++i) {
    text += fmt::format("{{\"id\": \"t{}\"", i);
    if (i == 9) text += ", \"submit\": 30";
    if (i == 11) text += ", \"submit\": -0.0";
    if (i == 54000) text += ", \"walltime\": 600";
    if (i % 2 == 1) text += fmt::format(", \"runtime\": {}", i);
    text += ", \"resources\": \"pad-pad-pad-pad-pad-pad-pad\"}\n";
  }
  const std::string jobs = write_file("colmatch-vov-times-", "j.jsonl", text);
  const loaders::Dataset ds = loaders::load_vov(taskers, "", jobs);
  ASSERT_EQ(ds.jobs.size(), static_cast<size_t>(n));
  for (uint32_t j = 0; j < n; ++j) {
    ASSERT_EQ(ds.jobs.submit[j], j == 9 ? 30.0 : 0.0) << j;
    ASSERT_EQ(std::signbit(ds.jobs.submit[j]), j == 11) << j;
    ASSERT_EQ(std::isnan(ds.jobs.walltime[j]), j != 54000) << j;
    ASSERT_EQ(std::isnan(ds.jobs.runtime[j]), j % 2 == 0) << j;
    if (j % 2 == 1) {
      ASSERT_EQ(ds.jobs.runtime[j], j) << j;
    }
  }
  EXPECT_EQ(ds.jobs.walltime[54000], 600);
  std::remove(jobs.c_str());
}

// Thousands of kinds (12,500: 2,500 lists by 5 owners) met in every piece on every thread, so each
// thread's own table of kinds grows many times and most kinds are met by two threads: each job keeps
// its own list, owner and id (escaped in JSON on some lines), CR LF lines and a last line without its
// newline read as the others, the gzipped file (read in blocks) gives the same table, and one thread
// and four give the same requests in the same order.
TEST(VovFormat, ThousandsOfKindsOverPiecesKeepEachJobsOwn) {
  const std::string taskers = write_file("colmatch-vov-kinds-", "t.tcl", "vtk_tasker_define a -resources \"big\"\n");
  const std::string pad(200, 'p');  // ~270 bytes a line: 40,000 lines are three pieces
  const int n = 40000;
  std::string text;
  for (int i = 0; i < n; ++i) {
    const std::string id = i % 7 == 0 ? fmt::format("j\\u00e9{}", i) : fmt::format("j{}", i);
    text += fmt::format(R"({{"id": "{}", "resources": "r{}", "command": "vov tool{} {}", "owner": "u{}"}})", id,
                        i % 2500, i % 3, pad, i % 5);
    if (i + 1 < n) text += i % 11 == 0 ? "\r\n" : "\n";
  }
  const std::string plain = write_file("colmatch-vov-kinds", ".jsonl", text), gz = plain + ".gz";
  {
    gzFile g = gzopen(gz.c_str(), "wb");
    gzwrite(g, text.data(), static_cast<unsigned>(text.size()));
    gzclose(g);
  }
  const loaders::Dataset ds = loaders::load_vov(taskers, "", plain);
  ASSERT_EQ(ds.jobs.size(), static_cast<size_t>(n));
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    const std::string id = j % 7 == 0 ? fmt::format("j\u00e9{}", j) : fmt::format("j{}", j);
    ASSERT_EQ(ds.jobs.id[j], id);
    ASSERT_EQ(ds.jobs.owners.value(ds.jobs.owner[j]), fmt::format("u{}", j % 5)) << j;
    ASSERT_FALSE(ds.jobs.rejected(j)) << j;
    ASSERT_NE(ds.jobs.request_text[ds.jobs.request[j]].find(fmt::format("resources==\"r{}\"", j % 2500)),
              std::string::npos)
        << j << ": " << ds.jobs.request_text[ds.jobs.request[j]];
  }
  const loaders::Dataset zipped = loaders::load_vov(taskers, "", gz);
  EXPECT_EQ(zipped.jobs.id, ds.jobs.id);
  EXPECT_EQ(zipped.jobs.request, ds.jobs.request);
  EXPECT_EQ(zipped.jobs.request_text, ds.jobs.request_text);
  for (const int threads : {1, 4}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    const loaders::Dataset again = loaders::load_vov(taskers, "", plain);
    EXPECT_EQ(again.jobs.request, ds.jobs.request) << threads << " threads";
    EXPECT_EQ(again.jobs.request_text, ds.jobs.request_text) << threads << " threads";
    EXPECT_EQ(again.jobs.owner, ds.jobs.owner) << threads << " threads";
  }
  for (const std::string& p : {taskers, plain, gz}) std::remove(p.c_str());
}

// Issue 10: a job that waits because a counted map has nothing left says which map (its farm-wide
// pool, map:NAME); a job whose expansion VOV curtails past the depth count of 30 is matched as VOV
// matches it and carries the note "depth limit" in results.csv, counted in summary.json.
TEST(VovFormat, PendingReasonNamesTheExhaustedMap) {
  const loaders::Dataset ds = demo();
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  const std::string csv = writers::results_csv(ds, m);
  EXPECT_NE(csv.find("\n2,pending,,0,\"eligible but no free capacity: 4 eligible taskers, none with room now; "
                     "waiting for License:spice: 0 of 1 free\"\n"),
            std::string::npos)
      << csv;
  EXPECT_EQ(csv.find("License:hsim:"), std::string::npos) << "hsim licences are left";
}

// Issue 27, item 1: a quantity on a mapped name is mapped ("If the resource map is found and there is
// enough of it ... the vovservers maps the resource", seed 000). Four quad licences: a job asking three
// (`License:quad#3`) runs, a job asking two then waits naming the map and its units, a job asking one
// (`License:quad/1`) takes the last; `fast#2` on a map without a count is replaced by its map. Before,
// each of these names was left for the taskers to offer and no tasker could run them.
TEST(VovFormat, AQuantityOnAMappedNameTakesThatManyUnits) {
  auto write = [](const std::string& name, const std::string& text) {
    return write_file("colmatch-vov-quantity-", name, text);
  };
  const auto taskers = write("t.tcl",
                             "vtk_tasker_define a -resources \"linux64\" -CPUS 8 -power 2\n"
                             "vtk_tasker_define b -resources \"linux64 big\" -CPUS 8 -power 1\n");
  const auto resources = write("r.tcl",
                               "vtk_resourcemap_set License:quad 4\n"
                               "vovresourcemgr set fast -map \"big\"\n");
  const auto jobs = write("j.jsonl",
                          "{\"id\": \"three\", \"resources\": \"License:quad#3\"}\n"
                          "{\"id\": \"two\", \"resources\": \"License:quad#2\"}\n"
                          "{\"id\": \"one\", \"resources\": \"License:quad/1\"}\n"
                          "{\"id\": \"fast\", \"resources\": \"fast#2\"}\n");
  const loaders::Dataset ds = loaders::load_vov(taskers, resources, jobs);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  const std::string csv = writers::results_csv(ds, m);
  EXPECT_NE(csv.find("\nthree,assigned,a,1,\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\ntwo,pending,,0,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\none,assigned,a,1,\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nfast,assigned,b,1,\n"), std::string::npos) << csv;
  const auto quad = ds.catalog.find("map:License:quad");
  ASSERT_TRUE(quad);
  EXPECT_EQ(m.dispatch.capacity.global_free(static_cast<size_t>(ds.catalog.consumable_slot(*quad))), 0)
      << "3 + 1 of 4 units taken";
}

// Issue 27, items 2 and 4: counted maps are decided when a job is dispatched, and an OR job holds only
// the alternative it runs by (seed 000: OR alternatives are "scheduling solutions"; a map "not
// available" leaves the job in the queue). One ora and one orb licence: `License:ora | License:orb`
// takes ora, so a later `License:orb` runs (before, the first held both and the second waited); a third
// OR job finds neither and waits naming both; with the one `License:fast` taken, `License:fast big |
// small` drops the exhausted alternative and runs on small1 (before: it held the licence and waited).
// In simulate the third starts when orb comes back at 50 s; stopped at 20 s, schedule.csv names the maps.
TEST(VovFormat, AnOrJobHoldsOnlyTheAlternativeItRunsBy) {
  auto write = [](const std::string& name, const std::string& text) {
    return write_file("colmatch-vov-or-", name, text);
  };
  const auto taskers = write("t.tcl", kBigAndSmall);
  const auto resources = write("r.tcl",
                               "vtk_resourcemap_set License:ora 1\nvtk_resourcemap_set License:orb 1\n"
                               "vtk_resourcemap_set License:fast 1\n");
  const auto jobs =
      write("j.jsonl",
            "{\"id\": \"either\", \"resources\": \"License:ora | License:orb\", \"runtime\": 100}\n"
            "{\"id\": \"orb\", \"resources\": \"License:orb\", \"runtime\": 50}\n"
            "{\"id\": \"none-left\", \"resources\": \"License:ora | License:orb\", \"runtime\": 10}\n"
            "{\"id\": \"fast\", \"resources\": \"License:fast big\", \"runtime\": 100}\n"
            "{\"id\": \"fast-or-small\", \"resources\": \"License:fast big | small\", \"runtime\": 10}\n");
  const loaders::Dataset ds = loaders::load_vov(taskers, resources, jobs);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  const std::string csv = writers::results_csv(ds, m);
  EXPECT_NE(csv.find("\neither,assigned,big1,1,\norb,assigned,big1,1,\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nnone-left,pending,,0,\"eligible but no free capacity: 2 eligible taskers, none with room now; "
                     "waiting for License:ora: 0 of 1 free or License:orb: 0 of 1 free\"\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("\nfast,assigned,big1,1,\nfast-or-small,assigned,small1,1,\n"), std::string::npos) << csv;
  for (const char* map : {"map:License:ora", "map:License:orb", "map:License:fast"})
    EXPECT_EQ(m.dispatch.capacity.global_free(static_cast<size_t>(ds.catalog.consumable_slot(*ds.catalog.find(map)))),
              0)
        << map << ": one unit each, taken once";
  SimConfig p = ds.policy;
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, p, kernels::active(), ds.farm);
  EXPECT_EQ(r.start[1], 0) << "orb runs beside the OR job";
  EXPECT_EQ(r.start[2], 50) << "the third takes orb when it comes back";
  EXPECT_EQ(r.start[4], 0);
  EXPECT_EQ(ds.taskers.names[r.allocations[r.alloc_first[4]].tasker], "small1");
  p.until = 20;
  const std::string schedule =
      writers::schedule_csv(ds, simulate(ds.catalog, ds.taskers, ds.jobs, p, kernels::active(), ds.farm));
  EXPECT_NE(
      schedule.find("\nnone-left,0,,,,,0,,,pending,eligible but no free capacity: waiting for License:ora: 0 of 1 "
                    "free or License:orb: 0 of 1 free\n"),
      std::string::npos)
      << schedule;
}

// Issue 27, item 2, the seed's order of stops: "the resource is not available. In this case, the job
// cannot be dispatched and is left in the job queue" comes before "a cycle in the mapping is detected;
// in this case the job ... is removed". With the one `License:a` taken, `License:a loopa` waits for it
// (before: rejected at load) and is removed when it comes back; `(License:a loopa | small)` drops the
// alternative that leads to the cycle and runs on small1, while the same list submitted after the licence
// is back is removed; `loopa` alone meets no counted map first and is rejected at load, as before.
TEST(VovFormat, AMapNotAvailableStopsTheWalkBeforeACycle) {
  auto write = [](const std::string& name, const std::string& text) {
    return write_file("colmatch-vov-stops-", name, text);
  };
  const auto taskers = write("t.tcl", kBigAndSmall);
  const auto resources = write("r.tcl",
                               "vtk_resourcemap_set License:a 1\nvovresourcemgr set loopa -map \"loopb\"\n"
                               "vovresourcemgr set loopb -map \"loopa\"\n");
  const auto jobs =
      write("j.jsonl",
            "{\"id\": \"holds-a\", \"resources\": \"License:a\", \"runtime\": 100}\n"
            "{\"id\": \"a-then-cycle\", \"resources\": \"License:a loopa\", \"runtime\": 10}\n"
            "{\"id\": \"cycle-or-small\", \"resources\": \"(License:a loopa | small)\", \"runtime\": 10}\n"
            "{\"id\": \"cycle\", \"resources\": \"loopa\", \"runtime\": 10}\n"
            "{\"id\": \"late\", \"resources\": \"(License:a loopa | small)\", \"submit\": 150, \"runtime\": 10}\n");
  const loaders::Dataset ds = loaders::load_vov(taskers, resources, jobs);
  EXPECT_FALSE(ds.jobs.rejected(1)) << "decided when dispatched";
  EXPECT_TRUE(ds.jobs.rejected(3)) << "no counted map before its cycle";
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  const std::string csv = writers::results_csv(ds, m);
  EXPECT_NE(csv.find("\na-then-cycle,pending,,0,waiting for License:a: 0 of 1 free\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\ncycle-or-small,assigned,small1,1,\n"), std::string::npos) << csv;
  const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, ds.policy, kernels::active(), ds.farm);
  EXPECT_EQ(r.reason[1], SimReason::Removed);
  EXPECT_EQ(r.detail[1], "at 100 s: a cycle in the resource maps: loopa -> loopb -> loopa");
  EXPECT_EQ(r.start[2], 0);
  EXPECT_EQ(r.reason[4], SimReason::Removed) << "the licence is free when it comes";
  const std::string schedule = writers::schedule_csv(ds, r);
  EXPECT_NE(schedule.find("\na-then-cycle,0,,,,,0,,,rejected,removed at 100 s: a cycle in the resource maps: loopa -> "
                          "loopb -> loopa\n"),
            std::string::npos)
      << schedule;
}

// Issue 28: a kind is not keyed on a value that does not change its expansion. A job's duration matters
// only through TIMELEFT#<duration>, so 3,000 jobs alike but for distinct durations make as many
// categories as the taskers' TIMELEFT values tell apart: one on a farm whose taskers offer none (before:
// 3,000), three where they offer 100 s and 1,000 s (<= 100, <= 1,000, more); each job still runs only
// where its own duration fits.
TEST(VovFormat, DistinctDurationsMakeOnlyTheCategoriesTaskersTellApart) {
  auto write = [](const std::string& name, const std::string& text) {
    return write_file("colmatch-vov-dur-", name, text);
  };
  std::string jobs;
  for (int i = 0; i < 3000; ++i)
    jobs += fmt::format("{{\"id\": \"{}\", \"resources\": \"linux\", \"expected_duration\": {}}}\n", i, 1 + i * 0.5);
  const auto jobs_file = write("j.jsonl", jobs);
  const auto plain = write("plain.tcl", "vtk_tasker_define a -resources \"linux\" -CPUS 4000\n");
  const loaders::Dataset one = loaders::load_vov(plain, "", jobs_file);
  EXPECT_EQ(run_match(one.catalog, one.taskers, one.jobs, kernels::active()).categories.size(), 1u);
  const auto timed = write("timed.tcl",
                           "vtk_tasker_define short -resources \"linux TIMELEFT#100\" -CPUS 4000 -power 3\n"
                           "vtk_tasker_define mid -resources \"linux TIMELEFT#1000\" -CPUS 4000 -power 2\n"
                           "vtk_tasker_define long -resources \"linux\" -CPUS 4000 -power 1\n");
  const loaders::Dataset ds = loaders::load_vov(timed, "", jobs_file);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  EXPECT_EQ(m.categories.size(), 3u);
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    const double need = std::ceil(1 + j * 0.5);
    const std::string want = need <= 100 ? "short" : need <= 1000 ? "mid" : "long";
    ASSERT_EQ(ds.taskers.names[m.dispatch.tasker[j]], want) << "job " << j << ", " << need << " s";
  }
}

// Issue 28: memory grows with what is distinct. A farm of 20,000 counted maps whose 200 jobs hold one each
// has 200 pools, not 20,000 consumables charged by every category (100,000 maps and 2,000 jobs took
// 3.2 GB); a $pe_slots category keeps no per-job (master) charge vector at all.
TEST(VovFormat, CountedMapsNoJobHoldsCostNothing) {
  auto write = [](const std::string& name, const std::string& text) {
    return write_file("colmatch-vov-pools-", name, text);
  };
  std::string maps, jobs;
  for (int i = 0; i < 20000; ++i) maps += fmt::format("vtk_resourcemap_set L{} 5\n", i);
  for (int i = 0; i < 200; ++i) jobs += fmt::format("{{\"id\": \"{}\", \"resources\": \"L{}\"}}\n", i, i * 100);
  const loaders::Dataset ds = loaders::load_vov(write("t.tcl", "vtk_tasker_define a -CPUS 400\n"), write("r.tcl", maps),
                                                write("j.jsonl", jobs));
  size_t pools = 0;
  for (const uint32_t a : ds.catalog.consumables()) pools += ds.catalog.at(a).name.starts_with("map:");
  EXPECT_EQ(pools, 200u);
  EXPECT_FALSE(ds.catalog.find("map:L1")) << "held by no job";
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  EXPECT_EQ(m.dispatch.assigned, 200u);
  EXPECT_TRUE(m.categories.master_charge[0].empty()) << "$pe_slots";
}

// Issue 28: the distinct lists' expansions are bounded in all (VovOptions::max_expanded_resources, 2^22 by
// default): a map of many names used by many distinct lists (300k names, 200 lists: 24 GB) keeps the
// lists that fit, in the file's order, and rejects the others naming the bound; smaller ones after them
// still fit. The same whatever the thread count.
TEST(VovFormat, ExpandedListsAreBoundedInAll) {
  auto write = [](const std::string& name, const std::string& text) {
    return write_file("colmatch-vov-bound-", name, text);
  };
  std::string names, jobs;
  for (int i = 0; i < 1000; ++i) names += fmt::format(" n{}", i);
  for (int i = 0; i < 10; ++i) jobs += fmt::format("{{\"id\": \"big{}\", \"resources\": \"big t{}\"}}\n", i, i);
  jobs += "{\"id\": \"small\", \"resources\": \"t0\"}\n";
  loaders::VovOptions options;
  options.max_expanded_resources = 3500;  // three of the big lists (1,000-odd resources each)
  const auto taskers = write("t.tcl", "vtk_tasker_define a -resources \"n1\" -CPUS 8\n");
  const auto resources = write("r.tcl", "vovresourcemgr set big -map \"" + names + "\"\n");
  const auto jobs_file = write("j.jsonl", jobs);
  for (const int threads : {1, 2, 8}) {
    const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
    const loaders::Dataset ds = loaders::load_vov(taskers, resources, jobs_file, {}, options);
    for (uint32_t j = 0; j < 10; ++j) ASSERT_EQ(ds.jobs.rejected(j), j >= 3) << "job big" << j << ", " << threads;
    EXPECT_FALSE(ds.jobs.rejected(10)) << "a small list after them still fits";
    EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[3]].find("more than the 3500 colmatch keeps for the farm's distinct "
                                                            "lists together"),
              std::string::npos)
        << ds.jobs.reject_reason[ds.jobs.reject[3]];
  }
}

TEST(VovFormat, DepthLimitIsNotedAndCounted) {
  auto write = [](const std::string& name, const std::string& text) {
    return write_file("colmatch-vov-depth-", name, text);
  };
  // a chain m0 -> m1 -> ... -> m39 -> linux: entering it at m0 passes the depth count of 30 (3 appended
  // resources, 1 listed, 1 per map entered), entering it at m30 does not
  std::string maps;
  for (int i = 0; i < 40; ++i)
    maps += "vovresourcemgr set m" + std::to_string(i) + " -map \"" +
            (i == 39 ? std::string("linux") : "m" + std::to_string(i + 1)) + "\"\n";
  const auto taskers = write("t.tcl", "vtk_tasker_define a -resources \"linux\" -CPUS 4\n");
  const auto resources = write("r.tcl", maps);
  const auto jobs =
      write("j.jsonl", "{\"id\": \"deep\", \"resources\": \"m0\"}\n{\"id\": \"short\", \"resources\": \"m30\"}\n");
  const loaders::Dataset ds = loaders::load_vov(taskers, resources, jobs);
  ASSERT_EQ(ds.jobs.size(), 2u);
  ASSERT_NE(ds.jobs.note[0], kNone);
  EXPECT_EQ(ds.jobs.notes.value(ds.jobs.note[0]), "depth limit");
  EXPECT_EQ(ds.jobs.note[1], kNone);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  EXPECT_EQ(m.dispatch.status[1], JobStatus::Assigned) << "m30 reaches linux within the depth";
  EXPECT_EQ(m.dispatch.status[0], JobStatus::Pending) << "curtailed: a map name no tasker offers is left";
  const std::string csv = writers::results_csv(ds, m);
  // each map entered costs 2 (the resource visited, the map entered): traversal stops at m15
  EXPECT_NE(csv.find("\ndeep,pending,,0,\"no eligible tasker: resources==\"\"m15\"\" matches 0 of 1; depth limit\"\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("\nshort,assigned,a,1,\n"), std::string::npos) << csv;
  writers::RunInfo info;
  EXPECT_NE(writers::summary_json(ds, m, info).find("\"notes\": {\"depth limit\": 1}"), std::string::npos);
}

// The reader expands each kind of job once per what its expansion depends on: its list, its duration and
// those appended resources (Priority:, Tool:, User:, Group:) a map names. An appended resource no map
// names still counts toward the depth, so a job with an unmapped tool and a job with none expand apart
// when a mapped Group: comes after near the depth limit, and two unmapped tools alike: each job's note
// and request equal vov::expand's for it, for every length of list around the limit.
TEST(VovFormat, KindsExpandedOnceKeepWhatTheirOwnExpansionSays) {
  auto write = [](const std::string& name, const std::string& text) {
    return write_file("colmatch-vov-reps-", name, text);
  };
  std::string maps = "vovresourcemgr set Group:g0 -map \"c0\"\n";
  for (int i = 0; i < 12; ++i)
    maps += fmt::format("vovresourcemgr set c{} -map \"{}\"\n", i,
                        i == 11 ? std::string("linux") : fmt::format("c{}", i + 1));
  std::map<std::string, vov::ResourceMap, std::less<>> expand_maps;
  expand_maps["Group:g0"].map = vov::parse_resources("c0");
  for (int i = 0; i < 12; ++i)
    expand_maps[fmt::format("c{}", i)].map =
        vov::parse_resources(i == 11 ? std::string("linux") : fmt::format("c{}", i + 1));
  const auto taskers = write("t.tcl", "vtk_tasker_define a -resources \"linux\" -CPUS 4\n");
  const auto resources = write("r.tcl", maps);
  std::string jobs;
  std::vector<vov::JobResources> want;
  const char* const commands[] = {"", "spice a.sp", "hsim b", "vov spice c"};
  for (int n = 1; n <= 30; ++n) {
    std::string list = "linux";
    for (int k = 1; k < n; ++k) list += fmt::format(" r{}", k);
    for (const char* command : commands) {
      jobs += fmt::format(R"({{"id": "j{}", "resources": "{}", "command": "{}", "group": "g0"}})", want.size(), list,
                          command) +
              "\n";
      want.push_back({list, command, "", "g0", "", 0});
    }
  }
  const loaders::Dataset ds = loaders::load_vov(taskers, resources, write("j.jsonl", jobs));
  ASSERT_EQ(ds.jobs.size(), want.size());
  size_t apart = 0;
  for (uint32_t j = 0; j < want.size(); ++j) {
    const vov::Expansion e = vov::expand(
        want[j], expand_maps, [](std::string_view, double) { return true; }, {}, vov::Wrappers::standard());
    ASSERT_EQ(ds.jobs.note[j] != kNone, e.curtailed) << "job " << j << " list " << want[j].resources;
    if (j % 4 == 1) apart += e.curtailed != (ds.jobs.note[j - 1] != kNone);  // a tool (unmapped) or none
  }
  EXPECT_GT(apart, 0u) << "some list length expands apart with and without a tool";
}

// Issue 10: `$` resources are named substitutions in the policy's [policy.vov.dollars]; the wrappers a
// tool is found after are [policy.vov] wrappers; a tasker's `@NAME@` symbols are @HOST@, @CPUS@, @STD@
// and the policy's [policy.vov.symbols]. A `$` name without definition rejects the job naming it; an
// `@` symbol without one is an error naming the taskers file, line and field; so is an unknown key.
TEST(VovFormat, DollarResourcesWrappersAndTaskerSymbolsFromThePolicy) {
  auto write = [](const std::string& name, const std::string& text) {
    return write_file("colmatch-vov-policy-", name, text);
  };
  const auto policy = write("policy.toml",
                            "[policy]\nbackfill = \"easy\"\n[policy.vov]\nwrappers = [\"mywrap\"]\n"
                            "[policy.vov.dollars]\nBIG = \"RAMTOTAL#32000 | diskio\"\n"
                            "[policy.vov.symbols]\nOS = \"linux64 OS:linux64\"\n");
  const loaders::VovOptions o = loaders::read_vov_policy_toml(policy);
  EXPECT_EQ(o.wrappers, std::vector<std::string>{"mywrap"});
  EXPECT_EQ(loaders::read_policy_toml(policy).backfill, BackfillPolicy::Easy) << "the simulation keys still read";
  EXPECT_EQ(loaders::replace_tasker_symbols("@STD@ x", "h1", 4, o), "h1 CPUS/4 linux64 OS:linux64 x");
  {  // bounded: symbols that fan out into empty ones (1000^3 replacements) are refused, not run
    loaders::VovOptions fan;
    for (int i = 0; i < 1000; ++i) {
      fan.symbols["A"] += "@B@";
      fan.symbols["B"] += "@C@";
    }
    fan.symbols["C"] = "";
    EXPECT_THROW(loaders::replace_tasker_symbols("@A@", "h", 1, fan), std::invalid_argument);
    fan.symbols["S"] = "@S@";
    EXPECT_THROW(loaders::replace_tasker_symbols("@S@", "h", 1, fan), std::invalid_argument) << "nests past 8";
  }
  const auto taskers = write("t.tcl",
                             "vtk_tasker_define small -resources \"@STD@ RAMTOTAL#16000\" -CPUS 2 -power 9\n"
                             "vtk_tasker_define big -resources \"@HOST@ RAMTOTAL#64000\" -CPUS 8\n");
  const auto resources = write("r.tcl", "vovresourcemgr set Tool:hsim -map \"OS:linux64\"\n");
  const auto jobs = write("j.jsonl",
                          "{\"id\": \"big\", \"resources\": \"$BIG\"}\n"
                          "{\"id\": \"named\", \"resources\": \"big\"}\n"
                          "{\"id\": \"hsim\", \"command\": \"mywrap /bin/hsim x\"}\n"
                          "{\"id\": \"hsim-vov\", \"command\": \"vov hsim x\"}\n"
                          "{\"id\": \"undefined\", \"resources\": \"$NOPE\"}\n");
  const loaders::Dataset ds = loaders::load_vov(taskers, resources, jobs, {}, o);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  auto tasker = [&](uint32_t j) {
    return m.dispatch.status[j] == JobStatus::Assigned ? ds.taskers.names[m.dispatch.tasker[j]] : std::string("-");
  };
  EXPECT_EQ(tasker(0), "big") << "$BIG: RAMTOTAL#32000 | diskio";
  EXPECT_EQ(tasker(1), "big") << "@HOST@ offers the host name";
  EXPECT_EQ(tasker(2), "small") << "the tool after mywrap is hsim, mapped to what only @STD@'s @OS@ offers";
  EXPECT_EQ(tasker(3), "small") << "vov is no wrapper here: the tool is vov, no map, any tasker (small: power 9)";
  ASSERT_TRUE(ds.jobs.rejected(4));
  EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[4]].find("$NOPE"), std::string::npos);
  // errors
  const auto bad_symbol = write("bad.tcl", "vtk_tasker_define a\nvtk_tasker_define b -resources \"@ARCH@\"\n");
  try {
    loaders::load_vov(bad_symbol, "", jobs, {}, o);
    FAIL();
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.line, 2u);
    EXPECT_EQ(e.field, "-resources");
    EXPECT_NE(std::string(e.what()).find("@ARCH@"), std::string::npos) << e.what();
  }
  for (const char* text :
       {"[policy.vov]\nwrapper = [\"x\"]\n", "[policy.vov.dollars]\nX = \"(a\"\n", "[policy.vov.symbols]\nX = 3\n"}) {
    const auto bad = write("bad.toml", text);
    EXPECT_THROW(loaders::read_vov_policy_toml(bad), loaders::LoadError) << text;
    EXPECT_THROW(loaders::read_policy_toml(bad), loaders::LoadError) << text;
  }
}

}  // namespace

// Issue 10: "the native format gains the same fields so that all of it works with --farm". The demo
// farm written raw in the native files (datasets/demo/vov_native: [accelerator] maps in farm.toml,
// resource lists in taskers.jsonl, the same jobs.jsonl) matches and simulates as the Tcl files do; bad
// native files name file, line and field.
TEST(VovNative, DemoFarmInTheNativeFilesMatchesAsTheTclFiles) {
  const std::string nd = COLMATCH_SOURCE_DIR "/datasets/demo/vov_native/";
  ASSERT_TRUE(loaders::is_accelerator_farm(nd + "farm.toml"));
  EXPECT_FALSE(loaders::is_accelerator_farm(COLMATCH_SOURCE_DIR "/datasets/demo/farm.toml"));
  const loaders::Dataset tcl = demo();
  const loaders::Dataset nat = loaders::load_native({nd + "farm.toml", "", nd + "taskers.jsonl", nd + "jobs.jsonl"});
  EXPECT_EQ(nat.name, "vov-demo");
  EXPECT_EQ(nat.taskers.names, tcl.taskers.names);
  EXPECT_EQ(nat.taskers.power, tcl.taskers.power);
  const MatchOutcome a = run_match(tcl.catalog, tcl.taskers, tcl.jobs, kernels::active());
  const MatchOutcome b = run_match(nat.catalog, nat.taskers, nat.jobs, kernels::active());
  EXPECT_EQ(b.dispatch.status, a.dispatch.status);
  EXPECT_EQ(b.dispatch.tasker, a.dispatch.tasker);
  EXPECT_EQ(b.dispatch.reason, a.dispatch.reason);
  ASSERT_TRUE(nat.jobs.rejected(5));
  EXPECT_NE(nat.jobs.reject_reason[nat.jobs.reject[5]].find("loopa -> loopb -> loopa"), std::string::npos);
  const SimResult r = simulate(nat.catalog, nat.taskers, nat.jobs, SimConfig{}, kernels::active(), nat.farm);
  EXPECT_EQ(r.start[1], 100) << "job 2 waits for job 1's spice licence";
}

TEST(VovNative, BadNativeFilesNameFileLineAndField) {
  auto write = [](const std::string& name, const std::string& text) {
    return write_file("colmatch-vovnative-", name, text);
  };
  const std::string jobs = write("jobs.jsonl", "{\"id\": \"1\", \"resources\": \"linux64\"}\n");
  const std::string good_farm = write("good.toml", "[accelerator]\n");
  const std::string good_taskers = write("good.jsonl", "{\"name\": \"a\", \"resources\": \"linux64\"}\n");
  auto expect = [&](const std::string& farm, const std::string& taskers, const std::string& file, size_t line,
                    const std::string& field, const std::string& words) {
    try {
      (void)loaders::load_native({farm, "", taskers, jobs});
      ADD_FAILURE() << "no error for " << field;
    } catch (const loaders::LoadError& e) {
      EXPECT_EQ(e.file, file) << e.what();
      EXPECT_EQ(e.line, line) << e.what();
      EXPECT_EQ(e.field, field) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  EXPECT_EQ(loaders::load_native({good_farm, "", good_taskers, jobs}).taskers.size(), 1u);
  const std::string attr = write("attr.toml", "[accelerator]\n[[attribute]]\nname = \"x\"\n");
  expect(attr, good_taskers, attr, 2, "attribute", "unknown key in an Accelerator farm");
  const std::string no_name = write("noname.toml", "[accelerator]\n[[accelerator.map]]\ncount = 2\n");
  expect(no_name, good_taskers, no_name, 2, "accelerator.map.name", "a map needs a name");
  const std::string neg = write("neg.toml", "[accelerator]\n[[accelerator.map]]\nname = \"L\"\ncount = -1\n");
  expect(neg, good_taskers, neg, 4, "accelerator.map.count", "count");
  const std::string bad_map = write("badmap.toml", "[accelerator]\n[[accelerator.map]]\nname = \"L\"\nmap = \"(a\"\n");
  expect(bad_map, good_taskers, bad_map, 2, "accelerator.map.map", "without ')'");
  const std::string bang = write("bang.jsonl", "{\"name\": \"a\"}\n{\"name\": \"b\", \"resources\": \"!linux64\"}\n");
  expect(good_farm, bang, bang, 2, "resources", "cannot offer a negation");
  const std::string key = write("key.jsonl", "{\"name\": \"a\", \"attrs\": {}}\n");
  expect(good_farm, key, key, 1, "attrs", "unknown key");
  const std::string cpus = write("cpus.jsonl", "{\"name\": \"a\", \"cpus\": -2}\n");
  expect(good_farm, cpus, cpus, 1, "cpus", "whole number");
  const std::string dup = write("dup.jsonl", "{\"name\": \"a\"}\n{\"host\": \"a\"}\n");
  expect(good_farm, dup, dup, 2, "name", "");
  const std::string sym = write("sym.jsonl", "{\"name\": \"a\", \"resources\": \"@NOPE@\"}\n");
  expect(good_farm, sym, sym, 1, "resources", "NOPE");
  try {
    (void)loaders::load_native({good_farm, good_taskers, good_taskers, jobs});
    ADD_FAILURE() << "a hosts file with an Accelerator farm";
  } catch (const loaders::LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("no hosts file"), std::string::npos) << e.what();
  }
}
