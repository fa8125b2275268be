// Real Grid Engine farms read back through `--format sge` (issue 25). bench/peers/sge_farms.sh built
// each farm in Son of Grid Engine 8.1.9 (Debian 12, simulated execution hosts), tools/sge-dump.sh
// dumped it into datasets/sge/<farm>/, and `sge_farms.sh ask` recorded, for each request of
// bench/peers/sge_farm_requests.py, qselect's queue instances and qsub -w v's verdict in
// datasets/sge/<farm>-answers.tsv.gz. Here each request becomes a job (an accounting record whose category
// is the request, read by the loader as a replayed job would be) and colmatch must find the same
// queue instances and give the same verdict.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "engine/batch/matcher.hpp"
#include "loaders/line_reader.hpp"
#include "loaders/sge.hpp"

using namespace colmatch;
namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(COLMATCH_SOURCE_DIR) + "/datasets/sge/";

struct Answer {
  std::string request, qselect, verdict;
};

std::vector<Answer> answers(const std::string& farm) {
  loaders::LineReader in(kData + farm + "-answers.tsv.gz");
  std::vector<Answer> out;
  for (std::string_view view; in.next(view);) {
    const std::string line(view);
    const size_t a = line.find('\t'), b = line.find('\t', a + 1);
    out.push_back({line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  return out;
}

std::set<std::string> split(const std::string& s) {
  std::set<std::string> out;
  if (s == "-" || s.rfind("error", 0) == 0) return out;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');) out.insert(x);
  return out;
}

// The slot count of `-pe NAME N`, else 1.
int slots_of(const std::string& request) {
  const size_t pe = request.find("-pe ");
  if (pe == std::string::npos) return 1;
  std::stringstream ss(request.substr(pe + 4));
  std::string name;
  int n = 1;
  ss >> name >> n;
  return n;
}

// One accounting(5) record a request: 45 fields, the category 40th.
std::string accounting_for(const std::vector<Answer>& as) {
  std::string text = "# accounting records made by tests/loaders/test_sge_farms.cpp\n";
  for (size_t i = 0; i < as.size(); ++i) {
    std::vector<std::string> f(45, "0");
    f[0] = "all.q";
    f[1] = "h0001";
    f[2] = "users";
    f[3] = "alice";
    f[4] = "job";
    f[5] = std::to_string(i + 1);
    f[6] = "sge";
    f[8] = std::to_string(1700000000 + i);
    f[9] = std::to_string(1700000100 + i);
    f[10] = std::to_string(1700000200 + i);
    f[31] = "NONE";
    f[32] = "defaultdepartment";
    f[33] = slots_of(as[i].request) > 1 ? "smp" : "NONE";
    f[34] = std::to_string(slots_of(as[i].request));
    f[39] = as[i].request;
    f[41] = "NONE";
    for (size_t k = 0; k < f.size(); ++k) text += (k ? ":" : "") + f[k];
    text += "\n";
  }
  return text;
}

void check_farm(const std::string& farm, size_t at_least) {
  const std::vector<Answer> as = answers(farm);
  ASSERT_GE(as.size(), at_least);
  const fs::path acct = fs::temp_directory_path() / ("colmatch-test-" + farm + "-" + std::to_string(::getpid()));
  std::ofstream(acct) << accounting_for(as);
  const loaders::Dataset ds = loaders::load_sge(kData + farm, acct.string());
  fs::remove(acct);
  ASSERT_EQ(ds.jobs.size(), as.size());
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  const std::set<std::string> taskers(ds.taskers.names.begin(), ds.taskers.names.end());
  size_t compared = 0, errors = 0, refused = 0;
  for (uint32_t j = 0; j < as.size(); ++j) {
    const Answer& a = as[j];
    SCOPED_TRACE(a.request + " (SGE: " + a.verdict + ")");
    if (a.verdict.rfind("error", 0) == 0) {
      EXPECT_NE(ds.jobs.reject[j], kNone) << "Grid Engine refuses the request";
      ++errors;
      continue;
    }
    ASSERT_EQ(ds.jobs.reject[j], kNone) << ds.jobs.reject_reason[ds.jobs.reject[j]];
    std::set<std::string> got;
    for (uint32_t t : m.eligible[m.categories.of_job[j]].eligible.to_vector()) got.insert(ds.taskers.names[t]);
    // qselect lists every queue instance, also those colmatch leaves out (disabled, qtype without BATCH)
    std::set<std::string> want;
    for (const std::string& q : split(a.qselect))
      if (taskers.count(q)) want.insert(q);
    if (a.request.find("-pe ") == std::string::npos) {
      EXPECT_EQ(got, want) << "qselect's queue instances";
    } else {  // qselect -pe NAME does not count slots: colmatch's are those with room for them
      for (const std::string& t : got) EXPECT_TRUE(want.count(t)) << t << " is not one of qselect's";
    }
    const bool only_left_out = a.verdict == "ok" && want.empty() && !split(a.qselect).empty();
    if (!only_left_out) {
      EXPECT_EQ(!got.empty(), a.verdict == "ok") << "qsub -w v's verdict";
    }
    refused += a.verdict == "refused";
    ++compared;
  }
  ::testing::Test::RecordProperty("compared", static_cast<int>(compared));
  EXPECT_GT(errors, 0u);
  EXPECT_GT(refused, 0u);
}

}  // namespace

// 80 hosts in four racks, nested host groups (@cluster of @rack1..4, @gpu holding @gpuextra), five
// queues with per-host and per-group slots, complex_values and limits, a disabled instance, an
// interactive-only queue, two PEs, a global consumable: 331 requests, targeted and random.
TEST(SgeFarm80, EligibleInstancesAndVerdictsAreRealGridEngines) { check_farm("farm80", 300); }

// 1,000 hosts in 25 racks, groups of groups (@west, @east), five queues (per-group and per-host slots,
// h_rt and h_vmem limits, counted GPUs), queue lists that name no instance: 274 requests.
TEST(SgeFarm1000, EligibleInstancesAndVerdictsAreRealGridEngines) { check_farm("farm1000", 270); }
