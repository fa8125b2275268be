// Internal to loaders/: reading the native format's JSON values (native.cpp's taskers and hosts,
// native_jobs.cpp's jobs).
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>
#include <simdjson.h>

#include "engine/model/columns.hpp"
#include "loaders/errors.hpp"

namespace colmatch::loaders::native_json {

using simdjson::dom::element;
using simdjson::dom::element_type;

/// The text of a JSON scalar, for attribute values given as strings, numbers or booleans.
inline bool scalar_text(element v, std::string& out) {
  switch (v.type()) {
    case element_type::STRING: out = std::string(std::string_view(v.get_string().value_unsafe())); return true;
    case element_type::INT64: out = fmt::format("{}", int64_t(v.get_int64().value_unsafe())); return true;
    case element_type::UINT64: out = fmt::format("{}", uint64_t(v.get_uint64().value_unsafe())); return true;
    case element_type::DOUBLE: out = fmt::format("{}", double(v.get_double().value_unsafe())); return true;
    case element_type::BOOL: out = v.get_bool().value_unsafe() ? "true" : "false"; return true;
    default: return false;
  }
}

inline bool number_of(element v, double& out) {
  switch (v.type()) {
    case element_type::INT64: out = static_cast<double>(int64_t(v.get_int64().value_unsafe())); return true;
    case element_type::UINT64: out = static_cast<double>(uint64_t(v.get_uint64().value_unsafe())); return true;
    case element_type::DOUBLE: out = v.get_double().value_unsafe(); return true;
    default: return false;
  }
}

/// Parses a value of attribute `def` given as JSON (number, bool or string).
inline double numeric_value(const AttributeDef& def, element v) {
  double d = 0;
  if (number_of(v, d)) return check_number(def, d);  // the same rules as the same value as text
  if (v.type() == element_type::BOOL) return v.get_bool().value_unsafe() ? 1 : 0;
  std::string text;
  if (!scalar_text(v, text)) throw ValueError("expected a number or a string");
  return check_number(def, parse_number(def.type, text));
}

inline simdjson::dom::object parse_object(simdjson::dom::parser& parser, std::string_view line, const std::string& path,
                                          size_t lineno) {
  element doc;
  if (auto err = parser.parse(line.data(), line.size(), true).get(doc))
    throw LoadError(path, lineno, "", fmt::format("malformed JSON: {}", simdjson::error_message(err)));
  simdjson::dom::object obj;
  if (doc.get_object().get(obj)) throw LoadError(path, lineno, "", "expected a JSON object");
  return obj;
}

inline bool blank(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }

}  // namespace colmatch::loaders::native_json
