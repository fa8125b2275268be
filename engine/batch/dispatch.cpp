#include "engine/batch/dispatch.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <unordered_map>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>

#include "engine/batch/dispatch_parts.hpp"
#include "engine/model/counting_sort.hpp"

namespace colmatch {

std::vector<Room> room_on_eligible(const Capacity& capacity, const kernels::TaskerSet& eligible,
                                   const ChargeVector& need) {
  std::vector<Room> out;
  for (const ChargeVector::Entry& e : need.nonzero())
    if (e.amount > 0) out.push_back({e.k, e.amount, 0, 0});
  for (size_t t = eligible.next(0); t < eligible.universe(); t = eligible.next(t + 1))
    for (Room& r : out) {
      const double free = capacity.available(r.consumable, static_cast<uint32_t>(t));
      if (!(free >= 0)) continue;  // NaN: no pool defines it
      r.largest_free = std::max(r.largest_free, free);
      r.with_room += free >= r.charge;
    }
  return out;
}

const char* reason_text(PendingReason r) noexcept {
  switch (r) {
    case PendingReason::None: return "";
    case PendingReason::NoEligibleTasker: return "no eligible tasker";
    case PendingReason::NoFreeCapacity: return "eligible but no free capacity";
    case PendingReason::BehindHigherPriority:
      return "behind a higher-priority job of its queue that cannot start (Slurm: Priority)";
    case PendingReason::EligibleHeld:
      return "every eligible tasker is held for higher-priority jobs of other queues (Slurm: ReqNodeNotAvail)";
    case PendingReason::TaskersHeld:
      return "every tasker of its queue is held for higher-priority jobs (Slurm: Nodes required for job are DOWN, "
             "DRAINED or reserved for jobs in higher priority partitions)";
  }
  return "";
}

namespace {

// What one walk of the batch dispatch produced besides the per-job columns of DispatchResult (which it
// writes for its own jobs): its allocations (alloc_first of its jobs index them), the jobs it removed
// (in its order), and its counts.
struct WalkOut {
  std::vector<Allocation> allocations;
  std::vector<std::pair<uint32_t, std::string>> removed;  // (job, why)
  uint64_t assigned = 0, pending = 0, rejected = 0;
};

// The batch dispatch's walk: jobs in dispatch order, each placement committed at once. The whole batch
// in one walk (the sequential dispatch), or one part of it (dispatch_parts.hpp) per walk, several at
// once, each with its Capacity lane.
class Walk {
 public:
  Walk(const TaskerTable& taskers, const JobTable& jobs, const Categories& cats,
       const std::vector<CategoryEligibility>& eligible, Capacity& capacity, DispatchCursors& cursors,
       Capacity::Ledger* ledger, std::shared_ptr<const Placer::Tables> tables, std::vector<PendingReason>& settled,
       std::vector<uint32_t>& remaining, DispatchResult& res, const DispatchOptions& options,
       QueueBlocks* blocks = nullptr)
      : jobs_(jobs),
        cats_(cats),
        eligible_(eligible),
        cap_(capacity),
        ledger_(ledger != nullptr ? *ledger : capacity.ledger()),
        cursors_(cursors),
        settled_(settled),
        remaining_(remaining),
        res_(res),
        policy_(options.allocation),
        blocks_(blocks),
        requested_(options.requested.get()),
        placer_(taskers, jobs, cats, eligible, capacity, &cursors, ledger, std::move(tables)) {
    placer_.fit_by(options.fit_consumable, options.fit_limit);
    placer_.committed_walk();
  }

  // The jobs of `jobs` (in dispatch order), into `out`, until no category of theirs is live (`live`: how
  // many of their categories are not settled and have jobs left: live_categories): returns how many
  // it walked. The jobs after them are of settled categories; they pend for their category's settled
  // reason (pend_settled), which is what the walk would have found. `of`: the category of each job, or
  // empty to read it from the categories.
  size_t run(std::span<const uint32_t> jobs, std::span<const uint32_t> of, size_t live, WalkOut& out) {
    live_ = live;
    order_ = jobs;
    for (size_t i = 0; i < jobs.size(); ++i) {
      later_records(i, out);
      if (live_ == 0) return i;
      step(jobs[i], of.empty() ? cats_.of_job[jobs[i]] : of[i], out);
    }
    later_records(jobs.size(), out);
    return jobs.size();
  }

 private:
  // Job j of category c.
  void step(uint32_t j, uint32_t c, WalkOut& out) {
    step_own(j, c, out);
    const uint32_t f = cats_.fallback_of(c);
    if (f != kNone && res_.status[j] != JobStatus::Assigned && res_.status[j] != JobStatus::Rejected &&
        res_.reason[j] == PendingReason::EligibleHeld)
      step_fallback(j, c, f, out);
  }

  // Job j of category c, tried again on the eligibility of its fallback category f (JobTable::Fallback; Slurm:
  // the --constraint record after the --prefer record ended ReqNodeNotAvail), its pending counted once.
  void step_fallback(uint32_t j, uint32_t c, uint32_t f, WalkOut& out) {
    --out.pending;
    const CategoryEligibility& e = eligible_[f];
    if (never_in(c, e)) {
      pend(j, c, PendingReason::NoEligibleTasker, out);
      return;
    }
    if (!place_within(j, e, out))
      pend(j, c, no_room_in(c, f, e, requested_ != nullptr ? &(*requested_)[f] : nullptr), out);
  }

  // Job j tried as if `e` were its category's eligibility (cut to a queue, or a fallback's): placed and
  // assigned, or false.
  bool place_within(uint32_t j, const CategoryEligibility& e, WalkOut& out) {
    const size_t first = out.allocations.size();
    placer_.restrict_to(&e);
    const bool placed = placer_.try_place(j, policy_, out.allocations);
    placer_.restrict_to(nullptr);
    if (placed) assign(j, first, out);
    return placed;
  }

  // Job j of category c on its own request.
  void step_own(uint32_t j, uint32_t c, WalkOut& out) {
    if (blocks_ != nullptr) {
      if (const std::span<const uint32_t> qs = blocks_->queues().queues_of(j); !qs.empty()) {
        step_several(j, c, qs, out);
        --remaining_[c];
        return;
      }
      if (const QueueBlock b = blocks_->before(j, need_of(c)); b != QueueBlock::Open) {
        pend(j, c, b == QueueBlock::Behind ? PendingReason::BehindHigherPriority : PendingReason::TaskersHeld, out);
        --remaining_[c];
        return;
      }
    }
    if (settled_[c] != PendingReason::None) {
      // blocking queues: its taskers may all be held by now, or a requested one busy: asked again
      if (blocks_ != nullptr &&
          (settled_[c] == PendingReason::NoFreeCapacity || settled_[c] == PendingReason::EligibleHeld)) {
        pend(j, c, no_room(c), out);
        return;
      }
      pend(j, c, settled_[c], out);
      return;
    }
    live_step(j, c, out);
    if (--remaining_[c] == 0 || settled_[c] != PendingReason::None) --live_;  // no longer live
  }

  // Job j of a category that is not settled.
  void live_step(uint32_t j, uint32_t c, WalkOut& out) {
    const size_t first = out.allocations.size();
    if (gated(c)) {  // removed, or waiting for a pool, as the gate's pools say now
      const JobTable::Choice::Outcome* o = placer_.gate_outcome(j);
      if (o->kind == JobTable::Choice::Outcome::Kind::Remove) {
        res_.status[j] = JobStatus::Rejected;
        out.removed.emplace_back(j, o->why);
        ++out.rejected;
        return;
      }
      if (o->kind == JobTable::Choice::Outcome::Kind::Wait || o->solutions.empty()) {
        pend(j, c,
             o->solutions.empty() && o->kind == JobTable::Choice::Outcome::Kind::Place ? PendingReason::NoEligibleTasker
                                                                                       : PendingReason::NoFreeCapacity,
             out);
        return;  // (capacity only shrinks: its later jobs find the same or less, never a removal)
      }
    }
    if (cursors_.settled(c) || !placer_.try_place(j, policy_, out.allocations)) {
      const bool tried = !cursors_.settled(c);
      if (tried && placer_.failure_may_pass()) {  // its next job may be placed elsewhere
        pend(j, c, cats_.node_picks_of(c).empty() ? PendingReason::NoFreeCapacity : no_room(c), out);
        return;
      }
      cursors_.settle(c);
      // held only grows in a pass: the category's later jobs find their taskers held too
      const PendingReason r =
          never_runs(c) || (tried && placer_.failure_never()) ? PendingReason::NoEligibleTasker : no_room(c);
      if (!gated(c)) settled_[c] = r;
      pend(j, c, r, out);
      return;
    }
    assign(j, first, out);
  }

  // Job j was placed (its allocations from `first` of out): commit and record it.
  void assign(uint32_t j, size_t first, WalkOut& out) {
    cap_.commit(ledger_);
    if (blocks_ != nullptr)
      for (size_t a = first; a < out.allocations.size(); ++a) blocks_->placed_on(out.allocations[a].tasker);
    res_.alloc_first[j] = static_cast<uint32_t>(first);
    res_.alloc_count[j] = static_cast<uint32_t>(out.allocations.size() - first);
    res_.tasker[j] = out.allocations[first].tasker;
    res_.status[j] = JobStatus::Assigned;
    ++out.assigned;
  }

  // Category c's eligibility within queue q (a job of several queues tried in one), built on first use:
  // its eligible set, soft tiers and requested taskers, each cut to the queue's taskers. `key` stands for
  // it in QueueBlocks' per-category memos (past the categories' own; a rebuilt one gets a new key).
  struct Within {
    CategoryEligibility e;
    kernels::TaskerSet requested;
    size_t key = 0;
    int8_t never = -1;
  };
  Within& within(uint32_t c, uint32_t q) {
    const uint64_t id = (uint64_t{c} << 32) | q;
    auto it = within_.find(id);
    if (it != within_.end()) return it->second;
    // at most kWithinKept kept (memory bounded whatever the categories): dropped together, built again
    // when asked again (O(taskers / 64) each), under fresh keys
    if (within_.size() >= kWithinKept) within_.clear();
    const kernels::TaskerSet& queue = blocks_->queues().taskers[q];
    auto cut = [&](const kernels::TaskerSet& set) {
      std::vector<uint64_t> a(kernels::words_for(set.universe()), 0), b(a.size(), 0);
      set.or_into(a);
      queue.or_into(b);
      uint64_t n = 0;
      for (size_t w = 0; w < a.size(); ++w) n += static_cast<uint64_t>(std::popcount(a[w] &= b[w]));
      return kernels::TaskerSet::from_words(std::move(a), set.universe(), n);
    };
    Within x;
    x.e.eligible = cut(eligible_[c].eligible);
    for (const kernels::TaskerSet& tier : eligible_[c].tiers) x.e.tiers.push_back(cut(tier));
    if (requested_ != nullptr) x.requested = cut((*requested_)[c]);
    x.key = cats_.size() + next_within_key_++;
    return within_.emplace(id, std::move(x)).first->second;
  }

  // A job's queue records of a lower priority than its own (BlockingQueues::several_priority), each where a
  // job of that priority would come: before the job at `i` of the walk, those that come there.
  struct Later {
    size_t at;           // the walk's index it comes before
    double priority;     // its record's priority
    uint32_t job, from;  // the job, its first queue of that priority (index in queues_of)
    bool operator>(const Later& o) const noexcept {
      return at != o.at ? at > o.at : priority != o.priority ? priority < o.priority : job > o.job;
    }
  };
  void later_records(size_t i, WalkOut& out) {
    while (!later_.empty() && later_.front().at <= i) {
      std::pop_heap(later_.begin(), later_.end(), std::greater<>{});
      const Later x = later_.back();
      later_.pop_back();
      step_several(x.job, cats_.of_job[x.job], blocks_->queues().queues_of(x.job), out, x.from);
    }
  }
  // Job j's record of priority p, from its queue `from` on: where in the walk it comes (the first job after it
  // in dispatch order: priority descending, submit time ascending, input order).
  void defer(uint32_t j, double p, uint32_t from) {
    const double submit = jobs_.submit[j];
    const auto it = std::partition_point(order_.begin(), order_.end(), [&](uint32_t k) {
      const double pk = jobs_.priority[k];
      if (pk != p) return pk > p;
      const double sk = jobs_.submit[k];
      return sk != submit ? sk < submit : k < j;
    });
    later_.push_back({static_cast<size_t>(it - order_.begin()), p, j, from});
    std::push_heap(later_.begin(), later_.end(), std::greater<>{});
  }

  // A job of several queues (Slurm: one queue record per partition, in the order written): in each queue
  // in turn that is not blocked, tried on the taskers of its category in that queue; the first that
  // places it wins. A queue where it finds no room blocks (Slurm fails that partition), one where it is
  // held or can never run blocks nothing. It pends for the last queue's reason, except that a blocked
  // queue after one where it found no room, or none, says behind a higher-priority job (Slurm keeps any
  // other reason: _failed_partition "Retaining previous scheduling Reason"). Queues of a lower priority
  // (BlockingQueues::several_priority: partitions of a lower PriorityTier) are tried later, where their
  // records come (defer); `from`: the first queue tried now.
  void step_several(uint32_t j, uint32_t c, std::span<const uint32_t> qs, WalkOut& out, size_t from = 0) {
    const uint32_t need = need_of(c);
    const std::span<const double> priority = blocks_->queues().priorities_of(j);
    size_t to = qs.size();
    if (!priority.empty())
      for (to = from + 1; to < qs.size() && priority[to] == priority[from];) ++to;
    PendingReason r = PendingReason::None;
    if (from > 0) {  // a later record: the job pends already
      r = res_.reason[j];
      --out.pending;
    }
    for (const uint32_t q : qs.subspan(from, to - from)) {
      const QueueBlock b = blocks_->state_of(q, need);
      if (b == QueueBlock::Behind) {
        if (r == PendingReason::None || r == PendingReason::NoFreeCapacity || r == PendingReason::TaskersHeld)
          r = PendingReason::BehindHigherPriority;
        continue;
      }
      if (b == QueueBlock::Held) {  // (state_of blocked it)
        r = PendingReason::TaskersHeld;
        placer_.forget_last();
        continue;
      }
      Within& x = within(c, q);
      if (x.never < 0) x.never = never_in(c, x.e) ? 1 : 0;
      if (x.never != 0) {
        r = PendingReason::NoEligibleTasker;
        if (blocks_->holds_own(j)) hold(x.e.eligible);
        continue;
      }
      if (place_within(j, x.e, out)) return;
      r = no_room_in(c, x.key, x.e, requested_ != nullptr ? &x.requested : nullptr);
      if (blocks_->holds_own(j)) {
        hold(x.e.eligible);
      } else if (r == PendingReason::NoFreeCapacity) {
        blocks_->fail_queue(q);
        placer_.forget_last();
      }
    }
    res_.reason[j] = r;
    ++out.pending;
    if (to < qs.size()) defer(j, priority[to], static_cast<uint32_t>(to));
  }

  // Job j of category c pends for r; one that found no room blocks its queue (blocking queues), and one
  // that names its taskers holds them instead, whatever kept it from running.
  void pend(uint32_t j, uint32_t c, PendingReason r, WalkOut& out) {
    res_.reason[j] = r;
    ++out.pending;
    if (blocks_ == nullptr) return;
    if (blocks_->holds_own(j) && (r == PendingReason::NoFreeCapacity || r == PendingReason::EligibleHeld ||
                                  r == PendingReason::NoEligibleTasker)) {
      hold(eligible_[c].eligible);
    } else if (r == PendingReason::NoFreeCapacity) {
      blocks_->failed(j);
      placer_.forget_last();  // held taskers may split runs (ConsecutiveBestFit)
    }
  }
  bool gated(size_t c) const noexcept { return gate_of(cats_, jobs_, c) != nullptr; }
  // The taskers a job of category c needs at least: a OnePerTasker job of K slots K, any other one.
  uint32_t need_of(uint32_t c) const noexcept {
    return cats_.rule[c] == AllocationRule::OnePerTasker ? cats_.slots[c] : 1;
  }
  // A job that names its taskers holds them (all of `set`): Slurm's required nodes.
  void hold(const kernels::TaskerSet& set) {
    blocks_->hold(set);
    placer_.forget_last();  // held taskers may split runs (ConsecutiveBestFit)
  }
  // What must hold all the taskers of a job of category c that needs more than one, with eligibility `e`
  // (the category's, or cut to a queue): a OnePerTasker job under ConsecutiveBestFit takes them all from
  // one soft tier (Slurm: one choice of a matching OR, place_consecutive), any other from its eligible set.
  std::span<const kernels::TaskerSet> choices_in(uint32_t c, const CategoryEligibility& e) const noexcept {
    if (policy_ == AllocationPolicy::ConsecutiveBestFit && cats_.rule[c] == AllocationRule::OnePerTasker &&
        !e.tiers.empty())
      return e.tiers;
    return {&e.eligible, 1};
  }
  // Whether a job of category c can never run with eligibility `e`: nothing eligible, or no choice with
  // the taskers it needs (Slurm: BadConstraints when no choice of a matching OR has -N K nodes).
  bool never_in(uint32_t c, const CategoryEligibility& e) const {
    if (e.eligible.count() == 0) return true;
    // a node pick with fewer eligible taskers than it counts (Slurm: BadConstraints, `-C ssd*21` on 20)
    for (const Categories::NodePick& p : cats_.node_picks_of(c))
      if (placer_.pick_taskers(p, [&](uint32_t t) { return e.eligible.contains(t); }) < p.count) return true;
    const uint32_t need = need_of(c);
    if (need <= 1) return false;
    for (const kernels::TaskerSet& set : choices_in(c, e))
      if (set.count() >= need) return false;
    return true;
  }
  // never_in for the category's own eligibility, once per category.
  bool never_runs(uint32_t c) {
    if (never_.size() <= c) never_.resize(c + 1, -1);
    if (never_[c] < 0) never_[c] = never_in(c, eligible_[c]) ? 1 : 0;
    return never_[c] != 0;
  }
  // A job of category c that found no room with eligibility `e` (`key`: its QueueBlocks memo key;
  // `requested`: its taskers by request alone, or null): too few of them unheld to run it even idle (a
  // OnePerTasker job of K slots: fewer than K in every choice; any other: none) and none of its requested
  // taskers busy is Slurm's ReqNodeNotAvail (EligibleHeld, blocking nothing); else it found no free
  // capacity (and blocks its queue).
  PendingReason no_room_in(uint32_t c, size_t key, const CategoryEligibility& e, const kernels::TaskerSet* requested) {
    const uint32_t need = need_of(c);
    const std::span<const kernels::TaskerSet> choices = choices_in(c, e);
    // a node pick with fewer than its count up fails first, as the pick's own _pick_best_nodes says (Slurm:
    // `-C ssd*2` with every ssd node held and none of them busy is ReqNodeNotAvail, though busy nodes
    // without ssd are up)
    for (const Categories::NodePick& p : cats_.node_picks_of(c)) {
      if (blocks_ == nullptr) break;
      if (placer_.pick_taskers(p, [&](uint32_t t) { return e.eligible.contains(t) && !cap_.down(t); }) >= p.count)
        continue;
      const bool busy = requested_ != nullptr && blocks_->any_busy((*requested_)[p.all()]);
      return busy ? PendingReason::NoFreeCapacity : PendingReason::EligibleHeld;
    }
    const bool held = blocks_ != nullptr && (choices.size() > 1 ? blocks_->all_held(key, choices, need)
                                                                : blocks_->all_held(key, e.eligible, need));
    const bool not_avail = held && !(requested != nullptr && blocks_->any_busy(*requested));
    return not_avail ? PendingReason::EligibleHeld : PendingReason::NoFreeCapacity;
  }
  PendingReason no_room(uint32_t c) {
    return no_room_in(c, c, eligible_[c], requested_ != nullptr ? &(*requested_)[c] : nullptr);
  }

  const JobTable& jobs_;
  const Categories& cats_;
  const std::vector<CategoryEligibility>& eligible_;
  Capacity& cap_;
  Capacity::Ledger& ledger_;
  DispatchCursors& cursors_;
  std::vector<PendingReason>& settled_;
  std::vector<uint32_t>& remaining_;  // per category: its jobs not walked yet
  size_t live_ = 0;
  DispatchResult& res_;
  AllocationPolicy policy_;
  std::vector<int8_t> never_;  // per category: never_runs() (-1: not yet asked)
  static constexpr size_t kWithinKept = 64;
  std::unordered_map<uint64_t, Within> within_;       // (category, queue) -> within()
  size_t next_within_key_ = 0;                        // Within::key past the categories
  QueueBlocks* blocks_;                               // null: no queue blocks
  std::span<const uint32_t> order_;                   // the jobs run() walks
  std::vector<Later> later_;                          // records to come (a min-heap by place)
  const std::vector<kernels::TaskerSet>* requested_;  // per category (DispatchOptions::requested), or null
  Placer placer_;
};

DispatchResult empty_result(size_t nj) {
  DispatchResult res;  // (five columns of a million jobs: filled side by side, their pages faulted so)
  tbb::parallel_invoke([&] { res.status.assign(nj, JobStatus::Pending); }, [&] { res.tasker.assign(nj, kNone); },
                       [&] { res.reason.assign(nj, PendingReason::None); }, [&] { res.alloc_first.assign(nj, 0); },
                       [&] { res.alloc_count.assign(nj, 0); });
  return res;
}

// Rejected jobs marked; cursors synced to the capacity's epoch; per category the reason its jobs pend
// without a placement from the start (Walk's `settled`).
std::vector<PendingReason> start_batch(const JobTable& jobs, const Categories& cats,
                                       const std::vector<CategoryEligibility>& eligible, const Capacity& capacity,
                                       DispatchCursors& cursors, DispatchResult& res) {
  for (uint32_t j = 0; j < jobs.size(); ++j)
    if (jobs.rejected(j)) {
      res.status[j] = JobStatus::Rejected;
      ++res.rejected;
    }
  cursors.sync(capacity);
  // Capacity only shrinks in a batch and a category's jobs are alike (request, slots, rule, charges):
  // once one of them finds no room, the category is settled for the epoch and the jobs after it are
  // pending at once, without a tentative placement and its rollback (which copy the farm-wide pools:
  // an Accelerator farm has a pool per counted map, and most of a million jobs wait). Whether a
  // category's jobs are settled is one byte per category (`settled`: the reason they wait, or None),
  // read once per job instead of its category's eligibility and cursors.
  std::vector<PendingReason> settled(cats.size(), PendingReason::None);
  for (size_t c = 0; c < settled.size(); ++c)
    if (gate_of(cats, jobs, c) != nullptr) continue;  // what its jobs do depends on the pools when each is dispatched
    else if (eligible[c].eligible.count() == 0) settled[c] = PendingReason::NoEligibleTasker;
    else if (cursors.settled(c)) settled[c] = PendingReason::NoFreeCapacity;
  return settled;
}

// How many categories are live (not settled, with jobs to walk: what Walk::run counts down) in each of
// `groups` groups: category c's is part_of[c] (kNone: in none), or group 0 for every one when part_of is
// empty.
std::vector<size_t> live_categories(const Categories& cats, const std::vector<PendingReason>& settled,
                                    std::span<const uint32_t> part_of, size_t groups) {
  std::vector<size_t> live(groups, 0);
  for (size_t c = 0; c < cats.size(); ++c) {
    const uint32_t g = part_of.empty() ? 0 : part_of[c];
    if (g != kNone) live[g] += settled[c] == PendingReason::None && cats.job_count[c] > 0;
  }
  return live;
}

// The jobs of `jobs` pend for their category's settled reason, in parallel; returns how many.
uint64_t pend_settled(std::span<const uint32_t> jobs, const Categories& cats, const std::vector<PendingReason>& settled,
                      DispatchResult& res) {
  tbb::parallel_for(tbb::blocked_range<size_t>(0, jobs.size(), 8192), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i < r.end(); ++i) res.reason[jobs[i]] = settled[cats.of_job[jobs[i]]];
  });
  return jobs.size();
}

void add_counts(const WalkOut& out, DispatchResult& res) {
  res.assigned += out.assigned;
  res.pending += out.pending;
  res.rejected += out.rejected;
}

// The jobs of `order` grouped by their part (a stable counting sort in parallel: in dispatch order within
// a part), and the category of each in `of`; bucket parts.count holds the jobs of categories in no part.
// Bucket b is [start[b], start[b + 1]).
std::vector<uint32_t> jobs_by_part(const std::vector<uint32_t>& order, const Categories& cats,
                                   const DispatchParts& parts, std::vector<size_t>& start, std::vector<uint32_t>& of) {
  const size_t buckets = parts.count + 1;
  auto bucket_of = [&](uint32_t c) {
    const uint32_t part = parts.part_of[c];
    return part == kNone ? parts.count : part;
  };
  // pieces of at least 64 Ki jobs, and at most 4 Mi counters in all
  const size_t pieces =
      std::max<size_t>(1, std::min((order.size() + (1 << 16) - 1) >> 16, (size_t{1} << 22) / buckets));
  const size_t per = (order.size() + pieces - 1) / pieces;
  std::vector<std::vector<size_t>> at(pieces, std::vector<size_t>(buckets, 0));
  tbb::parallel_for(size_t{0}, pieces, [&](size_t q) {
    for (size_t p = q * per; p < std::min(order.size(), (q + 1) * per); ++p) ++at[q][bucket_of(cats.of_job[order[p]])];
  });
  start = bucket_starts(at, buckets);
  std::vector<uint32_t> out(order.size());
  of.resize(order.size());
  tbb::parallel_for(size_t{0}, pieces, [&](size_t q) {
    for (size_t p = q * per; p < std::min(order.size(), (q + 1) * per); ++p) {
      const uint32_t j = order[p], c = cats.of_job[j];
      const size_t i = at[q][bucket_of(c)]++;
      out[i] = j;
      of[i] = c;
    }
  });
  return out;
}

// The parts' allocations as one list in dispatch order (each job's in a row, as one walk appends them),
// alloc_first made global: two parallel passes over the order (count, then copy at the scanned offsets).
void merge_allocations(const std::vector<uint32_t>& order, const Categories& cats, const DispatchParts& parts,
                       const std::vector<WalkOut>& outs, DispatchResult& res) {
  constexpr size_t kBlock = 1 << 16;
  const size_t blocks = (order.size() + kBlock - 1) / kBlock;
  std::vector<size_t> offset(blocks + 1, 0);
  tbb::parallel_for(size_t{0}, blocks, [&](size_t b) {
    size_t n = 0;
    for (size_t p = b * kBlock; p < std::min(order.size(), (b + 1) * kBlock); ++p)
      if (res.status[order[p]] == JobStatus::Assigned) n += res.alloc_count[order[p]];
    offset[b + 1] = n;
  });
  for (size_t b = 0; b < blocks; ++b) offset[b + 1] += offset[b];
  res.allocations.resize(offset[blocks]);
  tbb::parallel_for(size_t{0}, blocks, [&](size_t b) {
    size_t at = offset[b];
    for (size_t p = b * kBlock; p < std::min(order.size(), (b + 1) * kBlock); ++p) {
      const uint32_t j = order[p];
      if (res.status[j] != JobStatus::Assigned) continue;
      const std::vector<Allocation>& from = outs[parts.part_of[cats.of_job[j]]].allocations;
      std::copy_n(from.begin() + res.alloc_first[j], res.alloc_count[j],
                  res.allocations.begin() + static_cast<std::ptrdiff_t>(at));
      res.alloc_first[j] = static_cast<uint32_t>(at);
      at += res.alloc_count[j];
    }
  });
}

// The parts' removed jobs in dispatch order (rare: Accelerator jobs whose walk meets a cycle): their
// positions found by one pass over the order when there are any.
void merge_removed(const std::vector<uint32_t>& order, std::vector<WalkOut>& outs, DispatchResult& res) {
  std::unordered_map<uint32_t, std::string> why;
  for (WalkOut& out : outs)
    for (auto& [j, text] : out.removed) why.emplace(j, std::move(text));
  for (size_t p = 0; p < order.size() && res.removed.size() < why.size(); ++p)
    if (const auto it = why.find(order[p]); it != why.end()) res.removed.emplace_back(it->first, std::move(it->second));
}

}  // namespace

DispatchResult dispatch(const TaskerTable& taskers, const JobTable& jobs, const Categories& cats,
                        const std::vector<CategoryEligibility>& eligible, Capacity& capacity, DispatchCursors& cursors,
                        const DispatchOptions& options) {
  DispatchResult res = empty_result(jobs.size());
  std::vector<PendingReason> settled = start_batch(jobs, cats, eligible, capacity, cursors, res);
  const std::vector<uint32_t> order = dispatch_order(jobs);
  std::vector<uint32_t> remaining = cats.job_count;  // per category: its jobs not walked yet
  WalkOut out;
  std::optional<QueueBlocks> blocks;
  if (options.queues) {
    if (options.queues->queue_of_job.size() != jobs.size() ||
        (!options.queues->several_first.empty() && options.queues->several_first.size() != jobs.size() + 1) ||
        (!options.queues->several_priority.empty() &&
         options.queues->several_priority.size() != options.queues->several.size()))
      throw std::invalid_argument("dispatch: blocking queues name a queue for another number of jobs");
    blocks.emplace(*options.queues, capacity);
  }
  // Blocking queues: every job is walked (a settled category's later jobs may be behind a blocked queue)
  const size_t live = blocks ? order.size() + 1 : live_categories(cats, settled, {}, 1)[0];
  const size_t walked =
      Walk(taskers, jobs, cats, eligible, capacity, cursors, nullptr, Placer::tables_for(cats, capacity), settled,
           remaining, res, options, blocks ? &*blocks : nullptr)
          .run(order, {}, live, out);
  if (blocks) blocks->release();
  out.pending += pend_settled(std::span<const uint32_t>(order).subspan(walked), cats, settled, res);
  res.allocations = std::move(out.allocations);
  res.removed = std::move(out.removed);
  add_counts(out, res);
  return res;
}

DispatchResult dispatch(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                        const Categories& cats, const std::vector<CategoryEligibility>& eligible,
                        const kernels::KernelTable& k, const InUse* in_use, const DispatchOptions& options) {
  Capacity capacity = Capacity::configured(catalog, taskers);
  if (in_use && !in_use->empty()) capacity.take(*in_use);
  DispatchCursors cursors(cats, eligible);
  const bool threads =
      std::min<size_t>(tbb::this_task_arena::max_concurrency(),
                       tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)) > 1;
  const DispatchParts parts =
      options.parts == DispatchOptions::Parts::Never || options.queues ||
              (options.parts == DispatchOptions::Parts::Auto && !threads)
          ? DispatchParts{}
          : dispatch_parts(cats, jobs, eligible, capacity, std::max<uint64_t>(uint64_t{1} << 22, 8 * jobs.size()));
  bool apart = parts.count > 1;
  if (apart && options.parts == DispatchOptions::Parts::Auto) {  // one part with most of the jobs: one walk
    std::vector<uint64_t> jobs_of(parts.count, 0);
    uint64_t all = 0;
    for (size_t c = 0; c < cats.size(); ++c)
      if (parts.part_of[c] != kNone) {
        jobs_of[parts.part_of[c]] += cats.job_count[c];
        all += cats.job_count[c];
      }
    apart = *std::max_element(jobs_of.begin(), jobs_of.end()) * 8 < all * 7;
  }
  if (!apart || options.queues) {  // one walk: the sequential dispatch (blocking queues tie every part)
    DispatchOptions with = options;
    if (options.queues && options.queues->busy_consumable != kNone && !options.requested) {
      auto requested = std::make_shared<std::vector<kernels::TaskerSet>>(cats.size());
      tbb::parallel_for(size_t{0}, cats.size(), [&](size_t c) {
        (*requested)[c] =
            evaluate_category(catalog, taskers, jobs.requests[cats.request[c]], nullptr, ChargeVector{}, k).eligible;
      });
      with.requested = std::move(requested);
    }
    DispatchResult res = dispatch(taskers, jobs, cats, eligible, capacity, cursors, with);
    res.capacity = std::move(capacity);
    return res;
  }
  DispatchResult res = empty_result(jobs.size());
  std::vector<PendingReason> settled = start_batch(jobs, cats, eligible, capacity, cursors, res);
  const std::vector<uint32_t> order = dispatch_order(jobs);
  std::vector<size_t> start;
  std::vector<uint32_t> of;
  const std::vector<uint32_t> by_part = jobs_by_part(order, cats, parts, start, of);
  auto jobs_of_part = [&](size_t part, size_t from = 0) {
    return std::span<const uint32_t>(by_part).subspan(start[part] + from, start[part + 1] - start[part] - from);
  };
  std::vector<WalkOut> outs(parts.count + 1);
  // Jobs of categories in no part take nothing: pending, no eligible tasker (start_batch settled them).
  outs[parts.count].pending = pend_settled(jobs_of_part(parts.count), cats, settled, res);
  // The largest parts first (they bound the wall time); each range of parts is one Walk, with its lane.
  std::vector<uint32_t> largest(parts.count);
  std::iota(largest.begin(), largest.end(), uint32_t{0});
  std::stable_sort(largest.begin(), largest.end(),
                   [&](uint32_t a, uint32_t b) { return start[a + 1] - start[a] > start[b + 1] - start[b]; });
  std::vector<uint32_t> remaining = cats.job_count;  // per category: its jobs not walked yet
  const std::vector<size_t> live = live_categories(cats, settled, parts.part_of, parts.count);
  std::vector<size_t> walked(parts.count, 0);
  const std::shared_ptr<const Placer::Tables> tables = Placer::tables_for(cats, capacity);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, largest.size(), 1), [&](const tbb::blocked_range<size_t>& r) {
    Capacity::Ledger lane = capacity.lane();
    Walk walk(taskers, jobs, cats, eligible, capacity, cursors, &lane, tables, settled, remaining, res, options);
    for (size_t i = r.begin(); i < r.end(); ++i) {
      const uint32_t part = largest[i];
      walked[part] = walk.run(jobs_of_part(part),
                              std::span<const uint32_t>(of).subspan(start[part], start[part + 1] - start[part]),
                              live[part], outs[part]);
    }
  });
  for (size_t part = 0; part < parts.count; ++part)  // what the walks left: jobs of settled categories
    outs[part].pending += pend_settled(jobs_of_part(part, walked[part]), cats, settled, res);
  capacity.settle();
  merge_allocations(order, cats, parts, outs, res);
  for (const WalkOut& out : outs) add_counts(out, res);
  merge_removed(order, outs, res);
  res.capacity = std::move(capacity);
  return res;
}

}  // namespace colmatch
