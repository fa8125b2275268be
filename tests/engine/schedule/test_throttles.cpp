// Moab's per-credential throttles (engine/schedule/throttles.hpp, seed 001 step 4): which limit applies
// to each credential (a named one over its kind's default), the first limit a start would break, when a
// credential is full, and the credentials' priorities.
#include "engine/schedule/throttles.hpp"

#include <gtest/gtest.h>

#include "engine/model/catalog.hpp"
#include "engine/model/jobs.hpp"

namespace colmatch {
namespace {

// Jobs of alice (1, 4 and 2 slots) and bob (8 slots), all of group g.
JobTable jobs(const Catalog& cat) {
  JobBuilder jb(cat);
  jb.add("a1", "alice", "g", 0, 0, 1);
  jb.add("a4", "alice", "g", 0, 0, 4);
  jb.add("a2", "alice", "g", 0, 0, 2);
  jb.add("b8", "bob", "g", 0, 0, 8);
  return std::move(jb).build();
}

Throttle limit(CredentialKind kind, std::string name, uint64_t max_jobs, double max_slots) {
  Throttle t;
  t.kind = kind;
  t.name = std::move(name);
  t.max_jobs = max_jobs;
  t.max_slots = max_slots;
  return t;
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint64_t kAny = std::numeric_limits<uint64_t>::max();

TEST(Throttles, ANamedLimitWinsOverItsKindsDefaultWhicheverComesFirst) {
  Catalog cat;
  const JobTable js = jobs(cat);
  // alice's own limit listed before the default for every user: still hers
  Credentials c(js, {limit(CredentialKind::User, "alice", 2, kInf), limit(CredentialKind::User, "", 1, kInf)});
  c.add(0, +1);  // a1 runs
  EXPECT_FALSE(c.violation(1)) << "alice may run 2";
  c.add(1, +1);
  const auto v = c.violation(2);
  ASSERT_TRUE(v);
  EXPECT_EQ(c.describe(v), "user alice max_jobs 2");
  EXPECT_FALSE(c.violation(3)) << "bob has the default, 1, and runs nothing";
  c.add(3, +1);
  EXPECT_TRUE(c.full(0, c.cred(0, 3)));
  c.add(1, -1);  // a4 ends
  EXPECT_FALSE(c.violation(2));
}

TEST(Throttles, SlotLimitsAndTheFirstKindBrokenInKindOrder) {
  Catalog cat;
  const JobTable js = jobs(cat);
  Credentials c(js, {limit(CredentialKind::Group, "g", kAny, 10), limit(CredentialKind::User, "alice", kAny, 5)});
  c.add(1, +1);             // a4: alice 4 slots, g 4
  auto v = c.violation(2);  // a2 would take alice to 6 > 5 (user before group)
  ASSERT_TRUE(v);
  EXPECT_EQ(c.describe(v), "user alice max_slots 5");
  EXPECT_FALSE(c.violation(0)) << "a1: alice 5, g 5";
  v = c.violation(3);  // b8: g 12 > 10
  ASSERT_TRUE(v);
  EXPECT_EQ(c.describe(v), "group g max_slots 10");
  // alice is full: 4 of 5 slots, and her smallest job asks 1: not full; after a1 she is
  EXPECT_FALSE(c.full(0, c.cred(0, 0)));
  c.add(0, +1);
  EXPECT_TRUE(c.full(0, c.cred(0, 0))) << "5 of 5: even her 1-slot job does not fit";
}

TEST(Throttles, CredentialPrioritiesAddUpPerJob) {
  Catalog cat;
  const JobTable js = jobs(cat);
  Credentials c(js, {});
  CredentialPriority alice{CredentialKind::User, "alice", 10}, g{CredentialKind::Group, "g", 1.5};
  const auto p = c.priorities({alice, g});
  EXPECT_EQ(std::vector<double>(p.begin(), p.end()), (std::vector<double>{11.5, 11.5, 11.5, 1.5}));
  const auto none = c.priorities({});
  EXPECT_EQ(std::vector<double>(none.begin(), none.end()), std::vector<double>(4, 0.0));
  EXPECT_TRUE(none.uniform()) << "no credential priorities: nothing stored per job";
  EXPECT_EQ(c.count(0), 2u);
}

}  // namespace
}  // namespace colmatch
