#include "engine/schedule/pool_profile.hpp"

#include <cmath>
#include <limits>
#include <tuple>

#include "engine/match/eligibility.hpp"
#include "engine/schedule/world.hpp"

namespace colmatch {

namespace {

bool same_taskers(const kernels::TaskerSet& a, const kernels::TaskerSet& b) {
  if (a.count() != b.count()) return false;
  for (size_t t = a.next(0); t < a.universe(); t = a.next(t + 1))
    if (!b.contains(static_cast<uint32_t>(t))) return false;
  return true;
}

}  // namespace

std::optional<PoolProfile> PoolProfile::of(const SimWorld& w) {
  if (w.policy.depth() <= 1) return std::nullopt;
  return of_farm(w);
}

std::optional<PoolProfile> PoolProfile::of_farm(const SimWorld& w) {
  if (w.availability.active() || !w.farm.empty() || w.policy.allocation == AllocationPolicy::ConsecutiveBestFit)
    return std::nullopt;
  const Categories& cats = w.cats;
  uint32_t k = UINT32_MAX;
  std::optional<kernels::TaskerSet> pooled;
  for (uint32_t c = 0; c < cats.size(); ++c) {
    if (cats.job_count[c] == 0) continue;
    if (cats.rule[c] != AllocationRule::FillUp || cats.chooses(c) || cats.master_charge[c].any_positive() ||
        !(cats.fit_unit_of(c) == JobTable::FitUnit{}) || !w.cap_placer.queue_only(c))
      return std::nullopt;
    const auto unit = cats.unit_charge[c].nonzero();
    if (unit.size() != 1 || unit[0].amount != 1.0 || (k != UINT32_MAX && unit[0].k != k)) return std::nullopt;
    k = unit[0].k;
    CategoryEligibility e = evaluate_category(w.catalog, w.taskers, w.jobs.requests[cats.request[c]], nullptr,
                                              cats.unit_charge[c], w.k, &cats.charge_kind[c]);
    if (!pooled) pooled = std::move(e.eligible);
    else if (!same_taskers(*pooled, e.eligible)) return std::nullopt;
  }
  if (!pooled) return std::nullopt;
  const Column& col = w.taskers.columns[w.catalog.consumables()[k]];
  int64_t total = 0;
  for (size_t t = pooled->next(0); t < pooled->universe(); t = pooled->next(t + 1)) {
    const auto x = static_cast<uint32_t>(t);
    const double free = w.cap.available(k, x);
    if (!col.is_defined(x) || !(free >= 0)) return std::nullopt;  // (charged where defined only, or no pool)
    total += static_cast<int64_t>(std::floor(free));              // whole units: slots of one unit each
  }
  return PoolProfile(k, total + static_cast<int64_t>(w.used[k]));
}

int64_t PoolProfile::free_now(const std::vector<double>& used) const noexcept {
  return total_ - static_cast<int64_t>(used[k_]);
}

void PoolProfile::change(double start, double end, int64_t units) {
  if (!(start < end) || units == 0) return;
  free_.add(start, end, units);
  ++version_;
}

double PoolProfile::dip(double t, int64_t units) const {
  Dip& d = dips_[units];
  if (d.version != version_ + 1 || d.t != t) d = Dip{version_ + 1, t, free_.first(t, units, true)};
  return d.at;
}

void PoolProfile::started(double t, double end, int64_t units) {
  free_.forget_before(t);  // (every question from now on asks of times from t)
  hold(t, end, units);
}

double PoolProfile::earliest(double t, int64_t units, double length) const {
  for (double from = t;;) {
    double dip = 0;
    std::tie(from, dip) = free_.first_run(from, units);
    if (!(from < StepProfile::kInf)) return from;  // never that many free
    if (dip >= from + length) return from;         // (length 0: at once)
    from = dip;
  }
}

// earliest()'s walk, stopped at own_start: before it the own reservation holds nothing, so each step
// is earliest()'s; once the first shortage of a start lies at or after own_start, that start fits exactly
// when the own units given back fill it, and no later start before own_start can (its run covers the
// same shortage).
bool PoolProfile::fits_before(double t, int64_t units, double length, double own_start, double own_end) const {
  for (double from = t; from < own_start;) {
    double dip = 0;
    std::tie(from, dip) = free_.first_run(from, units);
    if (!(from < own_start)) return false;
    if (dip >= from + length) return true;
    if (dip >= own_start) return free_throughout(from, from + length, units, own_start, own_end, units);
    from = dip;
  }
  return false;
}

bool PoolProfile::free_throughout(double t, double until, int64_t units, double own_start, double own_end,
                                  int64_t own_units) const {
  // [t, until) in up to three pieces: before the own reservation, during it (its units given back), after
  auto at_least = [&](double a, double b, int64_t need) { return !(a < b) || free_.min(a, b) >= need; };
  const double first_dip = dip(t, units);
  if (!(first_dip < until)) return true;
  // a dip before the job would end: only its own reservation's units, given back, can fill it
  if (own_units == 0 || !(own_start < own_end) || first_dip < own_start) return false;
  return at_least(t, std::min(until, own_start), units) &&
         at_least(std::max(t, own_start), std::min(until, own_end), units - own_units) &&
         at_least(std::max(t, own_end), until, units);
}

}  // namespace colmatch
