// qstat's and qhost's XML read as a stream (loaders/sge_xml.cpp): the shapes of a real farm's dump at
// its real size, and the shapes no qstat prints, which must be refused or passed over, never crash
// (issue 45, round 4 of hostile input).
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "loaders/errors.hpp"
#include "loaders/sge_xml.hpp"

using namespace colmatch::loaders;
namespace fs = std::filesystem;

namespace {

std::string write(const std::string& text) {
  const fs::path p =
      fs::temp_directory_path() / ("colmatch-sge-xml-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".xml");
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  return p.string();
}

// `qstat -u '*' -r -xml` as Son of Grid Engine 8.1.9 indents it, with `n` pending jobs.
std::string qstat_r(size_t n) {
  std::string s =
      "<?xml version='1.0'?>\n<job_info  xmlns:xsd=\"http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/"
      "resources/schemas/qstat/qstat.xsd\">\n  <queue_info>\n  </queue_info>\n  <job_info>\n";
  for (size_t i = 1; i <= n; ++i)
    s += fmt::format(
        "    <job_list state=\"pending\">\n      <JB_job_number>{}</JB_job_number>\n      "
        "<JAT_prio>0.00000</JAT_prio>\n"
        "      <JB_name>STDIN</JB_name>\n      <JB_owner>alice</JB_owner>\n      <state>qw</state>\n"
        "      <JB_submission_time>2026-11-20T10:00:00</JB_submission_time>\n      <queue_name></queue_name>\n"
        "      <slots>1</slots>\n      <hard_request name=\"h_vmem\" "
        "resource_contribution=\"0.000000\">2G</hard_request>\n"
        "    </job_list>\n",
        i);
  return s + "  </job_info>\n</job_info>\n";
}

}  // namespace

// 14,000 pending jobs: the indentation between job_list elements is not one element's text (it was
// counted as the text of <job_info> and refused past 64 KiB).
TEST(SgeXml, FourteenThousandPendingJobsAreRead) {
  const std::string path = write(qstat_r(14000));
  const auto jobs = sge::read_qstat_jobs(path);
  ASSERT_EQ(jobs.size(), 14000u);
  EXPECT_EQ(jobs.back().number, "14000");
  ASSERT_EQ(jobs.back().hard.size(), 1u);
  EXPECT_EQ(jobs.back().hard[0].second, "2G");
  fs::remove(path);
}

// The same at 40,000 hosts of `qhost -F -xml`.
TEST(SgeXml, FortyThousandHostsAreRead) {
  std::string s = "<?xml version='1.0'?>\n<qhost xmlns:xsd=\"x\">\n";
  for (int i = 0; i < 40000; ++i)
    s += fmt::format(
        " <host name='h{:05}'>\n   <hostvalue name='arch_string'>lx-amd64</hostvalue>\n"
        "   <resourcevalue name='slots' dominance='hc'>4</resourcevalue>\n </host>\n",
        i);
  const std::string path = write(s + "</qhost>\n");
  const auto hosts = sge::read_qhost(path);
  ASSERT_EQ(hosts.size(), 40000u);
  ASSERT_EQ(hosts.back().values.size(), 1u);
  EXPECT_EQ(hosts.back().values[0].text, "4");
  fs::remove(path);
}

// One element's own text past 64 KiB is still refused, with its name.
TEST(SgeXml, AnElementsOwnTextPast64KiBIsRefused) {
  const std::string path = write("<job_info><job_info><job_list><JB_job_number>1</JB_job_number><JB_name>" +
                                 std::string(70000, 'x') + "</JB_name></job_list></job_info></job_info>\n");
  try {
    sge::read_qstat_jobs(path);
    FAIL() << "accepted";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("JB_name"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("64 KiB"), std::string::npos) << e.what();
  }
  fs::remove(path);
}

// A <resourcevalue> outside any <host> ended the process with SIGSEGV (the values were added to the
// last host, of which there was none). It is not a host's value: passed over, as other elements are.
TEST(SgeXml, ResourceValueOutsideAHostIsNotAHostsValue) {
  const std::string path = write(
      "<qhost>\n <global><resourcevalue name='x' dominance='gc'>1</resourcevalue></global>\n"
      " <host name='a'>\n  <resourcevalue name='slots' dominance='hc'>4</resourcevalue>\n </host>\n</qhost>\n");
  const auto hosts = sge::read_qhost(path);
  ASSERT_EQ(hosts.size(), 1u);
  ASSERT_EQ(hosts[0].values.size(), 1u);
  EXPECT_EQ(hosts[0].values[0].name, "slots");
  fs::remove(path);
}

// A job field outside <element> in `qstat -j '*' -xml` crashed the same way.
TEST(SgeXml, JobFieldOutsideAnElementIsNotAJobsField) {
  const std::string path = write(
      "<detailed_job_info>\n <djob_info>\n  <qmaster_response><JB_job_number>9</JB_job_number></qmaster_response>\n"
      "  <element>\n   <JB_job_number>7</JB_job_number>\n   <JB_owner>bob</JB_owner>\n  </element>\n"
      " </djob_info>\n</detailed_job_info>\n");
  const auto jobs = sge::read_job_details(path);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].number, "7");
  EXPECT_EQ(jobs[0].owner, "bob");
  fs::remove(path);
}
