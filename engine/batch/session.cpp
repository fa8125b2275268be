#include "engine/batch/session.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace colmatch {

MatchSession::MatchSession(const Catalog& catalog, TaskerTable taskers, const kernels::KernelTable& k)
    : catalog_(catalog), taskers_(std::move(taskers)), k_(k), is_dirty_(taskers_.size(), 0) {}

void MatchSession::mark_dirty(uint32_t t) {
  if (!is_dirty_[t]) {
    is_dirty_[t] = 1;
    dirty_.push_back(t);
  }
}

void MatchSession::set_tasker_value(uint32_t t, uint32_t attr, std::string_view text) {
  const AttributeDef& d = catalog_.at(attr);
  if (t >= taskers_.size()) throw ValueError(fmt::format("no tasker {}", t));
  Column& c = taskers_.columns.at(attr);
  const bool numeric = is_numeric(c.type);
  const double v = numeric ? parse_number(c.type, text) : 0;
  // Grid Engine 6.0's override rule against the levels above (values there are combined); SGE 8.1.9
  // accepts any value and checks every level
  if (!d.consumable && catalog_.reading == GridEngineReading::Design60) {
    auto check = [&](bool present, double num, uint32_t id, const std::string& who) {
      if (!present || may_override(d.relop, v, UpperValue{true, num, false})) return;
      throw ValueError(override_message(d, fmt::format("tasker '{}'", taskers_.names[t]), text, who,
                                        numeric ? fmt::format("{}", num) : c.dict.value(id)));
    };
    const uint32_t h = taskers_.host_of[t];
    check(c.host().has(t), numeric ? c.host().num(t) : 0, numeric ? 0 : c.host().id(t),
          h == kNone ? std::string("its host") : fmt::format("host '{}'", taskers_.host_names[h]));
    check(c.global().present, c.global().num, c.global().id, "the global value");
  }
  c.set_queue(t, v, numeric ? 0 : c.dict.intern(normalize_string(c.type, text)));
  mark_dirty(t);
}

void MatchSession::clear_tasker_value(uint32_t t, uint32_t attr) {
  if (t >= taskers_.size()) throw ValueError(fmt::format("no tasker {}", t));
  taskers_.columns.at(attr).clear_queue(t);
  mark_dirty(t);
}

MatchOutcome MatchSession::cycle(const JobTable& jobs) {
  MatchOutcome out;
  out.isa = k_.isa;
  PhaseClock clock;
  out.categories = categorize(catalog_, jobs);
  out.timings.categorize_s = clock.lap();

  // 1. Changed taskers: one bit per cached category, not the whole cache.
  for (auto& [key, e] : cache_) {
    for (uint32_t t : dirty_) {
      refresh_tasker(catalog_, taskers_, e.request, e.has_soft ? &e.soft : nullptr, e.need, t, e.result, &e.kinds);
      ++stats_.refreshed_bits;
    }
  }
  for (uint32_t t : dirty_) is_dirty_[t] = 0;
  dirty_.clear();

  // 2. Categories not seen before, evaluated in parallel with the kernels.
  const Categories& cats = out.categories;
  const size_t nc = cats.size();
  std::vector<size_t> missing;
  for (size_t c = 0; c < nc; ++c) {
    if (cache_.count(cats.key[c])) ++stats_.reused;
    else missing.push_back(c);  // categories of one job table have distinct contents
  }
  std::vector<Entry> fresh(missing.size());
  tbb::parallel_for(tbb::blocked_range<size_t>(0, missing.size(), 4), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i != r.end(); ++i) {
      const size_t c = missing[i];
      Entry& e = fresh[i];
      e.request = jobs.requests[cats.request[c]];
      e.has_soft = cats.soft[c] != 0;
      if (e.has_soft) e.soft = jobs.requests[cats.soft[c]];
      e.need = cats.unit_charge[c];
      e.kinds = cats.charge_kind[c];
      e.result = evaluate_category(catalog_, taskers_, e.request, e.has_soft ? &e.soft : nullptr, e.need, k_, &e.kinds);
    }
  });
  for (size_t i = 0; i < missing.size(); ++i) cache_.emplace(cats.key[missing[i]], std::move(fresh[i]));
  stats_.evaluated += missing.size();

  out.eligible.resize(nc);
  for (size_t c = 0; c < nc; ++c) {
    const Entry& e = cache_.at(cats.key[c]);
    out.eligible[c].eligible = e.result.eligible.clone();
    if (e.has_soft && e.result.eligible.count() > 0)
      for (const auto& tier : e.result.tiers) out.eligible[c].tiers.push_back(tier.clone());
    require_master_fit(catalog_, taskers_, e.request, cats, static_cast<uint32_t>(c), out.eligible[c]);
  }
  for (uint32_t c = 0; c < cats.solutions.size(); ++c) unite_solutions(cats, c, out.eligible);
  out.timings.eligibility_s = clock.lap();
  out.dispatch = dispatch(catalog_, taskers_, jobs, cats, out.eligible, k_);
  out.timings.dispatch_s = clock.lap();
  return out;
}

}  // namespace colmatch
