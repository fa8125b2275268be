// Errors of the loaders: every message names the file, the line (1-based; 0 when the error concerns
// the whole file) and the field.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace colmatch::loaders {

class LoadError : public std::runtime_error {
 public:
  LoadError(const std::string& file, size_t line, const std::string& field, const std::string& msg)
      : std::runtime_error(line == 0 ? fmt::format("{}: {}{}", file, field.empty() ? "" : "field '" + field + "': ", msg)
                                     : fmt::format("{}:{}: {}{}", file, line,
                                                   field.empty() ? "" : "field '" + field + "': ", msg)),
        file(file), line(line), field(field) {}
  std::string file;
  size_t line;
  std::string field;
};

}  // namespace colmatch::loaders
