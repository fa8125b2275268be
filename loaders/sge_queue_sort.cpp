// Grid Engine's queue sort as a dump gives it (sched_conf(5): queue_sort_method, load_formula,
// job_load_adjustments, load_adjustment_decay_time; Son of Grid Engine 8.1.9's sort_hosts.c and
// sge_select_queue.c): the load formula parsed over the hosts' values, the static order of the queue
// instances, and the load correction `match` applies within its one run (engine/placement/load_correction.hpp).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>

#include "loaders/sge_farm.hpp"

namespace colmatch::loaders::sge {

namespace {

// The attribute a load formula's value name names (a leading `$` dropped, as get_load_value does), if any.
std::optional<uint32_t> formula_attribute(const FarmModel& f, std::string_view name) {
  if (!name.empty() && name[0] == '$') name.remove_prefix(1);
  return f.catalog.find(name);
}

// A host's value of `name` for the load formula: its load value, else its fixed value, else the global
// one (get_load_value: the attribute as the host sees it); nullopt when none or not a number.
std::optional<double> host_value(const FarmModel& f, uint32_t h, std::string_view name) {
  const auto a = formula_attribute(f, name);
  if (!a || !is_numeric(f.catalog.at(*a).type)) return std::nullopt;
  for (const auto* level : {&f.host_load[h], &f.host_fixed[h], &f.global}) {
    const auto it = level->find(*a);
    if (it == level->end()) continue;
    try {
      return parse_number(f.catalog.at(*a).type, FarmModel::numeric_text(f.catalog.at(*a), it->second.text));
    } catch (const ValueError&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

// sched_conf(5)'s load_formula parsed as Son of Grid Engine 8.1.9 reads it (sort_hosts.c scaled_mixed_load):
// terms apart by + and - (a leading - negates the first), each a number or a value name, optionally one of
// * / & | ^ and a second number or name; with each host's values (host_value; a value the host lacks is
// NaN, which makes its whole load 9999, ERROR_LOAD_VAL: such hosts sort last). No load correction yet.
LoadCorrection parse_load_formula(const FarmModel& f) {
  LoadCorrection lc;
  std::vector<std::string> names;
  auto operand = [&](std::string_view t) {
    LoadCorrection::Operand o;
    double v = 0;
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (!t.empty() && ec == std::errc() && p == t.data() + t.size()) {
      o.constant = v;
      return o;
    }
    const auto it = std::find(names.begin(), names.end(), t);
    o.value = static_cast<uint32_t>(it - names.begin());
    if (it == names.end()) names.emplace_back(t);
    return o;
  };
  const std::string& text = f.load_formula;
  bool minus = !text.empty() && text[0] == '-';
  for (size_t i = minus ? 1 : 0; i <= text.size();) {
    const size_t e = std::min(text.find_first_of("+-", i), text.size());
    const std::string_view term = std::string_view(text).substr(i, e - i);
    const size_t op = term.find_first_of("*/&|^");
    LoadCorrection::Term t;
    t.minus = minus;
    t.a = operand(term.substr(0, op));
    if (op != std::string_view::npos) {
      t.op = term[op];
      t.b = operand(term.substr(op + 1));
    }
    lc.terms.push_back(t);
    if (e == text.size()) break;
    minus = text[e] == '-';
    i = e + 1;
  }
  lc.base.assign(f.hosts.size() * names.size(), std::numeric_limits<double>::quiet_NaN());
  lc.per_slot.assign(lc.base.size(), 0.0);
  for (uint32_t h = 0; h < f.hosts.size(); ++h)
    for (uint32_t v = 0; v < names.size(); ++v)
      if (const auto x = host_value(f, h, names[v])) lc.base[static_cast<size_t>(h) * names.size() + v] = *x;
  lc.names = std::move(names);
  return lc;
}

// Grid Engine's queue sort (sched_conf(5); sge_select_queue.c): each host's place by its load formula
// (equal loads one place), the queue instances by seq_no then the host's place (queue_sort_method seqno)
// or the other way round (load). Per instance its power (higher first). Where
// every host's load is the same (no load values dumped: Grid Engine's order is seq_no alone then too)
// the power is -seq_no as before.
std::vector<double> queue_sort(const FarmModel& f, const LoadCorrection& formula) {
  std::vector<double> power;
  for (const Instance& in : f.instances) power.push_back(-in.seq_no);
  if (f.sort_method.empty() || f.hosts.empty()) return power;
  std::vector<double> load(f.hosts.size());
  for (uint32_t h = 0; h < f.hosts.size(); ++h) load[h] = formula.host_load(h, 0);
  std::vector<double> loads = load, seqs;
  std::sort(loads.begin(), loads.end());
  loads.erase(std::unique(loads.begin(), loads.end()), loads.end());
  if (loads.size() < 2) return power;
  std::vector<uint32_t> place(f.hosts.size());
  for (uint32_t h = 0; h < f.hosts.size(); ++h)
    place[h] = static_cast<uint32_t>(std::lower_bound(loads.begin(), loads.end(), load[h]) - loads.begin());
  for (const Instance& in : f.instances) seqs.push_back(in.seq_no);
  std::sort(seqs.begin(), seqs.end());
  seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
  const double nh = static_cast<double>(loads.size()), ns = static_cast<double>(seqs.size());
  for (size_t i = 0; i < f.instances.size(); ++i) {
    const double hr = place[f.instances[i].host_index];
    const double sr =
        static_cast<double>(std::lower_bound(seqs.begin(), seqs.end(), f.instances[i].seq_no) - seqs.begin());
    power[i] = f.sort_method == "load" ? -(hr * ns + sr) : -(sr * nh + hr);
  }
  return power;
}

// Grid Engine's load correction within one run (load_correction.hpp) when the queue sort reads a load
// value job_load_adjustments names and load_adjustment_decay_time is not 0, else null. Each such value
// of a host that reports it moves by the adjustment per slot (sge_complex_schedd.c fillComplexFromHost:
// divided by the host's num_proc for an np_* value; added for a complex of relop >= or >, else taken
// away). An adjustment naming no numeric complex is left out, as the scheduler leaves it (with its error).
std::shared_ptr<const LoadCorrection> load_correction(const FarmModel& f, LoadCorrection lc, const TaskerTable& t) {
  if (f.sort_method.empty() || f.load_adjustments.empty() || !(f.decay_time > 0)) return nullptr;
  std::map<uint32_t, double> amount;  // attribute -> adjustment per slot
  for (size_t i = 0; i <= f.load_adjustments.size();) {
    const size_t end = std::min(f.load_adjustments.find(',', i), f.load_adjustments.size());
    const std::string_view item = std::string_view(f.load_adjustments).substr(i, end - i);
    i = end + 1;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) continue;
    const auto a = f.catalog.find(item.substr(0, eq));
    if (!a || !is_numeric(f.catalog.at(*a).type)) continue;
    try {
      amount[*a] = parse_number(f.catalog.at(*a).type, item.substr(eq + 1));
    } catch (const ValueError&) {}
  }
  // the values the queues' load thresholds name join the formula's (base as the formula reads a value)
  auto value_of = [&](uint32_t a) {
    for (uint32_t v = 0; v < lc.names.size(); ++v)
      if (formula_attribute(f, lc.names[v]) == a) return v;
    return UINT32_MAX;
  };
  std::vector<uint32_t> extra;
  for (const Instance& in : f.instances)
    for (const auto& [a, limit] : in.load_thresholds)
      if (value_of(a) == UINT32_MAX && std::find(extra.begin(), extra.end(), a) == extra.end()) extra.push_back(a);
  if (!extra.empty()) {
    const size_t was = lc.names.size(), now = was + extra.size();
    std::vector<double> base(f.hosts.size() * now, std::numeric_limits<double>::quiet_NaN());
    for (uint32_t h = 0; h < f.hosts.size(); ++h) {
      for (size_t v = 0; v < was; ++v) base[h * now + v] = lc.base[h * was + v];
      for (size_t e = 0; e < extra.size(); ++e)
        if (const auto x = host_value(f, h, f.catalog.at(extra[e]).name)) base[h * now + was + e] = *x;
    }
    for (const uint32_t a : extra) lc.names.push_back(f.catalog.at(a).name);
    lc.base = std::move(base);
    lc.per_slot.assign(lc.base.size(), 0.0);
  }
  const auto num_proc = f.catalog.find("num_proc");
  bool moves = false;
  for (uint32_t h = 0; h < f.hosts.size(); ++h)
    for (uint32_t v = 0; v < lc.names.size(); ++v) {
      const auto a = formula_attribute(f, lc.names[v]);
      const auto it = a ? amount.find(*a) : amount.end();
      if (it == amount.end() || f.host_load[h].count(*a) == 0) continue;
      const AttributeDef& def = f.catalog.at(*a);
      double per_slot = it->second;
      if (def.name.rfind("np_", 0) == 0 && num_proc)
        if (const auto n = f.host_load[h].find(*num_proc); n != f.host_load[h].end())
          per_slot /= std::max(1L, std::strtol(n->second.text.c_str(), nullptr, 10));
      if (def.relop != Relop::GE && def.relop != Relop::GT) per_slot = -per_slot;
      lc.per_slot[static_cast<size_t>(h) * lc.names.size() + v] = per_slot;
      moves = moves || per_slot != 0;
    }
  if (!moves) return nullptr;
  // correct_load: a running job adds 1 - running time / decay time per slot to its host's correction
  // factor, held in hundredths (u_long32, truncated as each job is added); none once the decay time passed
  double now = f.now;
  if (std::isnan(now)) {
    now = 0;
    for (const FarmModel::RunningStart& r : f.running_starts) now = std::max(now, r.start);
  }
  std::vector<double> hundredths(f.hosts.size(), 0.0);
  for (const FarmModel::RunningStart& r : f.running_starts) {
    const double running = now - r.start;  // (a start after now: u_long32 wraps past the decay time)
    if (running < 0 || running > f.decay_time || r.host >= hundredths.size()) continue;
    hundredths[r.host] = std::floor((1 - running / f.decay_time) * r.slots * 100 + hundredths[r.host]);
  }
  if (std::any_of(hundredths.begin(), hundredths.end(), [](double x) { return x > 0; })) {
    lc.initial.resize(f.hosts.size());
    for (size_t h = 0; h < f.hosts.size(); ++h) lc.initial[h] = hundredths[h] / 100;
  }
  lc.load_first = f.sort_method == "load";
  lc.seq_no.resize(t.size());
  for (size_t r = 0; r < t.size(); ++r) lc.seq_no[r] = f.instances[t.input_index[r]].seq_no;
  // each instance's thresholds on values the correction moves on its host (others cannot change in the run)
  lc.threshold_first.assign(1, 0);
  for (size_t r = 0; r < t.size(); ++r) {
    const Instance& in = f.instances[t.input_index[r]];
    for (const auto& [a, limit] : in.load_thresholds) {
      const uint32_t v = value_of(a);
      if (lc.per_slot[static_cast<size_t>(in.host_index) * lc.names.size() + v] != 0)
        lc.thresholds.push_back({v, f.catalog.at(a).relop, limit});
    }
    lc.threshold_first.push_back(static_cast<uint32_t>(lc.thresholds.size()));
  }
  if (lc.thresholds.empty()) lc.threshold_first.clear();
  return std::make_shared<const LoadCorrection>(std::move(lc));
}

bool formula_reads_load(const FarmModel& f, const LoadCorrection& formula) {
  for (const std::string& name : formula.names)
    if (const auto a = formula_attribute(f, name))
      for (const auto& host : f.host_load)
        if (host.count(*a) > 0) return true;
  return false;
}

}  // namespace colmatch::loaders::sge
