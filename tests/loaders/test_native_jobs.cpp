// The native jobs.jsonl reader in parallel pieces (issue 29) against the same file read one line and one
// job at a time (read_jobs_jsonl_sequential): the same table (every job as write_jobs_jsonl writes it,
// the dictionaries in the same order) or the same error, on random files with every field, the ways a
// job is rejected, saved rejections, dependencies, choices, repeated ids and malformed lines, cut into
// pieces of a few hundred bytes.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "loaders/errors.hpp"
#include "loaders/native.hpp"
#include "loaders/writers/native_writer.hpp"

using namespace colmatch;
namespace fs = std::filesystem;

namespace {

const std::string kFarm = std::string(COLMATCH_SOURCE_DIR) + "/datasets/demo/farm.toml";

// One random job line; `ids` are the ids so far (dependencies, repeats). Rare faults when `faults`.
std::string random_job(std::mt19937& rng, std::vector<std::string>& ids, bool faults) {
  auto pick = [&](std::initializer_list<const char*> xs) { return std::string(*(xs.begin() + rng() % xs.size())); };
  auto chance = [&](int in) { return static_cast<int>(rng() % static_cast<unsigned>(in)) == 0; };
  std::string id = fmt::format("\"j{}\"", ids.size());
  if (chance(4)) id = fmt::format("{}", 1000 + ids.size());                 // a number
  if (faults && !ids.empty() && chance(150)) id = ids[rng() % ids.size()];  // repeated
  std::vector<std::string> fields;
  if (!(faults && chance(400))) fields.push_back("\"id\": " + id);
  fields.push_back("\"owner\": " + (faults && chance(400) ? "[1]"
                                    : chance(5)           ? "7"
                                                          : "\"" + pick({"alice", "bob", "carol"}) + "\""));
  if (chance(2)) fields.push_back("\"group\": \"" + pick({"atlas", "cms"}) + "\"");
  if (chance(2))
    fields.push_back("\"priority\": " + (faults && chance(400) ? "\"high\"" : pick({"0", "5", "-2", "1.5"})));
  if (chance(2))
    fields.push_back("\"submit\": " + (faults && chance(400) ? "\"now\"" : pick({"0", "10", "-5", "2.5", "100"})));
  if (chance(3)) fields.push_back("\"slots\": " + (faults && chance(300) ? "0" : pick({"1", "2", "4"})));
  if (chance(2))
    fields.push_back("\"requests\": " + pick({"\"arch==lx-amd64\"", "\"os==debian12 && ssd==true\"", "\"speed>=2\"",
                                              "\"arch===x\"", "5", "\"site==\\\"*.gov|*.fr\\\"\""}));
  if (chance(6)) fields.push_back("\"soft\": " + pick({"\"ssd==true\"", "\"speed>=3 && os==rhel9\"", "\"nope==1\""}));
  if (chance(2))
    fields.push_back("\"resources\": " + pick({"{\"h_vmem\": \"2G\"}", "{\"matlab\": 1}", "{\"bogus\": 1}",
                                               "{\"h_vmem\": \"xyz\"}", "{\"h_vmem\": \"1G\", \"matlab\": 2}", "[]"}));
  if (chance(8))
    fields.push_back("\"utilization\": " + pick({"{\"h_vmem\": 0.5}", "{\"h_vmem\": 2}", "{\"h_vmem\": \"x\"}"}));
  if (chance(6)) fields.push_back("\"allocation_rule\": " + pick({"\"$fill_up\"", "\"$pe_slots\"", "\"$bad\""}));
  if (chance(2)) fields.push_back("\"runtime\": " + pick({"60", "3600", "-1", "\"long\"", "0", "12.5"}));
  if (chance(3)) fields.push_back("\"walltime\": " + pick({"120", "7200", "-3", "0"}));
  if (chance(8)) fields.push_back("\"hold\": " + pick({"true", "false", "500", "\"x\""}));
  if (chance(6) && !ids.empty())
    fields.push_back("\"depends\": [" + (chance(8) ? std::string("\"nope\"") : ids[rng() % ids.size()]) + "]");
  if (chance(5))
    fields.push_back("\"" + pick({"queue", "class", "account", "qos"}) + "\": \"" + pick({"q1", "q2"}) + "\"");
  if (chance(25)) fields.push_back("\"rejected\": \"saved: it was rejected\"");
  if (chance(10)) fields.push_back("\"note\": " + pick({"\"depth limit\"", "\"\"", "\"n2\""}));
  if (chance(12))
    fields.push_back("\"solutions\": " + pick({"[{\"requests\": \"arch==lx-amd64\"}, {\"requests\": \"speed>=2\", "
                                               "\"resources\": {\"matlab\": 1}}]",
                                               "[{\"requests\": \"arch==lx-amd64\"}]", "[{\"bad\": 1}, {}]"}));
  if (faults && chance(400)) fields.push_back("\"colour\": \"red\"");  // an unknown key: the file is refused
  std::shuffle(fields.begin(), fields.end(), rng);
  ids.push_back(id);
  std::string line = "{";
  for (size_t i = 0; i < fields.size(); ++i) line += (i ? ", " : "") + fields[i];
  line += "}";
  if (faults && chance(500)) line.pop_back();  // malformed
  return line;
}

std::string jobs_text(const Catalog& catalog, JobTable jobs) {
  loaders::Dataset ds;
  ds.catalog = catalog;
  ds.jobs = std::move(jobs);
  return writers::jobs_jsonl_text(ds);
}

TEST(NativeJobsDifferential, ParallelPiecesEqualLineByLine) {
  const Catalog catalog = loaders::read_farm_toml(kFarm).catalog;
  const fs::path dir = fs::temp_directory_path() / ("colmatch-native-jobs-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::mt19937 rng(29);
  size_t errors = 0, jobs = 0, rejected = 0;
  for (int round = 0; round < 400; ++round) {
    const bool faults = round % 3 == 0;
    std::vector<std::string> ids;
    std::string text;
    const size_t n = 1 + rng() % 120;
    for (size_t i = 0; i < n; ++i) {
      if (rng() % 20 == 0) text += "   \n";  // blank lines count
      text += random_job(rng, ids, faults) + "\n";
    }
    const std::string path = (dir / fmt::format("jobs{}.jsonl", round)).string();
    std::ofstream(path) << text;
    std::string want, got, want_error, got_error;
    JobTable a, b;
    try {
      a = loaders::read_jobs_jsonl_sequential(path, catalog);
    } catch (const loaders::LoadError& e) {
      want_error = e.what();
    }
    try {
      b = loaders::read_jobs_jsonl(path, catalog, {}, 64 + rng() % 512);
    } catch (const loaders::LoadError& e) {
      got_error = e.what();
    }
    ASSERT_EQ(got_error, want_error) << path;
    if (!want_error.empty()) {
      ++errors;
      continue;
    }
    jobs += a.size();
    rejected += a.reject_reason.size();
    for (const auto& [x, y] :
         {std::pair{&a.owners, &b.owners}, {&a.groups, &b.groups}, {&a.queues, &b.queues}, {&a.notes, &b.notes}}) {
      ASSERT_EQ(x->size(), y->size()) << path;
      for (uint32_t v = 0; v < x->size(); ++v) ASSERT_EQ(x->value(v), y->value(v)) << path;
    }
    ASSERT_EQ(jobs_text(catalog, std::move(b)), jobs_text(catalog, std::move(a))) << path;
  }
  fs::remove_all(dir);
  EXPECT_GT(errors, 30u) << "files refused: both readers give the same error";
  EXPECT_GT(jobs, 10000u);
  EXPECT_GT(rejected, 1000u);
}

// A line whose id repeats an earlier one's and which is wrong in another way: the repeated id is the
// error (a reader going line by line checks the id first), in whichever piece the line falls.
TEST(NativeJobsDifferential, ARepeatedIdOnABadLineIsTheError) {
  const Catalog catalog = loaders::read_farm_toml(kFarm).catalog;
  const fs::path path = fs::temp_directory_path() / ("colmatch-native-dup-" + std::to_string(::getpid()) + ".jsonl");
  for (const std::string bad : {"\"owner\": [1]", "\"colour\": \"red\"", "\"slots\": 0"}) {
    std::ofstream(path) << "{\"id\": \"a\"}\n{\"id\": \"b\"}\n{\"id\": \"a\", " << bad << "}\n";
    for (const size_t piece : {size_t{16}, size_t{1} << 20}) {
      try {
        loaders::read_jobs_jsonl(path.string(), catalog, {}, piece);
        ADD_FAILURE() << bad << ": no error";
      } catch (const loaders::LoadError& e) {
        EXPECT_EQ(std::string(e.what()), path.string() + ":3: field 'id': duplicate job id 'a' (first on line 1)")
            << bad << ", pieces of " << piece;
      }
    }
  }
  fs::remove(path);
}

// An empty key is an unknown key like any other (found by fuzz_native_jobs: the parallel reader took ""
// for "no unknown key yet" and read on), in whichever piece the line falls.
TEST(NativeJobsDifferential, AnEmptyKeyIsAnUnknownKey) {
  const Catalog catalog = loaders::read_farm_toml(kFarm).catalog;
  const fs::path path = fs::temp_directory_path() / ("colmatch-native-empty-" + std::to_string(::getpid()) + ".jsonl");
  std::ofstream(path) << "{\"id\": \"a\"}\n{\"id\": \"b\", \"\": \"bob\"}\n{\"id\": \"c\"}\n";
  for (const size_t piece : {size_t{16}, size_t{1} << 20}) {
    try {
      loaders::read_jobs_jsonl(path.string(), catalog, {}, piece);
      ADD_FAILURE() << "no error, pieces of " << piece;
    } catch (const loaders::LoadError& e) {
      EXPECT_EQ(std::string(e.what()), path.string() + ":2: unknown key") << "pieces of " << piece;
    }
  }
  EXPECT_THROW(loaders::read_jobs_jsonl_sequential(path.string(), catalog), loaders::LoadError);
  fs::remove(path);
}

}  // namespace
