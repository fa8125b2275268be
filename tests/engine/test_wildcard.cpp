// WildcardPattern (engine/wildcard.hpp): Grid Engine RESTRING matching, seed 002 "String matching".
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

}  // namespace
