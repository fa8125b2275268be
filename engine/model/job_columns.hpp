// The job table's own column types (jobs.hpp): consumable amounts in CSR rows (JobAmounts), dependencies
// (JobDepends) and texts in Arrow's layout (TextColumn): each costs what the jobs hold, not a slot per job
// and consumable.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace colmatch {

/// The consumables each job requested, as (consumable, amount) pairs in rows of CSR form, each job
/// pointing at its row: jobs name few of a farm's consumables (an Accelerator farm has one per counted
/// resource map, a job holds one or two), so a job costs what it requested, not a slot per consumable
/// of the farm; and jobs copied from one prototype (add_jobs_like) share its row, 4 bytes a job.
class JobAmounts {
 public:
  /// One requested amount: `consumable` indexes catalog.consumables(); `amount` >= 0 in base units.
  struct Entry {
    uint32_t consumable;
    double amount;
  };
  /// The amount job `j` requested of consumable `k`; NaN where it requested none. O(its entries).
  double at(size_t k, uint32_t j) const noexcept {
    for (const Entry& e : of(j))
      if (e.consumable == k) return e.amount;
    return std::numeric_limits<double>::quiet_NaN();
  }
  /// Job `j`'s requested amounts, consumables ascending.
  std::span<const Entry> of(uint32_t j) const noexcept { return row_entries(row_[j]); }
  size_t jobs() const noexcept { return row_.size(); }
  /// The row of job j's amounts: jobs in one row requested alike (the copies of one prototype share
  /// theirs); jobs in different rows may have requested alike too.
  uint32_t row(uint32_t j) const noexcept { return row_[j]; }
  /// The number of rows (at most jobs()).
  size_t rows() const noexcept { return first_.size() - 1; }
  /// Row r's amounts, consumables ascending.
  std::span<const Entry> row_entries(uint32_t r) const noexcept {
    return {entries_.data() + first_[r], entries_.data() + first_[r + 1]};
  }
  /// Builder side: room for n jobs (no growth copies while add_job() reaches n).
  void reserve(size_t n) {
    row_.reserve(n);
    first_.reserve(n + 1);
  }
  /// Builder side: starts the next job (with no amounts, in a row of its own).
  void add_job() {
    row_.push_back(static_cast<uint32_t>(first_.size() - 1));
    first_.push_back(first_.back());
    last_shared_ = false;
  }
  /// Builder side: sets (or replaces) the last job's amount of consumable `k` (a row it shares with
  /// other jobs is copied first: theirs do not change).
  void set_last(uint32_t k, double amount);
  /// Builder side: starts `like.size()` jobs, job i with job like[i]'s amounts in `src` (another table's,
  /// over the same catalog): src's rows are copied once, the jobs point at them (filled in parallel).
  void add_jobs_like(const JobAmounts& src, std::span<const uint32_t> like);

 private:
  std::vector<uint32_t> row_;       ///< job j's amounts are row row_[j]
  std::vector<uint32_t> first_{0};  ///< row r's entries are [first_[r], first_[r + 1])
  std::vector<Entry> entries_;
  bool last_shared_ = false;  ///< the last job's row may be another job's too (add_jobs_like)
};

/// Each job's dependencies (afterok: indices of the jobs that must have ended before it starts), in CSR
/// form over the jobs up to the last one that has any: a table where no job depends on another (most
/// farms) costs nothing per job.
class JobDepends {
 public:
  /// Job `j`'s dependencies (empty for a job past the last one given any).
  std::span<const uint32_t> operator[](size_t j) const noexcept {
    if (j + 1 >= first_.size()) return {};
    return {ids_.data() + first_[j], ids_.data() + first_[j + 1]};
  }
  /// Adds dependency `d` to job `j`. Jobs are given theirs in job order: throws std::invalid_argument for
  /// a `j` below the last job given one.
  void add(uint32_t j, uint32_t d);

 private:
  std::vector<uint32_t> first_;  ///< job j's are ids_[first_[j], first_[j + 1]) for j + 1 < first_.size()
  std::vector<uint32_t> ids_;
};

/// A column of texts in Arrow's layout: the texts one after another in one buffer, text i ending where
/// ends[i] says (8 bytes a text and its bytes, not a std::string each: a million job ids).
class TextColumn {
 public:
  /// Text `i` (a view valid until the column changes).
  std::string_view operator[](size_t i) const noexcept {
    const uint64_t from = i == 0 ? 0 : ends_[i - 1];
    return {chars_.data() + from, static_cast<size_t>(ends_[i] - from)};
  }
  size_t size() const noexcept { return ends_.size(); }
  bool empty() const noexcept { return ends_.empty(); }
  void push_back(std::string_view text) {
    chars_.append(text);
    ends_.push_back(chars_.size());
  }
  /// Room for n texts of `bytes` bytes in all.
  void reserve(size_t n, size_t bytes) {
    ends_.reserve(n);
    chars_.reserve(bytes);
  }
  /// Appends the texts of `parts` in order, part p's texts being texts[p] cut at ends[p] (Arrow's layout
  /// again: text i of the part is texts[p][ends[p][i - 1], ends[p][i]), from 0 for i = 0). The caller
  /// checks that each part's ends go up and stay within its text. Parts are copied in parallel (oneTBB).
  void append_parts(std::span<const std::string_view> texts, std::span<const std::span<const uint32_t>> ends);
  /// The texts as strings (for callers that want them so: the Python module).
  std::vector<std::string> strings() const;
  bool operator==(const TextColumn&) const = default;

 private:
  std::string chars_;
  std::vector<uint64_t> ends_;
};

}  // namespace colmatch
