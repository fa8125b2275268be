// The batch dispatch's walk (internal to engine/batch/): jobs in dispatch order, each placement committed
// at once. Its core (this header, used by dispatch.cpp) walks any farm; with blocking queues (Slurm's main
// pass, engine/batch/queue_blocking.hpp) it calls the hooks defined in engine/batch/main_pass.cpp: a job's
// queues before it is tried (queue_step: blocked, held, or a job of several partitions tried in each,
// step_several), what its pending does to its queue (pend_blocking), why it found no room
// (no_room_in: Resources or ReqNodeNotAvail) and the records of lower PriorityTiers (next_records).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/batch/dispatch_result.hpp"
#include "engine/batch/queue_blocking.hpp"
#include "engine/placement/placer.hpp"

namespace colmatch {

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
        max_starts_(blocks != nullptr ? options.max_starts : 0),
        queue_depth_(blocks != nullptr ? options.queue_depth : 0),
        placer_(taskers, jobs, cats, eligible, capacity, &cursors, ledger, std::move(tables)) {
    placer_.fit_by(options.fit_consumable, options.fit_limit);
    placer_.committed_walk();
    placer_.correct_loads(options.load_correction.get());
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
      if (pass_ended()) {  // sched_max_job_start: the rest untried
        for (size_t k = i; k < jobs.size(); ++k) {
          const uint32_t c = of.empty() ? cats_.of_job[jobs[k]] : of[k];
          --remaining_[c];
          res_.reason[jobs[k]] = PendingReason::BehindHigherPriority;
          ++out.pending;
        }
        later_.clear();
        return jobs.size();
      }
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
    if (blocks_ != nullptr && queue_step(j, c, out)) {
      --remaining_[c];
      return;
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

  // (main_pass.cpp) Job j of category c as its queues say before it is tried: a job of several queues
  // is tried in each (step_several), one whose queue is blocked or held pends; true when it was dealt with.
  bool queue_step(uint32_t j, uint32_t c, WalkOut& out);

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
    ++starts_;
  }

  // sched_max_job_start: the walk has started DispatchOptions::max_starts jobs.
  bool pass_ended() const noexcept { return max_starts_ > 0 && starts_ >= max_starts_; }

  // partition_job_depth: queue q's records past DispatchOptions::queue_depth are not tried (each counted).
  bool past_queue_depth(uint32_t q) {
    if (queue_depth_ == 0 || q == kNone) return false;
    if (queue_records_.empty()) queue_records_.assign(blocks_->queues().names.size(), 0);
    return queue_records_[q]++ >= queue_depth_;
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
  Within& within(uint32_t c, uint32_t q);

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
    if (!later_.empty()) next_records(i, out);
  }
  void next_records(size_t i, WalkOut& out);
  // Job j's record of priority p, from its queue `from` on: where in the walk it comes (the first job after it
  // in dispatch order: priority descending, submit time ascending, input order).
  void defer(uint32_t j, double p, uint32_t from);

  // A job of several queues (Slurm: one queue record per partition, in the order written): in each queue
  // in turn that is not blocked, tried on the taskers of its category in that queue; the first that
  // places it wins. A queue where it finds no room blocks (Slurm fails that partition), one where it is
  // held or can never run blocks nothing. It pends for the last queue's reason, except that a blocked
  // queue after one where it found no room, or none, says behind a higher-priority job (Slurm keeps any
  // other reason: _failed_partition "Retaining previous scheduling Reason"). Queues of a lower priority
  // (BlockingQueues::several_priority: partitions of a lower PriorityTier) are tried later, where their
  // records come (defer); `from`: the first queue tried now.
  void step_several(uint32_t j, uint32_t c, std::span<const uint32_t> qs, WalkOut& out, size_t from = 0);

  // Job j of category c pends for r; one that found no room blocks its queue (blocking queues), and one
  // that names its taskers holds them instead, whatever kept it from running.
  void pend(uint32_t j, uint32_t c, PendingReason r, WalkOut& out) {
    res_.reason[j] = r;
    ++out.pending;
    if (blocks_ != nullptr) pend_blocking(j, c, r);
  }
  // (main_pass.cpp) the queue of job j, pending for r, blocks, or its named taskers are held
  void pend_blocking(uint32_t j, uint32_t c, PendingReason r);
  bool gated(size_t c) const noexcept { return gate_of(cats_, jobs_, c) != nullptr; }
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
    const uint32_t need = cats_.fewest_taskers(c);
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
  PendingReason no_room_in(uint32_t c, size_t key, const CategoryEligibility& e, const kernels::TaskerSet* requested);
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
  uint64_t max_starts_ = 0, queue_depth_ = 0;         // DispatchOptions' (0: no limit)
  uint64_t starts_ = 0;                               // jobs assigned by the walk
  std::vector<uint64_t> queue_records_;               // per queue: its records tried (queue_depth_)
  Placer placer_;
};

}  // namespace colmatch
