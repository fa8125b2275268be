// Moab's backfill pass (seed 001, step 6) for the static-order queue, EASY and greedy: after the blocker
// (the first ready job that does not fit) each later start is the lowest-ranked ready job that would
// start now without delaying the blocker's reservation (the book's at depth 1, EASY's:
// engine/schedule/easy_reservation.hpp; greedy, depth 0, makes none), found per job category instead of by a
// walk over every waiting job:
//   - a category whose placement failed stays failed until a tasker that grew could take one of its jobs
//     (SimWorld::settled);
//   - categories are tried in the order of a rank bound (their first ready job), until the bound passes
//     the best candidate found;
//   - within a category the candidate is its first ready job or, when that one would have to avoid the
//     reservation and cannot, its first ready job that ends before the reservation (WaitQueue's min-tree
//     over estimates): every job of a category gets the same placement now.
// The same starts as MoabScheduler::cycle_full's walk (tests/engine/schedule/test_simulation.cpp compares
// them on random traces).
#include <algorithm>
#include <limits>

#include "engine/schedule/moab.hpp"
#include "kernels/dassert.hpp"

namespace colmatch {

// The reservation of the blocker, booked when a backfill candidate first needs it (when some job of a
// category can be placed): a cycle where no category can place a job needs none. Greedy backfill (depth
// 0) books none: every candidate "ends before it".
struct MoabScheduler::LazyReservation {
  ReservationBook& book;
  uint32_t blocker;
  double t;
  size_t depth;
  bool made = false;
  double shadow = std::numeric_limits<double>::infinity();  // +inf: none booked
  void get() {
    if (made) return;
    made = true;
    if (!book.has_room(depth)) return;
    const Reservation& r = book.book(blocker, t);
    if (r.active) shadow = r.shadow;
  }
};

// A category's candidate is kept within one backfill pass while a start leaves what it saw alone: the
// jobs it looked at (a: its first ready job from `from`; b: the first that ends before the reservation)
// are still where they were and unthrottled, no shared pool is involved, and the start took capacity
// from none of the taskers that could change its placement: its eligible taskers, or, where placements
// take taskers in a fixed order (greatest_power, first_available, $fill_up), only the taskers of the
// placement it found (a tasker skipped before had no room and has less now). candidate() would then see
// the same jobs and the same placement and give the same answer.

// Placements of category c take taskers in a fixed order, whatever the capacity elsewhere.
bool MoabScheduler::in_order(uint32_t c) const {
  const AllocationPolicy a = w_.policy.allocation;
  return spreads(w_.cats.rule[c]) || a == AllocationPolicy::GreatestPower || a == AllocationPolicy::FirstAvailable;
}

// The start of a job on `allocs` may change what candidate() says for the memo of category c.
bool MoabScheduler::start_touches(const CandidateMemo& m, uint32_t c, const std::vector<Allocation>& allocs) const {
  if (!m.placed.empty() && in_order(c)) {
    for (const Allocation& a : allocs)
      if (std::find(m.placed.begin(), m.placed.end(), a.tasker) != m.placed.end()) return true;
    return false;
  }
  for (const Allocation& a : allocs)
    if (w_.eligible[c].eligible.contains(a.tasker)) return true;
  return false;
}

bool MoabScheduler::memo_holds(const CandidateMemo& m, size_t from) const {
  for (uint32_t x : {m.a, m.b})
    if (x != WaitQueue::kNoJob && (wq().rank(x) < from || w_.creds.violation(x))) return false;
  return true;
}

void MoabScheduler::backfill(uint32_t blocker, double t) {
  begin_pass(w_.policy.backfill);
  LazyReservation resv{*book_, blocker, t, pass_depth_};
  size_t from = wq().rank(blocker) + 1;
  std::vector<Allocation>& trial = w_.trial;
  const uint64_t pass = ++backfill_pass_;
  const auto& cats = wq().categories();  // grows only when a parked job is surfaced
  std::vector<std::pair<size_t, uint32_t>>& bounds = bounds_;
  while (true) {
    // Each category's candidate ranks no better than its first ready job: categories are tried in
    // the order of that bound (or of their kept candidate), until the bound passes the best found.
    bounds.clear();
    for (const uint32_t c : cats) {
      if (wq().ready_in(c) == 0 || w_.settled(c)) continue;
      const CandidateMemo& m = memo_[c];
      if (m.pass == pass && memo_holds(m, from)) {
        if (m.job != WaitQueue::kNoJob) bounds.emplace_back(wq().rank(m.job), c);
        continue;
      }
      const uint32_t a = first_unthrottled(c, from, [](double) { return true; });
      if (a != WaitQueue::kNoJob) bounds.emplace_back(wq().rank(a), c);
    }
    std::sort(bounds.begin(), bounds.end());
    uint32_t best = WaitQueue::kNoJob;
    // The bounds in order, merged with the active throttle streams' heads: a head ranked before the
    // best found is surfaced (it is a ready job of its category), and its category asked again.
    for (size_t i = 0;;) {
      const uint32_t h = ranked_->next_parked_head();
      const bool head = h != ThrottleStreams::kNoHead && (i == bounds.size() || h < bounds[i].first);
      if (!head && i == bounds.size()) break;
      const size_t bound = head ? h : bounds[i].first;
      if (best != WaitQueue::kNoJob && bound > wq().rank(best)) break;
      uint32_t c = 0;
      if (head) {
        c = w_.cats.of_job[ranked_->surface_head()];
        memo_[c].pass = 0;
        if (w_.settled(c)) continue;
      } else {
        c = bounds[i++].second;
      }
      CandidateMemo& m = memo_[c];  // not settled: nothing has grown or been placed since the bounds
      if (m.pass != pass || !memo_holds(m, from)) {
        m.pass = pass;
        m.job = candidate(c, from, t, resv, m);
      }
      const uint32_t j = m.job;
      if (j != WaitQueue::kNoJob && (best == WaitQueue::kNoJob || wq().rank(j) < wq().rank(best))) best = j;
    }
    if (best == WaitQueue::kNoJob) return;
    trial.clear();
    [[maybe_unused]] const bool placed = w_.placer(w_.cats.of_job[best]).try_place(best, w_.policy.allocation, trial);
    COLMATCH_DASSERT(placed, "a backfill candidate places as it did when chosen");
    const double end = t + sim_estimate(w_.jobs, best);
    COLMATCH_DASSERT(!book_->delays(best, t, end, trial), "a backfill candidate leaves the reservation alone");
    w_.cap.commit();
    // one that runs past the reservation's time takes capacity the reserved job counted on then: the
    // candidates that were chosen because it still fit beside them must be asked again
    const bool past = !(end <= resv.shadow);  // (greedy books none: +inf)
    if (past) book_->started_beside(best, trial);
    start(best, t, trial, book_->backfilling(true));  // greedy: started ahead of the blocker
    from = wq().rank(best) + 1;
    const uint32_t cb = w_.cats.of_job[best];
    memo_[cb].pass = 0;
    const bool shared = !w_.cap_placer.queue_only(cb);
    for (const uint32_t c : cats) {
      CandidateMemo& m = memo_[c];
      if (m.pass == pass &&
          ((past && m.beside) || shared || !w_.cap_placer.queue_only(c) || start_touches(m, c, trial)))
        m.pass = 0;
    }
  }
}

// The first ready job of category c ranked >= from whose walltime estimate passes `test` and that no
// credential limit keeps from starting (the throttled ones met on the way are parked), or kNoJob.
template <class Test>
uint32_t MoabScheduler::first_unthrottled(uint32_t c, size_t from, Test&& test) {
  for (size_t at = from;;) {
    const uint32_t j = wq().first_in(c, at, test);
    if (j == WaitQueue::kNoJob || !ranked_->throttle(j)) return j;
    at = wq().rank(j) + 1;
  }
}

// The ready job of category c ranked >= from that would start now, or kNoJob. Its first ready job a
// starts if it fits and ends before the reservation, or if the reserved job still fits beside its
// placement at the reservation's time. If a fits but the reserved job would not fit beside it, no job of
// c that runs past the reservation's time can start either (they all get the same placement now), and
// the candidate is the first that ends before it (the same placement fits it). a is placed before the
// reservation is made (the first category to get here), so that a cycle where nothing fits makes
// none. Records in `memo` the jobs it looked at and the placement it found (for backfill's memo).
uint32_t MoabScheduler::candidate(uint32_t c, size_t from, double t, LazyReservation& resv, CandidateMemo& memo) {
  memo.a = memo.b = WaitQueue::kNoJob;
  memo.placed.clear();
  memo.beside = false;
  auto fits_now = [&](uint32_t j) {
    if (const std::optional<bool> fits = book_->fits_by_count(j)) {  // a pooled farm: the count says
      memo.placed.clear();                                           // (no placement: any start may change the answer)
      if (!*fits) w_.settle(c);
      return *fits;
    }
    if (!w_.fits_now(j, c)) return false;
    memo.placed.clear();
    for (const Allocation& x : w_.trial) memo.placed.push_back(x.tasker);
    return true;
  };
  const uint32_t a = first_unthrottled(c, from, [](double) { return true; });
  memo.a = a;
  if (a == WaitQueue::kNoJob) return a;
  bool fits = false;
  if (!resv.made) {
    if (!fits_now(a)) return WaitQueue::kNoJob;
    fits = true;
  }
  resv.get();
  const double shadow = resv.shadow;
  auto ends_before = [&](double e) { return t + e <= shadow; };
  if (ends_before(sim_estimate(w_.jobs, a))) return fits || fits_now(a) ? a : WaitQueue::kNoJob;
  if (!fits && !fits_now(a)) return WaitQueue::kNoJob;
  fits = true;
  // (a runs past its time: the reserved job still fits beside it)
  if (!book_->delays(a, t, t + sim_estimate(w_.jobs, a), w_.trial)) {
    memo.beside = true;
    return a;
  }
  const uint32_t b = first_unthrottled(c, from, ends_before);
  memo.b = b;
  if (b == WaitQueue::kNoJob) return b;
  return fits || fits_now(b) ? b : WaitQueue::kNoJob;
}

}  // namespace colmatch
