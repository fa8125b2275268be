// Moab's scheduling iteration (seed 001), steps 2-6 over the shared world (engine/schedule/world.hpp,
// which does step 1, refresh resources):
//   2. feasible jobs: submitted, not held, dependencies ended, some tasker eligible;
//   3. priority: a weighted sum of factors (credential priority, minutes queued, expansion factor, slots);
//   4. throttling per credential (user, group, class, account, QoS): running jobs and slots
//      (engine/schedule/throttles.hpp);
//   5. allocation: the job's taskers by the node allocation policy (Placer);
//   6. backfill, one pass parameterised by the reservation depth over one book (engine/schedule/book.hpp):
//      none (strict priority order: the first job that cannot start blocks the rest), greedy (depth 0: no
//      reservation), EASY (depth 1: the first blocked job gets a reservation at the earliest time it fits,
//      from the running jobs' walltime estimates, made again in each pass, engine/schedule/easy_reservation.hpp;
//      a later job starts now only if it ends by then or the reserved job still fits then beside it), a
//      depth N or conservative (a book of kept reservations).
//
// Two queues (engine/schedule/waiting.hpp). When no priority factor depends on time (queue_time and
// expansion weights 0), every job has a fixed rank (RankedQueue) and a cycle visits what can change the schedule: ready
// jobs up to the first that does not fit; with EASY and greedy, one candidate per category per start; under
// conservative backfill (no credential limits), the jobs holding no reservation, those whose reservation is due and
// those of categories that can place; held, dependency-waiting and throttled jobs only when their event comes. It gives
// the same starts as the full cycle, which visits every waiting job in priority order and gives each its reason (the
// run's last cycle is always a full one). With time-dependent priorities every cycle is a full one over the waiting
// jobs (those waiting for a dependency are parked until it ends). Internal to engine/schedule/.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/schedule/book.hpp"
#include "engine/schedule/pooled_book.hpp"
#include "engine/schedule/slurm_priority.hpp"
#include "engine/schedule/throttles.hpp"
#include "engine/schedule/wait_queue.hpp"
#include "engine/schedule/waiting.hpp"
#include "engine/schedule/world.hpp"

namespace colmatch {

/// Moab's iteration as a Scheduler. O(jobs) memory beside the world.
class MoabScheduler final : public Scheduler {
 public:
  explicit MoabScheduler(SimWorld& w);
  void submitted(uint32_t j, double t) override;
  void woke(uint32_t j, double t) override;
  void ended(uint32_t j, double t) override;
  void tasker_changed(uint32_t x) override { book_->tasker_changed(x); }
  void cycle(double t, bool last) override;
  uint64_t queued() const override;
  double next_wake() const override;

 private:
  // A category's backfill candidate, kept within one backfill pass (backfill.cpp).
  struct CandidateMemo {
    uint64_t pass = 0;
    uint32_t job = WaitQueue::kNoJob, a = WaitQueue::kNoJob, b = WaitQueue::kNoJob;
    std::vector<uint32_t> placed;  // the taskers of the placement it found (empty: it placed nothing)
    bool beside = false;           // job is a candidate because the reserved job still fits beside it
  };
  struct LazyReservation;

  double priority(uint32_t j, double t) const;
  void start(uint32_t j, double t, const std::vector<Allocation>& allocs, bool backfilled);
  WaitQueue& wq() noexcept { return ranked_->ready(); }  // (fixed priorities: the ranked queue's)
  const WaitQueue& wq() const noexcept { return ranked_->ready(); }
  void cycle_full(double t);
  bool pass(double t);
  void begin_pass(BackfillPolicy backfill);
  // slurm_main_pass.cpp
  bool slurm_main_pass(double t);
  bool main_pass_try(uint32_t j, uint32_t c, const std::vector<uint64_t>* within, std::vector<Allocation>& trial);
  bool turn(uint32_t j, double t, bool& blocked);
  void book_reservation(uint32_t j, double t);
  bool exceeds_backfill_limits(uint32_t j);
  bool throttled(uint32_t j);
  // Whether job j may book a reservation at t (SimConfig::backfill_min_priority_reserve).
  bool may_reserve(uint32_t j, double t) const;
  void drop_reservation(uint32_t j);
  void drop_reservations();
  void compress(uint32_t j, double t);
  void cycle_book_fast(double t);
  void cycle_fast(double t);
  // backfill.cpp
  void backfill(uint32_t blocker, double t);
  bool in_order(uint32_t c) const;
  bool start_touches(const CandidateMemo& m, uint32_t c, const std::vector<Allocation>& allocs) const;
  bool memo_holds(const CandidateMemo& m, size_t from) const;
  template <class Test>
  uint32_t first_unthrottled(uint32_t c, size_t from, Test&& test);
  uint32_t candidate(uint32_t c, size_t from, double t, LazyReservation& resv, CandidateMemo& memo);

  SimWorld& w_;
  // the reservations at the policy's depth: EASY's (depth 1, made again in each pass), or kept ones (deeper,
  // conservative: of taskers, or pooled); depth 0 books none
  std::unique_ptr<ReservationBook> book_;
  BackfillPolicy pass_backfill_ = BackfillPolicy::None;  // this pass's backfill (none in Slurm's main pass)
  size_t pass_depth_ = 0;                                // this pass's reservation depth
  bool slurm_pass_ = false;                              // this pass is Slurm's backfill plan
  std::vector<uint32_t> dropped_;                        // drop_reservations: the reservations given up
  PerJob<double> cred_priority_;                         // per job: its credentials' priorities summed
  std::optional<SlurmPriority> slurm_;                   // SimConfig::slurm_priority: priority/multifactor's priorities
  std::optional<RankedQueue> ranked_;                    // no time-dependent priority factor: jobs ranked once
  std::optional<TimedQueue> timed_;                      // else: sorted at each cycle
  WaitingJobs* waiting_ = nullptr;                       // the one of the two that runs
  bool compress_due_ = false;  // a job ended before its walltime: the next cycle compresses the book
  double next_backfill_ = -std::numeric_limits<double>::infinity();  // backfill_interval: the next backfill cycle
  bool strict_ = false;                   // backfill_interval: this cycle is the main pass (no backfill)
  bool since_backfill_ = false;           // backfill_interval: a main pass ran since the last backfill cycle
  std::vector<uint32_t> compress_order_;  // cycle_book_fast: the booked jobs' ranks
  std::vector<uint32_t> early_;           // cycle_book_fast on a pooled book: the early source's ranks
  // pass_with_book under Slurm's backfill: its node-space map's start and its records' ends (the cycle ends
  // when they reach bf_max_job_test), jobs tried per owner, per partition, per (partition, owner)
  double map_begin_ = 0;
  std::set<double> map_ends_;
  bool map_full_ = false;
  std::vector<uint64_t> tried_of_, tried_in_;
  std::unordered_map<uint64_t, uint64_t> tried_of_in_;
  std::unordered_map<uint64_t, uint64_t> tried_by_assoc_;  // (account << 32 | owner): bf_max_job_assoc
  bool book_fast_ = false;  // cycle_book_fast may run (conservative, or any depth > 1 on a pooled book)
  // The fast cycle of this run (fast_cycle()): none (every cycle full), the walk to the blocker with the
  // per-category backfill (cycle_fast), or the book's (cycle_book_fast)
  enum class FastCycle : uint8_t { None, Backfill, Book };
  FastCycle fast_ = FastCycle::None;
  FastCycle fast_cycle() const;
  std::vector<std::pair<double, uint32_t>> ready_;
  std::vector<CandidateMemo> memo_;                  // per category: its backfill candidate in the current pass
  std::vector<std::pair<size_t, uint32_t>> bounds_;  // backfill: (rank bound, category)
  uint64_t backfill_pass_ = 0;
  // slurm_main_pass: per partition whether it failed in this pass, the taskers held for the rest of it
  // (words of 64), and the cut eligibility a job is tried on
  std::vector<uint8_t> part_failed_;
  std::vector<uint64_t> part_records_;  // the main pass: per partition, its job records reached (partition_job_depth)
  std::vector<uint64_t> held_words_, within_words_;
  bool any_held_ = false;
  CategoryEligibility cut_;
  // Slurm's default_queue_depth and sched_interval: the next full main pass, whether this cycle's is one,
  // and whether a pass since the last full one stopped at the depth
  double next_full_ = -std::numeric_limits<double>::infinity();
  bool full_pass_ = false, depth_cut_ = false;
  bool part_skipped_ = false;  // the last main pass skipped a record by partition_job_depth
};

}  // namespace colmatch
