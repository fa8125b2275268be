#include "engine/model/job_columns.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <tbb/parallel_for.h>

namespace colmatch {

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

}  // namespace colmatch
