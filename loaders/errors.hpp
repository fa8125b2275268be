// Errors of the loaders: every message names the file, the line (1-based; 0 when the error concerns
// the whole file) and the field.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace colmatch::loaders {

class LoadError : public std::runtime_error {
 public:
  LoadError(const std::string& in_file, size_t at_line, const std::string& in_field, const std::string& msg)
      : std::runtime_error(at_line == 0 ? fmt::format("{}: {}{}", in_file, field_text(in_field), msg)
                                        : fmt::format("{}:{}: {}{}", in_file, at_line, field_text(in_field), msg)),
        file(in_file),
        line(at_line),
        field(in_field) {}
  std::string file;
  size_t line;
  std::string field;

 private:
  static std::string field_text(const std::string& f) {
    return f.empty() ? std::string() : fmt::format("field '{}': ", f);
  }
};

/// Throws LoadError when `path` names a folder (reading one would look like an empty file).
void require_not_directory(const std::string& path);

}  // namespace colmatch::loaders
