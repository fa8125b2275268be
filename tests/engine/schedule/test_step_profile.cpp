// The pooled book's step function (engine/schedule/step_profile.hpp) against a plain list of range
// additions evaluated point by point, on random additions, questions and forgetting, with enough change
// points to cut it into many blocks.
#include <algorithm>
#include <cstdint>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "engine/schedule/step_profile.hpp"

using colmatch::StepProfile;

namespace {

constexpr double kInf = StepProfile::kInf;

// f(x) = base + the deltas of the ranges [a, b) holding x.
struct Naive {
  int64_t base;
  std::vector<std::tuple<double, double, int64_t>> adds;
  int64_t at(double x) const {
    int64_t v = base;
    for (const auto& [a, b, d] : adds)
      if (a <= x && x < b) v += d;
    return v;
  }
  // the times f may change at, and x itself
  std::vector<double> points(double x) const {
    std::vector<double> p{x};
    for (const auto& [a, b, d] : adds) p.push_back(a), p.push_back(b);
    std::sort(p.begin(), p.end());
    return p;
  }
  int64_t min(double a, double b) const {
    int64_t m = at(a);
    for (const double p : points(a))
      if (p > a && p < b) m = std::min(m, at(p));
    return m;
  }
  double first(double a, int64_t bound, bool below) const {
    for (const double p : points(a)) {
      if (p < a || p == kInf) continue;
      const int64_t v = at(p);
      if (below ? v < bound : v >= bound) return p;
    }
    return kInf;
  }
};

TEST(StepProfile, EqualsRangeAdditionsEvaluatedPointByPoint) {
  size_t questions = 0, forgotten = 0, most = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::mt19937_64 rng(900 + trial);
    const auto base = static_cast<int64_t>(rng() % 50);
    StepProfile f(base);
    Naive n{base, {}};
    double now = 0;
    for (int op = 0; op < 600; ++op) {
      const double a = now + static_cast<double>(rng() % 400);
      const double b = rng() % 20 == 0 ? kInf : a + static_cast<double>(rng() % 200);
      const auto d = static_cast<int64_t>(rng() % 21) - 10;
      f.add(a, b, d);
      n.adds.emplace_back(a, b, d);
      if (rng() % 25 == 0) {  // time moves on: nothing before it is asked again
        now += static_cast<double>(rng() % 30);
        const size_t before = f.points();
        f.forget_before(now);
        forgotten += before - f.points();
      }
      const double x = now + static_cast<double>(rng() % 500);
      const double y = x + 1 + static_cast<double>(rng() % 300);
      const auto bound = static_cast<int64_t>(rng() % 60) - 10;
      ASSERT_EQ(f.at(x), n.at(x)) << "trial " << trial << " op " << op;
      ASSERT_EQ(f.min(x, y), n.min(x, y)) << "trial " << trial << " op " << op;
      ASSERT_EQ(f.first(x, bound, true), n.first(x, bound, true)) << "trial " << trial << " op " << op;
      ASSERT_EQ(f.first(x, bound, false), n.first(x, bound, false)) << "trial " << trial << " op " << op;
      const double start = n.first(x, bound, false);
      const double end = start < kInf ? n.first(start, bound, true) : kInf;
      ASSERT_EQ(f.first_run(x, bound), std::make_pair(start, end)) << "trial " << trial << " op " << op;
      questions += 5;
      most = std::max(most, f.points());
    }
  }
  EXPECT_GT(most, 300u) << "many blocks (at most 128 points each)";
  EXPECT_GT(questions, 90000u);
  EXPECT_GT(forgotten, 1000u) << "forgetting is exercised";
}

}  // namespace
