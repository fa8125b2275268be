// Every kernel of every usable instruction set against the scalar twin, on random data with
// lengths around the 64-row word boundary and the SIMD lane widths.
#include <array>
#include <cmath>
#include <cstdlib>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "kernels/dassert.hpp"
#include "kernels/kernels.hpp"
#include "kernels/tasker_set.hpp"

using namespace colmatch::kernels;

namespace {

const size_t kLengths[] = {0, 1, 3, 7, 8, 15, 16, 31, 63, 64, 65, 127, 128, 129, 200, 1000, 4099};

std::vector<uint64_t> run_cmp(const KernelTable& k, const std::vector<double>& col, CmpOp op, double v) {
  std::vector<uint64_t> out(words_for(col.size()) + 1, 0xDEADBEEFDEADBEEFULL);  // sentinel word after
  k.cmp_f64(col.data(), col.size(), op, v, out.data());
  EXPECT_EQ(out.back(), 0xDEADBEEFDEADBEEFULL) << "kernel wrote past its output";
  out.pop_back();
  return out;
}

// A random set's words over `universe` taskers, each a member with probability `density`; `count` the members.
std::vector<uint64_t> random_words(std::mt19937_64& rng, size_t universe, double density, uint64_t& count) {
  std::vector<uint64_t> words(words_for(universe), 0);
  count = 0;
  for (uint32_t t = 0; t < universe; ++t)
    if (std::bernoulli_distribution(density)(rng)) {
      words[t / 64] |= 1ULL << (t % 64);
      ++count;
    }
  return words;
}

class KernelsPerIsa : public ::testing::TestWithParam<Isa> {
 protected:
  const KernelTable& k() { return *table_for(GetParam()); }
  const KernelTable& ref() { return *table_for(Isa::Scalar); }
  std::mt19937_64 rng{12345};
};

TEST_P(KernelsPerIsa, CmpF64MatchesScalarForEveryRelop) {
  std::uniform_int_distribution<int> small(0, 6);
  for (size_t n : kLengths) {
    std::vector<double> col(n);
    for (auto& x : col) x = small(rng) == 6 ? std::nan("") : small(rng) * 0.5;
    for (CmpOp op : {CmpOp::EQ, CmpOp::NE, CmpOp::LT, CmpOp::LE, CmpOp::GT, CmpOp::GE})
      for (double v : {0.0, 1.0, 1.5, 3.0, -1.0}) {
        const auto got = run_cmp(k(), col, op, v);
        const auto want = run_cmp(ref(), col, op, v);
        ASSERT_EQ(got, want) << "n=" << n << " op=" << int(op) << " v=" << v;
        // and the scalar twin against the definition, row by row
        for (size_t i = 0; i < n; ++i) {
          bool def = false;
          switch (op) {
            case CmpOp::EQ: def = col[i] == v; break;
            case CmpOp::NE: def = col[i] != v; break;
            case CmpOp::LT: def = col[i] < v; break;
            case CmpOp::LE: def = col[i] <= v; break;
            case CmpOp::GT: def = col[i] > v; break;
            case CmpOp::GE: def = col[i] >= v; break;
          }
          ASSERT_EQ(((want[i / 64] >> (i % 64)) & 1) != 0, def) << i;
        }
        if (n % 64) {
          ASSERT_EQ(want.back() >> (n % 64), 0u) << "tail bits must be clear";
        }
      }
  }
}

TEST_P(KernelsPerIsa, Cmp2F64MatchesScalarAndDefinition) {
  std::uniform_int_distribution<int> small(0, 6);
  for (size_t n : kLengths) {
    std::vector<double> a(n), b(n);
    for (auto& x : a) x = small(rng) == 6 ? std::nan("") : small(rng) * 0.5;
    for (auto& x : b) x = small(rng) * 0.5;
    std::vector<uint64_t> aa(words_for(n)), ba(words_for(n));
    for (auto& w : aa) w = rng();
    for (auto& w : ba) w = rng();
    for (CmpOp op : {CmpOp::EQ, CmpOp::NE, CmpOp::LT, CmpOp::LE, CmpOp::GT, CmpOp::GE}) {
      std::vector<uint64_t> got(words_for(n) + 1, 7), want(words_for(n) + 1, 7), x(words_for(n)), y(words_for(n));
      k().cmp2_f64(a.data(), aa.data(), b.data(), ba.data(), n, op, 1.5, got.data());
      ref().cmp2_f64(a.data(), aa.data(), b.data(), ba.data(), n, op, 1.5, want.data());
      ASSERT_EQ(got, want) << "n=" << n << " op=" << int(op);
      ASSERT_EQ(got.back(), 7u);
      // the definition, from the one-level kernel
      ref().cmp_f64(a.data(), n, op, 1.5, x.data());
      ref().cmp_f64(b.data(), n, op, 1.5, y.data());
      for (size_t w = 0; w < words_for(n); ++w) {
        uint64_t d = (x[w] | aa[w]) & (y[w] | ba[w]);
        if (w + 1 == words_for(n) && (n & 63)) d &= (uint64_t{1} << (n & 63)) - 1;
        ASSERT_EQ(want[w], d) << "n=" << n << " word " << w;
      }
    }
  }
}

TEST_P(KernelsPerIsa, EqAndLutU32MatchScalar) {
  for (size_t n : kLengths) {
    const uint32_t dict = 1 + static_cast<uint32_t>(n % 37);
    std::vector<uint32_t> ids(n);
    for (auto& x : ids) x = static_cast<uint32_t>(rng() % dict);
    std::vector<uint32_t> lut(dict);
    for (auto& x : lut) x = (rng() & 1) ? 0xFFFFFFFFu : 0u;
    const size_t nw = words_for(n);
    std::vector<uint64_t> a(nw + 1, 7), b(nw + 1, 7);
    for (uint32_t id = 0; id <= dict; ++id) {
      k().eq_u32(ids.data(), n, id, a.data());
      ref().eq_u32(ids.data(), n, id, b.data());
      ASSERT_EQ(a, b) << "eq n=" << n << " id=" << id;
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(((b[i / 64] >> (i % 64)) & 1) != 0, ids[i] == id);
    }
    uint32_t bits = 0;
    for (uint32_t v = 0; v < dict && v < 32; ++v) bits |= (lut[v] & 1u) << v;
    k().bits32_u32(ids.data(), n, bits, a.data());  // dict <= 37: restrict to ids < 32 below
    ref().bits32_u32(ids.data(), n, bits, b.data());
    if (dict <= 32) {
      ASSERT_EQ(a, b) << "bits32 n=" << n;
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(((b[i / 64] >> (i % 64)) & 1) != 0, lut[ids[i]] != 0);
    }
    k().lut_u32(ids.data(), n, lut.data(), lut.size(), a.data());
    ref().lut_u32(ids.data(), n, lut.data(), lut.size(), b.data());
    ASSERT_EQ(a, b) << "lut n=" << n;
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(((b[i / 64] >> (i % 64)) & 1) != 0, lut[ids[i]] != 0);
    ASSERT_EQ(a.back(), 7u);
  }
}

TEST_P(KernelsPerIsa, WordAlgebraAndPopcountMatchScalar) {
  for (size_t nw : {0, 1, 2, 3, 7, 8, 9, 17, 64, 65}) {
    std::vector<uint64_t> x(nw), y(nw);
    for (auto& w : x) w = rng();
    for (auto& w : y) w = rng();
    for (int op = 0; op < 3; ++op) {
      auto a = x, b = x;
      auto f = op == 0 ? k().and_words : op == 1 ? k().or_words : k().andnot_words;
      auto g = op == 0 ? ref().and_words : op == 1 ? ref().or_words : ref().andnot_words;
      f(a.data(), y.data(), nw);
      g(b.data(), y.data(), nw);
      ASSERT_EQ(a, b) << "op " << op << " nw " << nw;
      for (size_t w = 0; w < nw; ++w)
        ASSERT_EQ(b[w], op == 0 ? (x[w] & y[w]) : op == 1 ? (x[w] | y[w]) : (x[w] & ~y[w]));
    }
    uint64_t expect = 0;
    for (auto w : x) expect += static_cast<uint64_t>(__builtin_popcountll(w));
    ASSERT_EQ(k().popcount(x.data(), nw), expect);
    ASSERT_EQ(ref().popcount(x.data(), nw), expect);
  }
}

std::string isa_param_name(const ::testing::TestParamInfo<Isa>& p) { return std::string(isa_name(p.param)); }
INSTANTIATE_TEST_SUITE_P(AllUsable, KernelsPerIsa, ::testing::ValuesIn(usable_isas()), isa_param_name);

TEST(Kernels, ScalarAndAtLeastOneSimdSetAreUsableOnX86) {
  const auto isas = usable_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.front(), Isa::Scalar);
#if defined(COLMATCH_X86_KERNELS)
  EXPECT_GE(isas.size(), 2u) << "SSE2 is part of x86-64";
#endif
}

// Debug builds (the sanitize preset among them) check kernel preconditions: an id past the lookup
// table aborts with the contract named instead of reading out of bounds.
TEST(KernelsDeathTest, DebugAssertsCatchIdsPastTheTable) {
  if (!COLMATCH_DASSERT_ENABLED) GTEST_SKIP() << "COLMATCH_DASSERT is compiled out of release builds";
  const std::vector<uint32_t> ids = {0, 1, 7};
  const std::vector<uint32_t> lut = {1, 0, 1};  // ids must be < 3
  uint64_t out = 0;
  for (Isa isa : usable_isas()) {
    const KernelTable& k = *table_for(isa);
    EXPECT_DEATH(k.lut_u32(ids.data(), ids.size(), lut.data(), lut.size(), &out), "lut_u32") << isa_name(isa);
    const std::vector<uint32_t> big = {3, 40};
    EXPECT_DEATH(k.bits32_u32(big.data(), big.size(), 0xFFu, &out), "bits32_u32") << isa_name(isa);
  }
}

// Run by ctest with COLMATCH_ISA set (see tests/CMakeLists.txt): proves the variable forces the set.
TEST(Kernels, EnvironmentForcesInstructionSet) {
  const char* env = std::getenv("COLMATCH_ISA");
  if (env == nullptr) GTEST_SKIP() << "COLMATCH_ISA not set";
  Isa want;
  ASSERT_TRUE(parse_isa(env, want));
  if (table_for(want) == nullptr) GTEST_SKIP() << env << " not supported by this CPU";
  EXPECT_EQ(active().isa, want);
}

TEST(Kernels, FindNextSetSkipsZeroWords) {
  std::vector<uint64_t> w(10, 0);
  w[3] = 1ULL << 5;
  w[9] = 1ULL << 63;
  EXPECT_EQ(find_next_set(w.data(), w.size(), 0), 3u * 64 + 5);
  EXPECT_EQ(find_next_set(w.data(), w.size(), 3 * 64 + 5), 3u * 64 + 5);
  EXPECT_EQ(find_next_set(w.data(), w.size(), 3 * 64 + 6), 9u * 64 + 63);
  EXPECT_EQ(find_next_set(w.data(), w.size(), 640), 640u);
  EXPECT_EQ(find_next_set(w.data(), 0, 0), 0u);
}

// TaskerSet against std::set, dense and sparse, as CRoaring's checked tests mirror a bitmap in a set.
TEST(TaskerSet, DenseAndSparseAgreeWithStdSet) {
  std::mt19937_64 rng(7);
  for (size_t universe : {1, 64, 100, 1000, 5000}) {
    for (double density : {0.0, 0.01, 0.05, 0.5, 1.0}) {
      std::vector<uint64_t> words(words_for(universe), 0);
      std::set<uint32_t> ref;
      for (uint32_t t = 0; t < universe; ++t)
        if (std::bernoulli_distribution(density)(rng)) {
          words[t / 64] |= 1ULL << (t % 64);
          ref.insert(t);
        }
      auto s = TaskerSet::from_words(words, universe, ref.size());
      EXPECT_EQ(s.sparse(), ref.size() * 16 < universe) << universe << " " << density;
      EXPECT_EQ(s.count(), ref.size());
      EXPECT_EQ(s.to_vector(), std::vector<uint32_t>(ref.begin(), ref.end()));
      for (size_t pos = 0; pos <= universe; pos += 1 + universe / 50) {
        auto it = ref.lower_bound(static_cast<uint32_t>(pos));
        EXPECT_EQ(s.next(pos), it == ref.end() ? universe : *it);
      }
      if (!ref.empty()) {
        const uint32_t victim = *ref.begin();
        s.remove(victim);
        ref.erase(victim);
        EXPECT_FALSE(s.contains(victim));
        EXPECT_EQ(s.count(), ref.size());
        s.add(victim);
        EXPECT_TRUE(s.contains(victim));
      }
    }
  }
}

// TaskerSet::Walk (dispatch's scans): for every non-decreasing sequence of positions, the answers next()
// gives, dense or sparse, with steps of one (the scan), short jumps and long ones (a skipped block of 64,
// a run of non-members), and positions repeated or past the end.
TEST(TaskerSet, WalkGivesNextsAnswersForNonDecreasingPositions) {
  std::mt19937_64 rng(11);
  size_t compared = 0;
  for (int round = 0; round < 400; ++round) {
    const size_t universe = 1 + rng() % 100000;
    const double density = std::array{0.0005, 0.003, 0.02, 0.06, 0.5}[static_cast<size_t>(round % 5)];
    uint64_t count = 0;
    std::vector<uint64_t> words = random_words(rng, universe, density, count);
    // (a run of members too, which advancing passes one at a time)
    if (round % 3 == 0 && universe > 200)
      for (uint32_t t = 100; t < 200; ++t)
        if (!((words[t / 64] >> (t % 64)) & 1)) {
          words[t / 64] |= 1ULL << (t % 64);
          ++count;
        }
    const TaskerSet s = TaskerSet::from_words(words, universe, count);
    TaskerSet::Walk walk(s);
    size_t pos = 0;
    while (pos <= universe + 1) {
      const size_t got = walk.next(pos);
      ASSERT_EQ(got, s.next(pos)) << "round " << round << " pos " << pos << (s.sparse() ? " sparse" : " dense");
      ++compared;
      const int kind = static_cast<int>(rng() % 4);
      if (kind == 0) pos = got + 1;                           // the scan's step
      else if (kind == 1) pos = (got / 64 + 1) * 64;          // a skipped block
      else if (kind == 2) pos += rng() % (1 + universe / 8);  // any jump
      // (kind 3: the same position again)
      if (got >= universe && kind != 3) break;
    }
  }
  EXPECT_GT(compared, 20000u);
}

// or_into (the union of a choosing category's solutions, issue 27): dense and sparse sets OR'd into one
// mask give the union of their members, whichever representation each has.
TEST(TaskerSet, OrIntoGivesTheUnionDenseOrSparse) {
  std::mt19937_64 rng(11);
  for (size_t universe : {1, 64, 100, 5000}) {
    std::vector<uint64_t> mask(words_for(universe), 0);
    std::set<uint32_t> ref;
    for (double density : {0.01, 0.5, 0.0, 0.03}) {
      std::vector<uint64_t> words(words_for(universe), 0);
      std::set<uint32_t> members;
      for (uint32_t t = 0; t < universe; ++t)
        if (std::bernoulli_distribution(density)(rng)) {
          words[t / 64] |= 1ULL << (t % 64);
          members.insert(t);
        }
      TaskerSet::from_words(words, universe, members.size()).or_into(mask);
      ref.insert(members.begin(), members.end());
      std::vector<uint32_t> got;
      for (uint32_t t = 0; t < universe; ++t)
        if ((mask[t / 64] >> (t % 64)) & 1) got.push_back(t);
      EXPECT_EQ(got, std::vector<uint32_t>(ref.begin(), ref.end())) << universe << " " << density;
    }
  }
}

// each_word (the dispatch's parts, issue 29): the words holding members, in increasing order, each with its
// members' mask, whichever representation the set has.
TEST(TaskerSet, EachWordGivesTheWordsWithMembersDenseOrSparse) {
  std::mt19937_64 rng(12);
  for (size_t universe : {1, 64, 65, 100, 5000, 70000}) {
    for (double density : {0.0, 0.001, 0.03, 0.5, 1.0}) {
      uint64_t count = 0;
      const std::vector<uint64_t> words = random_words(rng, universe, density, count);
      std::vector<std::pair<size_t, uint64_t>> want, got;
      for (size_t w = 0; w < words.size(); ++w)
        if (words[w] != 0) want.emplace_back(w, words[w]);
      const TaskerSet s = TaskerSet::from_words(words, universe, count);
      s.each_word([&](size_t w, uint64_t bits) { got.emplace_back(w, bits); });
      EXPECT_EQ(got, want) << universe << " " << density << (s.sparse() ? " sparse" : " dense");
    }
  }
}

}  // namespace
