// The waiting queues (engine/schedule/waiting.hpp) on their own, through the narrow view of the world they
// read (QueueView), no simulation around them: what TimedQueue visits, parks and asks to be woken for.
#include "engine/schedule/waiting.hpp"

#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "engine/model/catalog.hpp"
#include "engine/model/jobs.hpp"

namespace colmatch {
namespace {

std::vector<uint32_t> visible(const TimedQueue& q) {
  std::vector<uint32_t> out;
  q.for_each_visible([&](uint32_t j) { out.push_back(j); });
  return out;
}

TEST(WaitingJobs, TimedQueueParksADependentJobUntilItsDependencyEndsAndWakesAHeldOne) {
  Catalog cat;
  JobBuilder jb(cat);
  jb.add("a", "u", "g", 0, 0, 1);
  jb.add("b", "u", "g", 0, 0, 1);
  jb.set_depends({"a"});
  jb.add("c", "u", "g", 0, 0, 1);
  jb.set_hold(50);
  const JobTable js = std::move(jb).build();
  ASSERT_EQ(js.size(), 3u);
  const Credentials creds(js, {});
  const std::vector<uint32_t> category(3, 0);
  const std::vector<uint8_t> fits_idle{1};
  std::vector<uint8_t> ended(3, 0);
  SimResult res;
  res.reason.assign(3, SimReason::NotSubmitted);
  TimedJobs wakes;
  TimedQueue q(QueueView{js, category, 1, fits_idle, ended, creds, 3, res, wakes});
  for (uint32_t j = 0; j < 3; ++j) q.submitted(j, 0);

  EXPECT_EQ(visible(q), (std::vector<uint32_t>{0, 2})) << "b waits for a out of every cycle's sight";
  EXPECT_EQ(res.reason[1], SimReason::Dependency);
  EXPECT_EQ(q.size(), 3u) << "the parked job still waits";
  ASSERT_EQ(wakes.size(), 1u);
  EXPECT_EQ(wakes.top(), std::make_pair(50.0, uint32_t{2})) << "a cycle when c's hold ends";

  res.reason[0] = SimReason::None;  // a starts (a cycle's pass), then ends
  q.started(0);
  q.pass_done();
  EXPECT_EQ(q.size(), 2u);
  ended[0] = 1;
  q.ended(0, 10);
  EXPECT_EQ(visible(q), (std::vector<uint32_t>{2, 1})) << "b queued again once a ended";
}

}  // namespace
}  // namespace colmatch
