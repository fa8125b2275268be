// RankSet and WaitQueue (engine/schedule/wait_queue.hpp) against plain containers on random operations: the
// fast simulation cycle trusts them to find the same jobs a scan of the whole queue would.
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "engine/schedule/wait_queue.hpp"

using namespace colmatch;

namespace {

TEST(RankSet, NextMatchesAnOrderedSetAcrossSummaryWords) {
  for (size_t n : {1u, 63u, 64u, 65u, 4095u, 4096u, 4097u, 20000u}) {
    std::mt19937_64 rng(n);
    RankSet s(n);
    std::set<size_t> ref;
    for (int op = 0; op < 4000; ++op) {
      const size_t r = rng() % n;
      if (rng() % 3 == 0) {
        s.erase(r);
        ref.erase(r);
      } else {
        s.insert(r);
        ref.insert(r);
      }
      const size_t q = rng() % (n + 2);
      const auto it = ref.lower_bound(q);
      ASSERT_EQ(s.next(q), it == ref.end() ? RankSet::npos : *it) << "n " << n << " op " << op << " q " << q;
      ASSERT_EQ(s.size(), ref.size());
      ASSERT_EQ(s.contains(r), ref.count(r) == 1);
    }
  }
}

TEST(RankSet, SparseMembersFarApart) {
  RankSet s(1'000'000);
  s.insert(3);
  s.insert(999'999);
  EXPECT_EQ(s.next(0), 3u);
  EXPECT_EQ(s.next(4), 999'999u);
  s.erase(999'999);
  EXPECT_EQ(s.next(4), RankSet::npos);
}

TEST(WaitQueue, FirstAndFirstInMatchAScan) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 40; ++round) {
    const size_t n = 1 + rng() % 300, cats = 1 + rng() % 6;
    std::vector<uint32_t> category(n), order;
    std::vector<double> estimate(n);
    for (uint32_t j = 0; j < n; ++j) {
      category[j] = static_cast<uint32_t>(rng() % cats);
      estimate[j] = rng() % 10 == 0 ? NAN : rng() % 10 == 0 ? INFINITY : static_cast<double>(rng() % 100);
      if (rng() % 8 != 0) order.push_back(j);  // some jobs are never ranked (rejected)
    }
    std::shuffle(order.begin(), order.end(), rng);
    PerJob<double> estimates;
    for (const double e : estimate) estimates.push_back(e);
    WaitQueue q(order, category, cats, std::move(estimates));
    std::vector<uint8_t> ready(n, 0);
    for (int op = 0; op < 600; ++op) {
      const uint32_t j = order.empty() ? 0 : order[rng() % order.size()];
      if (!order.empty()) {
        if (rng() % 2) {
          q.add(j);
          ready[j] = 1;
        } else {
          q.remove(j);
          ready[j] = 0;
        }
      }
      if (op % 50 == 0) q.compact();
      const size_t from = rng() % (order.size() + 1);
      uint32_t want = WaitQueue::kNoJob;  // first ready by rank
      for (size_t r = from; r < order.size() && want == WaitQueue::kNoJob; ++r)
        if (ready[order[r]]) want = order[r];
      ASSERT_EQ(q.first(from), want);
      const uint32_t c = static_cast<uint32_t>(rng() % cats);
      const double limit = static_cast<double>(rng() % 110);
      auto test = [&](double e) { return e <= limit; };
      uint32_t want_c = WaitQueue::kNoJob, want_any = WaitQueue::kNoJob;
      for (size_t r = from; r < order.size(); ++r) {
        const uint32_t x = order[r];
        if (!ready[x] || category[x] != c) continue;
        if (want_any == WaitQueue::kNoJob) want_any = x;
        const double e = std::isnan(estimate[x]) ? INFINITY : estimate[x];
        if (want_c == WaitQueue::kNoJob && test(e)) want_c = x;
      }
      ASSERT_EQ(q.first_in(c, from, test), want_c) << "round " << round << " op " << op;
      ASSERT_EQ(q.first_in(c, from, [](double) { return true; }), want_any);
      size_t in_c = 0;
      for (uint32_t x = 0; x < n; ++x) in_c += ready[x] && category[x] == c;
      ASSERT_EQ(q.ready_in(c), in_c);
      if (in_c > 0) {
        bool listed = false;
        for (uint32_t k : q.categories()) listed = listed || k == c;
        ASSERT_TRUE(listed) << "a category with ready jobs is listed";
      }
    }
  }
}

}  // namespace
