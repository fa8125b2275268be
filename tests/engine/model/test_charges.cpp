// ChargeVector (engine/model/charges.hpp): a category's charges per consumable, stored sparsely (issue 28).
#include "engine/model/charges.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace colmatch {
namespace {

TEST(ChargeVector, ReadsAsTheDenseVectorItWasMadeFrom) {
  const ChargeVector v = std::vector<double>{0.0, 2.5, -0.0, 0.0, 7.0};
  EXPECT_EQ(v.size(), 5u);
  ASSERT_EQ(v.nonzero().size(), 2u) << "zeros of either sign are not stored";
  EXPECT_EQ(v.nonzero()[0], (ChargeVector::Entry{1, 2.5}));
  EXPECT_EQ(v.nonzero()[1], (ChargeVector::Entry{4, 7.0}));
  EXPECT_EQ(v[0], 0.0);
  EXPECT_EQ(v[1], 2.5);
  EXPECT_EQ(v[4], 7.0);
  EXPECT_EQ(v[5], 0.0) << "past the width: nothing";
  EXPECT_EQ(v.dense(), (std::vector<double>{0, 2.5, 0, 0, 7}));
  EXPECT_TRUE(v.any_positive());
  EXPECT_FALSE(ChargeVector(std::vector<double>(3, 0.0)).any_positive());
  EXPECT_TRUE(ChargeVector().empty());
  EXPECT_EQ(ChargeVector(std::vector<double>(3, 0.0)).size(), 3u) << "a width without amounts";
}

// plus() and each_of_both() against the dense sums, on random sparse vectors; each_of_both stops when
// told to.
TEST(ChargeVector, SumAndWalkOfTwoAgreeWithTheDenseOnes) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    const size_t width = 1 + rng() % 40;
    std::vector<double> a(width), b(width);
    for (size_t k = 0; k < width; ++k) {
      a[k] = rng() % 3 == 0 ? static_cast<double>(rng() % 5) : 0.0;
      b[k] = rng() % 3 == 0 ? static_cast<double>(rng() % 5) : 0.0;
    }
    const ChargeVector x = a, y = b;
    std::vector<double> sum(width);
    for (size_t k = 0; k < width; ++k) sum[k] = a[k] + b[k];
    ASSERT_EQ(x.plus(y).dense(), sum) << round;
    std::vector<size_t> seen;
    ASSERT_TRUE(each_of_both(x, y, [&](uint32_t k, double u, double v) {
      EXPECT_EQ(u, a[k]);
      EXPECT_EQ(v, b[k]);
      seen.push_back(k);
      return true;
    }));
    std::vector<size_t> want;
    for (size_t k = 0; k < width; ++k)
      if (a[k] != 0 || b[k] != 0) want.push_back(k);
    ASSERT_EQ(seen, want) << round;
    if (want.size() > 1) {
      size_t calls = 0;
      EXPECT_FALSE(each_of_both(x, y, [&](uint32_t, double, double) { return ++calls < 2; }));
      EXPECT_EQ(calls, 2u);
    }
  }
}

}  // namespace
}  // namespace colmatch
