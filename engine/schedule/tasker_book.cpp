#include "engine/schedule/tasker_book.hpp"

#include <algorithm>
#include <limits>
#include <queue>

#include "engine/schedule/world.hpp"

namespace colmatch {

TaskerBook::TaskerBook(SimWorld& w)
    : ReservationBook(w), master_memo_(w.cats.size(), {~uint64_t{0}, 0}), holds_(w.taskers.size()) {}

void TaskerBook::held(const Reservation& r) {
  for (const Allocation& a : r.allocs) {
    auto& h = holds_[a.tasker];
    h.insert(std::upper_bound(h.begin(), h.end(), std::make_pair(r.shadow, r.job)), {r.shadow, r.job});
  }
}

void TaskerBook::released(const Reservation& r) {
  for (const Allocation& a : r.allocs) std::erase(holds_[a.tasker], std::make_pair(r.shadow, r.job));
}

bool TaskerBook::take_booked(uint32_t j, std::vector<Allocation>& out) {
  const Reservation& r = of(j);
  Capacity& cap = w_.cap;
  cap.begin();
  bool ok = true;
  w_.for_each_charge(r.category, r.allocs.data(), r.allocs.size(), [&](size_t k, uint32_t x, double amount) {
    if (!ok) return;
    ok = !cap.down(x) && cap.available(k, x) >= amount;
    if (ok) cap.take(k, x, amount);
  });
  for (const Allocation& a : r.allocs) ok = ok && !cap.down(a.tasker);  // (one that charges nothing)
  if (!ok) {
    cap.rollback();
    return false;
  }
  out = r.allocs;
  if (!w_.chosen.empty()) w_.chosen[j] = r.category;  // the solution it reserved, should it choose
  return true;
}

// Tasker x is held by a reservation of a job other than j starting before `end`.
bool TaskerBook::held_by_other(uint32_t x, uint32_t j, double end) const noexcept {
  for (const auto& [shadow, job] : holds_[x]) {
    if (!(shadow < end)) return false;
    if (job != j) return true;
  }
  return false;
}

// Category c's eligible taskers that have nothing free now of some consumable its jobs charge (or are
// down), with its soft tiers cut alike: a booked reservation placed there keeps its hands off what is free
// now, which later jobs may backfill (issue 24: "choose the reserved taskers so that they leave the most
// of what is free now"). nullptr for a category that chooses among solutions (each has its own taskers),
// when every eligible tasker has something free now, or when none has.
const CategoryEligibility* TaskerBook::busy_now(uint32_t c) {
  if (w_.cats.chooses(c)) return nullptr;
  const CategoryEligibility& e = w_.eligible[c];
  const std::vector<Charge>& ch = w_.cap_placer.charges(c);
  busy_.eligible = e.eligible.clone();
  busy_.tiers.clear();
  for (const kernels::TaskerSet& tier : e.tiers) busy_.tiers.push_back(tier.clone());
  bool any_free = false;
  for (size_t t = e.eligible.next(0); t < e.eligible.universe(); t = e.eligible.next(t + 1)) {
    const auto x = static_cast<uint32_t>(t);
    bool free_now = !w_.cap.down(x);
    for (const Charge& k : ch) free_now = free_now && (!(k.amount > 0) || w_.cap.available(k.k, x) > 0);
    if (!free_now) continue;
    any_free = true;
    busy_.eligible.remove(x);
    for (kernels::TaskerSet& tier : busy_.tiers) tier.remove(x);
  }
  return any_free && busy_.eligible.count() > 0 ? &busy_ : nullptr;
}

// Plans job j with `placer`, first on the `busy` taskers only (when not nullptr), then on all of its
// eligible ones; a plan counts when `ok` (it leaves the pending reservations alone) holds of it.
template <class Ok>
bool TaskerBook::plan_leaving_free(Placer& placer, uint32_t j, const CategoryEligibility* busy,
                                   std::vector<Allocation>& trial, Ok&& ok) {
  if (busy != nullptr) {
    trial.clear();
    placer.restrict_to(busy);
    const bool placed = placer.plan(j, w_.policy.allocation, trial);
    placer.restrict_to(nullptr);
    if (placed && ok()) return true;
  }
  trial.clear();
  return placer.plan(j, w_.policy.allocation, trial) && ok();
}

// The walk of EASY's reservation (engine/schedule/easy_reservation.cpp) with the booked reservations' ends
// among its steps: the running jobs end one at a time in order of their expected end, and the booked
// reservations' ends pass, all in time order (at one time, the running jobs' ends first); capacity comes
// back only at these steps. At each step T the
// job is tried as a start at T would be, with the farm as the book predicts it then: a booked
// reservation that has started by T (shadow <= T < end) is a running job, its charges taken; one that
// starts within the job's run (T < shadow < T + estimate) is still pending, and the job's placement must
// leave it alone (its taskers untouched, no shared pool charged), as delays() asks of a start now.
// The book at a step is kept up to date step by step on the walk's capacity; under utilized or combined
// availability, where a release sets a tasker's free amount anew from the charges held there (which
// would drop the booked ones taken), each step's capacity is made again from the walk's (O(booked) a step).
// Long (about 140 lines): one walk over merged steps (running jobs' ends, booked reservations' ends) whose
// book state (the pending holds per tasker, the probe capacity) each step updates for the next; split, the
// pieces would pass that state around step by step.
void TaskerBook::plan(uint32_t j, double /*t*/, Reservation& r) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  r.active = false;
  const bool rebuilt = w_.availability.active();
  const CategoryEligibility* busy = busy_now(w_.cats.of_job[j]);
  const double est = sim_estimate(w_.jobs, j);
  const bool shared = !w_.cap_placer.queue_only(w_.cats.of_job[j]);
  std::vector<Allocation> trial;
  // Slurm's backfill (a category of its own taskers, charging no shared pool): the nodes of every
  // reservation overlapping the job's run are off limits whether it has started or not
  const bool slurm_nodes = w_.policy.slurm_backfill() && !shared && !w_.cats.chooses(w_.cats.of_job[j]);
  auto plan_off_holds = [&](Placer& placer, double T) {
    const CategoryEligibility* free = without_holds(w_.cats.of_job[j], T, T + est, UINT32_MAX);
    trial.clear();
    if (free != nullptr) placer.restrict_to(free);
    const bool placed = placer.plan(j, w_.policy.allocation, trial);
    placer.restrict_to(nullptr);
    return placed;
  };
  if (!future_) {  // (made when a reservation is first planned on taskers)
    future_.emplace(w_);
    probe_.emplace(w_);
  }
  future_->cap = w_.cap;
  if (rebuilt) {
    w_.availability.begin_walk();
    pending_.resize(w_.taskers.size(), 0);
  } else {
    pending_count_.resize(w_.taskers.size(), 0);
  }
  auto running = w_.running.begin();
  auto next_end = ends_.begin();              // the steps the booked reservations' ends make
  auto started = shadows_.begin();            // the first booked reservation not started by the step's time
  auto window = shadows_.begin();             // the first not starting within the job's run from it
  size_t pending = 0;                         // booked reservations starting within the job's run (window - started)
  using Taken = std::pair<double, uint32_t>;  // (end, job): booked reservations running at the step
  std::priority_queue<Taken, std::vector<Taken>, std::greater<>> taken;
  // A step that changes nothing on the job's eligible taskers (capacity, or a pending reservation's
  // hold) cannot turn a failed placement into one that fits: only the first step after a change
  // places it (a category charging a shared pool, or a capacity made again: every step).
  const kernels::TaskerSet& elig = w_.eligible[w_.cats.of_job[j]].eligible;
  bool changed = true;
  auto touches = [&](const Allocation* allocs, uint32_t n) {
    for (uint32_t i = 0; i < n && !changed; ++i) changed = elig.contains(allocs[i].tasker);
  };
  auto charges_of = [&](uint32_t b, double sign) {
    const Reservation& x = of(b);
    touches(x.allocs.data(), static_cast<uint32_t>(x.allocs.size()));
    w_.for_each_charge(x.category, x.allocs.data(), x.allocs.size(),
                       [&](size_t k, uint32_t t, double amount) { future_->cap.take(k, t, sign * amount); });
  };  // (take with -amount gives a take back exactly; release would pay a tasker's debt first)
  auto mark = [&](uint32_t b, int d) {
    touches(of(b).allocs.data(), static_cast<uint32_t>(of(b).allocs.size()));
    for (const Allocation& a : of(b).allocs) pending_count_[a.tasker] += d;
  };
  // The book at step T on a copy of the walk's capacity (probe_): the reservations running then take
  // their charges, those starting within the job's run hold their taskers (pending_). Returns whether any does.
  auto book_on_copy = [&](double T) {
    probe_->cap = future_->cap;
    bool any = false;
    for (const Reservation& b : book_) {
      if (b.job == kNoSlot || !(b.end > T)) continue;  // a free slot; ended by then
      if (b.shadow <= T) {                             // running then
        w_.for_each_charge(b.category, b.allocs.data(), b.allocs.size(),
                           [&](size_t k, uint32_t x, double amount) { probe_->cap.take(k, x, amount); });
      } else if (b.shadow < T + est) {  // starts while the job would run: left alone
        any = true;
        for (const Allocation& a : b.allocs) pending_[a.tasker] = 1;
      }
    }
    return any;
  };
  while (true) {
    const double at_running = running != w_.running.end() ? running->first : kInf;
    const double at_book = next_end != ends_.end() ? next_end->first : kInf;
    double T = 0;
    if (running != w_.running.end() && at_running <= at_book) {
      T = at_running;
      for (; running != w_.running.end() && running->first == T; ++running) {  // every end at T, then a try
        const uint32_t rj = running->second;
        release_running(w_, rj, future_->cap, vacated_);
        touches(w_.res.allocations.data() + w_.res.alloc_first[rj], w_.res.alloc_count[rj]);
      }
    } else if (next_end != ends_.end()) {
      T = at_book;
      while (next_end != ends_.end() && next_end->first == T) ++next_end;  // one try per time
    } else {
      break;  // fits at none of them
    }
    bool fits = false;
    if (rebuilt) {
      const bool any_pending = book_on_copy(T);
      auto leaves_pending = [&] {
        for (const Allocation& a : trial)
          if (pending_[a.tasker]) return false;
        return true;
      };
      fits = slurm_nodes
                 ? plan_off_holds(probe_->placer, T)
                 : !(any_pending && shared) && plan_leaving_free(probe_->placer, j, busy, trial, leaves_pending);
      if (any_pending)
        for (const Reservation& b : book_)
          for (const Allocation& a : b.allocs) pending_[a.tasker] = 0;  // (a free slot has none)
    } else {
      // the book as it stands at T: reservations starting within [T, T + est) are pending (left alone),
      // those started by T and not ended run (their charges taken), those ended are gone
      for (; window != shadows_.end() && window->first < T + est; ++window) {
        mark(window->second, +1);
        ++pending;
      }
      for (; started != shadows_.end() && started->first <= T; ++started) {
        if (started == window) {  // (an estimate of 0: it never was within the run)
          ++window;
        } else {
          mark(started->second, -1);
          --pending;
        }
        if (of(started->second).end > T) {
          charges_of(started->second, +1);
          taken.push({of(started->second).end, started->second});
        }
      }
      while (!taken.empty() && taken.top().first <= T) {
        charges_of(taken.top().second, -1);
        taken.pop();
      }
      if (!changed && !shared) continue;
      changed = false;
      auto leaves_pending = [&] {
        for (const Allocation& a : trial)
          if (pending_count_[a.tasker] != 0) return false;
        return true;
      };
      fits = slurm_nodes
                 ? plan_off_holds(future_->placer, T)
                 : !(pending > 0 && shared) && plan_leaving_free(future_->placer, j, busy, trial, leaves_pending);
    }
    if (fits) {
      made(r, j, T, est, trial);
      break;
    }
  }
  for (; started != window; ++started) mark(started->second, -1);  // pending_count_ back to 0
}

bool TaskerBook::delays_booked(uint32_t j, double /*t*/, double end, const std::vector<Allocation>& allocs) {
  if (!w_.cap_placer.queue_only(w_.cats.of_job[j])) return true;
  for (const Allocation& a : allocs)
    if (held_by_other(a.tasker, j, end)) return true;
  return false;
}

// It charges a shared pool, or it is a $fill_up job whose master such a reservation holds.
bool TaskerBook::forbids_booked(uint32_t j, double /*t*/, double end) {
  const uint32_t c = w_.cats.of_job[j];
  if (!w_.cap_placer.queue_only(c)) return true;
  // (a Grid Engine host rule's master is where its first host's slots end: its placement says)
  if (!spreads(w_.cats.rule[c]) || by_host(w_.cats.rule[c])) return false;
  auto& [gen, master] = master_memo_[c];
  if (gen != w_.state_version) {
    gen = w_.state_version;
    master = w_.placer(c).fill_up_master(j);
  }
  return master >= w_.taskers.size() || held_by_other(static_cast<uint32_t>(master), j, end);
}

const CategoryEligibility* TaskerBook::unheld(uint32_t c, uint32_t j, double end) {
  if (w_.cats.chooses(c) || !w_.cap_placer.queue_only(c)) return nullptr;
  return without_holds(c, -std::numeric_limits<double>::infinity(), end, j);
}

// Category c's eligibility less the taskers of the booked reservations (other than job `except`'s) that
// start before `to` and end after `from`, or nullptr when none of its eligible taskers is among them.
const CategoryEligibility* TaskerBook::without_holds(uint32_t c, double from, double to, uint32_t except) {
  const CategoryEligibility& e = w_.eligible[c];
  bool any = false;
  for (const auto& [shadow, job] : shadows_) {
    if (!(shadow < to)) break;
    if (job == except || !(of(job).end > from)) continue;
    for (const Allocation& a : of(job).allocs) {
      if (!e.eligible.contains(a.tasker)) continue;
      if (!any) {
        any = true;
        unheld_.eligible = e.eligible.clone();
        unheld_.tiers.clear();
        for (const kernels::TaskerSet& tier : e.tiers) unheld_.tiers.push_back(tier.clone());
      }
      unheld_.eligible.remove(a.tasker);
      for (kernels::TaskerSet& tier : unheld_.tiers) tier.remove(a.tasker);
    }
  }
  return any ? &unheld_ : nullptr;
}

}  // namespace colmatch
