// Moab's waiting jobs (seed 001, steps 2 and 4: feasible jobs, throttling), as the scheduling cycles of
// engine/schedule/moab.cpp read them. Two queues, one chosen per run by whether a priority factor
// depends on time:
//   - RankedQueue: no factor does (queue-time and expansion weights 0): every job has a fixed rank in
//     priority order, computed once (WaitQueue), and a waiting job sits where its state says until the
//     event that can change it (its hold's end, its dependency's end, a job of its credential ending):
//     the fast cycles visit only what can start;
//   - TimedQueue: priorities change with time: the waiting jobs in submission order, each cycle sorts
//     them by their priority then (those waiting for a dependency parked until it ends).
// Both read the world through QueueView, the part of it they use. Internal to engine/schedule/.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/model/jobs.hpp"
#include "engine/model/per_job.hpp"
#include "engine/schedule/events.hpp"
#include "engine/schedule/result.hpp"
#include "engine/schedule/throttles.hpp"
#include "engine/schedule/wait_queue.hpp"

namespace colmatch {

class ReservationBook;

/// What the waiting queues read of a run's world (engine/schedule/world.hpp, SimWorld's fields of the same
/// names) and write to it: references, valid for the run.
struct QueueView {
  const JobTable& jobs;                   ///< hold_until, depends
  const std::vector<uint32_t>& category;  ///< per job: its job category (Categories::of_job)
  size_t categories;                      ///< how many
  const std::vector<uint8_t>& fits_idle;  ///< per category: one of its jobs fits the idle farm
  const std::vector<uint8_t>& ended;      ///< per job
  const Credentials& creds;               ///< running counts and limits per credential
  size_t arrivals;                        ///< the jobs to schedule
  SimResult& res;                         ///< reason, was_held, was_throttled, unparked
  TimedJobs& wakes;                       ///< a hold's end asks for a cycle here
};

/// What both queues hear of a run's events.
class WaitingJobs {
 public:
  virtual ~WaitingJobs() = default;
  /// Job j is submitted at t (SimWorld::submit done).
  virtual void submitted(uint32_t j, double t) = 0;
  /// A wake-up of job j comes at t: its hold's end, or its booked reservation's time.
  virtual void woke(uint32_t j, double t) = 0;
  /// Job j ended at t: the jobs waiting for it, and those its credentials' limits held, may go on.
  virtual void ended(uint32_t j, double t) = 0;
  /// Job j started (SimWorld::start done).
  virtual void started(uint32_t j) = 0;
  /// Jobs submitted and not started.
  virtual uint64_t size() const = 0;
  /// Job j booked a reservation / gave its reservation up / its reservation's time has come (the book's
  /// fast cycle reads them from a queue that keeps them; the others need not).
  virtual void booked(uint32_t /*j*/) {}
  virtual void unbooked(uint32_t /*j*/) {}
  virtual void due(uint32_t /*j*/) {}
  /// After a cycle's pass that started jobs.
  virtual void pass_done() {}
};

/// Fixed priorities: the jobs ranked once, highest priority first; sets of ranks for the waiting jobs,
/// those a full cycle visits, and (conservative, a pooled book) those holding no reservation and those
/// whose reservation's time has come; jobs over a credential limit parked in ThrottleStreams. Memory
/// O(jobs). Not thread-safe.
class RankedQueue final : public WaitingJobs {
 public:
  /// `order`: the jobs to rank, highest priority first; `estimate[j]`: job j's walltime estimate
  /// (seconds). `book_fast`: the book's fast cycle runs (MoabScheduler::cycle_book_fast), which reads
  /// unbooked() and due(). Keeps references to `w` and `book`.
  RankedQueue(QueueView w, const ReservationBook& book, bool book_fast, std::vector<uint32_t> order,
              PerJob<double> estimate);
  void submitted(uint32_t j, double t) override;
  void woke(uint32_t j, double t) override;
  void ended(uint32_t j, double t) override;
  void started(uint32_t j) override;
  uint64_t size() const override { return queued_.size(); }

  /// The ready jobs by rank and category.
  WaitQueue& ready() noexcept { return wq_; }
  const WaitQueue& ready() const noexcept { return wq_; }
  /// Calls f(j) for each waiting job a full cycle visits (not those parked for a dependency), by rank.
  template <class F>
  void for_each_visible(F&& f) const {
    for (size_t r = visible_.next(0); r != RankSet::npos; r = visible_.next(r + 1)) f(wq_.job(r));
  }
  /// Parks job j if a credential limit keeps it from starting now (it stays parked until a job of that
  /// credential ends: the limit can only get tighter until then). Returns whether it did.
  bool throttle(uint32_t j);
  /// The parked job ThrottleStreams' next head names, ready again. Returns it.
  uint32_t surface_head();
  /// The ready job with the smallest rank >= r, the active streams' parked jobs counted as ready, or
  /// WaitQueue::kNoJob.
  uint32_t next_ready(size_t r);
  /// The parked jobs' next head rank (ThrottleStreams::next_head).
  uint32_t next_parked_head() { return streams_.next_head(); }
  /// Conservative and pooled books: the ready jobs holding no reservation, and those whose reservation's
  /// time has come.
  const RankSet& unbooked() const noexcept { return unbooked_; }
  const RankSet& due() const noexcept { return due_; }
  void booked(uint32_t j) override { unbooked_.erase(wq_.rank(j)); }
  void unbooked(uint32_t j) override;
  void due(uint32_t j) override { due_.insert(wq_.rank(j)); }

 private:
  // Why a waiting job is out of the ready queue until the event that can change it.
  enum class Parked : uint8_t { No, Held, Dependency };
  void classify(uint32_t j, double t);

  QueueView w_;
  const ReservationBook& book_;
  bool book_fast_;
  WaitQueue wq_;             // the ready jobs
  RankSet queued_;           // the ranks of the waiting jobs
  RankSet visible_;          // those a full cycle visits (not waiting for a dependency)
  RankSet unbooked_, due_;   // book_fast_: ready jobs holding no reservation; those whose time has come
  ThrottleStreams streams_;  // jobs parked on a credential limit
  std::vector<Parked> parked_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> dependents_;  // per job with some: jobs parked for it
};

/// Time-dependent priorities: the waiting jobs in submission order (a cycle sorts them), those waiting
/// for a dependency parked until it ends. Memory O(waiting jobs).
class TimedQueue final : public WaitingJobs {
 public:
  /// Keeps `w`'s references.
  explicit TimedQueue(QueueView w) : w_(w) {}
  void submitted(uint32_t j, double t) override;
  void woke(uint32_t, double) override {}  // (a cycle visits every waiting job: it sees the hold end)
  void ended(uint32_t j, double t) override;
  void started(uint32_t) override {}  // (taken out after the pass: pass_done)
  uint64_t size() const override { return queued_.size() + dependency_parked_; }

  /// Calls f(j) for each waiting job a cycle visits (not those parked for a dependency), in submission
  /// order.
  template <class F>
  void for_each_visible(F&& f) const {
    for (const uint32_t j : queued_) f(j);
  }
  /// After a cycle's pass: the jobs it started leave the queue (one pass over it, not one per start).
  void pass_done() override;

 private:
  void queue_or_park(uint32_t j);

  QueueView w_;
  std::vector<uint32_t> queued_;  // the waiting jobs but those parked for a dependency
  size_t dependency_parked_ = 0;
  std::unordered_map<uint32_t, std::vector<uint32_t>> dependents_;
};

}  // namespace colmatch
