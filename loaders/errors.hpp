// Errors of the loaders: every message names the file, the line (1-based; 0 when the error concerns
// the whole file) and the field.
#pragma once

#include <stdexcept>
#include <string>
#include <unordered_map>

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

/// Job ids seen so far in one input. One policy for every format (native, OpenB pods, DIRAC JDL, SWF):
/// a duplicate job id is fatal, since outputs name jobs by id; the error names the file, the line, the
/// field and the line of the first. O(1) per id.
class JobIds {
 public:
  /// Records `id` met on `line` of `path`; throws LoadError on `field` if it was met before.
  void add(const std::string& path, size_t line, const std::string& field, const std::string& id) {
    const auto [it, fresh] = first_.emplace(id, line);
    if (!fresh)
      throw LoadError(path, line, field, fmt::format("duplicate job id '{}' (first on line {})", id, it->second));
  }

 private:
  std::unordered_map<std::string, size_t> first_;
};

/// Throws LoadError when `path` names a folder (reading one would look like an empty file).
void require_not_directory(const std::string& path);

}  // namespace colmatch::loaders
