// Grid Engine's dispatch priority (engine/schedule/sge_priority.hpp; sge_priority(5), Son of Grid Engine
// 8.1.9's sge_urgency.c and sgeee.c), worked by hand from the manual's formulas. The priorities a real
// qmaster gave to jobs are checked in tests/loaders/test_sge_priority.cpp.
#include "engine/schedule/sge_priority.hpp"

#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace colmatch {
namespace {

// sge_priority(5) with sched_conf(5)'s default weights: a sequential job and a 4-slot parallel one with
// -p 100; slots' urgency 1000 makes rrcontr 1000 and 4000.
TEST(SgePriority, TheManualsFormulaWithTheDefaultWeights) {
  const SgePriorityWeights w;  // 1, 0.1, 0.01, waiting 0, deadline 3600000
  std::vector<SgeUrgencyInput> in(2);
  in[0].rrcontr = sge_request_urgency(true, 1000, 1, 1);
  in[1].rrcontr = sge_request_urgency(true, 1000, 1, 4);
  in[1].posix_priority = 100;
  const auto t = sge_priorities(w, in, 0);
  EXPECT_DOUBLE_EQ(t[0].npprior, 0.5);            // (0 + 1024) / 2048
  EXPECT_DOUBLE_EQ(t[1].npprior, 1124.0 / 2048);  // -p 100
  EXPECT_DOUBLE_EQ(t[0].nurg, 0);                 // the range's bottom
  EXPECT_DOUBLE_EQ(t[1].nurg, 1);                 // and top
  EXPECT_DOUBLE_EQ(t[0].ntckts, 0.5);             // no ticket policy
  EXPECT_DOUBLE_EQ(t[0].prio, 0.5 + 0.1 * 0 + 0.01 * 0.5);
  EXPECT_DOUBLE_EQ(t[1].prio, 1124.0 / 2048 + 0.1 * 1 + 0.01 * 0.5);
}

// The urgency's terms: a string request adds its urgency once, a numeric one urgency x slots x value; the
// waiting time and the deadline (weight_deadline / the seconds left, at least 1; after it, the weight).
TEST(SgePriority, UrgencyTermsAndTheirRange) {
  EXPECT_DOUBLE_EQ(sge_request_urgency(false, 500, 123, 4), 500);
  EXPECT_DOUBLE_EQ(sge_request_urgency(true, 10, 8, 4), 320);
  SgePriorityWeights w;
  w.weight_waiting_time = 0.5;
  w.weight_deadline = 1000;
  std::vector<SgeUrgencyInput> in(4);
  in[0].submit = 100;                                              // waited 100 s: wtcontr 50
  in[1].submit = 200, in[1].deadline = 300;                        // 100 s before its deadline: dlcontr 10
  in[2].submit = 200, in[2].deadline = 150;                        // past it: dlcontr 1000
  in[3].submit = 200, in[3].rrcontr = 5000, in[3].ranged = false;  // held: outside the range
  const auto t = sge_priorities(w, in, 200);
  EXPECT_DOUBLE_EQ(t[0].wtcontr, 50);
  EXPECT_DOUBLE_EQ(t[1].dlcontr, 10);
  EXPECT_DOUBLE_EQ(t[2].dlcontr, 1000);
  EXPECT_DOUBLE_EQ(t[3].urg, 5000);
  // the range is 10 .. 1000 (the held job's 5000 widens nothing)
  EXPECT_DOUBLE_EQ(t[0].nurg, 40.0 / 990);
  EXPECT_DOUBLE_EQ(t[1].nurg, 0);
  EXPECT_DOUBLE_EQ(t[2].nurg, 1);
  EXPECT_DOUBLE_EQ(t[3].nurg, 4990.0 / 990);
}

// Equal urgencies (a range under 1e-6) normalise to 0.5, as sge_normalize_value does.
TEST(SgePriority, AnEmptyRangeIsOneHalf) {
  std::vector<SgeUrgencyInput> in(3);
  for (auto& x : in) x.rrcontr = 1000;
  for (const auto& t : sge_priorities(SgePriorityWeights{}, in, 0)) EXPECT_DOUBLE_EQ(t.nurg, 0.5);
  in[0].ranged = in[1].ranged = in[2].ranged = false;  // nothing ranged at all
  for (const auto& t : sge_priorities(SgePriorityWeights{}, in, 0)) EXPECT_DOUBLE_EQ(t.nurg, 0.5);
}

// sge_pe(5) urgency_slots: the slot count a range counts as.
TEST(SgePriority, UrgencySlotsOfARange) {
  EXPECT_EQ(sge_urgency_slots("min", 2, 6), 2);
  EXPECT_EQ(sge_urgency_slots("max", 2, 6), 6);
  EXPECT_EQ(sge_urgency_slots("avg", 2, 6), 4);
  EXPECT_EQ(sge_urgency_slots("avg", 2, 5), 3);
  EXPECT_EQ(sge_urgency_slots("5", 2, 8), 5);
  EXPECT_EQ(sge_urgency_slots("max", 4, 4), 4);
  EXPECT_THROW(sge_urgency_slots("most", 2, 6), std::invalid_argument);
  EXPECT_THROW(sge_urgency_slots("-1", 2, 6), std::invalid_argument);
}

TEST(SgePriority, TheTermsAsOneLine) {
  SgePriorityTerms t;
  t.prio = 0.75, t.npprior = 0.5, t.nurg = 1, t.urg = 16400, t.rrcontr = 16400, t.ntckts = 0.5;
  SgePriorityWeights w;
  w.weight_priority = 0, w.weight_urgency = 0.5, w.weight_ticket = 0.5;
  EXPECT_EQ(sge_priority_text(w, t),
            "prio 0.75000 = 0 * npprior 0.50000 + 0.5 * nurg 1.00000 (urg 16400 = rrcontr 16400 + wtcontr 0 + "
            "dlcontr 0) + 0.5 * ntckts 0.50000");
}

}  // namespace
}  // namespace colmatch
