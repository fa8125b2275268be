// FBSNG dynamic priorities (seed 004): the rules, in one file a reader can check against the seed.
// `colmatch simulate` with `scheduler = "fbsng"` runs them (the scheduler at the end of
// engine/schedule/fbsng.cpp, over the shared world of engine/schedule/world.hpp); docs/fbsng.md has the seed's wording
// beside each rule.
//
// Terms. A section is a job (its slots start together); it belongs to a queue (the job's class) and to
// a process type (a job credential, the account by default). The seed gives the behaviour and leaves
// the formulas out; these are the simplest rules that fit every sentence of it and its four worked
// configurations (tests/engine/schedule/test_fbsng.cpp runs each):
//
// Q1 Queue priority P starts at QPmin and stays in [QPmin, QPmax].
// Q2 Every section start is one tick for every queue: each queue's priority rises by its QPI (to at most
//    QPmax), and the queue the section started from then drops by its QPD. Priorities are relative:
//    then all queues move by the same amount so that the queue nearest its QPmin sits at it (each
//    still at most its QPmax), which keeps their order and differences and stops the drift that
//    would otherwise pin them all at QPmin or at QPmax, where a gap could no longer open.
//    (Why the starting queue also takes its QPI: the seed's formula QPD(A)/QPD(B) = share(B)/share(A)
//    with QPI = 1 holds exactly then; with the starting queue left out, A and B share starts
//    (QPD(B)+QPI(A)) : (QPD(A)+QPI(B)), 67% instead of the seed's 70% for QPD 3/7.)
// Q3 Step 1, choose the queue: the queues with ready sections in descending priority (ties: the
//    queue whose first section in line was submitted first, then the queue's name). A queue that cannot start a section
//    while it has one that waits for capacity is stuck; every queue whose priority is lower than a stuck queue Q's by
//    more than QPG(Q) is held (starts nothing, even if it could) until Q starts one. The next unheld queue is tried.
// S1 Step 2, choose the section: the queue's ready sections in descending section priority SP, ties
//    by submit time. The first that fits starts. A section waiting for capacity that the scheduler
//    meets first in this order is the queue's head; while it waits, each start of a section submitted
//    after it passes it: its SP rises by 1 (SP starts at 0 and never goes down; only the head is
//    passed: the next section in line is passed when it is the head, so with SPG = N one bulk
//    section starts per N light ones, as the seed's example promises).
// S2 Section priority gap: a section whose SP is lower than the head's by SPG or more may not start
//    (its start would leave the head more than SPG above it): with SPG = 0 nothing passes the head.
// P1 Process-type quotas: a section whose start would take its process type past a quota (running
//    sections, slots, or an amount of a consumable) does not start, and it is not waiting for
//    capacity (holding others would not help it): it makes its queue neither stuck nor headed.
// P2 Process-type default requirements are added to the requests of the type's sections for the
//    attributes a section does not name itself.
// The scheduler runs at most once per SimConfig::min_interval (FBSNG: 5 s) and on events.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/schedule/policy.hpp"

namespace colmatch {

class Catalog;
class Scheduler;
class SimWorld;

/// Queue priorities under rules Q1-Q3, indexed by queue id (the jobs' queue dictionary).
///
/// A start changes every queue's priority (Q2), but by one rule per QPI: the queues that share a QPI
/// move as one function p = min(QPmax + C, base + B) of their own values, with C and B kept per group.
/// So a start costs O(groups + log queues), not O(queues) (10,000 queues sharing the "*" parameters: a
/// handful of writes, not 10,000). The form is exact when every QPmin, QPmax, QPI and QPD is a whole
/// number with QPmax finite and at most 2^52 in size (every sum is then a whole double); otherwise each
/// start updates every queue in turn (the same values the rule gives, in the same operations).
class FbsngQueuePriorities {
 public:
  /// `params[q]`: queue q's parameters (NaN qp_max resolved here). Throws PolicyError when
  /// QPmax < QPmin, QPI, QPD, QPG or SPG is negative or NaN, or QPmin, QPI, QPD exceed kFbsngMaxValue.
  explicit FbsngQueuePriorities(std::vector<FbsngQueue> params);
  size_t size() const noexcept { return params_.size(); }
  /// Queue q's priority now.
  double priority(uint32_t q) const noexcept {
    if (!grouped_) return p_[q];
    const Group& g = groups_[group_of_[q]];
    return std::min(params_[q].qp_max + g.cap, base_[q] + g.shift);
  }
  const FbsngQueue& params(uint32_t q) const noexcept { return params_[q]; }
  /// Q2: a section started from queue q.
  void on_start(uint32_t q);
  /// Q3: queue q is stuck; queues with a priority below the value returned are held.
  double holds_below(uint32_t q) const noexcept { return priority(q) - params_[q].qpg; }
  /// Priorities (a queue's or a group's) written since construction: the work the starts cost.
  uint64_t writes() const noexcept { return writes_; }
  /// Whether the grouped form is used (see the class comment).
  bool grouped() const noexcept { return grouped_; }

 private:
  // Queues of one QPI: each one's priority is min(qp_max + cap, base + shift). `floor_gap` (the least
  // QPmax - QPmin) and `above` (base - QPmin per queue, ordered) give the group's least distance above
  // QPmin: min(floor_gap + cap, above.begin() + shift).
  struct Group {
    double qpi = 0, cap = 0, shift = 0, floor_gap = 0;
    std::set<std::pair<double, uint32_t>> above;
    std::vector<uint32_t> queues;
  };
  void on_start_each(uint32_t q);
  void rebase(Group& g);

  std::vector<FbsngQueue> params_;
  bool grouped_ = false;
  uint64_t writes_ = 0;
  // the grouped form
  std::vector<Group> groups_;
  std::vector<uint32_t> group_of_;  // per queue
  std::vector<double> base_;        // per queue
  // queue by queue (parameters that are not whole numbers)
  std::vector<double> p_;
  std::vector<double> max_, min_, inc_;  // QPmax, QPmin, QPI per queue, dense for on_start's loops
};

/// S2: a section with priority `sp` may not start while its queue's head has priority `head_sp`.
inline bool fbsng_gap_blocks(double head_sp, double sp, double spg) noexcept { return head_sp - sp >= spg; }

/// Per queue id of `jobs`: its parameters (by name, else `policy.defaults` with the queue's name).
std::vector<FbsngQueue> fbsng_queue_params(const FbsngConfig& policy, const JobTable& jobs);

/// P2: a copy of `jobs` whose requests carry their process types' default requirements (each top-level
/// AND term of a default whose attributes the section's request does not mention is ANDed to it), or
/// nothing when no process type has requirements. `kind` names the credential that is the process
/// type. Throws PolicyError naming the process type when its requirements do not parse or
/// name a consumable (quotas, not requirements, govern consumables).
std::optional<JobTable> fbsng_apply_requirements(const FbsngConfig& policy, CredentialKind kind, const Catalog& catalog,
                                                 const JobTable& jobs);

/// The FBSNG scheduler (rules Q1-Q3, S1-S2, P1 above) over world `w` (whose jobs already carry P2's
/// requirements). Throws PolicyError for a queue's parameters out of range (FbsngQueuePriorities) or a
/// quota on a name that is not a consumable, or below 0.
std::unique_ptr<Scheduler> make_fbsng_scheduler(SimWorld& w);

}  // namespace colmatch
