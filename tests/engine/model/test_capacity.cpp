// Capacity (engine/model/capacity.hpp): pools on every level, exact take/release/rollback, block maxima,
// and the epoch that makes dispatch cursors start again once capacity comes back.
#include <cmath>

#include <gtest/gtest.h>

#include "engine/batch/matcher.hpp"

using namespace colmatch;

namespace {

struct Farm {
  Catalog cat;
  uint32_t slots, lic, mem;
  TaskerTable taskers;
  explicit Farm(size_t n = 130) {
    slots = cat.add(consumable_attribute("slots", AttrType::Int));
    lic = cat.add(consumable_attribute("lic", AttrType::Int, ConsumeScope::PerJob));
    mem = cat.add(consumable_attribute("mem", AttrType::Double));
    TaskerBuilder tb(cat);
    const uint32_t h = tb.add_host("h");
    tb.set_host(h, slots, "6");
    tb.set_global(lic, "2");
    for (size_t i = 0; i < n; ++i) {
      tb.add("t" + std::to_string(i), static_cast<double>(n - i), i < 4 ? h : kNone);  // rank = input order
      tb.set(slots, std::to_string(1 + i % 4));
      if (i % 2 == 0) tb.set(mem, "1.0");
    }
    taskers = std::move(tb).build();
  }
  size_t k(uint32_t attr) const { return static_cast<size_t>(cat.consumable_slot(attr)); }
};

TEST(Capacity, ConfiguredPoolsAndTheSmallestAvailable) {
  const Farm f;
  const Capacity c = Capacity::configured(f.cat, f.taskers);
  EXPECT_EQ(c.consumables(), 3u);
  EXPECT_EQ(c.queue_free(f.k(f.slots))[0], 1);
  EXPECT_EQ(c.host_free(f.k(f.slots))[0], 6);
  EXPECT_EQ(c.global_free(f.k(f.lic)), 2);
  EXPECT_TRUE(std::isnan(c.global_free(f.k(f.slots)))) << "no global slots pool";
  EXPECT_EQ(c.available(f.k(f.slots), 3), 4) << "queue 4 under host 6";
  EXPECT_EQ(c.available(f.k(f.lic), 100), 2) << "the global pool alone";
  EXPECT_TRUE(std::isnan(c.available(f.k(f.mem), 1))) << "no level defines mem for t1";
}

TEST(Capacity, TakeFromEveryPoolAboveAndReleaseStartsANewEpoch) {
  const Farm f;
  Capacity c = Capacity::configured(f.cat, f.taskers);
  const auto ch = c.charges([&] {
    std::vector<double> need(3, 0.0);
    need[f.k(f.slots)] = 2;
    need[f.k(f.lic)] = 1;
    return need;
  }());
  ASSERT_EQ(ch.size(), 2u);
  EXPECT_FALSE(ch[0].queue_only) << "slots has a host pool";
  EXPECT_FALSE(c.fits(ch, 0)) << "t0 has one slot";
  ASSERT_TRUE(c.fits(ch, 1));
  const uint64_t e0 = c.epoch();
  c.take(ch, 1);
  EXPECT_EQ(c.queue_free(f.k(f.slots))[1], 0);
  EXPECT_EQ(c.host_free(f.k(f.slots))[0], 4);
  EXPECT_EQ(c.global_free(f.k(f.lic)), 1);
  EXPECT_EQ(c.epoch(), e0) << "taking never changes the epoch";
  c.take(ch, 3);
  EXPECT_FALSE(c.fits(ch, 3)) << "t3 has 2 left of 4, but the global licence pool is empty";
  c.release(ch, 1);
  EXPECT_EQ(c.epoch(), e0 + 1);
  EXPECT_EQ(c.host_free(f.k(f.slots))[0], 4) << "6 - 2 (t1) - 2 (t3) + 2 (t1 released)";
  EXPECT_EQ(c.global_free(f.k(f.lic)), 1);
  EXPECT_TRUE(c.fits(ch, 1));
}

TEST(Capacity, RollbackRestoresExactValuesAndBlockMaxima) {
  const Farm f;
  Capacity c = Capacity::configured(f.cat, f.taskers);
  const size_t m = f.k(f.mem);
  const Charge one{static_cast<uint32_t>(m), 1.0, true};
  c.begin();
  for (int i = 0; i < 3; ++i) c.take(m, 64, 0.1);  // 1.0 - 0.1 - 0.1 - 0.1 + 0.3 would not be 1.0
  c.take(m, 66, 1.0);
  EXPECT_FALSE(c.fits(std::span<const Charge>(&one, 1), 64));
  c.rollback();
  EXPECT_EQ(c.queue_free(m)[64], 1.0) << "restored exactly, not by adding back";
  EXPECT_EQ(c.queue_free(m)[66], 1.0);
  EXPECT_FALSE(c.block_full(std::span<const Charge>(&one, 1), 1)) << "block maxima restored too";
  c.begin();
  c.take(m, 64, 1.0);
  c.commit();
  c.begin();
  c.rollback();
  EXPECT_EQ(c.queue_free(m)[64], 0.0) << "a committed take stays";
}

TEST(Capacity, BlockFullSeesTheLargestFreeAmountOfEach64Taskers) {
  const Farm f;
  Capacity c = Capacity::configured(f.cat, f.taskers);
  const size_t m = f.k(f.mem);
  const Charge one{static_cast<uint32_t>(m), 1.0, true};
  const std::span<const Charge> ch(&one, 1);
  EXPECT_FALSE(c.block_full(ch, 2));
  for (uint32_t t = 128; t < 130; ++t) c.take(m, t, c.queue_free(m)[t]);
  EXPECT_TRUE(c.block_full(ch, 2)) << "taskers 128, 129 are the last block and hold nothing";
  c.release(m, 129, 1.0);
  EXPECT_FALSE(c.block_full(ch, 2));
}

// room_words (the $fill_up walk's filter): bit t is set exactly when tasker t's own pool has something
// free, through takes, releases, rollbacks and exact settings; a lane's takes leave bits set (a bound)
// until settle().
TEST(Capacity, RoomWordsHoldTheTaskersWithSomethingFree) {
  const Farm f;
  Capacity c = Capacity::configured(f.cat, f.taskers);
  const size_t m = f.k(f.mem);
  auto room = [&](uint32_t t) { return (c.room_words(m)[t >> 6] >> (t & 63)) & 1; };
  EXPECT_EQ(room(64), 1u);
  EXPECT_EQ(room(65), 0u) << "odd taskers have no mem pool (0 free)";
  c.take(m, 64, 0.5);
  EXPECT_EQ(room(64), 1u) << "half left";
  c.take(m, 64, 0.5);
  EXPECT_EQ(room(64), 0u) << "nothing left";
  c.release(m, 64, 0.25);
  EXPECT_EQ(room(64), 1u);
  c.begin();
  c.take(m, 66, 1.0);
  EXPECT_EQ(room(66), 0u);
  c.rollback();
  EXPECT_EQ(room(66), 1u) << "a rollback gives the bit back";
  c.set_queue_free(m, 66, 0.0);
  EXPECT_EQ(room(66), 0u);
  c.set_queue_free(m, 66, 2.0);
  EXPECT_EQ(room(66), 1u);
  Capacity::Ledger lane = c.lane();
  c.take(lane, m, 128, 1.0);
  EXPECT_EQ(room(128), 1u) << "a lane leaves its bits as an upper bound";
  c.settle();
  EXPECT_EQ(room(128), 0u) << "settle makes them exact";
}

// global_full (dispatch's check before walking a category's taskers): a global pool short of its charge
// means no tasker fits, whatever the other levels hold; pools of other levels never make it true.
TEST(Capacity, GlobalFullWhenAFarmWidePoolLacksRoomForItsCharge) {
  const Farm f;
  Capacity c = Capacity::configured(f.cat, f.taskers);
  auto charges = [&](double slots, double lic, double mem) {
    std::vector<double> need(3, 0.0);
    need[f.k(f.slots)] = slots;
    need[f.k(f.lic)] = lic;
    need[f.k(f.mem)] = mem;
    return c.charges(need);
  };
  EXPECT_FALSE(c.global_full(charges(1, 2, 0))) << "two licences, two asked";
  EXPECT_TRUE(c.global_full(charges(1, 3, 0))) << "three asked";
  EXPECT_FALSE(c.global_full(charges(7, 0, 5))) << "host and queue pools too small: not the global level";
  c.take(charges(1, 1, 0), 5);
  EXPECT_FALSE(c.global_full(charges(1, 1, 0)));
  EXPECT_TRUE(c.global_full(charges(1, 2, 0)));
  c.take(charges(1, 1, 0), 6);
  const auto one = charges(1, 1, 0);
  ASSERT_TRUE(c.global_full(one));
  for (uint32_t t = 0; t < f.taskers.size(); ++t) ASSERT_FALSE(c.fits(one, t)) << "tasker " << t;
  c.release(one, 5);
  EXPECT_FALSE(c.global_full(one));
}

TEST(Capacity, CursorsStartAgainWhenCapacityComesBack) {
  const Farm f(8);
  JobBuilder jb(f.cat);
  for (int i = 0; i < 3; ++i) {
    jb.add("j" + std::to_string(i), "u", "g", 0, i, 1);
    jb.set_request("lic>=1");
    jb.set_amount(f.lic, 1);
  }
  const JobTable jobs = std::move(jb).build();
  const Categories cats = categorize(f.cat, jobs);
  const auto eligible = compute_eligibility(f.cat, f.taskers, jobs, cats, kernels::active());
  Capacity cap = Capacity::configured(f.cat, f.taskers);
  DispatchCursors cursors(cats, eligible);
  const DispatchResult first = dispatch(f.taskers, jobs, cats, eligible, cap, cursors);
  EXPECT_EQ(first.assigned, 2u) << "two licences";
  EXPECT_EQ(first.reason[2], PendingReason::NoFreeCapacity);
  EXPECT_EQ(cursors.at(0, 0), f.taskers.size()) << "the category's cursor ran past the end";
  // The first job ends: its charge (a licence and its slot) comes back. The same cursors must not
  // skip the farm now.
  cap.release(cap.charges(cats.unit_charge[cats.of_job[0]]), first.tasker[0]);
  const DispatchResult again = dispatch(f.taskers, jobs, cats, eligible, cap, cursors);
  EXPECT_EQ(again.assigned, 1u) << "one licence free again: one job placed";
  EXPECT_EQ(again.tasker[0], 0u) << "from the start of the set";
}

// A machine REMOVEd (Google 2011): nothing fits on it, whatever its pools hold; bringing it back is
// capacity coming back (a new epoch), taking it down is not.
TEST(Capacity, DownTaskerFitsNothingAndComingBackStartsANewEpoch) {
  const Farm f;
  Capacity c = Capacity::configured(f.cat, f.taskers);
  const auto none = c.charges(std::vector<double>(3, 0.0));
  ASSERT_TRUE(c.fits(none, 5));
  const uint64_t e0 = c.epoch();
  c.set_down(5, true);
  EXPECT_TRUE(c.down(5));
  EXPECT_FALSE(c.fits(none, 5)) << "not even a job that charges nothing";
  EXPECT_TRUE(c.fits(none, 6));
  EXPECT_EQ(c.epoch(), e0);
  c.set_down(5, false);
  EXPECT_TRUE(c.fits(none, 5));
  EXPECT_GT(c.epoch(), e0);
}

// Moab: R.Available = R.Configured - R.Dedicated, never below 0. A machine UPDATE that shrinks a pool
// under what running jobs hold leaves a debt their releases pay before the pool grows again.
TEST(Capacity, ReconfigureBelowWhatRunningJobsHoldLeavesADebtReleasesPayFirst) {
  const Farm f;
  Capacity c = Capacity::configured(f.cat, f.taskers);
  const size_t mem = f.k(f.mem);
  ASSERT_EQ(c.queue_free(mem)[0], 1.0);
  c.take(mem, 0, 0.75);  // a running job holds 0.75 of 1.0
  const double total = c.queue_total(mem);
  EXPECT_FALSE(c.set_configured(mem, 0, 0.5));  // configured 1.0 -> 0.5: 0.25 over
  EXPECT_EQ(c.queue_free(mem)[0], 0.0) << "available is never below 0";
  EXPECT_EQ(c.queue_total(mem), total - 0.25);
  const uint64_t e0 = c.epoch();
  c.release(mem, 0, 0.5);  // pays the 0.25 debt, 0.25 comes back
  EXPECT_EQ(c.queue_free(mem)[0], 0.25);
  c.release(mem, 0, 0.25);
  EXPECT_EQ(c.queue_free(mem)[0], 0.5) << "configured 0.5, nothing dedicated";
  EXPECT_GT(c.epoch(), e0);
  EXPECT_TRUE(c.set_configured(mem, 0, 2.0));  // 0.5 -> 2.0
  EXPECT_EQ(c.queue_free(mem)[0], 2.0);
  EXPECT_THROW(c.set_configured(f.k(f.slots), 0, 1.0), std::invalid_argument) << "slots has a host pool";
}

}  // namespace
