// Grid Engine's ticket policies (engine/schedule/sge_tickets.hpp; Son of Grid Engine 8.1.9's sgeee.c),
// worked by hand. The tickets a real qmaster gave to recorded random jobs are checked in
// tests/loaders/test_sge_priority.cpp (SgeTicketsOracle).
#include "engine/schedule/sge_tickets.hpp"

#include <chrono>
#include <future>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace colmatch {
namespace {

SgeTicketJob pending(int32_t user, int32_t project, uint64_t number, double jobshare = 0) {
  SgeTicketJob j;
  j.user = user;
  j.project = project;
  j.number = number;
  j.submit = static_cast<double>(number);
  j.jobshare = jobshare;
  return j;
}

// Asked of a real qmaster on the oracle farm (weight_tickets_functional 10000, the kinds weighted 0.25
// each, shares shared), eight pending jobs and no running one: users gu1 (fshare 100), gu2 (50), gu3 (0),
// root (0); projects p1 (30), p2 (10). qstat -ext printed tckts 5000, 833, 555, 416, 1458, 0, 2500, 0.
// By hand: job 3 (gu1, p1) ranks first: 0.25 * 10000 * (100/100 + 30/30) = 5000; job 5 (gu2, p2) next
// with 0.25 * 10000 * (50/150 + 10/40) = 1458.3; job 7 (-js 20) 0.25 * 10000 = 2500; gu1's plain jobs
// then take 100/2 and 100/3 of gu1's shares over 150: 833.3 and 555.6; gu2's plain job 50/2: 416.7.
TEST(SgeTickets, FunctionalSharesAsTheQmasterRankedThem) {
  SgeTicketConfig c;
  c.weight_tickets_functional = 10000;
  SgeShareHolders h;
  h.users = {{100, 0}, {50, 0}, {0, 0}, {0, 0}};  // gu1 gu2 gu3 root
  h.projects = {{30, 0}, {10, 0}};                // p1 p2
  const std::vector<SgeTicketJob> jobs = {pending(0, -1, 1),     pending(0, -1, 2), pending(0, 0, 3),
                                          pending(1, -1, 4),     pending(1, 1, 5),  pending(2, -1, 6),
                                          pending(2, -1, 7, 20), pending(3, -1, 8)};
  const std::vector<SgeTickets> t = sge_tickets(c, h, jobs);
  const double want[] = {833.333, 555.556, 5000, 416.667, 1458.333, 0, 2500, 0};
  for (size_t j = 0; j < jobs.size(); ++j) {
    EXPECT_NEAR(t[j].total, want[j], 1e-3) << "job " << j + 1;
    EXPECT_EQ(t[j].fticket, t[j].total);
  }
}

// Override tickets, shared: a running job of a project with oticket 500 holds 500 / its running jobs
// (two: 250 each); the pending ones are ranked one by one: job 4, with 10 of its own (qalter -ot), ranks
// first with 500 / 3 + 10, then job 3 gets 500 / 4. Not shared: every job the object's 500 whole.
TEST(SgeTickets, OverrideTicketsSplitAmongAnObjectsJobs) {
  SgeTicketConfig c;
  SgeShareHolders h;
  h.projects = {{0, 500}};
  std::vector<SgeTicketJob> jobs = {pending(-1, 0, 1), pending(-1, 0, 2), pending(-1, 0, 3), pending(-1, 0, 4)};
  jobs[0].running = jobs[1].running = true;
  jobs[3].override_tickets = 10;
  std::vector<SgeTickets> t = sge_tickets(c, h, jobs);
  EXPECT_DOUBLE_EQ(t[0].oticket, 250);
  EXPECT_DOUBLE_EQ(t[1].oticket, 250);
  EXPECT_NEAR(t[3].oticket, 500.0 / 3 + 10, 1e-9);
  EXPECT_NEAR(t[2].oticket, 125, 1e-9);
  c.share_override_tickets = false;
  t = sge_tickets(c, h, jobs);
  EXPECT_DOUBLE_EQ(t[0].oticket, 500);
  EXPECT_DOUBLE_EQ(t[3].oticket, 510);
}

// A held job (counted = false) has no tickets and takes none of its user's shares.
TEST(SgeTickets, AHeldJobIsLeftOut) {
  SgeTicketConfig c;
  c.weight_tickets_functional = 1000;
  c.weight_project = c.weight_department = c.weight_job = 0;
  SgeShareHolders h;
  h.users = {{10, 0}};
  std::vector<SgeTicketJob> jobs = {pending(0, -1, 1), pending(0, -1, 2)};
  jobs[0].counted = false;
  const std::vector<SgeTickets> t = sge_tickets(c, h, jobs);
  EXPECT_EQ(t[0].total, 0);
  EXPECT_DOUBLE_EQ(t[1].total, 1000);  // alone: the user's shares whole
}

TEST(SgeTickets, APolicyHierarchyGridEngineRefusesIsAnError) {
  SgeTicketConfig c;
  for (const char* bad : {"OFX", "OO", "D"}) {
    c.policy_hierarchy = bad;
    EXPECT_THROW(sge_tickets(c, {}, {}), std::invalid_argument) << bad;
  }
  for (const char* good : {"OFS", "FO", "s", "NONE", ""}) {
    c.policy_hierarchy = good;
    EXPECT_NO_THROW(sge_tickets(c, {}, {})) << good;
  }
}

// Every job its own job share (a category each) and max_functional_jobs_to_schedule at its largest: the
// one-by-one ranking is categories x rounds; it stops at a bound (the rest get their category's value)
// instead of running for hours. A stall guard, not a speed test.
TEST(SgeTickets, ManyCategoriesDoNotStallTheRanking) {
  SgeTicketConfig c;
  c.weight_tickets_functional = 1000;
  c.max_functional_jobs_to_schedule = 4294967295u;
  std::vector<SgeTicketJob> jobs;
  for (uint64_t j = 1; j <= 200000; ++j) jobs.push_back(pending(-1, -1, j, static_cast<double>(j)));
  auto run = std::async(std::launch::async, [&] { return sge_tickets(c, {}, jobs); });
  ASSERT_EQ(run.wait_for(std::chrono::seconds(30)), std::future_status::ready) << "stalled: not bounded";
  const std::vector<SgeTickets> t = run.get();
  EXPECT_GT(t.back().total, t.front().total);  // the largest share ranked first, with the most tickets
}

}  // namespace
}  // namespace colmatch
