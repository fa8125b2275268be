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
  h.users = {{100, 0, "gu1"}, {50, 0, "gu2"}, {0, 0, "gu3"}, {0, 0, "root"}};
  h.projects = {{30, 0, "p1"}, {10, 0, "p2"}};
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
  h.projects = {{0, 500, "p"}};
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
  h.users = {{10, 0, "u"}};
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

// The share tree (Son of Grid Engine 8.1.9's sge_sort_job_nodes), by hand: Root -> A (60: u1 1, u2 1),
// u3 (40); weight_tickets_share 1000. u1 runs job 1 and waits with 2; u2 waits with 3 (-pe ... 2: it
// dilutes by 2) and 4; u3 with 5.
// Running (the running jobs counted alone): only u1 is active, so job 1 holds all 1000.
// Pending (every job counted): A 0.6, u3 0.4; u1 and u2 0.5 each within A. At u1: job 1 (running) first,
// then 2 at 0.5/2 -> 250; at u2: 3 at 0.5 -> 500, 4 at 0.5/3 -> 166.7. At A, running first, then by those:
// 1, 3, 2, 4, diluted 1, 2, 4 (3 counts 2), 5: 3 gets 0.6/2 -> 300, 2 0.6/4 -> 150, 4 0.6/5 -> 120. At
// u3: 5 gets 0.4 -> 400. The root's level changes nothing.
TEST(SgeTickets, ShareTreeTicketsAsSonOfGridEngineSortsTheJobNodes) {
  SgeTicketConfig c;
  c.weight_tickets_share = 1000;
  SgeShareHolders h;
  h.users = {{0, 0, "u1"}, {0, 0, "u2"}, {0, 0, "u3"}};
  h.share_tree = {{"Root", 1, {1, 4}}, {"A", 60, {2, 3}}, {"u1", 1, {}}, {"u2", 1, {}}, {"u3", 40, {}}};
  std::vector<SgeTicketJob> jobs = {pending(0, -1, 1), pending(0, -1, 2), pending(1, -1, 3), pending(1, -1, 4),
                                    pending(2, -1, 5)};
  jobs[0].running = true;
  jobs[2].dilution = 2;
  const std::vector<SgeTickets> t = sge_tickets(c, h, jobs);
  const double want[] = {1000, 150, 300, 120, 400};
  for (size_t j = 0; j < jobs.size(); ++j) {
    EXPECT_NEAR(t[j].sticket, want[j], 1e-9) << "job " << j + 1;
    EXPECT_EQ(t[j].total, t[j].sticket);
  }
  // the same with the share tree's weight 0: no share tree tickets
  c.weight_tickets_share = 0;
  for (const SgeTickets& x : sge_tickets(c, h, jobs)) EXPECT_EQ(x.sticket, 0);
}

// A user not in the tree counts under a copy of the `default` node nearest the root (outside project
// subtrees), made for that user: two such users each get default's shares. A job of a project counts in
// the project's subtree (its `default` there), and a project not in the tree gives no share tree tickets.
// Root -> p (project, 50: default 1), default (50); weight 900; u1, u2 (not in the tree) one pending job
// each, u1 one more in project p, u1 one in project q (not in the tree). Root's active children: p, u1's
// copy, u2's copy: 50 / 150 each -> 300.
TEST(SgeTickets, UsersNotInTheShareTreeGetCopiesOfDefault) {
  SgeTicketConfig c;
  c.weight_tickets_share = 900;
  SgeShareHolders h;
  h.users = {{0, 0, "u1"}, {0, 0, "u2"}};
  h.projects = {{0, 0, "p"}, {0, 0, "q"}};
  h.share_tree = {{"Root", 1, {1, 3}}, {"p", 50, {2}}, {"default", 1, {}}, {"default", 50, {}}};
  const std::vector<SgeTicketJob> jobs = {pending(0, -1, 1), pending(1, -1, 2), pending(0, 0, 3), pending(0, 1, 4)};
  const std::vector<SgeTickets> t = sge_tickets(c, h, jobs);
  EXPECT_NEAR(t[0].sticket, 300, 1e-9);
  EXPECT_NEAR(t[1].sticket, 300, 1e-9);
  EXPECT_NEAR(t[2].sticket, 300, 1e-9);
  EXPECT_EQ(t[3].sticket, 0);
}

// Usage (sge_calc_node_usage), by hand: Root -> P (project) -> A {default, u1}, u2, u6, u7, u8, one
// share each; weight 1000. u1, u2, u6, u7, u8 run a job each in P; u3 waits with one in P, counting under a
// copy of A/default. P's usage is 0.5, all u3's. The running jobs' pass has no copy for u3 (no running job)
// and 0.5 is not past the 1 that P's unaccounted usage must pass to go down to default: A's usage is 0, so
// A and its siblings get 1 / max(0, 0.2) each, 1/5 of 1000 = 200 for u1's job. In the pending pass A holds
// u3's copy: usage 0.5, so A gets 1 / 0.5 = 2 against 5 for each sibling, 2/22; within A, u1's node 10
// (1 / max(0, 0.1)) against u3's 2. u3's job comes after u1's running one at A's level: (2/22) / 2 = 45.45.
// P is the root's only active child, so P's own level changes nothing.
TEST(SgeTickets, ShareTreeUsageAsTheSchedulerCombinesIt) {
  SgeTicketConfig c;
  c.weight_tickets_share = 1000;
  SgeShareHolders h;
  for (const char* u : {"u1", "u2", "u3", "u6", "u7", "u8"}) h.users.push_back({0, 0, u});
  h.projects = {{0, 0, "P", 0.5}};
  h.user_project_usage[{2, 0}] = 0.5;
  h.share_tree = {{"Root", 1, {1}}, {"P", 1, {2, 5, 6, 7, 8}},
                  {"A", 1, {3, 4}}, {"default", 1, {}},
                  {"u1", 1, {}},    {"u2", 1, {}},
                  {"u6", 1, {}},    {"u7", 1, {}},
                  {"u8", 1, {}}};
  std::vector<SgeTicketJob> jobs;
  for (const int32_t u : {0, 1, 3, 4, 5}) {
    jobs.push_back(pending(u, 0, jobs.size() + 1));
    jobs.back().running = true;
  }
  jobs.push_back(pending(2, 0, 6));
  const std::vector<SgeTickets> t = sge_tickets(c, h, jobs);
  EXPECT_NEAR(t[0].sticket, 200, 1e-9);
  EXPECT_NEAR(t[5].sticket, 1000.0 * 2 / 22 / 2, 1e-9);
  // P's usage past 1 (3, u3's): the running pass gives the 3 to A and default, so A's 3 is the same in both
  h.projects[0].usage = h.user_project_usage[{2, 0}] = 3;
  const std::vector<SgeTickets> t3 = sge_tickets(c, h, jobs);
  EXPECT_NEAR(t3[0].sticket, 1000.0 * (1.0 / 3) / (1.0 / 3 + 20), 1e-9);
}

// What is not a tree is refused, not walked: a child index past the nodes, a node that is the child of
// two, a cycle, a tree deeper than kMaxShareTreeDepth.
TEST(SgeTickets, AShareTreeThatIsNotOneIsRefused) {
  SgeTicketConfig c;
  c.weight_tickets_share = 1;
  SgeShareHolders h;
  h.share_tree = {{"Root", 1, {1, 5}}, {"a", 1, {}}};
  EXPECT_THROW(sge_tickets(c, h, {}), std::invalid_argument);
  h.share_tree = {{"Root", 1, {1, 2}}, {"a", 1, {2}}, {"b", 1, {}}};
  EXPECT_THROW(sge_tickets(c, h, {}), std::invalid_argument);
  h.share_tree = {{"Root", 1, {1}}, {"a", 1, {0}}};
  EXPECT_THROW(sge_tickets(c, h, {}), std::invalid_argument);
  h.share_tree.clear();
  for (uint32_t d = 0; d <= kMaxShareTreeDepth + 1; ++d)
    h.share_tree.push_back({"n", 1, d <= kMaxShareTreeDepth ? std::vector<uint32_t>{d + 1} : std::vector<uint32_t>{}});
  EXPECT_THROW(sge_tickets(c, h, {}), std::invalid_argument);
  h.share_tree.pop_back();
  h.share_tree.back().children.clear();
  EXPECT_NO_THROW(sge_tickets(c, h, {}));
}

}  // namespace
}  // namespace colmatch
