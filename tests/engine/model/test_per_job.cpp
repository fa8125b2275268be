// PerJob: a job column stored once while every job has the same value (issue 29), and the job tables the
// loaders build: their constant columns cost nothing per job.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>

#include "engine/model/per_job.hpp"
#include "loaders/native.hpp"

using namespace colmatch;

namespace {

TEST(PerJob, StaysOneValueUntilAJobDiffers) {
  PerJob<double> c;
  for (int j = 0; j < 1000; ++j) c.push_back(5.0);
  EXPECT_TRUE(c.uniform());
  EXPECT_EQ(c.bytes(), 0u);
  c.set(10, 5.0);  // the same value: nothing stored
  EXPECT_TRUE(c.uniform());
  c.set(10, 6.0);
  EXPECT_FALSE(c.uniform());
  for (size_t j = 0; j < c.size(); ++j) ASSERT_EQ(c[j], j == 10 ? 6.0 : 5.0) << j;
  c.push_back(7.0);
  EXPECT_EQ(c.size(), 1001u);
  EXPECT_EQ(c.back(), 7.0);
  c.set(10, 5.0);
  c.set(1000, 5.0);
  c.uniform_again();
  EXPECT_TRUE(c.uniform());
  EXPECT_EQ(c[999], 5.0);
}

TEST(PerJob, ValuesCompareBitwise) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  PerJob<double> c(3, nan);
  c.push_back(nan);
  EXPECT_TRUE(c.uniform()) << "a NaN is the same NaN";
  EXPECT_TRUE(std::isnan(c[3]));
  PerJob<double> z(2, 0.0);
  z.push_back(-0.0);
  EXPECT_FALSE(z.uniform()) << "-0.0 is written back as -0.0";
  EXPECT_TRUE(std::signbit(z[2]));
  EXPECT_FALSE(std::signbit(z[1]));
}

TEST(PerJob, ResizeAndFillInPlace) {
  PerJob<uint32_t> c(4, 7);
  c.resize(10, 7);
  EXPECT_TRUE(c.uniform());
  c.resize(12, 9);
  EXPECT_FALSE(c.uniform());
  EXPECT_EQ(c[9], 7u);
  EXPECT_EQ(c[11], 9u);
  PerJob<uint32_t> d;
  d.resize(5, 1);
  uint32_t* at = d.per_job();
  for (uint32_t j = 0; j < 5; ++j) at[j] = j;
  EXPECT_EQ(std::vector<uint32_t>(d.begin(), d.end()), (std::vector<uint32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(*std::max_element(d.begin(), d.end()), 4u);
  PerJob<uint32_t> e(5, 0);
  for (uint32_t j = 0; j < 5; ++j) e.set(j, j);
  EXPECT_TRUE(d == e) << "equal job by job";
  e.set(0, 1);
  EXPECT_FALSE(d == e);
}

// A native batch without walltimes, holds, credentials or rejections: those columns store one value,
// read in parallel pieces (JobBuilder::add_copies) or line by line (JobBuilder::add).
TEST(PerJob, ANativeBatchStoresItsConstantColumnsOnce) {
  const std::string dir = std::string(COLMATCH_SOURCE_DIR) + "/datasets/demo/";
  const loaders::FarmFile farm = loaders::read_farm_toml(dir + "farm.toml");
  const std::string path = ::testing::TempDir() + "per_job_batch.jsonl";
  {
    std::ofstream out(path);
    for (int j = 0; j < 3000; ++j)
      out << "{\"id\": \"j" << j << "\", \"owner\": \"u" << j % 7 << "\", \"submit\": " << j / 10
          << ", \"requests\": \"arch==lx-amd64\"}\n";
  }
  for (const bool parallel : {true, false}) {
    const JobTable jobs = parallel ? loaders::read_jobs_jsonl(path, farm.catalog, {}, 64)
                                   : loaders::read_jobs_jsonl_sequential(path, farm.catalog);
    ASSERT_EQ(jobs.size(), 3000u);
    EXPECT_TRUE(jobs.walltime.uniform()) << parallel;
    EXPECT_TRUE(jobs.runtime.uniform()) << parallel;
    EXPECT_TRUE(jobs.hold_until.uniform()) << parallel;
    EXPECT_TRUE(jobs.queue.uniform()) << parallel;
    EXPECT_TRUE(jobs.account.uniform()) << parallel;
    EXPECT_TRUE(jobs.qos.uniform()) << parallel;
    EXPECT_TRUE(jobs.reject.uniform()) << parallel;
    EXPECT_TRUE(jobs.note.uniform()) << parallel;
    EXPECT_TRUE(jobs.soft.uniform()) << parallel;
    EXPECT_FALSE(jobs.submit.uniform()) << parallel;
    EXPECT_EQ(jobs.submit[2999], 299.0);
  }
}

}  // namespace
