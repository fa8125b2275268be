// Column-wise storage of taskers and jobs. A tasker is an index into typed arrays; so is a job.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/catalog.hpp"
#include "engine/request.hpp"

namespace colmatch {

inline constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

/// String dictionary: distinct values get dense ids 0, 1, 2... in first-seen order.
class Dictionary {
 public:
  uint32_t intern(std::string_view v);
  std::optional<uint32_t> find(std::string_view v) const;
  const std::string& value(uint32_t id) const { return values_.at(id); }
  size_t size() const noexcept { return values_.size(); }

 private:
  std::vector<std::string> values_;
  std::unordered_map<std::string, uint32_t> index_;
};

/// One attribute's column over all taskers. Numeric types use `num`, string-like types `ids` into
/// `dict`; `present` is a bitmask (kernels layout) of the taskers that define the attribute.
/// Absent rows hold 0 (num) or 0 (ids) and must be masked with `present`.
struct Column {
  AttrType type = AttrType::String;
  std::vector<double> num;
  std::vector<uint32_t> ids;
  Dictionary dict;
  std::vector<uint64_t> present;

  bool has(uint32_t t) const noexcept { return (present[t >> 6] >> (t & 63)) & 1; }
};

/// Taskers, column-wise, stored in rank order: effective power descending, then input order.
/// Tasker index t (0-based) is that rank, so "the eligible tasker with the greatest effective power,
/// ties to the lowest input index" (Altair Accelerator) is the lowest set bit of an eligibility set.
struct TaskerTable {
  std::vector<std::string> names;
  std::vector<double> power;          ///< effective power (higher is preferred)
  std::vector<uint32_t> input_index;  ///< position in the input file(s)
  std::vector<Column> columns;        ///< one per catalog attribute, in catalog order

  size_t size() const noexcept { return names.size(); }
};

/// Builds a TaskerTable row by row (input order), then sorts it into rank order.
class TaskerBuilder {
 public:
  explicit TaskerBuilder(const Catalog& catalog);
  /// Starts a tasker; returns its input index. Names must be unique (throws ValueError otherwise).
  uint32_t add(std::string name, double power = 1.0);
  /// Sets attribute `attr` of the last added tasker from text, parsed by the attribute's type.
  /// Throws ValueError when the text is not a value of that type.
  void set(uint32_t attr, std::string_view text);
  /// Sets a numeric attribute of the last added tasker.
  void set_number(uint32_t attr, double v);
  void set_power(double p);
  size_t size() const noexcept { return names_.size(); }
  /// Consumes the builder; the returned table is in rank order (see TaskerTable).
  TaskerTable build() &&;

 private:
  void mark(uint32_t attr);
  const Catalog& catalog_;
  std::vector<std::string> names_;
  std::vector<double> power_;
  std::vector<Column> columns_;
  std::unordered_map<std::string, uint32_t> seen_;
};

/// Jobs, column-wise, in input order.
struct JobTable {
  std::vector<std::string> id;
  std::vector<uint32_t> owner;          ///< ids into owners
  std::vector<uint32_t> group;          ///< ids into groups
  Dictionary owners, groups;
  std::vector<double> priority;         ///< higher runs first
  std::vector<double> submit;           ///< submit time in seconds (earlier runs first among equals)
  std::vector<uint32_t> slots;          ///< >= 1
  std::vector<uint32_t> request;        ///< index into `requests`, shared by jobs with equal canonical requests
  std::vector<Request> requests;        ///< distinct canonical requests
  std::vector<std::string> request_text;///< canonical text of each of `requests`
  /// Requested amount per consumable (catalog.consumables() order) per job, per slot or per job as the
  /// attribute's scope says; NaN where the job did not request it.
  std::vector<std::vector<double>> amount;
  std::vector<uint32_t> reject;         ///< kNone, or an index into reject_reason
  std::vector<std::string> reject_reason;

  size_t size() const noexcept { return id.size(); }
  bool rejected(uint32_t j) const noexcept { return reject[j] != kNone; }
};

/// Builds a JobTable; parses each distinct request text once.
class JobBuilder {
 public:
  explicit JobBuilder(const Catalog& catalog);
  /// Starts a job; returns its index. slots must be >= 1 (throws ValueError).
  uint32_t add(std::string id, std::string_view owner, std::string_view group, double priority,
               double submit, uint32_t slots = 1);
  /// Sets the hard request of the last job from text (see request.hpp). Throws RequestError.
  void set_request(std::string_view text);
  /// Sets the hard request of the last job from a built expression (canonicalized here).
  void set_request(Request r);
  /// Sets the amount of consumable `attr` of the last job. Throws ValueError if `attr` is not a
  /// consumable, not requestable, or the amount is negative.
  void set_amount(uint32_t attr, double amount);
  /// Marks job j rejected with a reason (kept in results.csv).
  void reject(uint32_t j, std::string reason);
  size_t size() const noexcept { return table_.size(); }
  /// Checks forced attributes (Grid Engine: a job must request them) and rejects jobs that do not,
  /// then returns the table.
  JobTable build() &&;

 private:
  uint32_t intern_request(Request r);
  const Catalog& catalog_;
  JobTable table_;
  std::unordered_map<std::string, uint32_t> by_text_;       // raw text -> request index
  std::unordered_map<std::string, std::string> bad_text_;   // raw text -> parse error
  std::unordered_map<std::string, uint32_t> by_canonical_;  // canonical text -> request index
};

}  // namespace colmatch
