#include "engine/session.hpp"

#include <chrono>
#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace colmatch {

namespace {
void set_bit(std::vector<uint64_t>& w, uint32_t t, bool on) {
  if (on) w[t >> 6] |= uint64_t{1} << (t & 63);
  else w[t >> 6] &= ~(uint64_t{1} << (t & 63));
}

// The content of category c, independent of the job table's numbering.
std::string content_key(const JobTable& jobs, const Categories& cats, size_t c) {
  std::string key = jobs.request_text[cats.request[c]];
  key += '\0';
  if (cats.soft[c] != 0) key += jobs.request_text[cats.soft[c]];
  key += '\0';
  key.append(reinterpret_cast<const char*>(&cats.slots[c]), sizeof(uint32_t));
  key.push_back(static_cast<char>(cats.fill_up[c]));
  for (const auto* v : {&cats.need[c], &cats.job_need[c]})
    for (double x : *v) {
      const double z = x + 0.0;
      key.append(reinterpret_cast<const char*>(&z), sizeof(double));
    }
  return key;
}
}  // namespace

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
  Column& c = taskers_.columns.at(attr);
  if (t >= taskers_.size()) throw ValueError(fmt::format("no tasker {}", t));
  const bool numeric = is_numeric(c.type);
  const double v = numeric ? parse_number(c.type, text) : 0;
  const std::string s = numeric ? std::string() : normalize_string(c.type, text);
  if (!d.consumable) {  // the override rules of seed 002, section 3, against the levels above
    const bool eq = d.relop == Relop::EQ || d.relop == Relop::NE;
    const bool upper_host = c.host.has(t), upper_global = c.global_present;
    if (eq && (upper_host || upper_global))
      throw ValueError(fmt::format("attribute '{}' (relop {}): tasker '{}' cannot override the {} level; == and != "
                                   "attributes can be overridden only on the same level",
                                   d.name, relop_name(d.relop), taskers_.names[t], upper_host ? "host" : "global"));
    auto restrictive = [&](double upper) { return d.relop == Relop::LT || d.relop == Relop::LE ? v <= upper : v >= upper; };
    if (!eq && ((upper_host && !restrictive(c.host.num[t])) || (upper_global && !restrictive(c.global_num))))
      throw ValueError(fmt::format("attribute '{}' (relop {}): tasker '{}' ({}) would be less restrictive than a level "
                                   "above; a lower level may only set a more restrictive value",
                                   d.name, relop_name(d.relop), taskers_.names[t], text));
  }
  if (numeric) c.num[t] = v;
  else c.ids[t] = c.dict.intern(s);
  set_bit(c.present, t, true);
  c.queue_any = true;
  set_bit(c.queue_absent, t, false);
  set_bit(c.defined, t, true);
  mark_dirty(t);
}

void MatchSession::clear_tasker_value(uint32_t t, uint32_t attr) {
  Column& c = taskers_.columns.at(attr);
  if (t >= taskers_.size()) throw ValueError(fmt::format("no tasker {}", t));
  set_bit(c.present, t, false);
  set_bit(c.queue_absent, t, true);
  set_bit(c.defined, t, c.host.has(t) || c.global_present);
  mark_dirty(t);
}

MatchOutcome MatchSession::cycle(const JobTable& jobs) {
  MatchOutcome out;
  out.isa = k_.isa;
  auto t0 = std::chrono::steady_clock::now();
  out.categories = categorize(catalog_, jobs);
  out.timings.categorize_s = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  // 1. Changed taskers: one bit per cached category, not the whole cache.
  for (auto& [key, e] : cache_) {
    for (uint32_t t : dirty_) {
      const bool ok = tasker_eligible(catalog_, taskers_, e.request, e.need, t);
      if (ok) e.eligible.add(t);
      else e.eligible.remove(t);
      if (e.has_soft) {
        for (auto& tier : e.tiers) tier.remove(t);
        if (ok) e.tiers[soft_violations(taskers_, e.soft, t)].add(t);
      }
      ++stats_.refreshed_bits;
    }
  }
  for (uint32_t t : dirty_) is_dirty_[t] = 0;
  dirty_.clear();

  // 2. Categories not seen before, evaluated in parallel with the kernels.
  const size_t nc = out.categories.size(), n = taskers_.size();
  std::vector<std::string> keys(nc);
  std::vector<size_t> missing;
  for (size_t c = 0; c < nc; ++c) {
    keys[c] = content_key(jobs, out.categories, c);
    if (cache_.count(keys[c])) ++stats_.reused;
    else missing.push_back(c);  // categories of one job table have distinct contents
  }
  std::vector<Entry> fresh(missing.size());
  tbb::parallel_for(tbb::blocked_range<size_t>(0, missing.size(), 4), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i != r.end(); ++i) {
      const size_t c = missing[i];
      Entry& e = fresh[i];
      e.request = jobs.requests[out.categories.request[c]];
      e.has_soft = out.categories.soft[c] != 0;
      if (e.has_soft) e.soft = jobs.requests[out.categories.soft[c]];
      e.need = out.categories.need[c];
      std::vector<uint64_t> words(kernels::words_for(n));
      eligible_words(catalog_, taskers_, e.request, e.need, k_, words.data());
      const uint64_t count = k_.popcount(words.data(), words.size());
      if (e.has_soft) e.tiers = soft_tiers(taskers_, e.soft, words.data(), k_);
      e.eligible = kernels::TaskerSet::from_words(std::move(words), n, count);
    }
  });
  for (size_t i = 0; i < missing.size(); ++i) cache_.emplace(keys[missing[i]], std::move(fresh[i]));
  stats_.evaluated += missing.size();

  out.eligible.resize(nc);
  out.soft_tiers.resize(nc);
  for (size_t c = 0; c < nc; ++c) {
    const Entry& e = cache_.at(keys[c]);
    out.eligible[c] = e.eligible.clone();
    if (e.has_soft && e.eligible.count() > 0)
      for (const auto& tier : e.tiers) out.soft_tiers[c].push_back(tier.clone());
  }
  out.timings.eligibility_s = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  out.dispatch = dispatch(catalog_, taskers_, jobs, out.categories, out.eligible, &out.soft_tiers);
  out.timings.dispatch_s = seconds_since(t0);
  return out;
}

}  // namespace colmatch
