#include "engine/model/columns.hpp"

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

}  // namespace colmatch
