// TaskerBuilder (taskers.hpp): rows in input order, then the table in rank order.
#include "engine/model/taskers.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

#include "kernels/kernels.hpp"

namespace colmatch {

TaskerBuilder::TaskerBuilder(const Catalog& catalog)
    : catalog_(catalog), columns_(catalog.size()), global_values_(catalog.size()) {
  for (size_t a = 0; a < catalog.size(); ++a) {
    columns_[a].type = catalog.at(static_cast<uint32_t>(a)).type;
    columns_[a].multi = catalog.at(static_cast<uint32_t>(a)).multi_valued;
    if (columns_[a].multi) columns_[a].dict.index_elements();
  }
}

void TaskerBuilder::set_list(uint32_t attr, const std::vector<std::string>& values) {
  Raw& c = last_row(attr);
  if (!c.multi) throw ValueError(fmt::format("attribute '{}' takes one value, not a list", catalog_.at(attr).name));
  std::vector<std::string> v;
  v.reserve(values.size());
  for (const auto& x : values) v.push_back(normalize_string(c.type, x));
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::string joined;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) joined += kSetSeparator;
    joined += v[i];
  }
  c.ids.back() = c.dict.intern(joined);
  mark(attr);
}

uint32_t TaskerBuilder::add_host(std::string name) {
  const uint32_t h = static_cast<uint32_t>(host_names_.size());
  if (!host_index_.emplace(name, h).second) throw ValueError(fmt::format("host '{}' is defined twice", name));
  host_names_.push_back(std::move(name));
  host_values_.emplace_back(catalog_.size());
  return h;
}

std::optional<uint32_t> TaskerBuilder::find_host(std::string_view name) const {
  auto it = host_index_.find(std::string(name));
  if (it == host_index_.end()) return std::nullopt;
  return it->second;
}

uint32_t TaskerBuilder::add(std::string name, double power, uint32_t host) {
  const uint32_t t = static_cast<uint32_t>(names_.size());
  if (host != kNone && host >= host_names_.size()) throw ValueError(fmt::format("tasker '{}': unknown host", name));
  if (!seen_.emplace(name, t).second) throw ValueError(fmt::format("tasker '{}' is defined twice", name));
  names_.push_back(std::move(name));
  power_.push_back(power);
  host_of_.push_back(host);
  return t;  // the columns grow when a value is set (last_row) or at build(): a farm with hundreds of
             // attributes, most of them on few taskers, costs what its taskers set
}

TaskerBuilder::Raw& TaskerBuilder::last_row(uint32_t attr) {
  Raw& c = columns_.at(attr);
  if (names_.empty()) throw ValueError("no tasker to set a value on");
  grow(c, names_.size());
  return c;
}

void TaskerBuilder::grow(Raw& c, size_t n) {
  if (c.has.size() >= n) return;
  if (is_numeric(c.type)) c.num.resize(n, 0);
  else c.ids.resize(n, 0);
  c.has.resize(n, 0);
}

void TaskerBuilder::mark(uint32_t attr) { columns_[attr].has.back() = 1; }

double TaskerBuilder::parse(uint32_t attr, std::string_view text, uint32_t& id) {
  Raw& c = columns_.at(attr);
  if (is_numeric(c.type)) return check_number(catalog_.at(attr), parse_number(c.type, text));
  id = c.dict.intern(normalize_string(c.type, text));
  return 0;
}

void TaskerBuilder::set(uint32_t attr, std::string_view text) {
  Raw& c = last_row(attr);
  uint32_t id = 0;
  const double v = parse(attr, text, id);
  if (is_numeric(c.type)) c.num.back() = v;
  else c.ids.back() = id;
  mark(attr);
}

void TaskerBuilder::set_number(uint32_t attr, double v) {
  Raw& c = last_row(attr);
  if (!is_numeric(c.type)) throw ValueError(fmt::format("attribute '{}' is not numeric", catalog_.at(attr).name));
  c.num.back() = check_number(catalog_.at(attr), v);
  mark(attr);
}

void TaskerBuilder::set_power(double p) { power_.back() = p; }

namespace {
template <class In>
void put(In& in, double v, uint32_t id, ValueKind kind) {
  if (kind == ValueKind::Load) {
    in.load = true;
    in.load_num = v;
    in.load_id = id;
  } else {
    in.fixed = true;
    in.num = v;
    in.id = id;
  }
}
}  // namespace

void TaskerBuilder::set_host(uint32_t host, uint32_t attr, std::string_view text, ValueKind kind) {
  uint32_t id = 0;
  const double v = parse(attr, text, id);
  put(host_values_.at(host).at(attr), v, id, kind);
}

void TaskerBuilder::set_global(uint32_t attr, std::string_view text, ValueKind kind) {
  uint32_t id = 0;
  const double v = parse(attr, text, id);
  put(global_values_.at(attr), v, id, kind);
}

namespace {

// The combined value of one level (fixed with load), as Grid Engine combines them.
void combine(const AttributeDef& d, bool numeric, bool fixed, double fnum, uint32_t fid, bool load, double lnum,
             uint32_t lid, double& num, uint32_t& id) {
  if (fixed && load && numeric) {
    switch (d.relop) {
      case Relop::LT:
      case Relop::LE: num = std::min(fnum, lnum); break;  // the smaller is more restrictive
      case Relop::GT:
      case Relop::GE: num = std::max(fnum, lnum); break;
      default: num = fnum; break;  // == / !=: the fixed value overrides the load value
    }
    id = fid;
    return;
  }
  num = fixed ? fnum : lnum;
  id = fixed ? fid : lid;
}

std::string value_text(AttrType type, const Dictionary& dict, double num, uint32_t id) {
  return is_numeric(type) ? fmt::format("{}", num) : dict.value(id);
}

}  // namespace

TaskerTable TaskerBuilder::build() && {
  const size_t n = names_.size();
  const size_t nh = host_names_.size();
  // Every column given a value a row per tasker, as the table has them; a column no tasker gave one
  // stays empty (no row of it is read): an Accelerator farm's counted maps, pools of the global level
  // only, would be 200 columns of 10k absent rows each.
  for (Raw& c : columns_)
    if (!c.has.empty()) grow(c, n);

  // Override rules: lower fixed values against the fixed (and, for ==/!=, load) values above.
  std::vector<std::string> warnings;
  for (uint32_t a = 0; a < catalog_.size(); ++a) {
    const AttributeDef& d = catalog_.at(a);
    if (d.consumable) continue;
    const Raw& c = columns_[a];
    auto upper = [](const LevelInput& in) { return UpperValue{in.fixed, in.num, in.load}; };
    auto upper_text = [&](const LevelInput& in, const std::string& who) {
      return in.fixed ? std::pair{who, value_text(c.type, c.dict, in.num, in.id)}
                      : std::pair{who + " (load)", value_text(c.type, c.dict, in.load_num, in.load_id)};
    };
    // Son of Grid Engine 8.1.9 accepts any override and checks every level (strict hierarchical
    // matching, which the columns do anyway): one warning per attribute instead of an error.
    // (the levels' names are formatted only for a warning: not for each of thousands of taskers)
    bool warned = false;
    auto check = [&](const LevelInput& up, const auto& upper_who, double lnum, uint32_t lid, const auto& lower_who) {
      if (warned || may_override(d.relop, lnum, upper(up))) return;
      const std::string lower = lower_who();
      const auto [uw, uv] = upper_text(up, upper_who());
      const std::string msg = override_message(d, lower, value_text(c.type, c.dict, lnum, lid), uw, uv);
      if (catalog_.reading == GridEngineReading::Design60) throw OverrideError(msg, lower.starts_with("host"));
      warnings.push_back(msg + " (Grid Engine 8.1.9 accepts it: every level is checked)");
      warned = true;
    };
    auto global_who = [] { return std::string("the global value"); };
    auto host_who = [&](uint32_t h) { return [&, h] { return fmt::format("host '{}'", host_names_[h]); }; };
    const LevelInput& g = global_values_[a];
    for (uint32_t h = 0; h < nh; ++h) {
      const LevelInput& hv = host_values_[h][a];
      if (hv.fixed) check(g, global_who, hv.num, hv.id, host_who(h));
    }
    for (uint32_t t = 0; t < c.has.size(); ++t) {  // (n rows, or none)
      if (!c.has[t]) continue;
      const double qn = is_numeric(c.type) ? c.num[t] : 0;
      const uint32_t qi = is_numeric(c.type) ? 0 : c.ids[t];
      auto who = [&, t] { return fmt::format("tasker '{}'", names_[t]); };
      if (host_of_[t] != kNone) check(host_values_[host_of_[t]][a], host_who(host_of_[t]), qn, qi, who);
      check(g, global_who, qn, qi, who);
    }
  }

  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return power_[x] > power_[y]; });
  TaskerTable t;
  t.names.resize(n);
  t.power.resize(n);
  t.host_of.resize(n);
  t.input_index = order;
  t.host_names = std::move(host_names_);
  for (size_t r = 0; r < n; ++r) {
    t.names[r] = std::move(names_[order[r]]);
    t.power[r] = power_[order[r]];
    t.host_of[r] = host_of_[order[r]];
  }

  t.columns.reserve(columns_.size());
  for (size_t a = 0; a < columns_.size(); ++a) {
    const AttributeDef& d = catalog_.at(static_cast<uint32_t>(a));
    Raw& src = columns_[a];
    const bool numeric = is_numeric(src.type);
    Column& dst = t.columns.emplace_back(src.type, src.multi, n, nh);
    dst.dict = std::move(src.dict);
    for (uint32_t r = 0; !src.has.empty() && r < n; ++r) {  // queue level, permuted into rank order
      const uint32_t from = order[r];
      if (src.has[from]) dst.set_queue(r, numeric ? src.num[from] : 0, numeric ? 0 : src.ids[from]);
    }
    LevelValues by_host(nh, numeric, /*lazy=*/true);
    for (uint32_t h = 0; h < nh; ++h) {
      const LevelInput& in = host_values_[h][a];
      if (!in.fixed && !in.load) continue;
      double v = 0;
      uint32_t id = 0;
      combine(d, numeric, in.fixed, in.num, in.id, in.load, in.load_num, in.load_id, v, id);
      by_host.set(h, v, id);
    }
    dst.set_hosts(std::move(by_host), t.host_of);
    const LevelInput& g = global_values_[a];
    GlobalValue gv;
    gv.present = g.fixed || g.load;
    if (gv.present) combine(d, numeric, g.fixed, g.num, g.id, g.load, g.load_num, g.load_id, gv.num, gv.id);
    dst.set_global(gv);
  }
  t.warnings = std::move(warnings);
  return t;
}

}  // namespace colmatch
