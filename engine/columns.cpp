#include "engine/columns.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "kernels/kernels.hpp"

namespace colmatch {

uint32_t Dictionary::intern(std::string_view v) {
  auto it = index_.find(std::string(v));
  if (it != index_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(values_.size());
  values_.emplace_back(v);
  index_.emplace(values_.back(), id);
  return id;
}

std::optional<uint32_t> Dictionary::find(std::string_view v) const {
  auto it = index_.find(std::string(v));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

TaskerBuilder::TaskerBuilder(const Catalog& catalog) : catalog_(catalog), columns_(catalog.size()) {
  for (size_t a = 0; a < catalog.size(); ++a) columns_[a].type = catalog.at(static_cast<uint32_t>(a)).type;
}

uint32_t TaskerBuilder::add(std::string name, double power) {
  const uint32_t t = static_cast<uint32_t>(names_.size());
  if (!seen_.emplace(name, t).second) throw ValueError(fmt::format("tasker '{}' is defined twice", name));
  names_.push_back(std::move(name));
  power_.push_back(power);
  for (auto& c : columns_) {
    if (is_numeric(c.type))
      c.num.push_back(0);
    else
      c.ids.push_back(0);
    if ((t & 63) == 0) c.present.push_back(0);
  }
  return t;
}

void TaskerBuilder::mark(uint32_t attr) {
  const size_t t = names_.size() - 1;
  columns_[attr].present[t >> 6] |= uint64_t{1} << (t & 63);
}

void TaskerBuilder::set(uint32_t attr, std::string_view text) {
  Column& c = columns_.at(attr);
  if (is_numeric(c.type)) {
    c.num.back() = parse_number(c.type, text);
  } else {
    c.ids.back() = c.dict.intern(normalize_string(c.type, text));
  }
  mark(attr);
}

void TaskerBuilder::set_number(uint32_t attr, double v) {
  Column& c = columns_.at(attr);
  if (!is_numeric(c.type))
    throw ValueError(fmt::format("attribute '{}' is not numeric", catalog_.at(attr).name));
  c.num.back() = v;
  mark(attr);
}

void TaskerBuilder::set_power(double p) { power_.back() = p; }

TaskerTable TaskerBuilder::build() && {
  const size_t n = names_.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return power_[a] > power_[b]; });
  TaskerTable t;
  t.names.resize(n);
  t.power.resize(n);
  t.input_index = order;
  for (size_t r = 0; r < n; ++r) {
    t.names[r] = std::move(names_[order[r]]);
    t.power[r] = power_[order[r]];
  }
  t.columns.resize(columns_.size());
  for (size_t a = 0; a < columns_.size(); ++a) {
    Column& src = columns_[a];
    Column& dst = t.columns[a];
    dst.type = src.type;
    dst.dict = std::move(src.dict);
    dst.present.assign(kernels::words_for(n), 0);
    if (is_numeric(src.type)) dst.num.resize(n);
    else dst.ids.resize(n);
    for (size_t r = 0; r < n; ++r) {
      const uint32_t from = order[r];
      if (is_numeric(src.type)) dst.num[r] = src.num[from];
      else dst.ids[r] = src.ids[from];
      if (src.has(from)) dst.present[r >> 6] |= uint64_t{1} << (r & 63);
    }
  }
  return t;
}

JobBuilder::JobBuilder(const Catalog& catalog) : catalog_(catalog) {
  table_.amount.resize(catalog.consumables().size());
  // The empty request (true) is request 0, shared by every job that asks for nothing.
  intern_request(Request{});
}

uint32_t JobBuilder::add(std::string id, std::string_view owner, std::string_view group, double priority,
                         double submit, uint32_t slots) {
  const uint32_t j = static_cast<uint32_t>(table_.id.size());
  table_.id.push_back(std::move(id));
  table_.owner.push_back(table_.owners.intern(owner));
  table_.group.push_back(table_.groups.intern(group));
  table_.priority.push_back(priority);
  table_.submit.push_back(submit);
  table_.slots.push_back(slots == 0 ? 1 : slots);
  table_.request.push_back(0);
  for (auto& a : table_.amount) a.push_back(std::numeric_limits<double>::quiet_NaN());
  table_.reject.push_back(kNone);
  if (slots == 0) throw ValueError("slots must be at least 1");
  return j;
}

uint32_t JobBuilder::intern_request(Request r) {
  std::string text = canonical_text(r, catalog_);
  auto it = by_canonical_.find(text);
  if (it != by_canonical_.end()) return it->second;
  const uint32_t idx = static_cast<uint32_t>(table_.requests.size());
  table_.requests.push_back(std::move(r));
  table_.request_text.push_back(text);
  by_canonical_.emplace(std::move(text), idx);
  return idx;
}

void JobBuilder::set_request(std::string_view text) {
  const std::string key(text);
  if (auto it = by_text_.find(key); it != by_text_.end()) {
    table_.request.back() = it->second;
    return;
  }
  if (auto it = bad_text_.find(key); it != bad_text_.end()) throw RequestError(it->second, 0);
  try {
    const uint32_t idx = intern_request(parse_request(text, catalog_));
    by_text_.emplace(key, idx);
    table_.request.back() = idx;
  } catch (const RequestError& e) {
    const std::string msg = fmt::format("{} (column {})", e.what(), e.column);
    bad_text_.emplace(key, msg);
    throw RequestError(msg, e.column);
  }
}

void JobBuilder::set_request(Request r) {
  canonicalize(r);
  table_.request.back() = intern_request(std::move(r));
}

void JobBuilder::set_amount(uint32_t attr, double amount) {
  const AttributeDef& d = catalog_.at(attr);
  const int slot = catalog_.consumable_slot(attr);
  if (slot < 0) throw ValueError(fmt::format("attribute '{}' is not a consumable", d.name));
  if (d.requestable == Requestable::No) throw ValueError(fmt::format("attribute '{}' is not requestable", d.name));
  if (!(amount >= 0)) throw ValueError(fmt::format("attribute '{}': a request must not be negative", d.name));
  table_.amount[static_cast<size_t>(slot)].back() = amount;
}

void JobBuilder::reject(uint32_t j, std::string reason) {
  if (table_.reject[j] != kNone) return;  // the first reason stands
  table_.reject[j] = static_cast<uint32_t>(table_.reject_reason.size());
  table_.reject_reason.push_back(std::move(reason));
}

JobTable JobBuilder::build() && {
  // Forced attributes: a consumable must be in the job's amounts, any other in its request.
  std::vector<std::vector<uint32_t>> mentioned(table_.requests.size());
  for (size_t r = 0; r < table_.requests.size(); ++r) mentioned[r] = mentioned_attributes(table_.requests[r]);
  for (uint32_t a = 0; a < catalog_.size(); ++a) {
    const AttributeDef& d = catalog_.at(a);
    if (d.requestable != Requestable::Forced) continue;
    const int slot = catalog_.consumable_slot(a);
    for (uint32_t j = 0; j < table_.size(); ++j) {
      const bool has = slot >= 0 ? !std::isnan(table_.amount[static_cast<size_t>(slot)][j])
                                 : std::binary_search(mentioned[table_.request[j]].begin(),
                                                      mentioned[table_.request[j]].end(), a);
      if (!has) reject(j, fmt::format("attribute '{}' is forced but not requested", d.name));
    }
  }
  return std::move(table_);
}

}  // namespace colmatch
