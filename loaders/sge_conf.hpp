// What Grid Engine's `qconf` prints, read as text (Son of Grid Engine 8.1.9; complex(5), host_conf(5),
// queue_conf(5), hostgroup(5), sge_pe(5), sge_types(5)). Only the text: the farm it describes is put
// together by loaders/sge.cpp.
//
//   qconf -sc                 the complex list: `name shortcut type relop requestable consumable default
//                             urgency` a line, `#` comments
//   qconf -se HOST ...        execution hosts (also `global`): `key value` lines
//   qconf -sq QUEUE ...       cluster queues: `key value` lines, values with per-host overrides
//                             `default,[host=value],[@group=value]`
//   qconf -shgrp @GROUP ...   host groups: group_name, hostlist (hosts and @groups)
//   qconf -sp PE ...          parallel environments: pe_name, slots, allocation_rule
// A file may hold several records one after another (the dump script concatenates them); a record
// starts at its first key (hostname, qname, group_name, pe_name). A value that qconf wraps ends its line
// with a backslash and goes on on the next one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace colmatch::loaders::sge {

/// The largest qconf file read (256 MiB) and the most records in one (1M): past them, a LoadError.
inline constexpr size_t kMaxConfBytes = size_t{256} << 20;
inline constexpr size_t kMaxRecords = size_t{1} << 20;

/// One line of `qconf -sc`, each column as printed; `line` is its line in the file.
struct Complex {
  std::string name, shortcut, type, relop, requestable, consumable, default_value, urgency;
  size_t line = 0;
};

/// Reads `qconf -sc` output. Throws LoadError (file, line, column name) for a line without the eight
/// columns or with a name twice.
std::vector<Complex> read_complexes(const std::string& path);

/// One `key value` line of a record (continuations joined, blanks around the value trimmed).
struct Field {
  std::string key, value;
  size_t line = 0;
};

/// One record: its fields in file order, and the line of its first.
struct Record {
  std::vector<Field> fields;
  size_t line = 0;
  /// The field named `key`, or nullptr.
  const Field* find(std::string_view key) const;
  /// The value of `key`, or `fallback` when the record has no such field.
  std::string value(std::string_view key, std::string_view fallback = "NONE") const;
};

/// Reads the records of a qconf file whose records start with `first_key`. Throws LoadError for a line
/// without a value, a key twice in one record, a first line that is not `first_key`, a backslash on the
/// last line, or a file or record count past the bounds above.
std::vector<Record> read_records(const std::string& path, std::string_view first_key);

/// Where a value list came from, for errors: file, line and field.
struct Where {
  const std::string& path;
  size_t line;
  const std::string& field;
};

/// A complex value list `name=value,name=value` (blanks or commas between items; `NONE`: empty).
/// Throws LoadError for an item without `=` or an empty name or value.
std::vector<std::pair<std::string, std::string>> split_values(std::string_view text, const Where& at);

/// A queue attribute with its per-host overrides: `default,[host=value],[@group=value]` (queue_conf(5)).
/// `specific` holds (host or @group, value) in the order written.
struct Overrides {
  std::string fallback;
  std::vector<std::pair<std::string, std::string>> specific;
};

/// Splits an attribute value into its default and its `[host=value]` overrides (commas inside the
/// brackets belong to the value). Throws LoadError for an unclosed bracket, an override without `=`, a
/// host named twice, or text after a bracket that is neither a comma nor another bracket.
Overrides split_overrides(std::string_view text, const Where& at);

/// The items of a list qconf prints (a hostlist of hosts and @groups, a pe_list, a complex value list):
/// separated by blanks or commas; `NONE` is empty.
std::vector<std::string> split_words(std::string_view text);

}  // namespace colmatch::loaders::sge
