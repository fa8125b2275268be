#include <gtest/gtest.h>

#include "engine/model/catalog.hpp"

using namespace colmatch;

namespace {

AttributeDef def(const char* name, AttrType t, Relop r = Relop::EQ, bool consumable = false) {
  AttributeDef d;
  d.name = name;
  d.type = t;
  d.relop = r;
  d.consumable = consumable;
  return d;
}

void expect_rule(AttributeDef d, const char* words) {
  Catalog c;
  try {
    c.add(d);
    FAIL() << "accepted " << d.name;
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(d.name), std::string::npos) << "must name the attribute: " << e.what();
  }
}

TEST(Catalog, GridEngineRestrictionsAreEnforced) {
  expect_rule(def("arch", AttrType::String, Relop::LE), "allows only the relops == and !=");
  expect_rule(def("h", AttrType::Host, Relop::GT), "allows only the relops == and !=");
  expect_rule(def("flag", AttrType::Boolean, Relop::NE), "boolean allows only the relop ==");
  expect_rule(def("lic", AttrType::String, Relop::LE, true), "consumable must be of type int, double, memory or time");
  expect_rule(def("mem", AttrType::Memory, Relop::GE, true), "relop must be <=");
  auto nodefault = def("lic", AttrType::Int, Relop::LE, true);
  nodefault.requestable = Requestable::No;
  expect_rule(nodefault, "not requestable must have a default");
  auto forced = def("lic", AttrType::Int, Relop::LE, true);
  forced.requestable = Requestable::Forced;
  forced.default_amount = 1;
  expect_rule(forced, "forced consumable must not have a default");
  auto fixed_default = def("cores", AttrType::Int, Relop::LE);
  fixed_default.default_amount = 1;
  expect_rule(fixed_default, "only consumables may have a default");
}

TEST(Catalog, NamesAndShortcutsAreUnique) {
  Catalog c;
  auto a = def("arch", AttrType::String);
  a.shortcut = "a";
  EXPECT_EQ(c.add(a), 0u);
  EXPECT_THROW(c.add(def("arch", AttrType::String)), ValueError);
  auto b = def("abc", AttrType::String);
  b.shortcut = "a";
  EXPECT_THROW(c.add(b), ValueError);
  EXPECT_EQ(c.find("a"), 0u);
  EXPECT_EQ(c.find("arch"), 0u);
  EXPECT_FALSE(c.find("nope"));
  c.add(def("mem", AttrType::Memory, Relop::LE, true));
  EXPECT_EQ(c.consumables(), std::vector<uint32_t>{1});
  EXPECT_EQ(c.consumable_slot(1), 0);
  EXPECT_EQ(c.consumable_slot(0), -1);
}

TEST(Values, MemoryUsesGridEngineMultipliers) {
  EXPECT_EQ(parse_number(AttrType::Memory, "1k"), 1000);
  EXPECT_EQ(parse_number(AttrType::Memory, "1K"), 1024);
  EXPECT_EQ(parse_number(AttrType::Memory, "2m"), 2e6);
  EXPECT_EQ(parse_number(AttrType::Memory, "2M"), 2.0 * 1024 * 1024);
  EXPECT_EQ(parse_number(AttrType::Memory, "1.5G"), 1.5 * 1024 * 1024 * 1024);
  EXPECT_EQ(parse_number(AttrType::Memory, "1t"), 1e12);
  EXPECT_EQ(parse_number(AttrType::Memory, "4096"), 4096);
  EXPECT_THROW(parse_number(AttrType::Memory, "4X"), ValueError);
  EXPECT_THROW(parse_number(AttrType::Memory, "-1G"), ValueError);
}

TEST(Values, TimeAcceptsSecondsAndClockForms) {
  EXPECT_EQ(parse_number(AttrType::Time, "90"), 90);
  EXPECT_EQ(parse_number(AttrType::Time, "1:30"), 90);
  EXPECT_EQ(parse_number(AttrType::Time, "2:00:05"), 7205);
  EXPECT_THROW(parse_number(AttrType::Time, "1:2:3:4"), ValueError);
  EXPECT_THROW(parse_number(AttrType::Time, "ten"), ValueError);
}

TEST(Values, IntDoubleBoolean) {
  EXPECT_EQ(parse_number(AttrType::Int, "42"), 42);
  EXPECT_THROW(parse_number(AttrType::Int, "4.5"), ValueError);
  EXPECT_THROW(parse_number(AttrType::Int, "99999999999999999999"), ValueError);
  EXPECT_EQ(parse_number(AttrType::Double, "2.5"), 2.5);
  EXPECT_THROW(parse_number(AttrType::Double, "2.5x"), ValueError);
  EXPECT_EQ(parse_number(AttrType::Boolean, "TRUE"), 1);
  EXPECT_EQ(parse_number(AttrType::Boolean, "0"), 0);
  EXPECT_THROW(parse_number(AttrType::Boolean, "maybe"), ValueError);
}

// An int request Grid Engine 8.1.9 cannot read says it is not an int (issue 45: "not a memory value",
// the reader it falls back on for 1.5k).
TEST(Values, AnIntRequestThatIsNotOneSaysInt) {
  EXPECT_EQ(parse_request_number(AttrType::Int, "1k", GridEngineReading::SoGE819), 1000);
  try {
    parse_request_number(AttrType::Int, "x", GridEngineReading::SoGE819);
    FAIL() << "accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("'x' is not an int value"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("memory"), std::string::npos) << e.what();
  }
}

TEST(Values, CaselessTypesFold) {
  EXPECT_EQ(normalize_string(AttrType::Host, "Node1.CERN.ch"), "node1.cern.ch");
  EXPECT_EQ(normalize_string(AttrType::CString, "RHEL"), "rhel");
  EXPECT_EQ(normalize_string(AttrType::String, "RHEL"), "RHEL");
}

TEST(Relops, FlipAndApply) {
  EXPECT_EQ(flip(Relop::LE), Relop::GE);
  EXPECT_EQ(flip(Relop::LT), Relop::GT);
  EXPECT_EQ(flip(Relop::EQ), Relop::EQ);
  EXPECT_TRUE(apply(Relop::LE, 1, 2));
  EXPECT_FALSE(apply(Relop::GT, 1, 2));
  EXPECT_EQ(parse_relop("=<"), Relop::LE);
  EXPECT_FALSE(parse_relop("=~"));
}

}  // namespace
