// Text helpers of the writers, one of each: CSV fields (RFC 4180), JSON strings, and atomic file
// writes. Writers know nothing of scheduling: they format tables the engine filled.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace colmatch::writers {

/// A failed write (create, write, flush or rename); what() names the path and the cause.
class WriteError : public std::runtime_error {
 public:
  WriteError(const std::string& where, const std::string& why) : std::runtime_error(where + ": " + why), path(where) {}
  std::string path;
};

/// Appends `v` to `out` as one CSV field: as is, or in double quotes (quotes doubled) when it holds
/// a comma, a quote or a line break.
void csv_field(std::string& out, std::string_view v);

/// `s` escaped for the inside of a JSON (or TOML basic) string: `"` `\` and control characters.
std::string json_escape(std::string_view s);

/// `s` as a JSON string literal, quotes included.
std::string json_string(std::string_view s);

/// Writes `content` to `path` atomically: a temporary file in the same folder, then rename. Throws
/// WriteError (and leaves no temporary file) on failure.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace colmatch::writers
