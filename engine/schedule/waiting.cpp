#include "engine/schedule/waiting.hpp"

#include <cmath>

#include "engine/schedule/book.hpp"

namespace colmatch {

// ---- RankedQueue ----

RankedQueue::RankedQueue(QueueView w, const ReservationBook& book, bool book_fast, std::vector<uint32_t> order,
                         PerJob<double> estimate)
    : w_(w),
      book_(book),
      book_fast_(book_fast),
      wq_(std::move(order), w.category, w.categories, std::move(estimate)),
      queued_(w.arrivals),
      visible_(w.arrivals),
      unbooked_(w.arrivals),
      due_(w.arrivals),
      streams_(w.creds, w.arrivals),
      parked_(w.jobs.size(), Parked::No) {}

void RankedQueue::submitted(uint32_t j, double t) {
  queued_.insert(wq_.rank(j));
  visible_.insert(wq_.rank(j));
  classify(j, t);
}

void RankedQueue::woke(uint32_t j, double t) {
  if (parked_[j] == Parked::Held) classify(j, t);
  // a reservation's time (ReservationBook::book asks for a cycle then): its job's turn in the fast cycle
  if (book_.has(j) && book_.of(j).shadow <= t) due(j);
}

void RankedQueue::ended(uint32_t j, double t) {
  for (size_t kind = 0; kind < kCredentialKinds; ++kind) streams_.activate(kind, w_.creds.cred(kind, j));  // room
  auto waiting = dependents_.extract(j);  // the jobs parked for j
  if (waiting.empty()) return;
  for (const uint32_t x : waiting.mapped())
    if (parked_[x] == Parked::Dependency) classify(x, t);
}

void RankedQueue::started(uint32_t j) {
  const uint32_t r = wq_.rank(j);
  queued_.erase(r);
  visible_.erase(r);
  wq_.remove(j);
  parked_[j] = Parked::No;
  streams_.forget(r);  // a full cycle may start a parked job of an active stream
  unbooked_.erase(r);
  due_.erase(r);
}

// Puts a queued job where its state says (held, waiting for a dependency, ready). A hold's end is an
// event (a cycle runs then) whatever the job's state after it.
void RankedQueue::classify(uint32_t j, double t) {
  const double hold = w_.jobs.hold_until[j];
  if (hold > t) {
    parked_[j] = Parked::Held;
    w_.res.was_held[j] = 1;
    if (std::isfinite(hold)) w_.wakes.emplace(hold, j);
    return;
  }
  parked_[j] = Parked::No;
  if (!w_.fits_idle[w_.category[j]]) return;  // never ready: its reason comes from the full cycle
  for (uint32_t d : w_.jobs.depends[j])
    if (!w_.ended[d]) {
      parked_[j] = Parked::Dependency;
      dependents_[d].push_back(j);
      // its reason until that job ends, which a full cycle would give it each time: full cycles skip it
      w_.res.reason[j] = SimReason::Dependency;
      visible_.erase(wq_.rank(j));
      return;
    }
  visible_.insert(wq_.rank(j));
  wq_.add(j);
  if (book_fast_ && !book_.has(j)) unbooked_.insert(wq_.rank(j));
}

bool RankedQueue::throttle(uint32_t j) {
  const auto v = w_.creds.violation(j);
  if (!v) return false;
  w_.res.was_throttled[j] = 1;
  wq_.remove(j);
  streams_.park(wq_.rank(j), v);
  return true;
}

uint32_t RankedQueue::surface_head() {
  const uint32_t j = wq_.job(streams_.surface_head());
  wq_.add(j);
  ++w_.res.unparked;
  return j;
}

uint32_t RankedQueue::next_ready(size_t r) {
  while (true) {
    const uint32_t j = wq_.first(r);
    const uint32_t h = streams_.next_head();
    if (h == ThrottleStreams::kNoHead || (j != WaitQueue::kNoJob && wq_.rank(j) < h)) return j;
    surface_head();
  }
}

void RankedQueue::unbooked(uint32_t j) {
  due_.erase(wq_.rank(j));
  if (wq_.ready(j) && book_fast_) unbooked_.insert(wq_.rank(j));
}

// ---- TimedQueue ----

void TimedQueue::submitted(uint32_t j, double t) {
  const double hold = w_.jobs.hold_until[j];
  if (hold > t && std::isfinite(hold)) w_.wakes.emplace(hold, j);
  if (hold > t) queued_.push_back(j);  // held: each cycle says so (and marks it held)
  else queue_or_park(j);
}

void TimedQueue::ended(uint32_t j, double) {
  auto waiting = dependents_.extract(j);  // the jobs parked for j
  if (waiting.empty()) return;
  for (const uint32_t x : waiting.mapped()) {
    --dependency_parked_;
    queue_or_park(x);  // waits again if another of its dependencies has not ended
  }
}

// A job waiting for a dependency, and not held, is parked (reason Dependency, which a full cycle would
// give it each time) until that job ends, instead of being visited by every cycle.
void TimedQueue::queue_or_park(uint32_t j) {
  for (uint32_t d : w_.jobs.depends[j])
    if (!w_.ended[d]) {
      w_.res.reason[j] = SimReason::Dependency;
      dependents_[d].push_back(j);
      ++dependency_parked_;
      return;
    }
  queued_.push_back(j);
}

void TimedQueue::pass_done() {
  std::erase_if(queued_, [&](uint32_t j) { return w_.res.reason[j] == SimReason::None; });
}

}  // namespace colmatch
