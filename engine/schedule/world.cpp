#include "engine/schedule/world.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/batch/matcher.hpp"
#include "engine/match/explain.hpp"

namespace colmatch {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

SimWorld::SimWorld(const Catalog& catalog_, const TaskerTable& taskers_, const JobTable& jobs_,
                   const SimConfig& policy_, const kernels::KernelTable& k_, const FarmEvents& farm_)
    : catalog(catalog_),
      taskers(taskers_),
      jobs(jobs_),
      policy(policy_),
      k(k_),
      farm(farm_),
      cats(categorize(catalog_, jobs_)),
      chosen(jobs_.choices.empty() ? 0 : jobs_.size(), kNone),
      eligible(cats.size()),
      evaluated(cats.size(), 0),
      idle_tried(cats.size(), 0),
      fits_idle(cats.size(), 0),
      cursors(cats.size()),
      cap(Capacity::configured(catalog_, taskers_)),
      cap_placer(taskers_, jobs_, cats, eligible, cap, &cursors),
      idle(Capacity::configured(catalog_, taskers_)),
      idle_placer(taskers_, jobs_, cats, eligible, idle, nullptr),
      creds(jobs_, policy_.throttles),
      ended(jobs_.size(), 0),
      used(catalog_.consumables().size(), 0.0),
      settled_at_(cats.size(), ~uint64_t{0}),
      settled_since_(cats.size(), 0),
      revived_by_(cats.size(), kNone),
      cursor_seen_(cats.size(), 0),
      cursor_epoch_(cats.size(), 0) {
  cap_placer.record_choices(&chosen);
  idle_placer.record_choices(&chosen);
  cap_placer.fit_by(policy_.fit_consumable, policy_.fit_limit);
  idle_placer.fit_by(policy_.fit_consumable, policy_.fit_limit);
  check_farm_events();
  check_interval();
  for (uint32_t t = 0; t < farm.down_at_start.size(); ++t)
    if (farm.down_at_start[t]) cap.set_down(t, true);
  availability.init(policy, catalog, taskers, jobs, farm, cap, idle);
  const size_t n = jobs.size();
  res.start.assign(n, kNaN);
  res.end.assign(n, kNaN);
  res.alloc_first.assign(n, 0);
  res.alloc_count.assign(n, 0);
  res.reason.assign(n, SimReason::NotSubmitted);
  res.detail.assign(n);
  res.backfilled.assign(n, 0);
  res.reserved_at.assign(n, kNaN);
  res.was_held.assign(n, 0);
  res.was_throttled.assign(n, 0);
  res.held_seconds.assign(catalog.consumables().size(), 0.0);
  res.timeline_width = timeline_consumables(catalog.consumables().size());
  for (uint32_t j = 0; j < n; ++j) {
    if (jobs.rejected(j)) {
      res.reason[j] = SimReason::Rejected;
      continue;
    }
    arrivals.push_back(j);
  }
  std::stable_sort(arrivals.begin(), arrivals.end(),
                   [&](uint32_t a, uint32_t b) { return jobs.submit[a] < jobs.submit[b]; });
}

double SimWorld::next_event(size_t next) const {
  double t = std::numeric_limits<double>::infinity();
  if (next < arrivals.size()) t = std::min(t, jobs.submit[arrivals[next]]);
  if (!ends.empty()) t = std::min(t, ends.top().first);
  if (!wakes.empty()) t = std::min(t, wakes.top().first);
  if (next_farm_ < farm.events.size()) t = std::min(t, farm.events[next_farm_].time);
  return t;
}

// An interval the clock cannot step by is refused before the run: one below the spacing of doubles at
// the latest time the run can reach (1e-12 s at 1.7e9 s: the next cycle would round back to this one),
// or one that takes the clock past the largest double. PolicyError, so the policy's file is named.
void SimWorld::check_interval() const {
  const double i = policy.interval;
  if (!(i > 0)) return;
  double horizon = 0;  // the latest submit, end, hold or farm event
  for (uint32_t j = 0; j < jobs.size(); ++j) {
    for (const double x : {jobs.submit[j], jobs.submit[j] + sim_estimate(jobs, j), jobs.hold_until[j]})
      if (std::isfinite(x)) horizon = std::max(horizon, std::abs(x));
  }
  for (const TaskerEvent& e : farm.events)
    if (std::isfinite(e.time)) horizon = std::max(horizon, std::abs(e.time));
  if (!std::isfinite(horizon + 2 * i))
    throw PolicyError(
        fmt::format("interval {} s takes the clock past the largest time (times reach {} s)", i, horizon));
  const double spacing = std::nextafter(horizon, std::numeric_limits<double>::infinity()) - horizon;
  if (!(i >= spacing))
    throw PolicyError(fmt::format(
        "interval {} s cannot advance the clock: times reach {} s, where they are {} s apart (interval = 0 runs a "
        "cycle at every event)",
        i, horizon, spacing));
}

void SimWorld::check_farm_events() const {
  const auto& cons = catalog.consumables();
  if (!farm.down_at_start.empty() && farm.down_at_start.size() != taskers.size())
    throw std::invalid_argument("FarmEvents: down_at_start must have one entry per tasker");
  double last = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < farm.events.size(); ++i) {
    const TaskerEvent& e = farm.events[i];
    const std::string at = fmt::format("FarmEvents: event {}: ", i);
    if (!(e.time >= last)) throw std::invalid_argument(at + "out of time order");
    last = e.time;
    if (e.tasker >= taskers.size()) throw std::invalid_argument(at + "no such tasker");
    if (e.kind != TaskerEvent::Kind::Configure) continue;
    if (e.consumable >= cons.size()) throw std::invalid_argument(at + "no such consumable");
    const Column& col = taskers.columns[cons[e.consumable]];
    if (col.multi_level()) throw std::invalid_argument(at + "the consumable has a host or global pool");
    if (!col.has(e.tasker)) throw std::invalid_argument(at + "the tasker has no value for the consumable");
    if (!(e.amount >= 0) || !std::isfinite(e.amount)) throw std::invalid_argument(at + "amount must be >= 0");
  }
}

void SimWorld::apply_farm_events(double t) {
  while (next_farm_ < farm.events.size() && farm.events[next_farm_].time <= t) {
    const TaskerEvent& e = farm.events[next_farm_++];
    switch (e.kind) {
      case TaskerEvent::Kind::Up:
        cap.set_down(e.tasker, false);
        grew(e.tasker);
        break;
      case TaskerEvent::Kind::Down: cap.set_down(e.tasker, true); break;
      case TaskerEvent::Kind::Configure:
        if (cap.set_configured(e.consumable, e.tasker, e.amount)) grew(e.tasker);
        if (availability.tracked(e.consumable) &&
            cap.set_queue_free(e.consumable, e.tasker, availability.free_now(e.consumable, e.tasker, cap)))
          grew(e.tasker);
        break;
    }
    ++state_version;
    policy_hooks->tasker_changed(e.tasker);
  }
}

bool SimWorld::might_be_last(size_t next, double t) const {
  double n = next_event(next);
  if (!std::isfinite(n)) return true;
  if (policy.interval > 0) n = std::max(std::ceil(n / policy.interval) * policy.interval, t + policy.interval);
  return n > policy.until;
}

// Category c's eligibility and cursors (not whether it fits the idle farm).
void SimWorld::evaluate(uint32_t c) {
  const Request* soft = cats.soft[c] != 0 ? &jobs.requests[cats.soft[c]] : nullptr;
  eligible[c] = evaluate_category(catalog, taskers, jobs.requests[cats.request[c]], soft, cats.unit_charge[c], k,
                                  &cats.charge_kind[c]);
  require_master_fit(catalog, taskers, jobs.requests[cats.request[c]], cats, c, eligible[c]);
  cursors.init(c, eligible[c]);
  cursor_seen_[c] = grown_.size();
  cursor_epoch_[c] = cap.epoch();
  evaluated[c] = 1;
  ++res.categories_evaluated;
}

void SimWorld::submit(uint32_t j) {
  const uint32_t c = cats.of_job[j];
  if (!idle_tried[c]) {  // (a solution of a category that chooses may have been evaluated before its first job)
    idle_tried[c] = 1;
    if (!evaluated[c]) evaluate(c);
    for (const uint32_t s : cats.solutions[c])  // a category that chooses: its solutions', then theirs together
      if (!evaluated[s]) evaluate(s);
    unite_solutions(cats, c, eligible);
    for (const Categories::NodePick& p : cats.node_picks_of(c))  // the taskers its node picks take from
      for (const uint32_t s : p.tiers)
        if (!evaluated[s]) evaluate(s);
    std::vector<Allocation> trial_idle;  // can it run at all, on the idle farm?
    if (gated(c)) {
      fits_idle[c] = 1;  // what it does depends on the pools when a cycle considers it
    } else if (eligible[c].eligible.count() > 0 && idle_placer.try_place(j, policy.allocation, trial_idle)) {
      idle.rollback();
      fits_idle[c] = 1;
    }
  }
  res.reason[j] = SimReason::NoFreeCapacity;
}

void SimWorld::start(uint32_t j, double t, const std::vector<Allocation>& allocs, bool backfilled) {
  res.start[j] = t;
  res.end[j] = t + sim_duration(jobs, j);
  if (allocs.empty()) {  // a removal (Placer::gate_outcome): it leaves the queue as a start would, at once
    removed_.emplace_back(j, fmt::format("at {} s: {}", t, cap_placer.gate_outcome(j)->why));
    res.end[j] = t;
  }
  res.alloc_first[j] = static_cast<uint32_t>(res.allocations.size());
  res.alloc_count[j] = static_cast<uint32_t>(allocs.size());
  res.allocations.insert(res.allocations.end(), allocs.begin(), allocs.end());
  res.reason[j] = SimReason::None;
  res.detail.clear(j);
  res.backfilled[j] = backfilled ? 1 : 0;
  const double held = res.end[j] - t;
  for_each_charge(j, [&](size_t kk, uint32_t, double amount) {
    used[kk] += amount;
    res.held_seconds[kk] += amount * held;
  });
  if (availability.active()) occupy(j, true);
  creds.add(j, +1);
  ends.emplace(res.end[j], j);
  running.insert({t + sim_estimate(jobs, j), j});
  ++state_version;
  for (const Allocation& a : allocs) policy_hooks->tasker_changed(a.tasker);
}

// Utilized or combined availability: job j's charges held (`on`) or given back; the taskers where
// capacity grew are logged.
void SimWorld::occupy(uint32_t j, bool on) {
  charges_of(j, held_scratch_);
  grown_scratch_.clear();
  availability.occupy(j, held_scratch_, on, cap, grown_scratch_);
  for (const uint32_t x : grown_scratch_) grew(x);
}

void SimWorld::finish(uint32_t j, double) {
  for_each_charge(j, [&](size_t kk, uint32_t x, double amount) {
    if (!availability.tracked(kk)) cap.release(kk, x, amount);
    used[kk] -= amount;
  });
  if (availability.active()) occupy(j, false);
  creds.add(j, -1);
  ended[j] = 1;
  ++ended_count;
  running.erase({res.start[j] + sim_estimate(jobs, j), j});
  ++state_version;
  for (uint32_t a = 0; a < res.alloc_count[j]; ++a) {
    const uint32_t x = res.allocations[res.alloc_first[j] + a].tasker;
    policy_hooks->tasker_changed(x);
    grew(x);
  }
}

void SimWorld::finish_removals() {
  for (const auto& [j, why] : removed_) {
    res.start[j] = res.end[j] = std::numeric_limits<double>::quiet_NaN();
    res.reason[j] = SimReason::Removed;
    res.detail.set(j, why);
    res.backfilled[j] = 0;
  }
}

void SimWorld::name_pool_waits() {
  std::vector<uint8_t> done(cats.size(), 0);
  std::vector<std::string> text(cats.size());
  for (uint32_t j = 0; j < jobs.size(); ++j) {
    if (res.reason[j] != SimReason::NoFreeCapacity || !res.detail[j].empty()) continue;
    const uint32_t c = cats.of_job[j];
    if (!done[c]) {
      done[c] = 1;
      const std::vector<ChargeVector> solutions = solutions_need(cats, c);
      text[c] = gate_wait_text(catalog, jobs, cats, c, cap);
      if (text[c].empty()) text[c] = global_pool_wait_text(catalog, cap, cats.unit_charge[c], &solutions);
    }
    res.detail.set(j, text[c]);
  }
}

bool SimWorld::dependencies_ended(uint32_t j) const {
  for (uint32_t d : jobs.depends[j])
    if (!ended[d]) return false;
  return true;
}

void SimWorld::end_cycle(double t, std::chrono::steady_clock::time_point t0, uint64_t queued) {
  res.last_cycle_time = t;
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res.cycle_seconds.push_back(static_cast<float>(took));
  if (!policy.record_timeline) return;
  const size_t width = res.timeline_width;
  if (res.timeline.empty() || std::floor(res.timeline.back().time / 60) != std::floor(t / 60)) {
    res.timeline.emplace_back();
    res.timeline_used.resize(res.timeline_used.size() + width);
  }
  res.timeline.back() = {t, running.size(), queued};
  std::copy_n(used.begin(), width, res.timeline_used.end() - static_cast<std::ptrdiff_t>(width));
  auto& minutes = res.cycle_minutes;
  if (minutes.empty() || std::floor(minutes.back().time / 60) != std::floor(t / 60)) {
    minutes.push_back({t, 1, took, took});
  } else {
    ++minutes.back().cycles;
    minutes.back().seconds += took;
    minutes.back().max_seconds = std::max(minutes.back().max_seconds, took);
  }
}

// ---- Which categories cannot place until capacity grows, and the dispatch cursors ----
//
// A cursor says that no tasker before it can take the category's charge; capacity only shrinks except
// on the taskers logged in grown_, so each cursor is pulled back to the first of those logged since it
// was last made valid (categories charging a shared pool start again at 0 in each Capacity epoch).
// Cheaper than starting every category again at 0 whenever a job ends.
Placer& SimWorld::placer(uint32_t c) {
  validate_cursors(c);
  for (const uint32_t s : cats.solutions[c]) validate_cursors(s);  // a category that chooses places by these
  return cap_placer;
}

void SimWorld::validate_cursors(uint32_t c) {
  if (!cap_placer.queue_only(c)) {
    if (cursor_epoch_[c] != cap.epoch()) {
      cursors.restart(c);
      cursor_epoch_[c] = cap.epoch();
    }
    return;
  }
  if (cursor_seen_[c] < grown_.size()) {  // the least tasker logged since: the first suffix minimum from there
    const auto low = std::lower_bound(grown_min_.begin(), grown_min_.end(), cursor_seen_[c],
                                      [](const std::pair<size_t, uint32_t>& e, size_t i) { return e.first < i; });
    cursors.pull_back(c, low->second);
    cursor_seen_[c] = grown_.size();
  }
}

void SimWorld::settle(uint32_t c) {
  settled_at_[c] = cap.epoch();
  settled_since_[c] = grown_.size();
  revived_by_[c] = kNone;
}

// A tasker x whose capacity grew could take a job of category c now (one slot instance for $fill_up).
bool SimWorld::could_take(uint32_t c, uint32_t x) const {
  if (!eligible[c].eligible.contains(x)) return false;
  return spreads(cats.rule[c]) ? cap_placer.instances(c, x, false, 1) > 0 : cap.fits(cap_placer.charges(c), x);
}

// Exact for $pe_slots: it would fail; for $fill_up: no tasker takes one slot instance, the whole farm's
// free capacity is short of one job (Placer::short_of_farm, asked first: then no grown tasker needs looking
// at, and none is skipped), or it failed in this epoch. After c failed, only the taskers whose capacity grew
// since (grown_, in order) can take one of its jobs: each is looked at once, when settled() next asks, and
// the one found is asked again first (a tasker that had no room and has not grown since has none now; one
// that grows again is logged again). A category charging a shared (host or global) pool is tried again in
// every epoch.
bool SimWorld::settled(uint32_t c) {
  if (settled_at_[c] == ~uint64_t{0}) return false;
  if (settled_at_[c] == cap.epoch()) return true;
  if (!cap_placer.queue_only(c)) {
    settled_at_[c] = ~uint64_t{0};
    return false;
  }
  if (cap_placer.short_of_farm(c, policy.allocation)) {
    settled_at_[c] = cap.epoch();
    return true;
  }
  if (revived_by_[c] != kNone && could_take(c, revived_by_[c])) return false;
  revived_by_[c] = kNone;
  for (size_t& i = settled_since_[c]; i < grown_.size();) {
    const uint32_t x = grown_[i++];
    if (could_take(c, x)) {
      revived_by_[c] = x;
      return false;
    }
  }
  settled_at_[c] = cap.epoch();
  return true;
}

// The log is dropped when it reaches 256 entries a tasker (at least 4,096) by forgetting every failure
// and starting every cursor again: memory stays O(taskers), and the cost (each category may scan its
// taskers once more) is spread over that many growths. Small enough that the bundled KTH sample's tests
// go through it.
void SimWorld::grew(uint32_t x) {
  if (grown_.size() >= std::max<size_t>(4096, 256 * taskers.size())) {
    std::fill(settled_at_.begin(), settled_at_.end(), ~uint64_t{0});
    for (uint32_t c = 0; c < cats.size(); ++c) cursors.restart(c);
    std::fill(cursor_seen_.begin(), cursor_seen_.end(), 0);
    grown_.clear();
    grown_min_.clear();
  }
  while (!grown_min_.empty() && grown_min_.back().second >= x) grown_min_.pop_back();
  grown_min_.emplace_back(grown_.size(), x);
  grown_.push_back(x);
}

bool SimWorld::fits_now(uint32_t j, uint32_t c) {
  trial.clear();
  if (!placer(c).try_place(j, policy.allocation, trial)) {
    settle(c);
    return false;
  }
  cap.rollback();  // cursors stay valid (Placer::try_place)
  return true;
}

}  // namespace colmatch
