// WildcardPattern (engine/wildcard.hpp): Grid Engine RESTRING matching, seed 002 "String matching".
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "engine/wildcard.hpp"

using namespace colmatch;

namespace {

// Seed 002, "String matching", RESTRING rules and its two examples.
TEST(Wildcard, GridEngineRestringRules) {
  EXPECT_TRUE(WildcardPattern("lx*").matches("lx-amd64"));
  EXPECT_TRUE(WildcardPattern("*").matches(""));
  EXPECT_FALSE(WildcardPattern("?").matches("")) << "? is exactly one character";
  EXPECT_TRUE(WildcardPattern("lx-amd6?").matches("lx-amd64"));
  EXPECT_TRUE(WildcardPattern("a.b").matches("a.b"));
  EXPECT_FALSE(WildcardPattern("a.b").matches("axb")) << ". is a literal dot";
  EXPECT_TRUE(WildcardPattern("a\\*b").matches("a*b"));
  EXPECT_FALSE(WildcardPattern("a\\*b").matches("axxb")) << "\\* is a literal star";
  EXPECT_TRUE(WildcardPattern("a\\\\b").matches("a\\b"));
  EXPECT_TRUE(WildcardPattern("[ab]x").matches("bx"));
  EXPECT_FALSE(WildcardPattern("[ab]x").matches("cx"));
  EXPECT_TRUE(WildcardPattern("node[0-3]").matches("node2"));
  EXPECT_FALSE(WildcardPattern("node[0-3]").matches("node7"));
  EXPECT_TRUE(WildcardPattern("*a*b*c").matches("xxaybzzc"));
}

TEST(Wildcard, SeedExampleArchLinuxOrSolaris) {
  // -l arch="linux|solaris" : arch=linux OR arch=solaris
  const WildcardPattern p("linux|solaris");
  EXPECT_TRUE(p.matches("linux"));
  EXPECT_TRUE(p.matches("solaris"));
  EXPECT_FALSE(p.matches("linux|solaris"));
  // -l arch="[linux|solaris]" : arch="[linux" OR arch="solaris]"
  const WildcardPattern q("[linux|solaris]");
  EXPECT_EQ(q.alternatives(), (std::vector<std::string>{"[linux", "solaris]"}));
  EXPECT_TRUE(q.matches("[linux"));
  EXPECT_TRUE(q.matches("solaris]"));
  EXPECT_FALSE(q.matches("linux"));
  EXPECT_FALSE(q.matches("l"));
}

TEST(Wildcard, EscapesAndUnclosedBrackets) {
  EXPECT_TRUE(WildcardPattern("a\\?").matches("a?")) << "\\? is a literal question mark";
  EXPECT_FALSE(WildcardPattern("a\\?").matches("ab"));
  EXPECT_TRUE(WildcardPattern("a\\[b").matches("a[b"));
  EXPECT_TRUE(WildcardPattern("a[b").matches("a[b")) << "an unclosed '[' is a literal";
  EXPECT_FALSE(WildcardPattern("abc").matches("abcd")) << "the whole text must match";
  EXPECT_FALSE(WildcardPattern("abc").matches("ab"));
  EXPECT_TRUE(WildcardPattern("").matches(""));
  EXPECT_FALSE(WildcardPattern("").matches("x"));
}

// The bit-parallel matcher (long patterns against long values) and the backtracking glob share every
// rule: on random patterns of stars, '?', sets, ranges, escapes, unclosed brackets and alternatives
// they agree on every text.
TEST(Wildcard, BitParallelMatcherAgreesWithBacktracking) {
  std::mt19937_64 rng(2026);
  const std::vector<std::string> atoms = {"a",   "b",   "c",    "*", "*", "?",  "[ab]", "[a-c]", "[b-]",
                                          "\\*", "\\?", "\\\\", "[", "]", "\\", "|",    "**"};
  const std::string letters = "abc*?[]\\|-";
  size_t hits = 0;
  for (int i = 0; i < 30000; ++i) {
    std::string pattern, text;
    for (size_t n = rng() % 10; n > 0; --n) pattern += atoms[rng() % atoms.size()];
    for (size_t n = rng() % 12; n > 0; --n) text += letters[rng() % (rng() % 2 ? 3 : letters.size())];
    const WildcardPattern p(pattern);
    const bool expected = p.matches_by_backtracking(text);
    ASSERT_EQ(p.matches_bit_parallel(text), expected) << "pattern '" << pattern << "' text '" << text << "'";
    hits += expected;
  }
  EXPECT_GT(hits, 2000u) << "matches and non-matches are both exercised";
}

// Issue 12: a 10,001-element pattern against a 200,000-character value took 2.2 s with the backtracking
// glob alone; matches() now takes the bit-parallel path for such pairs (milliseconds; not timed here).
TEST(Wildcard, LongPatternAgainstLongValueTakesTheBitParallelPath) {
  std::string pattern = "*";
  for (int i = 0; i < 5000; ++i) pattern += "a*";
  pattern += "b";
  const std::string text(200000, 'a');
  const WildcardPattern p(pattern);
  EXPECT_FALSE(p.matches(text));
  EXPECT_TRUE(p.matches(text + "b"));
  EXPECT_FALSE(p.matches(std::string(4999, 'a') + "b" + std::string(300, 'c'))) << "needs 5,000 a's, then b last";
  // a smaller pair both matchers can afford
  const WildcardPattern q("*" + std::string(300, '?') + "*b");
  const std::string t = std::string(1000, 'x') + "b";
  EXPECT_EQ(q.matches(t), q.matches_by_backtracking(t));
  EXPECT_TRUE(q.matches(t));
}

}  // namespace
