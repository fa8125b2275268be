// Altair Accelerator resources (engine/model/vov.hpp, seed 000 "Resource Mapping"): resource lists, the tool of
// a command, and a job's expansion in the seed's order, with its worked examples as named tests.
#include <gtest/gtest.h>

#include "engine/model/vov.hpp"

using namespace colmatch::vov;

namespace {

using Maps = std::map<std::string, ResourceMap, std::less<>>;

ResourceMap maps_to(const char* expr, std::optional<uint64_t> count = std::nullopt) {
  return ResourceMap{count, parse_resources(expr)};
}

const auto always = [](std::string_view, double) { return true; };

// Seed 000: the job's resources, then Priority:normal, Tool:<tail of the first argument after the
// wrappers>, User:john, Group:time_regression, and TIMELEFT#32 for a job expected to take 32 seconds.
TEST(VovExpansion, SeedAppendsPriorityToolUserGroupAndTimeleft) {
  JobResources job;
  job.resources = "RAM/4000 CORES/2 License:spice linux64";
  job.command = "vov /usr/bin/time /tools/bin/spice -b x.sp";
  job.owner = "john";
  job.group = "time_regression";
  job.expected_duration = 32;
  const Expansion e = expand(job, {}, always);
  ASSERT_EQ(e.outcome, Expansion::Outcome::Ok);
  EXPECT_EQ(e.appended,
            (std::vector<std::string>{"Priority:normal", "Tool:spice", "User:john", "Group:time_regression"}));
  EXPECT_EQ(to_text(e.expanded), "RAM/4000 CORES/2 License:spice linux64 TIMELEFT#32")
      << "appended resources without a map are hooks, not requirements";
  // with maps, they are expanded like the job's own
  const Maps maps{{"Tool:spice", maps_to("License:spice_sim")},
                  {"User:john", ResourceMap{3, std::nullopt}},
                  {"Priority:normal", maps_to("queue_normal")}};
  const Expansion m = expand(job, maps, always);
  EXPECT_EQ(to_text(m.expanded), "RAM/4000 CORES/2 License:spice linux64 queue_normal License:spice_sim TIMELEFT#32");
  EXPECT_EQ(m.held, (std::vector<Held>{{"User:john", 1}})) << "a per-user limit";
}

// Seed 000: "a list of 4 separate resource requests (without maps) will result in a max count of 7; 4
// from the explicit resource requests and 3 from the automatically added resources".
TEST(VovExpansion, FourResourcesCountSeven) {
  JobResources job;
  job.resources = "a b c d";
  job.owner = "u";
  job.group = "g";
  EXPECT_EQ(expand(job, {}, always).max_depth_count, 7);
}

// Traversal into a map adds one and returning restores the count: x (1), into x (2), y (3), z (4), back
// to 1; a (2), Priority (3), User (4), Group (5).
TEST(VovExpansion, MapTraversalCountsAndRestores) {
  Maps maps{{"x", maps_to("y z")}};
  JobResources job;
  job.resources = "x a";
  job.owner = "u";
  job.group = "g";
  const Expansion e = expand(job, maps, always);
  EXPECT_EQ(e.max_depth_count, 5);
  EXPECT_EQ(to_text(e.expanded), "y z a TIMELEFT#0");
}

// Seed 000: `vovresourcemgr set mylocallimit -max 5`: at most 5 running; the sixth job is not available
// and stays queued, the reason naming the map.
TEST(VovExpansion, MyLocalLimitFive) {
  Maps maps{{"mylocallimit", ResourceMap{5, std::nullopt}}};
  uint64_t held = 0;
  const auto available = [&](std::string_view name, double units) {
    return name != "mylocallimit" || held + units <= 5;
  };
  JobResources job;
  job.resources = "mylocallimit";
  for (int i = 0; i < 6; ++i) {
    const Expansion e = expand(job, maps, available);
    if (i < 5) {
      ASSERT_EQ(e.outcome, Expansion::Outcome::Ok) << i;
      ASSERT_EQ(e.held, (std::vector<Held>{{"mylocallimit", 1}}));
      EXPECT_EQ(to_text(e.expanded), "TIMELEFT#0") << "a counter no tasker offers";
      held += e.held.size();
    } else {
      EXPECT_EQ(e.outcome, Expansion::Outcome::NotAvailable);
      EXPECT_EQ(e.detail, "mylocallimit");
    }
  }
}

// Seed 000: a cycle in the mapping removes the job; the path names it.
TEST(VovExpansion, CycleIsFoundWithItsPath) {
  Maps maps{{"a", maps_to("b")}, {"b", maps_to("c x")}, {"c", maps_to("a")}};
  JobResources job;
  job.resources = "ok a";
  const Expansion e = expand(job, maps, always);
  EXPECT_EQ(e.outcome, Expansion::Outcome::Cycle);
  EXPECT_EQ(e.detail, "a -> b -> c -> a");
}

// Seed 000: past a count of 30 traversal into a map is curtailed (silently in VOV; colmatch says so).
TEST(VovExpansion, DepthThirtyCurtailsTraversal) {
  Maps maps;
  for (int i = 0; i < 40; ++i) maps["m" + std::to_string(i)] = maps_to(("m" + std::to_string(i + 1)).c_str());
  JobResources job;
  job.resources = "m0";
  const Expansion e = expand(job, maps, always);
  ASSERT_EQ(e.outcome, Expansion::Outcome::Ok);
  EXPECT_TRUE(e.curtailed);
  EXPECT_EQ(e.max_depth_count, 31);
  EXPECT_EQ(e.expanded.kids[0].token.name, "m15") << "each map adds two (its name, entering it): 2 x 15 + 1";
  job.resources = "m35";  // 5 maps deep: within the limit
  const Expansion short_chain = expand(job, maps, always);
  EXPECT_FALSE(short_chain.curtailed);
  EXPECT_EQ(short_chain.expanded.kids[0].token.name, "m40");
}

// Maps that fan out (each name maps to 20 copies of the next) stay bounded: the expansion stops entering
// maps after 65,536 resources and says it was curtailed.
TEST(VovExpansion, FanOutIsBounded) {
  Maps maps;
  for (int i = 0; i < 12; ++i) {
    std::string to;
    for (int k = 0; k < 20; ++k) to += "f" + std::to_string(i + 1) + " ";
    maps["f" + std::to_string(i)] = maps_to(to.c_str());
  }
  JobResources job;
  job.resources = "f0";
  const Expansion e = expand(job, maps, always);
  EXPECT_TRUE(e.curtailed);
  EXPECT_LT(e.expanded.kids.size(), 70000u);
}

// OR with and without maps: an alternative whose counted map has nothing left is dropped; when none is
// left the job is not available. Maps inside an alternative are expanded.
TEST(VovExpansion, OrWithAndWithoutMaps) {
  Maps maps{{"Tool:hsim", ResourceMap{1, parse_resources("hsim_license")}}, {"fast", maps_to("CPUS#8 linux64")}};
  JobResources job;
  job.resources = "(Tool:spice | Tool:hsim) RAM/2000 (fast | slow)";
  Expansion e = expand(job, maps, always);
  EXPECT_EQ(to_text(e.expanded), "(Tool:spice | hsim_license) RAM/2000 (CPUS#8 linux64 | slow) TIMELEFT#0");
  EXPECT_EQ(e.held, (std::vector<Held>{{"Tool:hsim", 1}}));
  e = expand(job, maps, [](std::string_view n, double) { return n != "Tool:hsim"; });
  ASSERT_EQ(e.outcome, Expansion::Outcome::Ok);
  EXPECT_EQ(to_text(e.expanded).substr(0, 21), "Tool:spice RAM/2000 (") << to_text(e.expanded);
  EXPECT_TRUE(e.held.empty());
  job.resources = "Tool:hsim | Tool:hsim";
  EXPECT_EQ(expand(job, maps, [](std::string_view, double) { return false; }).outcome,
            Expansion::Outcome::NotAvailable);
}

// Issue 27, item 1 (seed 000: "If the resource map is found and there is enough of it ... the vovservers
// maps the resource"): a quantity on a mapped name is mapped too. `License:quad#3` on a counted map takes
// 3 of its units, and is not available while fewer are left; `License:quad/2` takes 2; `fast#2` on a map
// without a count is replaced by its map. A map named twice is held once, for the larger quantity.
TEST(VovExpansion, QuantityOnAMappedNameTakesThatManyUnits) {
  const Maps maps{{"License:quad", ResourceMap{4, std::nullopt}}, {"fast", maps_to("CPUS#8 linux64")}};
  double left = 4;
  const auto available = [&](std::string_view name, double units) { return name != "License:quad" || units <= left; };
  JobResources job;
  job.resources = "License:quad#3 fast#2";
  Expansion e = expand(job, maps, available);
  ASSERT_EQ(e.outcome, Expansion::Outcome::Ok);
  EXPECT_EQ(to_text(e.expanded), "CPUS#8 linux64 TIMELEFT#0") << "both names mapped, none left for the taskers";
  EXPECT_EQ(e.held, (std::vector<Held>{{"License:quad", 3}}));
  left -= 3;
  job.resources = "License:quad/2";
  e = expand(job, maps, available);
  EXPECT_EQ(e.outcome, Expansion::Outcome::NotAvailable) << "2 units asked, 1 left";
  EXPECT_EQ(e.detail, "License:quad");
  left = 4;
  e = expand(job, maps, available);
  EXPECT_EQ(e.held, (std::vector<Held>{{"License:quad", 2}}));
  job.resources = "License:quad License:quad#2 License:quad";
  e = expand(job, maps, available);
  EXPECT_EQ(e.held, (std::vector<Held>{{"License:quad", 2}})) << "held once, the larger quantity";
}

// Seed 000's OR alternatives are scheduling solutions, and a job takes one (issue 27): a list expanded
// with the counted maps it holds left in place has one solution per alternative of each OR that holds
// one, the first alternative first; ORs that hold none stay ORs; a map held outside the ORs (or under a
// NOT) is held by every solution; the count is bounded.
TEST(VovExpansion, SolutionsOneAlternativePerOrThatHoldsAMap) {
  const Maps maps{{"License:a", ResourceMap{2, std::nullopt}},
                  {"License:b", ResourceMap{2, parse_resources("bhost")}},
                  {"Limit:x", ResourceMap{5, std::nullopt}}};
  JobResources job;
  job.resources = "Limit:x (License:a | License:b#2 big) (linux | solaris) (r1 | License:a)";
  const Expansion e = expand(job, maps, always, {}, Wrappers::standard(), true);
  ASSERT_EQ(e.outcome, Expansion::Outcome::Ok);
  bool cut = true;
  const std::vector<Solution> s = solutions(e.expanded, kMaxSolutions, cut);
  EXPECT_FALSE(cut);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(to_text(s[0].list), "(linux | solaris) r1 TIMELEFT#0");
  EXPECT_EQ(s[0].held, (std::vector<Held>{{"Limit:x", 1}, {"License:a", 1}}));
  EXPECT_EQ(to_text(s[1].list), "(linux | solaris) TIMELEFT#0");
  EXPECT_EQ(s[1].held, (std::vector<Held>{{"Limit:x", 1}, {"License:a", 1}})) << "held once";
  EXPECT_EQ(to_text(s[2].list), "bhost big (linux | solaris) r1 TIMELEFT#0");
  EXPECT_EQ(s[2].held, (std::vector<Held>{{"Limit:x", 1}, {"License:b", 2}}));
  EXPECT_EQ(s[3].held, (std::vector<Held>{{"Limit:x", 1}, {"License:b", 2}, {"License:a", 1}}));
  EXPECT_EQ(to_text(without_held(e.expanded)), "(() | bhost big) (linux | solaris) (r1 | ()) TIMELEFT#0")
      << "what the solutions ask together: an alternative that only holds asks nothing";
  job.resources =
      "(License:a | License:b) (License:a | License:b) (License:a | License:b) (License:a | License:b) "
      "(License:a | License:b) (License:a | License:b) (License:a | License:b)";
  EXPECT_EQ(solutions(expand(job, maps, always, {}, Wrappers::standard(), true).expanded, kMaxSolutions, cut).size(),
            kMaxSolutions);
  EXPECT_TRUE(cut) << "2^7 solutions, the first 64 kept";
}

// `$` resources are replaced by their definitions (the policy's named substitutions).
TEST(VovExpansion, DollarResources) {
  JobResources job;
  job.resources = "$CPU RAM/100";
  const std::map<std::string, std::string, std::less<>> dollars{{"CPU", "CORES/4 linux64"}};
  EXPECT_EQ(to_text(expand(job, {}, always, dollars).expanded), "CORES/4 linux64 RAM/100 TIMELEFT#0");
  job.resources = "$NONE";
  EXPECT_THROW(expand(job, {}, always, dollars), ResourceError);
}

TEST(VovResources, NotationAndErrors) {
  const Expr e = parse_resources("linux64 RAMTOTAL#128 !solaris & (a OR b) AND NOT c");
  EXPECT_EQ(to_text(e), "linux64 RAMTOTAL#128 !solaris (a | b) !c");
  EXPECT_EQ(to_text(parse_resources(to_text(e))), to_text(e));
  EXPECT_EQ(to_text(parse_resources("a b | c d")), "a b | c d") << "AND binds tighter than OR";
  EXPECT_EQ(parse_resources("a b | c d").op, Expr::Op::Or);
  EXPECT_EQ(parse_resources("License:spice").token.name, "License:spice");
  EXPECT_EQ(parse_resources("RAM/500").token.kind, Token::Kind::Consumes);
  EXPECT_EQ(parse_resources("RAM/500").token.amount, 500);
  EXPECT_TRUE(parse_resources("   ").kids.empty()) << "the empty list";
  const std::pair<const char*, size_t> bad[] = {{"a (b", 5}, {"a |", 4},       {"a )", 3}, {"RAM/-1", 5},
                                                {"!", 2},    {"a & AND b", 5}, {"OR", 1}};  // found by fuzz_vov
  for (const auto& [text, at] : bad) {
    try {
      parse_resources(text);
      ADD_FAILURE() << text;
    } catch (const ResourceError& err) {
      EXPECT_EQ(err.position, at) << text << ": " << err.what();
    }
  }
  EXPECT_THROW(parse_resources("unix !solaris", false), ResourceError) << "a tasker cannot offer a negation";
  EXPECT_THROW(parse_resources(std::string(100, '(') + "a" + std::string(100, ')')), ResourceError);
}

TEST(VovResources, ToolOfACommand) {
  EXPECT_EQ(tool_of("vov /usr/bin/time /tools/bin/spice -b x.sp"), "spice");
  EXPECT_EQ(tool_of("nc run -r linux64 -e SNAPSHOT /opt/vcs/bin/vcs top.v"), "vcs") << "-r and -e take a value";
  EXPECT_EQ(tool_of("nc run -v -- /opt/vcs/bin/vcs"), "vcs");
  EXPECT_EQ(tool_of("time -p /bin/gzip x"), "gzip");
  EXPECT_EQ(tool_of("env A=1 B=2 /usr/bin/make all"), "make");
  EXPECT_EQ(tool_of("vw vov sleep 10"), "sleep");
  EXPECT_EQ(tool_of(""), "");
  EXPECT_EQ(tool_of("vov"), "") << "a wrapper with nothing after it";
  // the words are split only as far as the wrappers look: edges of that
  EXPECT_EQ(tool_of("nc"), "nc") << "the first word of a two-word wrapper alone";
  EXPECT_EQ(tool_of("nc runner x"), "nc");
  EXPECT_EQ(tool_of("  \tvov\t\t /a/b/tool  "), "tool") << "blanks around and between words";
  EXPECT_EQ(tool_of("nc run -r"), "") << "an option's value missing at the end";
  EXPECT_EQ(tool_of("nc run -r linux64"), "");
  std::string many = "vov /tools/bin/sim";
  for (int i = 0; i < 10000; ++i) many += " arg" + std::to_string(i);
  EXPECT_EQ(tool_of(many), "sim");
}

// Wrappers split once serve every command as the list does, the tool a view into the command; a site's
// own wrappers (several words, an empty word between two blanks) are matched word by word.
TEST(VovResources, WrappersSplitOnceFindTheToolsTheListFinds) {
  const Wrappers site(std::vector<std::string>{"lsf  bsub", "srun", "env", "nc run"});
  const Wrappers listed(default_wrappers());
  for (const std::string command : {"lsf  bsub /x/y", "lsf bsub /x/y", "srun -n 4 env A=1 ./a.out", "nc run -r x /b/c",
                                    "vov nc run /b/c", "", "srun", "env A=1", "bsub /x/y", "vw vov sleep 10"}) {
    EXPECT_EQ(tool_view(command, site), tool_of(command, site)) << command;
    EXPECT_EQ(tool_view(command, listed), tool_of(command)) << "the standard set is the default list: " << command;
  }
  EXPECT_EQ(tool_of("lsf  bsub /x/y", site), "lsf") << "\"lsf\", \"\", \"bsub\" never matches: no word is empty";
  EXPECT_EQ(tool_of("lsf bsub /x/y", site), "lsf") << "the two blanks of the wrapper are not one";
  EXPECT_EQ(tool_of("nc run -r x /b/c", site), "c") << "nc run keeps the value of -r";
  EXPECT_EQ(tool_of("srun -n 4 env A=1 ./a.out", site), "4") << "-n takes no value in srun's options";
  EXPECT_EQ(tool_of("vov nc run /b/c", site), "vov") << "vov is not a wrapper of this site";
  const std::string command = "vov /tools/bin/spice";
  const std::string_view tool = tool_view(command, Wrappers::standard());
  EXPECT_EQ(tool, "spice");
  EXPECT_EQ(tool.data(), command.data() + command.size() - 5) << "a view into the command";
}

}  // namespace
