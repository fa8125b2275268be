// A farm given as columns in memory (loaders/memory.hpp): the native format's rules without files; errors
// name the input ("farm", "taskers", "jobs"), the row and the field.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "engine/batch/matcher.hpp"
#include "loaders/errors.hpp"
#include "loaders/memory.hpp"

using namespace colmatch;
using loaders::LoadError;

namespace {

const char* kFarm = R"(name = "mem"
[policy]
power = "speed"
[[attribute]]
name = "arch"
[[attribute]]
name = "speed"
type = "double"
[[attribute]]
name = "mem"
type = "memory"
consumable = true
default = "1G"
)";

loaders::MemoryInputs inputs() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  loaders::MemoryInputs in;
  in.farm_toml = kFarm;
  in.tasker_names = {"slow", "fast", "bare"};
  in.attributes = {{"arch", {}, {"x86", "x86", std::nullopt}},
                   {"speed", {1.0, 3.0, nan}, {}},
                   {"mem", {}, {"8G", "2G", std::nullopt}}};
  in.job_ids = {"a", "b", "c"};
  in.requests = {"arch==x86", "arch==x86", "arch=="};
  in.resources = {{"mem", {}, {"4G", std::nullopt, std::nullopt}}};
  return in;
}

TEST(MemoryFarm, ColumnsBecomeTaskersAndJobs) {
  const loaders::Dataset ds = loaders::load_memory(inputs());
  ASSERT_EQ(ds.taskers.size(), 3u);
  EXPECT_EQ(ds.name, "mem");
  // speed is the power attribute: fast ranks first
  EXPECT_EQ(ds.taskers.names[0], "fast");
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  // a needs 4G: only slow has it; b takes the default 1G on fast; c's request does not parse
  EXPECT_EQ(ds.taskers.names[m.dispatch.tasker[0]], "slow");
  EXPECT_EQ(ds.taskers.names[m.dispatch.tasker[1]], "fast");
  EXPECT_EQ(m.dispatch.status[2], JobStatus::Rejected);
  ASSERT_EQ(ds.jobs.reject_reason.size(), 1u);
  EXPECT_EQ(ds.jobs.reject_reason[0].rfind("jobs:3: job c: field 'requests':", 0), 0u) << ds.jobs.reject_reason[0];
}

void expect_error(const loaders::MemoryInputs& in, const std::string& file, size_t line, const std::string& field) {
  try {
    loaders::load_memory(in);
    FAIL() << "no error for " << file << ":" << line << " " << field;
  } catch (const LoadError& e) {
    EXPECT_EQ(e.file, file) << e.what();
    EXPECT_EQ(e.line, line) << e.what();
    EXPECT_EQ(e.field, field) << e.what();
  }
}

TEST(MemoryFarm, ErrorsNameInputRowAndField) {
  auto in = inputs();
  in.attributes[2].texts[1] = "lots";
  expect_error(in, "taskers", 2, "attrs.mem");
  in = inputs();
  in.attributes[1].numbers.pop_back();
  expect_error(in, "taskers", 0, "attrs.speed");
  in = inputs();
  in.attributes[0] = {"arch", {1.0, 2.0, 3.0}, {}};  // numbers for a string attribute
  expect_error(in, "taskers", 0, "attrs.arch");
  in = inputs();
  in.attributes.push_back({"gpu", {}, {"a", "b", "c"}});
  expect_error(in, "taskers", 0, "attrs.gpu");
  in = inputs();
  in.tasker_names[2] = "slow";
  expect_error(in, "taskers", 3, "name");
  in = inputs();
  in.job_ids[2] = "a";
  expect_error(in, "jobs", 3, "id");
  in = inputs();
  in.slots = {1, 0.5, 1};
  expect_error(in, "jobs", 2, "slots");
  in = inputs();
  in.requests.pop_back();
  expect_error(in, "jobs", 0, "requests");
  in = inputs();
  in.farm_toml += "[[attribute]]\nname = \"x\"\ntype = \"nosuch\"\n";
  expect_error(in, "farm", 14, "type");
}

// Issue 28: a negative or infinite runtime or walltime rejects its job with the reason (as the native format
// does); it threw a bare ValueError past the job (Python saw a RuntimeError) before.
TEST(MemoryFarm, ABadTimeRejectsItsJobNamingTheField) {
  const double inf = std::numeric_limits<double>::infinity();
  auto in = inputs();
  in.runtime = {-5, 10, 10};
  in.walltime = {20, inf, 20};
  const loaders::Dataset ds = loaders::load_memory(in);
  ASSERT_NE(ds.jobs.reject[0], kNone);
  EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[0]].find("jobs:1: job a: field 'runtime'"), std::string::npos);
  ASSERT_NE(ds.jobs.reject[1], kNone);
  EXPECT_NE(ds.jobs.reject_reason[ds.jobs.reject[1]].find("field 'walltime'"), std::string::npos);
}

}  // namespace
