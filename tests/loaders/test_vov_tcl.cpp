// The Tcl subset of Accelerator's taskers.tcl and resources.tcl (loaders/vov_tcl.hpp): what it reads,
// and that anything else is an error naming file, line and command.
#include <gtest/gtest.h>

#include "engine/model/vov.hpp"
#include "loaders/errors.hpp"
#include "loaders/vov_tcl.hpp"

using namespace colmatch;

namespace {

const char* kFile = R"(# taskers.tcl of a small farm
set big "linux64 RAMTOTAL#128000 RAM/128000"
vtk_tasker_set_defaults -CPUS 4 -power 1.0
vtk_tasker_define lnx01 -resources "$big License:x" -CPUS 16 -power 2.5
foreach h {lnx02 lnx03} {
  vtk_tasker_define $h -resources {linux64 RAM/4000 $gpu}
}
vtk_tasker_define sol01 \
   -resources "solaris RAM/2000 \$gpu" -name sol01_q
vtk_resourcemap_set License:spice 10
vtk_resourcemap_set Tool:hsim -total 14 -map "hsim_license"
vovresourcemgr set mylocallimit -max 5 -local; vovresourcemgr set fast -map "CPUS#8 linux64"
)";

TEST(VovTcl, ReadsTheSubset) {
  const loaders::VovTclFile f = loaders::parse_vov_tcl(kFile, "taskers.tcl");
  ASSERT_EQ(f.taskers.size(), 4u);
  EXPECT_EQ(f.taskers[0].name, "lnx01");
  EXPECT_EQ(f.taskers[0].resources, "linux64 RAMTOTAL#128000 RAM/128000 License:x");
  EXPECT_EQ(f.taskers[0].cpus, 16u);
  EXPECT_EQ(f.taskers[0].power, 2.5);
  EXPECT_EQ(f.taskers[0].line, 4u);
  EXPECT_EQ(f.taskers[1].host, "lnx02");
  EXPECT_EQ(f.taskers[2].host, "lnx03");
  EXPECT_EQ(f.taskers[2].resources, "linux64 RAM/4000 $gpu") << "braces are literal: a VOV $ resource";
  EXPECT_EQ(f.taskers[2].cpus, 4u) << "the defaults in force";
  EXPECT_EQ(f.taskers[2].line, 6u);
  EXPECT_EQ(f.taskers[3].name, "sol01_q");
  EXPECT_EQ(f.taskers[3].host, "sol01");
  EXPECT_EQ(f.taskers[3].resources, "solaris RAM/2000 $gpu") << "\\$ is a literal $";
  EXPECT_EQ(f.taskers[3].line, 8u) << "the continued command's first line";
  for (const auto& t : f.taskers) EXPECT_NO_THROW(vov::parse_resources(t.resources, false)) << t.resources;
  ASSERT_EQ(f.maps.size(), 4u);
  EXPECT_EQ(f.maps[0].name, "License:spice");
  EXPECT_EQ(f.maps[0].count, 10u);
  EXPECT_FALSE(f.maps[0].map);
  EXPECT_EQ(f.maps[1].count, 14u);
  EXPECT_EQ(f.maps[1].map, "hsim_license");
  EXPECT_EQ(f.maps[2].name, "mylocallimit");
  EXPECT_EQ(f.maps[2].count, 5u);
  EXPECT_EQ(f.maps[3].map, "CPUS#8 linux64");
  EXPECT_EQ(f.maps[3].line, 12u) << "two commands on line 12, after a ';'";
}

void expect_error(const std::string& text, size_t line, const std::string& command, const std::string& why) {
  try {
    loaders::parse_vov_tcl(text, "f.tcl");
    ADD_FAILURE() << "no error for: " << text;
  } catch (const loaders::LoadError& e) {
    EXPECT_EQ(e.file, "f.tcl");
    EXPECT_EQ(e.line, line) << e.what();
    EXPECT_EQ(e.field, command) << e.what();
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

TEST(VovTcl, AnythingElseIsAnErrorNamingFileLineAndCommand) {
  expect_error("set a 1\nputs hello\n", 2, "puts", "not a command of the supported Tcl subset");
  expect_error("vtk_tasker_define h -bogus 1\n", 1, "vtk_tasker_define", "unknown option '-bogus'");
  expect_error("vtk_tasker_define h -CPUS\n", 1, "vtk_tasker_define", "needs a value");
  expect_error("vtk_tasker_define h -CPUS x\n", 1, "vtk_tasker_define", "-CPUS 'x' is not a number");
  expect_error("vtk_tasker_define h -CPUS 0\n", 1, "vtk_tasker_define", "whole number >= 1");
  expect_error("\nset a\n", 2, "set", "expected: set VAR VALUE");
  expect_error("vtk_tasker_define [exec rm -rf /]\n", 1, "vtk_tasker_define", "command substitution");
  expect_error("foreach h {a b} {\n vtk_tasker_define $h\n", 1, "foreach", "'{' without '}'");
  expect_error("vtk_tasker_define h -resources \"$nosuch\"\n", 1, "vtk_tasker_define", "no variable 'nosuch'");
  expect_error("vtk_resourcemap_set L x\n", 1, "vtk_resourcemap_set", "COUNT 'x' is not a number");
  expect_error("vovresourcemgr get L\n", 1, "vovresourcemgr", "expected: vovresourcemgr set");
  std::string deep;
  for (int i = 0; i < 9; ++i) deep += "foreach v" + std::to_string(i) + " {a} {\n";
  deep += "vtk_tasker_define h\n";
  for (int i = 0; i < 9; ++i) deep += "}\n";
  expect_error(deep, 9, "foreach", "nested deeper than 8");
  // 10^6 commands at most: three nested loops of 101 items expand to more
  std::string items;
  for (int i = 0; i < 101; ++i) items += "x ";
  const std::string many =
      "foreach a {" + items + "} {\nforeach b {" + items + "} {\nforeach c {" + items + "} {\nset v $c\n}\n}\n}\n";
  expect_error(many, 4, "set", "more than 10^6 commands");
  // 64 MiB of definitions at most: 1,200 taskers of a 60,000-byte resource list would be 72 MB
  std::string loop;
  for (int i = 0; i < 1200; ++i) loop += "x ";
  const std::string big =
      "set r " + std::string(60000, 'a') + "\nforeach i {" + loop + "} {\nvtk_tasker_define h -resources $r\n}\n";
  expect_error(big, 3, "vtk_tasker_define", "more than 64 MiB of definitions");
  // issue 28: a foreach whose body is blanks or comments still counts its passes (a 1.8 MB file ran
  // for minutes, each pass re-splitting the body); variables are bounded in all, not only each value
  std::string thousand;
  for (int i = 0; i < 1000; ++i) thousand += "x ";
  const std::string idle = "foreach a {" + thousand + "} {\nforeach b {" + thousand + "} {\n# nothing\n\n}\n}\n";
  expect_error(idle, 2, "foreach", "more than 10^6 commands");
  std::string thirty;
  for (int i = 0; i < 30; ++i) thirty += "x" + std::to_string(i) + " ";
  const std::string vars = "set v " + std::string(60000, 'a') + "\nforeach a {" + thirty + "} {\nforeach b {" + thirty +
                           "} {\nforeach c {" + thirty + "} {\nset $a$b$c $v\n}\n}\n}\n";
  expect_error(vars, 5, "set", "more than 64 MiB of variables");
}

}  // namespace
