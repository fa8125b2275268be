// Taskers, column-wise: a tasker (a queue instance, a node, a pilot) is an index into typed columns, one
// per complex attribute, in rank order (effective power descending: Altair Accelerator, seed 000).
// Built row by row by TaskerBuilder (the one way a loader fills a TaskerTable); columns.cpp and
// taskers.cpp implement them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/model/columns.hpp"

namespace colmatch {

/// Taskers, column-wise, stored in rank order: effective power descending, then input order.
/// Tasker index t (0-based) is that rank, so "the eligible tasker with the greatest effective power,
/// ties to the lowest input index" (Altair Accelerator) is the lowest set bit of an eligibility set.
struct TaskerTable {
  std::vector<std::string> names;
  std::vector<double> power;          ///< effective power (higher is preferred)
  std::vector<uint32_t> input_index;  ///< position in the input file(s)
  std::vector<uint32_t> host_of;      ///< host index per tasker, or kNone
  std::vector<std::string> host_names;
  std::vector<Column> columns;  ///< one per catalog attribute, in catalog order
  /// What the builder accepted but an administrator should hear about (GridEngineReading::SoGE819:
  /// a lower level's value the seed's override rule forbids), one line per attribute.
  std::vector<std::string> warnings;

  size_t size() const noexcept { return names.size(); }
};

/// A lower level's value that Grid Engine 6.0's override rule forbids (GridEngineReading::Design60).
/// `host_level`: the lower value is a host's (a hosts file), else a tasker's (queue level).
class OverrideError : public ValueError {
 public:
  OverrideError(const std::string& msg, bool host) : ValueError(msg), host_level(host) {}
  bool host_level;
};

/// Builds a TaskerTable row by row (input order), then sorts it into rank order.
class TaskerBuilder {
 public:
  explicit TaskerBuilder(const Catalog& catalog);
  /// Declares a host; returns its index. Names must be unique (throws ValueError otherwise).
  uint32_t add_host(std::string name);
  /// Index of a declared host, if any.
  std::optional<uint32_t> find_host(std::string_view name) const;
  /// Starts a tasker (a queue instance) on `host` (kNone: none); returns its input index.
  /// Names must be unique (throws ValueError otherwise).
  uint32_t add(std::string name, double power = 1.0, uint32_t host = kNone);
  /// Sets attribute `attr` of the last added tasker (queue level) from text, parsed by the
  /// attribute's type. Throws ValueError when the text is not a value of that type.
  void set(uint32_t attr, std::string_view text);
  /// Sets a numeric attribute of the last added tasker. Throws ValueError when check_number refuses it.
  void set_number(uint32_t attr, double v);
  /// Sets a set-valued attribute of the last added tasker (normalized, sorted, deduplicated).
  /// Throws ValueError if the attribute is not multi-valued.
  void set_list(uint32_t attr, const std::vector<std::string>& values);
  void set_power(double p);
  /// Sets a host-level value (fixed or load). Throws ValueError on a value of the wrong type.
  void set_host(uint32_t host, uint32_t attr, std::string_view text, ValueKind kind = ValueKind::Fixed);
  /// Sets a global-level value (fixed or load). Throws ValueError on a value of the wrong type.
  void set_global(uint32_t attr, std::string_view text, ValueKind kind = ValueKind::Fixed);
  size_t size() const noexcept { return names_.size(); }
  /// Consumes the builder; the returned table is in rank order (see TaskerTable).
  /// On each of the global and host levels a fixed value and a load value of one attribute combine
  /// as Grid Engine does (seed 002, section 3, mem_free example): for ordering relops the more
  /// restrictive one (<, <=: the smaller; >, >=: the larger), for == and != the fixed one.
  /// Throws ValueError, naming the attribute, the levels and the values, when a fixed value overrides
  /// another level against the spec: == and != attributes only on one level; ordering relops only
  /// with a more restrictive value on the lower level. Consumables are pools on each level that
  /// defines them and are not subject to the override rule.
  TaskerTable build() &&;

 private:
  struct LevelInput {
    double num = 0;
    uint32_t id = 0;
    bool fixed = false, load = false;
    double load_num = 0;
    uint32_t load_id = 0;
  };
  struct Raw {  // one attribute's queue-level values in input order
    AttrType type = AttrType::String;
    bool multi = false;
    Dictionary dict;
    std::vector<double> num;
    std::vector<uint32_t> ids;
    std::vector<uint8_t> has;
  };
  void mark(uint32_t attr);
  Raw& last_row(uint32_t attr);           // attr's column, with a row for the last tasker (throws without one)
  static void grow(Raw& c, size_t rows);  // rows absent (0, not set) up to `rows`
  double parse(uint32_t attr, std::string_view text, uint32_t& id);
  const Catalog& catalog_;
  std::vector<std::string> names_;
  std::vector<double> power_;
  std::vector<uint32_t> host_of_;
  std::vector<Raw> columns_;
  std::unordered_map<std::string, uint32_t> seen_;
  std::vector<std::string> host_names_;
  std::unordered_map<std::string, uint32_t> host_index_;
  std::vector<std::vector<LevelInput>> host_values_;  // [host][attr]
  std::vector<LevelInput> global_values_;             // [attr]
};

}  // namespace colmatch
