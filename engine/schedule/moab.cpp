#include "engine/schedule/moab.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <queue>
#include <span>

#include "engine/batch/queue_blocking.hpp"
#include "engine/schedule/easy_reservation.hpp"
#include "engine/schedule/tasker_book.hpp"

namespace colmatch {

namespace {

// The book for world w: EASY's at depth 1; deeper, pooled when PoolProfile::of(w) says the farm is one pool,
// else one of taskers (depth 0, no backfill or greedy, books nothing in it).
std::unique_ptr<ReservationBook> book_of(SimWorld& w) {
  if (w.policy.backfill == BackfillPolicy::Easy && w.policy.depth() == 1) return std::make_unique<EasyReservation>(w);
  if (std::optional<PoolProfile> pool = PoolProfile::of(w)) return std::make_unique<PooledBook>(w, std::move(*pool));
  return std::make_unique<TaskerBook>(w);
}

// The part of world w the waiting queues read and write.
QueueView queue_view(SimWorld& w) {
  return {w.jobs, w.cats.of_job, w.cats.size(), w.fits_idle, w.ended, w.creds, w.arrivals.size(), w.res, w.wakes};
}

}  // namespace

MoabScheduler::MoabScheduler(SimWorld& w)
    : w_(w),
      book_(book_of(w)),
      cred_priority_(w.creds.priorities(w.policy.credential_priorities)),
      memo_(w.cats.size()) {
  book_fast_ = w.policy.depth() == SIZE_MAX || book_->pooled() != nullptr;
  if (w.policy.slurm_priority.enabled) slurm_.emplace(SlurmPriority::of_farm(w.catalog, w.taskers, w.jobs, w.policy));
  if (w.policy.weights.queue_time != 0 || w.policy.weights.expansion != 0 || w.policy.slurm_priority.enabled) {
    waiting_ = &timed_.emplace(queue_view(w));
    return;
  }
  // priorities do not depend on time: one rank per job, in the order every cycle considers them
  const JobTable& jobs = w.jobs;
  std::vector<uint32_t> order = w.arrivals;
  std::vector<double> prio(jobs.size(), 0.0);
  // (stored once when every job's estimate is the same; a job not ranked is never ready: any value)
  PerJob<double> est(jobs.size(), order.empty() ? 0.0 : sim_estimate(jobs, order[0]));
  for (uint32_t j : order) {
    prio[j] = priority(j, 0);
    est.set(j, sim_estimate(jobs, j));
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (prio[a] != prio[b]) return prio[a] > prio[b];
    if (jobs.submit[a] != jobs.submit[b]) return jobs.submit[a] < jobs.submit[b];
    return a < b;
  });
  std::vector<double>().swap(prio);
  waiting_ = &ranked_.emplace(queue_view(w), *book_, book_fast_, std::move(order), std::move(est));
  fast_ = fast_cycle();
}

double MoabScheduler::priority(uint32_t j, double t) const {
  const JobTable& jobs = w_.jobs;
  if (slurm_)  // the job's tier, then priority/multifactor's
    return std::floor(jobs.priority[j] / kPriorityTierScale) * kPriorityTierScale + slurm_->priority(j);
  const PriorityWeights& wt = w_.policy.weights;
  const double wait = t - jobs.submit[j], est = std::max(sim_estimate(jobs, j), 1.0);
  return wt.credential * (jobs.priority[j] + cred_priority_[j]) + wt.queue_time * wait / 60.0 +
         wt.expansion * (wait + est) / est + wt.size * jobs.slots[j];
}

uint64_t MoabScheduler::queued() const { return waiting_->size(); }

// backfill_interval: a backfill cycle when its time comes while jobs wait, though nothing happens then.
double MoabScheduler::next_wake() const {
  // (not when nothing happened since the last: it would start nothing more, and jobs that never fit
  // would wake the loop for ever)
  double at = std::numeric_limits<double>::infinity();
  if (w_.policy.slurm_backfill() && queued() > 0 && std::isfinite(next_backfill_) && since_backfill_)
    at = next_backfill_;
  // Slurm's full main pass (sched_interval) when one since the last stopped at default_queue_depth
  if ((depth_cut_ || part_skipped_) && queued() > 0 && std::isfinite(next_full_)) at = std::min(at, next_full_);
  return at;
}

void MoabScheduler::submitted(uint32_t j, double t) {
  if (slurm_) slurm_->submitted(j, t);
  waiting_->submitted(j, t);
}

void MoabScheduler::woke(uint32_t j, double t) { waiting_->woke(j, t); }

void MoabScheduler::ended(uint32_t j, double t) {
  if (slurm_) slurm_->ended(j, t);
  book_->ended(j, t);
  // it ended before its walltime: the book may move earlier
  const bool early = w_.res.end[j] < w_.res.start[j] + sim_estimate(w_.jobs, j);
  if (w_.policy.compression && book_->booked() > 0 && early) compress_due_ = true;
  waiting_->ended(j, t);
}

void MoabScheduler::start(uint32_t j, double t, const std::vector<Allocation>& allocs, bool backfilled) {
  w_.start(j, t, allocs, backfilled);
  book_->started(j, t);
  if (slurm_) {  // a job given its nodes whole is billed for every CPU of them (and its memory, with weights)
    const SlurmMultifactor& mf = w_.policy.slurm_priority;
    const bool cpus = w_.policy.fit_consumable < w_.catalog.consumables().size();
    const bool whole = j < mf.whole_node.size() && mf.whole_node[j] != 0 && cpus;
    const bool weighed = whole && j < mf.whole_node_billing.size() && mf.whole_node_billing[j].given;
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    const size_t mem = mf.mem_consumable < w_.catalog.consumables().size() ? mf.mem_consumable : SIZE_MAX;
    slurm_->started(
        j, t, whole ? slurm_whole_node_cpus(allocs, w_.idle, w_.policy.fit_consumable) : kNaN,
        weighed ? slurm_whole_node_billable(mf.whole_node_billing[j], allocs, w_.idle, w_.policy.fit_consumable, mem)
                : kNaN);
  }
  waiting_->started(j);
}

void MoabScheduler::cycle(double t, bool last) {
  if (slurm_) slurm_->advance(t);
  if (const double iv = w_.policy.main_pass_full_interval;
      iv > 0 && (w_.policy.main_pass_depth > 0 || w_.policy.main_pass_max_starts > 0 ||
                 w_.policy.main_pass_partition_depth > 0)) {
    // Slurm's sched_interval: this cycle's main pass tests the whole queue when its time has come
    const double ph = std::fmod(w_.policy.main_pass_full_phase, iv);
    if (!std::isfinite(next_full_)) next_full_ = ph + std::ceil((t - ph) / iv) * iv;
    full_pass_ = t >= next_full_;
    if (full_pass_) next_full_ = ph + (std::floor((t - ph) / iv) + 1) * iv;
    if (full_pass_) depth_cut_ = part_skipped_ = false;  // (its wake is used, whichever pass this cycle runs)
  }
  if (w_.policy.slurm_backfill()) {
    // Slurm: backfill every bf_interval, its plan made afresh (none kept); the main pass between
    // (the phase within one interval: exact, and no sum of a huge phase and the interval loses the interval)
    const double bi = w_.policy.backfill_interval, phase = std::fmod(w_.policy.backfill_phase, bi);
    // backfill_phase NaN: as Slurm's backfill thread, bf_interval after its last run if anything happened
    // meanwhile (a main pass ran: the loop woke for it), else on its first 1 s tick after the next event (the
    // first run likewise)
    const bool since_last = std::isnan(phase);
    if (since_last && (!std::isfinite(next_backfill_) || (t > next_backfill_ && !since_backfill_)))
      next_backfill_ = std::floor(t) + 1;
    else if (!std::isfinite(next_backfill_)) next_backfill_ = phase + std::ceil((t - phase) / bi) * bi;  // the first
    strict_ = t < next_backfill_;
    since_backfill_ = strict_;  // a main pass since the last backfill: the next one may start more
    if (!strict_) {
      next_backfill_ = since_last ? t + bi : phase + (std::floor((t - phase) / bi) + 1) * bi;
      drop_reservations();
    }
    cycle_full(t);
    strict_ = false;
    return;
  }
  if (last || fast_ == FastCycle::None) cycle_full(t);  // (the run's last cycle gives every waiting job its reason)
  else if (fast_ == FastCycle::Backfill) cycle_fast(t);
  else cycle_book_fast(t);
}

// The fast cycle this run may take, decided once: none with time-dependent priorities (no fixed ranks);
// depth 0 or 1 (none, greedy, EASY) the walk to the blocker and the per-category backfill, but for Slurm's
// main pass by partition (sched/builtin: full cycles); a book (depth > 1) the book's fast cycle when every
// waiting job holds a reservation (conservative) or the book is pooled, without credential limits (a
// limit could take a job's reservation at any cycle): otherwise, with a finite depth, most waiting jobs
// hold none and every one is visited anyway, at a higher cost per job (RICC at depth 4: 84 s with full
// cycles, 241 s with fast ones).
MoabScheduler::FastCycle MoabScheduler::fast_cycle() const {
  if (!ranked_) return FastCycle::None;
  const bool by_partition = w_.policy.partitions && w_.policy.backfill == BackfillPolicy::None;
  if (w_.policy.depth() <= 1) return by_partition ? FastCycle::None : FastCycle::Backfill;
  return w_.policy.throttles.empty() && book_fast_ ? FastCycle::Book : FastCycle::None;
}

// The cycle as the seed describes it: every waiting job in priority order, each given its reason.
// O(waiting jobs) plus the placements; the reference the fast cycle is equal to.
void MoabScheduler::cycle_full(double t) {
  const auto t0 = std::chrono::steady_clock::now();
  SimResult& res = w_.res;
  const JobTable& jobs = w_.jobs;
  ++res.cycles;
  ++res.full_cycles;
  w_.cursors.sync(w_.cap);
  ready_.clear();
  auto consider = [&](uint32_t j) {
    if (jobs.hold_until[j] > t) {
      res.reason[j] = SimReason::Held;
      res.was_held[j] = 1;
      return;
    }
    if (!w_.dependencies_ended(j)) {
      res.reason[j] = SimReason::Dependency;
      return;
    }
    const uint32_t c = w_.cats.of_job[j];
    if (!w_.fits_idle[c]) {
      res.reason[j] = w_.eligible[c].eligible.count() == 0 ? SimReason::NoEligibleTasker : SimReason::TooLarge;
      return;
    }
    ready_.push_back({priority(j, t), j});
  };
  if (ranked_) {  // ranks are the priority order
    ranked_->for_each_visible(consider);
  } else {
    timed_->for_each_visible(consider);
    std::sort(ready_.begin(), ready_.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first > b.first;
      if (jobs.submit[a.second] != jobs.submit[b.second]) return jobs.submit[a.second] < jobs.submit[b.second];
      return a.second < b.second;
    });
  }
  if (std::exchange(compress_due_, false))
    for (const auto& [prio, j] : ready_) compress(j, t);  // in priority order
  const bool started = pass(t);
  if (started) waiting_->pass_done();
  w_.end_cycle(t, t0, queued());
}

// Steps 4-6 over ready_ in priority order, backfill written once for every reservation depth: in
// priority order, a job whose reservation's time has come starts on its reserved taskers; another starts
// if it fits now and delays no other job's booked reservation; one that does not start gets a reservation
// while the book has room at the depth (none: 0, greedy 0, EASY 1 made again in each pass, N, conservative
// unlimited, kept: a reservation, once made, is not moved later). Without backfill (and in Slurm's main
// pass between its backfill cycles) the first job that cannot start blocks the rest. A reservation whose
// time has come but whose taskers have no room (the farm changed: a tasker went down) is made again.
// Returns whether a job started.
bool MoabScheduler::pass(double t) {
  const BackfillPolicy backfill = strict_ ? BackfillPolicy::None : w_.policy.backfill;
  if (backfill == BackfillPolicy::None && w_.policy.partitions) return slurm_main_pass(t);
  begin_pass(backfill);
  bool blocked = false, started = false;  // blocked: a job before this one waits for capacity
  if (slurm_pass_) {  // Slurm's node-space map: one record from now to the window's end (backfill.c)
    const double r = w_.policy.backfill_resolution;
    auto step = [&](double x) { return r > 0 ? std::floor(x / r) * r : x; };
    map_begin_ = step(t);
    map_ends_.clear();
    map_ends_.insert(step(t + w_.policy.backfill_window));
    tried_of_.assign(w_.jobs.owners.size(), 0);
    tried_in_.assign(w_.policy.partitions ? w_.policy.partitions->names.size() : 0, 0);
    tried_of_in_.clear();
    tried_by_assoc_.clear();
  }
  for (const auto& [prio, j] : ready_) {
    if (map_full_ || (slurm_pass_ && exceeds_backfill_limits(j))) {  // not tried in this cycle
      w_.res.reason[j] = SimReason::Blocked;
      continue;
    }
    started = turn(j, t, blocked) || started;
  }
  return started;
}

// A pass begins under `backfill` (the policy's, or none for Slurm's main pass): its depth, whether it is
// Slurm's backfill plan (a book deeper than 1 under SimConfig::slurm_backfill), and a book whose
// reservations are not kept (EASY's) gives them up.
void MoabScheduler::begin_pass(BackfillPolicy backfill) {
  pass_backfill_ = backfill;
  pass_depth_ = backfill == BackfillPolicy::None ? 0 : w_.policy.depth();
  slurm_pass_ = pass_depth_ > 1 && w_.policy.slurm_backfill();
  map_full_ = false;
  if (!book_->kept()) drop_reservations();
  book_->begin_pass();
}

// Every booked reservation given up (Slurm's backfill plans afresh each cycle; EASY's is made again each pass).
void MoabScheduler::drop_reservations() {
  if (book_->booked() == 0) return;
  dropped_.clear();
  book_->booked_jobs(dropped_);
  for (const uint32_t j : dropped_) drop_reservation(j);
}

// Slurm's _job_exceeds_max_bf_param (backfill.c): job j is not tried in this backfill cycle when its user
// has had bf_max_job_user_part jobs tried in its partition, the partition bf_max_job_part, its association
// (with slurmdbd) bf_max_job_assoc, or the user bf_max_job_user; else it counts for each. A job of several
// partitions counts in its first.
bool MoabScheduler::exceeds_backfill_limits(uint32_t j) {
  const SimConfig& p = w_.policy;
  uint32_t q = kNone;
  if (const BlockingQueues* parts = p.partitions.get()) {
    const std::span<const uint32_t> several = parts->queues_of(j);
    q = !several.empty() ? several[0] : j < parts->queue_of_job.size() ? parts->queue_of_job[j] : kNone;
  }
  const uint32_t u = w_.jobs.owner[j];
  const uint64_t key = (uint64_t{q} << 32) | u;
  const bool in_part = q != kNone;
  if (in_part && p.backfill_max_jobs_per_user_partition > 0 &&
      tried_of_in_[key] >= p.backfill_max_jobs_per_user_partition)
    return true;
  if (in_part && p.backfill_max_jobs_per_partition > 0 && tried_in_[q] >= p.backfill_max_jobs_per_partition)
    return true;
  const bool per_assoc = p.backfill_max_jobs_per_association > 0 && p.slurm_priority.accounting;
  const uint64_t assoc = (uint64_t{w_.jobs.account[j]} << 32) | u;
  if (per_assoc && tried_by_assoc_[assoc] >= p.backfill_max_jobs_per_association) return true;
  if (p.backfill_max_jobs_per_user > 0 && tried_of_[u] >= p.backfill_max_jobs_per_user) return true;
  if (in_part && p.backfill_max_jobs_per_user_partition > 0) ++tried_of_in_[key];
  if (in_part) ++tried_in_[q];
  if (per_assoc) ++tried_by_assoc_[assoc];
  ++tried_of_[u];
  return false;
}

// One job's turn in a pass; `blocked` says whether a job before it waits, and is set if this one does.
// Returns whether it started.
bool MoabScheduler::turn(uint32_t j, double t, bool& blocked) {
  SimResult& res = w_.res;
  std::vector<Allocation>& trial = w_.trial;
  // depth 0 neither asks a reservation nor gives one up (Slurm's main pass between its backfill cycles knows
  // none of the last one's)
  const bool booking = pass_depth_ > 0;
  auto wait = [&](SimReason why) {
    res.reason[j] = why;
    blocked = true;
    if (booking && book_->has(j) && t >= book_->of(j).shadow) drop_reservation(j);  // overdue
    if (!book_->has(j) && book_->has_room(pass_depth_) && may_reserve(j, t)) {
      book_reservation(j, t);
      if (slurm_pass_ && book_->has(j)) {
        if (map_ends_.size() >= w_.policy.backfill_max_jobs) {  // Slurm: a full node-space map ends the cycle here
          drop_reservation(j);
          map_full_ = true;
          return false;
        }
        const Reservation& b = book_->of(j);  // its start and end split the map's records
        map_ends_.insert(std::max(b.shadow, map_begin_));
        if (b.end < *map_ends_.rbegin()) map_ends_.insert(b.end);
      }
    }
    return false;
  };
  auto go = [&](bool beside) {  // beside: it runs past the start of a booked reservation
    w_.cap.commit();
    if (booking) drop_reservation(j);
    if (beside) book_->started_beside(j, trial);
    start(j, t, trial, book_->backfilling(blocked));
    return true;
  };
  if (throttled(j)) {
    if (booking) drop_reservation(j);  // it could not use it
    return false;
  }
  if (blocked && pass_backfill_ == BackfillPolicy::None) {  // strict priority order
    res.reason[j] = SimReason::Blocked;
    return false;
  }
  const double end = t + sim_estimate(w_.jobs, j);
  trial.clear();
  // On its reserved taskers: when its time has come (the reservations booked after it were planned
  // around it there), or before if that delays no other reservation.
  // A pooled book answers before the placement (it holds no taskers), a book of taskers after it.
  if (booking && book_->has(j)) {
    const bool pooled = book_->pooled() != nullptr;
    const bool allowed = t >= book_->of(j).shadow || (pooled && !book_->delays(j, t, end, trial));
    if ((allowed || !pooled) && book_->take_booked(j, trial)) {
      if (allowed || !book_->delays(j, t, end, trial)) return go(false);
      w_.cap.rollback();
    }
  }
  const bool must_avoid = booking && book_->first_shadow_except(j) < end;
  // Slurm's backfill places a job only on the nodes no reservation holds during its run (backfill.c: the
  // node-space map's nodes, then the placement), so no placement is forbidden before it is made
  const bool slurm_avoid = must_avoid && slurm_pass_;
  if (must_avoid && !slurm_avoid && book_->forbids(j, t, end)) return wait(SimReason::Reservation);
  trial.clear();
  const uint32_t c = w_.cats.of_job[j];
  // (a failure there says nothing of the category's other jobs: they may end before the reservations)
  if (slurm_avoid && !w_.settled(c))
    if (const CategoryEligibility* unheld = book_->unheld(c, j, end)) {
      Placer& placer = w_.placer(c);
      placer.restrict_to(unheld);
      const bool placed = placer.try_place(j, w_.policy.allocation, trial);
      placer.restrict_to(nullptr);
      return placed ? go(true) : wait(SimReason::Reservation);
    }
  if (w_.settled(c) || !w_.placer(c).try_place(j, w_.policy.allocation, trial)) {
    w_.settle(c);  // so will its other jobs until capacity grows where they could use it
    return wait(must_avoid ? SimReason::Reservation : SimReason::NoFreeCapacity);
  }
  if (must_avoid && book_->delays(j, t, end, trial)) {
    w_.cap.rollback();
    return wait(SimReason::Reservation);
  }
  return go(must_avoid);
}

// Job j is kept back by a credential limit now: its reason says which.
bool MoabScheduler::throttled(uint32_t j) {
  const auto v = w_.creds.violation(j);
  if (!v) return false;
  SimResult& res = w_.res;
  res.reason[j] = SimReason::Throttled;
  res.detail.set(j, w_.creds.describe(v));
  res.was_throttled[j] = 1;
  return true;
}

// Slurm's bf_min_prio_reserve: in its backfill cycles a job of a lower priority (above its tier) reserves nothing.
bool MoabScheduler::may_reserve(uint32_t j, double t) const {
  if (!slurm_pass_) return true;
  // and bf_min_age_reserve: a job waiting less than that reserves nothing either
  const double young = w_.policy.backfill_min_age_reserve;
  if (young > 0 && t - w_.jobs.submit[j] < young) return false;
  const double low = w_.policy.backfill_min_priority_reserve;
  if (!(low > 0)) return true;
  const double p = priority(j, t);
  return !(p - std::floor(p / kPriorityTierScale) * kPriorityTierScale < low);
}

void MoabScheduler::book_reservation(uint32_t j, double t) {
  // Slurm's backfill cycle reserves nothing past its bf_window (ReservationBook::book plans the rest as it does)
  book_->book(j, t, slurm_pass_ ? t + w_.policy.backfill_window : std::numeric_limits<double>::infinity());
  if (book_->has(j)) waiting_->booked(j);
}

// Compression's step for job j (ReservationBook::compress): a reservation moved to now is due at once.
void MoabScheduler::compress(uint32_t j, double t) {
  if (book_->compress(j, t) && book_->of(j).shadow <= t) waiting_->due(j);
}

void MoabScheduler::drop_reservation(uint32_t j) {
  if (!book_->has(j)) return;
  book_->drop(j);
  waiting_->unbooked(j);
}

// The same starts as pass, visiting what can change them (static order, no credential limits:
// a limit could take a job's reservation at any cycle; conservative only). A ready job can start, or
// book, only if it holds no reservation (a new one, or one whose booking failed), or its reservation's time has come,
// or its category can place a job now (SimWorld::settled: a category that cannot place on any tasker cannot on its
// reserved ones either). Every other job would only wait again: it is not visited. They are visited in rank order,
// merged from those three sources; reasons are left to the last, full, cycle.
// A pooled book says more (PooledBook::dip): of a category that can place, only the jobs that would end
// before the first time fewer than their slots are free can start, or those whose own reservation starts by
// then (a fourth source, `early`); a job holding no reservation books one only while the book has room (a
// finite depth); when a visit gives units back to the book (a reservation given up or moved earlier by its
// job's start), every source starts again after it.
void MoabScheduler::cycle_book_fast(double t) {
  const auto t0 = std::chrono::steady_clock::now();
  ++w_.res.cycles;
  wq().compact();
  begin_pass(w_.policy.backfill);
  using Next = std::pair<uint32_t, uint32_t>;  // (rank, source: a category, or kUnbooked, kDue, kEarly)
  constexpr uint32_t kUnbooked = UINT32_MAX, kDue = UINT32_MAX - 1, kEarly = UINT32_MAX - 2;
  const PooledBook* pooled = book_->pooled();
  std::priority_queue<Next, std::vector<Next>, std::greater<>> next;
  std::vector<uint32_t>& early = early_;  // pooled: ranks of the ready jobs of reservations starting early
  auto push = [&](uint32_t source, size_t from) {
    size_t r = RankSet::npos;
    if (source == kUnbooked) {
      if (book_->has_room(pass_depth_)) r = ranked_->unbooked().next(from);
    } else if (source == kDue) {
      r = ranked_->due().next(from);
    } else if (source == kEarly) {
      const auto it = std::lower_bound(early.begin(), early.end(), from);
      if (it != early.end()) r = *it;
    } else if (!w_.settled(source)) {
      uint32_t j = WaitQueue::kNoJob;
      if (pooled) {
        const double dip = pooled->dip(t, w_.cats.slots[source]);
        j = wq().first_in(source, from, [&](double e) { return !(dip < t + e); });
      } else {
        j = wq().first_in(source, from, [](double) { return true; });
      }
      if (j != WaitQueue::kNoJob) r = wq().rank(j);
    }
    if (r != RankSet::npos) next.push({static_cast<uint32_t>(r), source});
  };
  auto push_all = [&](size_t from) {
    next = {};
    push(kUnbooked, from);
    push(kDue, from);
    if (pooled) {
      pooled->early_starts(t, early);
      for (uint32_t& x : early) x = static_cast<uint32_t>(wq().rank(x));  // (all ready: they hold reservations)
      std::sort(early.begin(), early.end());
      push(kEarly, from);
    }
    for (const uint32_t c : wq().categories())
      if (wq().ready_in(c) > 0) push(c, from);
  };
  if (std::exchange(compress_due_, false)) {  // the booked jobs in priority order: rank order
    std::vector<uint32_t>& booked = compress_order_;
    booked.clear();
    book_->booked_jobs(booked);
    for (uint32_t& x : booked) x = static_cast<uint32_t>(wq().rank(x));
    std::sort(booked.begin(), booked.end());
    for (const uint32_t r : booked) compress(wq().job(r), t);
  }
  push_all(0);
  size_t last = RankSet::npos;
  while (!next.empty()) {
    const auto [r, source] = next.top();
    next.pop();
    bool gave_back = false;
    if (r != last) {  // a job may come from more than one source: its turn once
      last = r;
      const uint32_t j = wq().job(r);
      if (wq().ready(j)) {
        const uint32_t first = wq().first(0);  // a job before it waits (every one not visited does)
        bool blocked = first != WaitQueue::kNoJob && wq().rank(first) < r;
        const uint64_t given = pooled != nullptr ? pooled->given_back() : 0;
        turn(j, t, blocked);
        gave_back = pooled != nullptr && pooled->given_back() != given;
      }
    }
    if (gave_back) push_all(r + 1);
    else push(source, r + 1);
  }
  w_.end_cycle(t, t0, queued());
}

// The same starts as cycle_full, visiting what can change them (static order only). Ready jobs are
// taken in rank order until the first that does not fit (the blocker); with EASY, each later start is
// the lowest-ranked ready job that would start (backfill.cpp). Throttled jobs are parked on the way.
// Reasons are left to the last, full, cycle.
void MoabScheduler::cycle_fast(double t) {
  const auto t0 = std::chrono::steady_clock::now();
  ++w_.res.cycles;
  wq().compact();
  std::vector<Allocation>& trial = w_.trial;
  uint32_t blocker = WaitQueue::kNoJob;
  for (uint32_t j = ranked_->next_ready(0); j != WaitQueue::kNoJob; j = ranked_->next_ready(wq().rank(j) + 1)) {
    if (ranked_->throttle(j)) continue;
    const uint32_t c = w_.cats.of_job[j];
    trial.clear();
    if (w_.settled(c) || !w_.placer(c).try_place(j, w_.policy.allocation, trial)) {
      w_.settle(c);
      blocker = j;
      break;
    }
    w_.cap.commit();
    start(j, t, trial, false);
  }
  if (blocker != WaitQueue::kNoJob && w_.policy.backfill != BackfillPolicy::None) backfill(blocker, t);
  w_.end_cycle(t, t0, queued());
}

}  // namespace colmatch
