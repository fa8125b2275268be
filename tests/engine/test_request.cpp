#include <gtest/gtest.h>

#include "engine/request.hpp"
#include "engine/wildcard.hpp"

using namespace colmatch;

namespace {

Catalog catalog() {
  Catalog c;
  auto add = [&](const char* n, AttrType t, Relop r, bool cons = false, const char* sc = "") {
    AttributeDef d;
    d.name = n;
    d.shortcut = sc;
    d.type = t;
    d.relop = r;
    d.consumable = cons;
    c.add(d);
  };
  add("arch", AttrType::String, Relop::EQ, false, "a");
  add("os", AttrType::CString, Relop::EQ);
  add("site", AttrType::ReString, Relop::EQ);
  add("mem", AttrType::Memory, Relop::LE, true);
  add("speed", AttrType::Double, Relop::GE);
  add("ssd", AttrType::Boolean, Relop::EQ);
  AttributeDef hidden;
  hidden.name = "secret";
  hidden.requestable = Requestable::No;
  c.add(hidden);
  return c;
}

std::string canon(std::string_view text) {
  const Catalog c = catalog();
  return canonical_text(parse_request(text, c), c);
}

TEST(Request, ParsesClausesAndPrecedence) {
  EXPECT_EQ(canon(""), "true");
  EXPECT_EQ(canon("arch==lx-amd64"), "arch==\"lx-amd64\"");
  // && binds tighter than ||; children are listed in canonical order (by their text: names first)
  EXPECT_EQ(canon("speed>2 || a==x && mem>=4G"), "(arch==\"x\" && mem>=4294967296) || speed>2");
  EXPECT_EQ(canon("a==x && (mem>=4G || speed>2)"), "arch==\"x\" && (mem>=4294967296 || speed>2)");
  EXPECT_EQ(canon("!(arch==x)"), "!(arch==\"x\")");
}

TEST(Request, EqualsSignUsesCatalogRelop) {
  // Grid Engine: -l mem=4G matches when 4G <= tasker's mem, i.e. tasker mem >= 4G.
  EXPECT_EQ(canon("mem=4G"), "mem>=4294967296");
  // speed has relop >= in this catalog: speed=2 matches when 2 >= tasker speed.
  EXPECT_EQ(canon("speed=2"), "speed<=2");
  EXPECT_EQ(canon("arch=x"), "arch==\"x\"");
}

TEST(Request, CanonicalFormIsOrderAndDuplicateFree) {
  EXPECT_EQ(canon("speed>1 && arch==x"), canon("arch==x && speed>1"));
  EXPECT_EQ(canon("arch==x && arch==x"), canon("arch==x"));
  EXPECT_EQ(canon("(arch==x && (speed>1 && ssd==true))"), canon("ssd==1 && arch==x && speed>1"));
  EXPECT_EQ(canon("!!(arch==x)"), canon("arch==x"));
  EXPECT_EQ(canon("arch=={b, a, b}"), "arch=={\"a\",\"b\"}");
  EXPECT_EQ(canon("os==RHEL9"), canon("os==rhel9")) << "cstring folds case";
  EXPECT_NE(canon("arch==X"), canon("arch==x")) << "string keeps case";
  EXPECT_EQ(canon("mem>=1024M"), canon("mem>=1G"));
}

TEST(Request, QuotedValuesAndPatterns) {
  EXPECT_EQ(canon("site==\"*.ch|*.fr\""), "site==\"*.ch|*.fr\"");
  EXPECT_EQ(canon("site==*.ch|*.fr"), "site==\"*.ch|*.fr\"") << "a single | stays in a bare value";
  EXPECT_EQ(canon("arch==\"a b\""), "arch==\"a b\"");
}

void expect_error(std::string_view text, const char* words, size_t column = 0) {
  const Catalog c = catalog();
  try {
    parse_request(text, c);
    FAIL() << "accepted: " << text;
  } catch (const RequestError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    if (column) {
      EXPECT_EQ(e.column, column) << e.what();
    }
  }
}

TEST(Request, ErrorsNameTheProblemAndColumn) {
  expect_error("arch==x && gpu==1", "unknown attribute 'gpu'", 12);
  expect_error("arch<x", "allows only == and !=", 5);
  expect_error("ssd!=true", "boolean allows only ==");
  expect_error("mem>=4X", "not a memory value");
  expect_error("speed>fast", "not a double value");
  expect_error("secret==1", "not requestable");
  expect_error("(arch==x", "expected ')'");
  expect_error("arch x", "expected a relop");
  expect_error("arch==x &&", "expected an attribute name");
  expect_error("speed<{1,2}", "a value list takes only == or !=");
  expect_error("arch==\"x", "unterminated string");
  expect_error("arch==x )", "unexpected");
}

TEST(Request, MentionedAttributes) {
  const Catalog c = catalog();
  EXPECT_EQ(mentioned_attributes(parse_request("speed>1 || (arch==x && !(speed<3))", c)), (std::vector<uint32_t>{0, 4}));
}

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

}  // namespace
