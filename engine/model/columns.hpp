// Column-wise storage: one complex attribute's values over the taskers, on Grid Engine's levels (global,
// host, queue; seed 002 section 3), with the dictionaries of string-like values. The tables built from
// them: taskers.hpp (TaskerTable, TaskerBuilder) and jobs.hpp (JobTable, JobBuilder).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/model/catalog.hpp"
#include "engine/model/request.hpp"

namespace colmatch {

inline constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

/// The values of one dictionary entry of a set-valued column.
std::vector<std::string_view> set_elements(std::string_view entry);

/// Soft requests per job at most: violation counts are kept in 4 bit planes.
inline constexpr size_t kMaxSoftRequests = 15;

/// The soft requests of a canonical soft expression: the children of a top-level AND, or the
/// expression itself (none for the empty request).
std::vector<const Request*> soft_terms(const Request& soft);

/// String dictionary: distinct values get dense ids 0, 1, 2... in first-seen order.
class Dictionary {
 public:
  uint32_t intern(std::string_view v);
  std::optional<uint32_t> find(std::string_view v) const;
  const std::string& value(uint32_t id) const { return values_.at(id); }
  size_t size() const noexcept { return values_.size(); }

  /// For a set-valued column's dictionary: from now on also index each entry's elements
  /// (set_elements), the entries there are and every later one, so that a clause naming an element
  /// finds the entries holding it without scanning them all (an Accelerator farm's resource names,
  /// thousands of distinct sets). O(total elements) memory.
  void index_elements();
  bool elements_indexed() const noexcept { return elements_indexed_; }
  /// The ids of the entries holding `element`, ascending; empty when none (or not indexed).
  std::span<const uint32_t> entries_with(std::string_view element) const;

 private:
  void index_entry(uint32_t id);

  // looked up by string_view without building a string (C++20 heterogeneous lookup)
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> values_;
  std::unordered_map<std::string, uint32_t, TextHash, std::equal_to<>> index_;
  bool elements_indexed_ = false;
  std::unordered_map<std::string, std::vector<uint32_t>> elements_;
};

/// Grid Engine's levels, outermost first (seed 002, section 3). A queue instance (a tasker) sees its
/// queue values over its host's over the global ones; matching is strictly hierarchical.
enum class Level : uint8_t { Global = 0, Host = 1, Queue = 2 };

/// Fixed (custom) values versus load values reported by sensors (global and host levels only).
enum class ValueKind : uint8_t { Fixed, Load };

/// One attribute's values on one level over `rows` rows (taskers or hosts): a number (numeric types)
/// or a dictionary id (string-like types) per row, and the complementary bitmasks `present` and
/// `absent` (kernels layout: words_for(rows) words, tail clear). Absent rows hold 0. The setters keep
/// the values, both masks and the count of present rows consistent; there is no other way to write.
class LevelValues {
 public:
  LevelValues() = default;
  /// `rows` rows, all absent. `numeric` chooses which of nums() / ids() holds the values. `lazy`: the
  /// values array is allocated by the first set(), so a level nobody gives a value costs its two
  /// masks only (the host levels of a farm without hosts: most formats, and every resource name of
  /// an Accelerator farm); until then nums() and ids() are empty.
  LevelValues(size_t rows, bool numeric, bool lazy = false);
  size_t rows() const noexcept { return rows_; }
  bool numeric() const noexcept { return numeric_; }
  bool has(uint32_t r) const noexcept { return (present_[r >> 6] >> (r & 63)) & 1; }
  /// Some row has a value.
  bool any() const noexcept { return count_ > 0; }
  /// Row r's number (0 for string-like levels, and where absent).
  double num(uint32_t r) const noexcept { return nums_.empty() ? 0.0 : nums_[r]; }
  /// Row r's dictionary id (0 for numeric levels, and where absent).
  uint32_t id(uint32_t r) const noexcept { return ids_.empty() ? 0u : ids_[r]; }
  /// Every row's number: rows() values, or empty for a string-like level or a lazy one with no value yet.
  const std::vector<double>& nums() const noexcept { return nums_; }
  /// Every row's dictionary id: rows() ids, or empty for a numeric level or a lazy one with no value yet.
  const std::vector<uint32_t>& ids() const noexcept { return ids_; }
  const std::vector<uint64_t>& present() const noexcept { return present_; }
  const std::vector<uint64_t>& absent() const noexcept { return absent_; }
  /// Gives row r the value `num` (numeric) or dictionary id `id` (string-like); the first set() of a
  /// lazy level allocates its values (std::bad_alloc).
  void set(uint32_t r, double num, uint32_t id);
  /// Makes row r absent (its value becomes 0).
  void clear(uint32_t r) noexcept;

 private:
  void allocate();

  size_t rows_ = 0, count_ = 0;
  bool numeric_ = true;
  std::vector<double> nums_;
  std::vector<uint32_t> ids_;
  std::vector<uint64_t> present_, absent_;
};

/// The global level's value of one attribute (one value for the whole farm, or none).
struct GlobalValue {
  bool present = false;
  double num = 0;
  uint32_t id = 0;
};

/// An upper level's value as the override rule sees it: a fixed value (compared) and/or a load value
/// (present only; load values move).
struct UpperValue {
  bool fixed = false;
  double fixed_num = 0;
  bool load = false;
};

/// Grid Engine 6.0's override rule (seed 002, section 3), the one place it is written: may a lower level
/// set `lower` for a non-consumable attribute with relop `relop` under `upper`? `==`/`!=` attributes
/// may not be set below a level that has them at all (even as a load value); ordering relops only
/// with a value at least as restrictive as the upper fixed value (`<`, `<=`: not larger; `>`, `>=`:
/// not smaller). Consumables are pools on each level and are not subject to it.
bool may_override(Relop relop, double lower, const UpperValue& upper) noexcept;

/// The message for a broken override: names the attribute, its relop, both levels and both values.
std::string override_message(const AttributeDef& def, std::string_view lower_who, std::string_view lower_value,
                             std::string_view upper_who, std::string_view upper_value);

/// One attribute over all taskers, at every level of the Grid Engine hierarchy:
///  * queue(): one row per tasker (the tasker's own values);
///  * host(): one row per tasker, its host's value (expanded for the kernels), and by_host(): one row
///    per host (consumable pools, writers);
///  * global(): one value.
/// Where fixed and load values meet on one level the stored value is already combined (see
/// TaskerBuilder::build). defined() marks the taskers with a value on some level. Mutators keep all of
/// these consistent.
class Column {
 public:
  Column() = default;
  /// An attribute of type `type` over `taskers` taskers on `hosts` hosts, absent everywhere; no level's
  /// values are allocated until one is set (a farm-wide pool, an Accelerator map, costs its masks only).
  Column(AttrType type, bool multi, size_t taskers, size_t hosts);

  AttrType type = AttrType::String;
  bool multi = false;  ///< set-valued: each dictionary entry is a sorted set joined by kSetSeparator
  Dictionary dict;     ///< ids of every level's string values

  const LevelValues& queue() const noexcept { return queue_; }
  const LevelValues& host() const noexcept { return host_; }
  const LevelValues& by_host() const noexcept { return by_host_; }
  const GlobalValue& global() const noexcept { return global_; }
  const std::vector<uint64_t>& defined() const noexcept { return defined_; }
  /// Tasker t has a value on some level (global, host or queue).
  bool is_defined(uint32_t t) const noexcept { return global_.present || ((defined_[t >> 6] >> (t & 63)) & 1); }
  /// Numeric host levels with at most 32 distinct values (core counts, memory sizes): the sorted
  /// distinct values and each tasker's index into them (0 where absent), so a clause is decided once
  /// per distinct value and expanded with the bits32 kernel. Empty otherwise.
  const std::vector<double>& host_distinct() const noexcept { return host_distinct_; }
  const std::vector<uint32_t>& host_rank() const noexcept { return host_rank_; }

  /// Tasker t has a queue-level value.
  bool has(uint32_t t) const noexcept { return queue_.has(t); }
  /// True when some value comes from the host or global level (else only the queue level matters).
  bool multi_level() const noexcept { return host_.any() || global_.present; }

  /// Strict hierarchical matching (seed 002, section 5), the one place it is written for one row:
  /// every level that defines the attribute for tasker t must satisfy `holds(num, id)`; a level without
  /// it defers; a tasker with no level defining it fails. The mask path (eligibility.cpp) computes
  /// the same with kernels over whole levels.
  template <class Holds>
  bool holds_at_every_level(uint32_t t, Holds&& holds) const {
    bool seen = false;
    if (global_.present && !(seen = true, holds(global_.num, global_.id))) return false;
    if (host_.has(t) && !(seen = true, holds(host_.num(t), host_.id(t)))) return false;
    if (queue_.has(t) && !(seen = true, holds(queue_.num(t), queue_.id(t)))) return false;
    return seen;
  }

  /// Sets tasker t's queue-level value.
  void set_queue(uint32_t t, double num, uint32_t id);
  /// Removes tasker t's queue-level value.
  void clear_queue(uint32_t t) noexcept;
  /// Sets the host-level values: `by_host` (one row per host) expanded to taskers through `host_of`
  /// (kNone: no host). Recomputes defined() and the distinct host values.
  void set_hosts(LevelValues by_host, const std::vector<uint32_t>& host_of);
  /// Sets or removes the global value. Recomputes defined().
  void set_global(GlobalValue g);

 private:
  void refresh_defined(uint32_t t) noexcept;
  void refresh_all_defined();
  LevelValues queue_, host_, by_host_;
  GlobalValue global_;
  std::vector<uint64_t> defined_;
  std::vector<double> host_distinct_;
  std::vector<uint32_t> host_rank_;
};

}  // namespace colmatch
