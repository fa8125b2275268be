#include "engine/columns.hpp"

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

uint32_t Dictionary::intern(std::string_view v) {
  auto it = index_.find(v);
  if (it != index_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(values_.size());
  values_.emplace_back(v);
  index_.emplace(values_.back(), id);
  if (elements_indexed_) index_entry(id);
  return id;
}

void Dictionary::index_entry(uint32_t id) {
  for (std::string_view e : set_elements(values_[id])) {
    std::vector<uint32_t>& ids = elements_[std::string(e)];
    if (ids.empty() || ids.back() != id) ids.push_back(id);  // an element twice in one entry: once
  }
}

void Dictionary::index_elements() {
  if (elements_indexed_) return;
  elements_indexed_ = true;
  for (uint32_t id = 0; id < values_.size(); ++id) index_entry(id);
}

std::span<const uint32_t> Dictionary::entries_with(std::string_view element) const {
  const auto it = elements_.find(std::string(element));
  if (it == elements_.end()) return {};
  return it->second;
}

std::optional<uint32_t> Dictionary::find(std::string_view v) const {
  auto it = index_.find(v);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

LevelValues::LevelValues(size_t rows, bool numeric, bool lazy)
    : rows_(rows), numeric_(numeric), present_(kernels::words_for(rows), 0), absent_(kernels::words_for(rows), 0) {
  if (!lazy) allocate();
  kernels::fill_ones(absent_.data(), rows);
}

void LevelValues::allocate() {
  if (numeric_) nums_.assign(rows_, 0);
  else ids_.assign(rows_, 0);
}

void LevelValues::set(uint32_t r, double num, uint32_t id) {
  if (nums_.empty() && ids_.empty()) allocate();
  if (numeric_) nums_[r] = num;
  else ids_[r] = id;
  const uint64_t bit = uint64_t{1} << (r & 63);
  if (!(present_[r >> 6] & bit)) ++count_;
  present_[r >> 6] |= bit;
  absent_[r >> 6] &= ~bit;
}

void LevelValues::clear(uint32_t r) noexcept {
  if (!nums_.empty()) nums_[r] = 0;
  if (!ids_.empty()) ids_[r] = 0;
  const uint64_t bit = uint64_t{1} << (r & 63);
  if (present_[r >> 6] & bit) --count_;
  present_[r >> 6] &= ~bit;
  absent_[r >> 6] |= bit;
}

bool may_override(Relop relop, double lower, const UpperValue& upper) noexcept {
  if (relop == Relop::EQ || relop == Relop::NE) return !upper.fixed && !upper.load;
  if (!upper.fixed) return true;
  return relop == Relop::LT || relop == Relop::LE ? lower <= upper.fixed_num : lower >= upper.fixed_num;
}

std::string override_message(const AttributeDef& def, std::string_view lower_who, std::string_view lower_value,
                             std::string_view upper_who, std::string_view upper_value) {
  const bool eq = def.relop == Relop::EQ || def.relop == Relop::NE;
  return fmt::format("attribute '{}' (relop {}): {} ({}) overrides {} ({}); {}", def.name, relop_name(def.relop),
                     lower_who, lower_value, upper_who, upper_value,
                     eq ? "== and != attributes can be overridden only on the same level"
                        : "a lower level may only set a more restrictive value");
}

Column::Column(AttrType t, bool m, size_t taskers, size_t hosts)
    : type(t),
      multi(m),
      queue_(taskers, is_numeric(t), /*lazy=*/true),
      host_(taskers, is_numeric(t), /*lazy=*/true),
      by_host_(hosts, is_numeric(t), /*lazy=*/true),
      defined_(kernels::words_for(taskers), 0) {}

void Column::refresh_defined(uint32_t t) noexcept {
  const uint64_t bit = uint64_t{1} << (t & 63);
  if (global_.present || queue_.has(t) || host_.has(t)) defined_[t >> 6] |= bit;
  else defined_[t >> 6] &= ~bit;
}

void Column::refresh_all_defined() {
  const size_t n = queue_.rows();
  if (global_.present) {
    kernels::fill_ones(defined_.data(), n);
    return;
  }
  for (size_t w = 0; w < defined_.size(); ++w) defined_[w] = queue_.present()[w] | host_.present()[w];
}

void Column::set_queue(uint32_t t, double num, uint32_t id) {
  queue_.set(t, num, id);
  refresh_defined(t);
}

void Column::clear_queue(uint32_t t) noexcept {
  queue_.clear(t);
  refresh_defined(t);
}

void Column::set_global(GlobalValue g) {
  global_ = g;
  refresh_all_defined();
}

void Column::set_hosts(LevelValues by_host, const std::vector<uint32_t>& host_of) {
  by_host_ = std::move(by_host);
  const size_t n = host_of.size();
  const bool numeric = is_numeric(type);
  host_ = LevelValues(n, numeric, /*lazy=*/true);
  for (uint32_t r = 0; r < n; ++r) {
    const uint32_t h = host_of[r];
    if (h != kNone && by_host_.has(h)) host_.set(r, numeric ? by_host_.num(h) : 0, numeric ? 0 : by_host_.id(h));
  }
  host_distinct_.clear();
  host_rank_.clear();
  if (numeric && host_.any()) {
    std::vector<double> d;
    for (uint32_t h = 0; h < by_host_.rows(); ++h)
      if (by_host_.has(h)) d.push_back(by_host_.num(h));
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    if (d.size() <= 32) {
      host_distinct_ = d;
      host_rank_.assign(n, 0);
      for (uint32_t r = 0; r < n; ++r)
        if (host_.has(r))
          host_rank_[r] = static_cast<uint32_t>(std::lower_bound(d.begin(), d.end(), host_.num(r)) - d.begin());
    }
  }
  refresh_all_defined();
}

TaskerBuilder::TaskerBuilder(const Catalog& catalog)
    : catalog_(catalog), columns_(catalog.size()), global_values_(catalog.size()) {
  for (size_t a = 0; a < catalog.size(); ++a) {
    columns_[a].type = catalog.at(static_cast<uint32_t>(a)).type;
    columns_[a].multi = catalog.at(static_cast<uint32_t>(a)).multi_valued;
    if (columns_[a].multi) columns_[a].dict.index_elements();
  }
}

std::vector<std::string_view> set_elements(std::string_view entry) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= entry.size(); ++i)
    if (i == entry.size() || entry[i] == kSetSeparator) {
      out.push_back(entry.substr(start, i - start));
      start = i + 1;
    }
  return out;
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

void TextColumn::append_parts(std::span<const std::string_view> texts,
                              std::span<const std::span<const uint32_t>> ends) {
  const size_t parts = std::min(texts.size(), ends.size());
  std::vector<size_t> chars_at(parts + 1, chars_.size()), ends_at(parts + 1, ends_.size());
  for (size_t p = 0; p < parts; ++p) {
    chars_at[p + 1] = chars_at[p] + (ends[p].empty() ? 0 : ends[p].back());
    ends_at[p + 1] = ends_at[p] + ends[p].size();
  }
  chars_.resize(chars_at.back());
  ends_.resize(ends_at.back());
  tbb::parallel_for(size_t{0}, parts, [&](size_t p) {
    const size_t bytes = chars_at[p + 1] - chars_at[p];
    if (bytes > 0) std::memcpy(chars_.data() + chars_at[p], texts[p].data(), bytes);
    for (size_t i = 0; i < ends[p].size(); ++i) ends_[ends_at[p] + i] = chars_at[p] + ends[p][i];
  });
}

std::vector<std::string> TextColumn::strings() const {
  std::vector<std::string> out;
  out.reserve(size());
  for (size_t i = 0; i < size(); ++i) out.emplace_back((*this)[i]);
  return out;
}

void JobAmounts::set_last(uint32_t k, double amount) {
  const uint32_t r = row_.back();
  if (last_shared_ || r + 2 != first_.size()) {  // a row of its own, the last one, before it changes
    const std::vector<Entry> copy(entries_.begin() + first_[r], entries_.begin() + first_[r + 1]);
    entries_.insert(entries_.end(), copy.begin(), copy.end());
    row_.back() = static_cast<uint32_t>(first_.size() - 1);
    first_.push_back(static_cast<uint32_t>(entries_.size()));
    last_shared_ = false;
  }
  const auto begin = entries_.begin() + first_[first_.size() - 2];
  auto it = std::lower_bound(begin, entries_.end(), k, [](const Entry& e, uint32_t c) { return e.consumable < c; });
  if (it != entries_.end() && it->consumable == k) {
    it->amount = amount;
    return;
  }
  entries_.insert(it, Entry{k, amount});
  ++first_.back();
}

void JobAmounts::add_jobs_like(const JobAmounts& src, std::span<const uint32_t> like) {
  if (like.empty()) return;
  const size_t rows0 = first_.size() - 1, n0 = row_.size();
  if (entries_.size() + src.entries_.size() > UINT32_MAX) throw std::length_error("JobAmounts: 2^32 entries");
  const auto shift = static_cast<uint32_t>(entries_.size());
  entries_.insert(entries_.end(), src.entries_.begin(), src.entries_.end());
  for (size_t r = 1; r < src.first_.size(); ++r) first_.push_back(shift + src.first_[r]);
  row_.resize(n0 + like.size());
  tbb::parallel_for(tbb::blocked_range<size_t>(0, like.size(), 16384), [&](const tbb::blocked_range<size_t>& b) {
    for (size_t i = b.begin(); i < b.end(); ++i) row_[n0 + i] = static_cast<uint32_t>(rows0 + src.row_[like[i]]);
  });
  last_shared_ = true;
}

void JobDepends::add(uint32_t j, uint32_t d) {
  if (first_.size() >= 2 && j < first_.size() - 2)
    throw std::invalid_argument(
        fmt::format("JobDepends: job {} after job {}: give jobs theirs in order", j, first_.size() - 2));
  if (first_.empty()) first_.push_back(0);
  while (first_.size() < size_t{j} + 2) first_.push_back(static_cast<uint32_t>(ids_.size()));  // none before j
  ids_.push_back(d);
  first_.back() = static_cast<uint32_t>(ids_.size());
}

JobBuilder::JobBuilder(const Catalog& catalog) : catalog_(catalog) {
  // The empty request (true) is request 0, shared by every job that asks for nothing.
  intern_request(Request{});
}

uint32_t JobBuilder::add(std::string_view id, std::string_view owner, std::string_view group, double priority,
                         double submit, uint32_t slots) {
  const uint32_t j = static_cast<uint32_t>(table_.id.size());
  table_.id.push_back(id);
  table_.owner.push_back(table_.owners.intern(owner));
  table_.group.push_back(table_.groups.intern(group));
  table_.priority.push_back(priority);
  table_.submit.push_back(submit);
  table_.slots.push_back(slots == 0 ? 1 : slots);
  table_.request.push_back(0);
  table_.soft.push_back(0);
  table_.rule.push_back(AllocationRule::PeSlots);
  table_.amount.add_job();
  table_.utilization.add_job();
  table_.reject.push_back(kNone);
  table_.note.push_back(kNone);
  if (!table_.choice.empty()) table_.choice.push_back(kNone);
  table_.runtime.push_back(std::numeric_limits<double>::quiet_NaN());
  table_.walltime.push_back(std::numeric_limits<double>::quiet_NaN());
  table_.hold_until.push_back(-std::numeric_limits<double>::infinity());
  if (no_queue_ == kNone) {
    no_queue_ = table_.queues.intern("");
    no_account_ = table_.accounts.intern("");
    no_qos_ = table_.qos_names.intern("");
  }
  table_.queue.push_back(no_queue_);
  table_.account.push_back(no_account_);
  table_.qos.push_back(no_qos_);
  if (slots == 0) throw ValueError("slots must be at least 1");
  return j;
}

void JobBuilder::add_copies(const JobTable& protos, std::span<const CopiedJobs> pieces) {
  JobTable& t = table_;
  // Where each piece's jobs go, then the first bad job of each piece (checked in parallel; the
  // earliest piece's is named).
  std::vector<size_t> first(pieces.size() + 1, 0);
  for (size_t p = 0; p < pieces.size(); ++p) {
    const CopiedJobs& c = pieces[p];
    const size_t n = c.like.size();
    auto per_job = [n](std::span<const double> times) { return times.empty() || times.size() == n; };
    if (c.id_end.size() != n || !per_job(c.submit) || !per_job(c.runtime) || !per_job(c.walltime) ||
        (n > 0 && c.id_end[n - 1] > c.id_text.size()))
      throw ValueError(fmt::format("add_copies: piece {} has columns of different lengths", p));
    first[p + 1] = first[p] + n;
  }
  auto id_of = [](const CopiedJobs& c, size_t i) {  // ends checked to go up before any id is taken
    const size_t from = i == 0 ? 0 : c.id_end[i - 1];
    return c.id_text.substr(from, c.id_end[i] - from);
  };
  std::vector<std::string> bad(pieces.size());
  tbb::parallel_for(size_t{0}, pieces.size(), [&](size_t p) {
    const CopiedJobs& c = pieces[p];
    for (size_t i = 0; i < c.like.size(); ++i) {
      if (i > 0 && c.id_end[i] < c.id_end[i - 1]) {
        bad[p] = fmt::format("add_copies: piece {}: the ids' ends go down at job {}", p, i);
        return;
      }
      if (c.like[i] >= protos.size()) {
        bad[p] = fmt::format("job {}: no prototype {}", id_of(c, i), c.like[i]);
        return;
      }
      for (const std::span<const double> times : {c.submit, c.runtime, c.walltime})
        if (const double v = times.empty() ? 0.0 : times[i]; !std::isnan(v) && !(v >= 0 && std::isfinite(v))) {
          bad[p] = fmt::format("job {}: a time must be a finite number of seconds >= 0, not {}", id_of(c, i), v);
          return;
        }
    }
  });
  for (std::string& b : bad)
    if (!b.empty()) throw ValueError(std::move(b));
  const size_t n0 = t.size(), n = first.back(), n1 = n0 + n;
  std::vector<uint32_t> like(n);
  tbb::parallel_for(size_t{0}, pieces.size(), [&](size_t p) {
    std::copy(pieces[p].like.begin(), pieces[p].like.end(), like.begin() + static_cast<std::ptrdiff_t>(first[p]));
  });
  // The prototypes' dictionary ids and requests in this table, once each.
  const size_t np = protos.size();
  std::vector<uint32_t> owner(np), group(np), note(np), queue(np), account(np), qos(np), request(np), soft(np);
  std::vector<uint32_t> request_here(protos.requests.size(), kNone);
  auto map_request = [&](uint32_t r) {
    if (request_here[r] == kNone) request_here[r] = intern_request(protos.requests[r]);  // canonical already
    return request_here[r];
  };
  // Each value of a prototypes' dictionary is interned here once, not once per prototype.
  struct DictionaryMap {
    const Dictionary& from;
    Dictionary& to;
    std::vector<uint32_t> here;
    uint32_t operator()(uint32_t id) {
      if (id >= here.size()) here.resize(from.size(), kNone);
      if (here[id] == kNone) here[id] = to.intern(from.value(id));
      return here[id];
    }
  };
  DictionaryMap owners{protos.owners, t.owners, {}}, groups{protos.groups, t.groups, {}},
      notes{protos.notes, t.notes, {}}, queues{protos.queues, t.queues, {}}, accounts{protos.accounts, t.accounts, {}},
      qos_names{protos.qos_names, t.qos_names, {}};
  for (uint32_t p = 0; p < np; ++p) {
    owner[p] = owners(protos.owner[p]);
    group[p] = groups(protos.group[p]);
    note[p] = protos.note[p] == kNone ? kNone : notes(protos.note[p]);
    queue[p] = queues(protos.queue[p]);
    account[p] = accounts(protos.account[p]);
    qos[p] = qos_names(protos.qos[p]);
    request[p] = map_request(protos.request[p]);
    soft[p] = map_request(protos.soft[p]);
  }
  // The columns grow side by side (growing one is first-touching its pages: a million jobs' columns
  // are some 150 MB).
  std::vector<std::string_view> id_texts;
  std::vector<std::span<const uint32_t>> id_ends;
  for (const CopiedJobs& c : pieces) {
    id_texts.push_back(c.id_text);
    id_ends.push_back(c.id_end);
  }
  tbb::task_group grow;
  grow.run([&] { t.id.append_parts(id_texts, id_ends); });  // ends checked above to go up within the text
  for (auto* v : {&t.owner, &t.group, &t.slots, &t.request, &t.soft, &t.reject, &t.note, &t.queue, &t.account, &t.qos})
    grow.run([v, n1] { v->resize(n1); });
  for (auto* v : {&t.priority, &t.submit, &t.runtime, &t.walltime, &t.hold_until}) grow.run([v, n1] { v->resize(n1); });
  grow.run([&] { t.rule.resize(n1); });
  grow.run([&] { t.amount.add_jobs_like(protos.amount, like); });
  grow.run([&] { t.utilization.add_jobs_like(protos.utilization, like); });
  // The prototypes' choices, their requests mapped here (after the requests above: map_request is not
  // shared with the tasks).
  std::vector<uint32_t> choice_here(protos.choices.size());
  for (size_t c = 0; c < protos.choices.size(); ++c) {
    JobTable::Choice x = protos.choices[c];
    for (uint32_t& r : x.request) r = map_request(r);
    choice_here[c] = static_cast<uint32_t>(t.choices.size());
    t.choices.push_back(std::move(x));
  }
  const bool choices = !protos.choice.empty() || !t.choice.empty();
  if (choices) grow.run([&] { t.choice.resize(n1, kNone); });
  grow.wait();
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 4096), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i < r.end(); ++i) {
      const uint32_t p = like[i];
      const size_t j = n0 + i;
      t.owner[j] = owner[p];
      t.group[j] = group[p];
      t.priority[j] = protos.priority[p];
      t.slots[j] = protos.slots[p];
      t.request[j] = request[p];
      t.soft[j] = soft[p];
      t.rule[j] = protos.rule[p];
      t.reject[j] = kNone;
      t.note[j] = note[p];
      t.hold_until[j] = protos.hold_until[p];
      t.queue[j] = queue[p];
      t.account[j] = account[p];
      t.qos[j] = qos[p];
      if (choices) t.choice[j] = protos.choice_of(p) == kNone ? kNone : choice_here[protos.choice_of(p)];
    }
  });
  tbb::parallel_for(size_t{0}, pieces.size(), [&](size_t p) {
    const CopiedJobs& c = pieces[p];
    const size_t j0 = n0 + first[p];
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (const auto& [from, to, none] : {std::tuple{c.submit, &t.submit, 0.0}, std::tuple{c.runtime, &t.runtime, nan},
                                         std::tuple{c.walltime, &t.walltime, nan}}) {
      const auto at = to->begin() + static_cast<std::ptrdiff_t>(j0);
      if (from.empty()) std::fill(at, at + static_cast<std::ptrdiff_t>(c.like.size()), none);
      else std::copy(from.begin(), from.end(), at);
    }
  });
}

uint32_t JobBuilder::intern_request(Request r) {
  std::string text = canonical_text(r, catalog_);
  return intern_canonical(std::move(r), std::move(text));
}

uint32_t JobBuilder::intern_canonical(Request r, std::string text) {
  auto it = by_canonical_.find(text);
  if (it != by_canonical_.end()) return it->second;
  const uint32_t idx = static_cast<uint32_t>(table_.requests.size());
  table_.requests.push_back(std::move(r));
  table_.request_text.push_back(text);
  by_canonical_.emplace(std::move(text), idx);
  return idx;
}

uint32_t JobBuilder::parse_cached(std::string_view text) {
  const std::string key(text);
  if (auto it = by_text_.find(key); it != by_text_.end()) return it->second;
  if (auto it = bad_text_.find(key); it != bad_text_.end()) throw RequestError(it->second, 0);
  try {
    const uint32_t idx = intern_request(parse_request(text, catalog_));
    by_text_.emplace(key, idx);
    return idx;
  } catch (const RequestError& e) {
    const std::string msg = fmt::format("{} (column {})", e.what(), e.column);
    bad_text_.emplace(key, msg);
    throw RequestError(msg, e.column);
  }
}

void JobBuilder::set_request(std::string_view text) { table_.request.back() = parse_cached(text); }

void JobBuilder::set_soft(std::string_view text) {
  const uint32_t idx = parse_cached(text);
  const size_t n = soft_terms(table_.requests[idx]).size();
  if (n > kMaxSoftRequests)
    throw RequestError(fmt::format("{} soft requests; at most {} are supported", n, kMaxSoftRequests), 1);
  table_.soft.back() = idx;
}

std::vector<const Request*> soft_terms(const Request& soft) {
  std::vector<const Request*> out;
  if (soft.kind == Request::Kind::And) {
    for (const auto& k : soft.kids) out.push_back(&k);
  } else {
    out.push_back(&soft);
  }
  return out;
}

void JobBuilder::set_request(Request r) {
  canonicalize(r, catalog_);
  table_.request.back() = intern_request(std::move(r));
}

std::vector<uint32_t> JobBuilder::intern_all(std::vector<Request> rs) {
  std::vector<std::string> text(rs.size());
  tbb::parallel_for(size_t{0}, rs.size(), [&](size_t i) {
    canonicalize(rs[i], catalog_);
    text[i] = canonical_text(rs[i], catalog_);
  });
  std::vector<uint32_t> out(rs.size());
  for (size_t i = 0; i < rs.size(); ++i) out[i] = intern_canonical(std::move(rs[i]), std::move(text[i]));
  return out;
}

uint32_t JobBuilder::intern(Request r) {
  canonicalize(r, catalog_);
  return intern_request(std::move(r));
}

void JobBuilder::set_request_index(uint32_t request) {
  if (request >= table_.requests.size()) throw ValueError(fmt::format("no interned request {}", request));
  table_.request.back() = request;
}

void JobBuilder::set_utilization(uint32_t attr, double fraction) {
  const int slot = catalog_.consumable_slot(attr);
  if (slot < 0) throw ValueError(fmt::format("attribute '{}' is not a consumable", catalog_.at(attr).name));
  if (!(fraction >= 0 && fraction <= 1))
    throw ValueError(fmt::format("utilization of '{}' must be a fraction from 0 to 1", catalog_.at(attr).name));
  table_.utilization.set_last(static_cast<uint32_t>(slot), fraction);
}

void JobBuilder::set_amount(uint32_t attr, double amount) {
  const AttributeDef& d = catalog_.at(attr);
  const int slot = catalog_.consumable_slot(attr);
  if (slot < 0) throw ValueError(fmt::format("attribute '{}' is not a consumable", d.name));
  if (d.requestable == Requestable::No) throw ValueError(fmt::format("attribute '{}' is not requestable", d.name));
  if (!(amount >= 0)) throw ValueError(fmt::format("attribute '{}': a request must not be negative", d.name));
  // SGE 8.1.9 takes lic=1.5 on an int consumable (compares 1.5)
  const bool as_double = d.type == AttrType::Int && catalog_.reading == GridEngineReading::SoGE819;
  check_number(d, as_double ? AttrType::Double : d.type, amount);
  table_.amount.set_last(static_cast<uint32_t>(slot), amount);
}

void JobBuilder::set_rule(AllocationRule rule) { table_.rule.back() = rule; }

void JobBuilder::set_times(double runtime, double walltime) {
  for (double v : {runtime, walltime})
    if (!std::isnan(v) && !(v >= 0 && std::isfinite(v)))
      throw ValueError(fmt::format("a time must be a finite number of seconds >= 0, not {}", v));
  table_.runtime.back() = runtime;
  table_.walltime.back() = walltime;
}

void JobBuilder::set_hold(double until) {
  if (std::isnan(until)) throw ValueError("a hold needs a release time or none");
  table_.hold_until.back() = until;
}

void JobBuilder::set_depends(std::vector<std::string> ids) {
  depends_.emplace_back(static_cast<uint32_t>(table_.size() - 1), std::move(ids));
}

void JobBuilder::set_credentials(std::string_view queue, std::string_view account, std::string_view qos) {
  table_.queue.back() = table_.queues.intern(queue);
  table_.account.back() = table_.accounts.intern(account);
  table_.qos.back() = table_.qos_names.intern(qos);
}

void JobBuilder::reject(uint32_t j, std::string reason) {
  if (table_.reject[j] != kNone) return;  // the first reason stands
  table_.reject[j] = static_cast<uint32_t>(table_.reject_reason.size());
  table_.reject_reason.push_back(std::move(reason));
}

void JobBuilder::set_note(uint32_t j, std::string_view note) { table_.note[j] = table_.notes.intern(note); }

uint32_t JobBuilder::add_choice(const std::vector<uint32_t>& requests,
                                const std::vector<std::vector<std::pair<uint32_t, double>>>& amounts) {
  if (amounts.size() != requests.size()) throw ValueError("a choice's solutions each need their amounts");
  JobTable::Choice c;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i] >= table_.requests.size()) throw ValueError(fmt::format("no request {}", requests[i]));
    c.request.push_back(requests[i]);
    std::vector<JobAmounts::Entry> row;
    for (const auto& [attr, amount] : amounts[i]) {
      const int k = catalog_.consumable_slot(attr);
      if (k < 0) throw ValueError(fmt::format("{} is not a consumable", catalog_.at(attr).name));
      check_number(catalog_.at(attr), amount);
      bool set = false;
      for (JobAmounts::Entry& e : row)
        if (e.consumable == static_cast<uint32_t>(k)) e.amount = amount, set = true;
      if (!set) row.push_back({static_cast<uint32_t>(k), amount});
    }
    std::sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.consumable < b.consumable; });
    c.amounts.push_back(std::move(row));
  }
  table_.choices.push_back(std::move(c));
  return static_cast<uint32_t>(table_.choices.size() - 1);
}

void JobBuilder::set_gate(uint32_t c, const std::vector<std::pair<uint32_t, double>>& gate,
                          std::vector<JobTable::Choice::Outcome> outcome) {
  if (c >= table_.choices.size()) throw ValueError(fmt::format("no choice {}", c));
  JobTable::Choice& ch = table_.choices[c];
  if (gate.size() > kMaxGate) throw ValueError(fmt::format("a gate of {} pools; at most {}", gate.size(), kMaxGate));
  if (outcome.size() != size_t{1} << gate.size())
    throw ValueError(fmt::format("a gate of {} pools needs {} outcomes, not {}", gate.size(), size_t{1} << gate.size(),
                                 outcome.size()));
  for (const auto& o : outcome) {
    for (const uint32_t s : o.solutions)
      if (s >= ch.request.size()) throw ValueError(fmt::format("no solution {}", s));
    if (o.kind == JobTable::Choice::Outcome::Kind::Wait && o.wait_on >= gate.size())
      throw ValueError(fmt::format("no pool {} in the gate", o.wait_on));
  }
  ch.gate.clear();
  for (const auto& [attr, amount] : gate) {
    const int k = catalog_.consumable_slot(attr);
    if (k < 0) throw ValueError(fmt::format("{} is not a consumable", catalog_.at(attr).name));
    ch.gate.push_back({static_cast<uint32_t>(k), check_number(catalog_.at(attr), amount)});
  }
  ch.outcome = std::move(outcome);
}

void JobBuilder::set_choice(uint32_t c) {
  if (c >= table_.choices.size()) throw ValueError(fmt::format("no choice {}", c));
  if (table_.choice.empty()) table_.choice.assign(table_.size(), kNone);
  table_.choice.back() = c;
}

JobTable JobBuilder::build() && {
  if (!depends_.empty()) {  // dependency ids -> job indices
    std::unordered_map<std::string_view, uint32_t> index;
    for (uint32_t j = 0; j < table_.size(); ++j) index.emplace(table_.id[j], j);
    for (auto& [j, ids] : depends_)
      for (const auto& id : ids) {
        const auto it = index.find(id);
        if (it == index.end() || it->second == j) {
          reject(j, fmt::format("job {}: field 'depends': {} '{}'", table_.id[j],
                                it == index.end() ? "no job" : "a job cannot depend on itself:", id));
          continue;
        }
        table_.depends.add(j, it->second);
      }
  }
  // Forced attributes (Design60, the seed's reading): a consumable must be in the job's amounts, any
  // other in its request. Son of Grid Engine 8.1.9 keeps such a job off the taskers that define the
  // attribute instead (unrequested_forced, engine/eligibility.hpp).
  std::vector<std::vector<uint32_t>> mentioned(table_.requests.size());
  for (size_t r = 0; r < table_.requests.size(); ++r) mentioned[r] = mentioned_attributes(table_.requests[r]);
  for (uint32_t a = 0; a < catalog_.size() && catalog_.reading == GridEngineReading::Design60; ++a) {
    const AttributeDef& d = catalog_.at(a);
    if (d.requestable != Requestable::Forced) continue;
    const int slot = catalog_.consumable_slot(a);
    for (uint32_t j = 0; j < table_.size(); ++j) {
      const bool has =
          slot >= 0 ? !std::isnan(table_.amount.at(static_cast<size_t>(slot), j))
                    : std::binary_search(mentioned[table_.request[j]].begin(), mentioned[table_.request[j]].end(), a);
      if (!has) reject(j, fmt::format("attribute '{}' is forced but not requested", d.name));
    }
  }
  return std::move(table_);
}

}  // namespace colmatch
