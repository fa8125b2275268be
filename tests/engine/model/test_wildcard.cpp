// WildcardPattern (engine/model/wildcard.hpp): Grid Engine RESTRING matching, seed 002 "String matching".
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "engine/model/wildcard.hpp"

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

// Son of Grid Engine 8.1.9: "[^...]" is the complement of a set; the seed's reading keeps '^' a member.
TEST(Wildcard, CaretNegatesASetOnlyWhenAsked) {
  const WildcardPattern sge("[^r]*", true), seed("[^r]*");
  EXPECT_FALSE(sge.matches("rhel7"));
  EXPECT_TRUE(sge.matches("ubuntu22"));
  EXPECT_TRUE(seed.matches("rhel7"));
  EXPECT_FALSE(seed.matches("ubuntu22"));
  EXPECT_TRUE(seed.matches("^x"));
  EXPECT_TRUE(WildcardPattern("[^a-c]x", true).matches("dx"));
  EXPECT_FALSE(WildcardPattern("[^a-c]x", true).matches("bx"));
  EXPECT_TRUE(WildcardPattern("[^]", true).matches("^")) << "'[^]' negates nothing: the set of '^'";
  // both matchers read it the same
  const WildcardPattern neg("*[^ab]?[^c-e]*", true);
  for (const char* t : {"xay", "abcf", "zzzz", "cde", "qqfd"})
    EXPECT_EQ(neg.matches_by_backtracking(t), neg.matches_bit_parallel(t)) << t;
}

// Wildcard expressions (sge_types(5)): ! binds tightest, then &, then |; parentheses; each operand a
// pattern. The error positions are SGE's own (qsub's "Parse error on position N", recorded in
// tests/engine/match/test_sge_semantics.cpp).
TEST(WildcardExpression, OperatorsAndPrecedence) {
  const WildcardExpression e("rhel*&!rhel7");
  EXPECT_TRUE(e.matches("rhel8"));
  EXPECT_FALSE(e.matches("rhel7"));
  EXPECT_FALSE(e.matches("sles15"));
  const WildcardExpression p("a|b&c");  // a | (b & c)
  EXPECT_TRUE(p.matches("a"));
  EXPECT_FALSE(p.matches("b"));
  EXPECT_FALSE(WildcardExpression("b&c").matches("b"));
  const WildcardExpression g("(x86*|aarch*)&!*_64");
  EXPECT_TRUE(g.matches("x86"));
  EXPECT_TRUE(g.matches("aarch64"));
  EXPECT_FALSE(g.matches("x86_64"));
  EXPECT_TRUE(WildcardExpression("!!rhel7").matches("rhel7"));
  EXPECT_TRUE(WildcardExpression("!(a|b)").matches("c"));
  EXPECT_FALSE(WildcardExpression("!(a|b)").matches("b"));
  EXPECT_TRUE(WildcardExpression("[a|b]x").matches("|x")) << "inside a set, | is a member";
  EXPECT_TRUE(WildcardExpression("rhel7").literal());
  for (const char* t : {"rhel*", "(rhel7)", "!a", "a|b", "[ab]", "a\\*"})
    EXPECT_FALSE(WildcardExpression(t).literal()) << t;
}

TEST(WildcardExpression, MalformedAtSgesPosition) {
  const std::pair<const char*, size_t> cases[] = {{"rhel7|", 6}, {"[!x]*", 2},  {"&rhel7", 1},
                                                  {"(rhel7", 6}, {"rhel7)", 6}, {"", 0},
                                                  {"a&&b", 3},   {"!", 1},      {"()", 2}};
  for (const auto& [text, at] : cases) {
    try {
      WildcardExpression e(text);
      ADD_FAILURE() << "no error for '" << text << "'";
    } catch (const WildcardError& err) {
      EXPECT_EQ(err.position, at) << text << ": " << err.what();
    }
  }
}

// Bounded: a chain of 30,000 operators is one node (no recursion per operator); nesting past 128 is
// refused before the parser recurses further.
TEST(WildcardExpression, LongChainsAndDeepNesting) {
  std::string chain = "a0";
  for (int i = 1; i < 30000; ++i) chain += (i % 2 ? "|a" : "&!b") + std::to_string(i % 10);
  const WildcardExpression e(chain);
  EXPECT_TRUE(e.matches("a1"));
  std::string deep(129, '(');
  deep += "a" + std::string(129, ')');
  EXPECT_THROW(WildcardExpression{deep}, WildcardError);
  std::string ok(127, '(');
  ok += "a" + std::string(127, ')');
  EXPECT_TRUE(WildcardExpression(ok).matches("a"));
  EXPECT_THROW(WildcardExpression{std::string(200, '!') + "a"}, WildcardError);
}

}  // namespace
