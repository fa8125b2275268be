// Errors of the loaders: every message names the file, the line (1-based; 0 when the error concerns
// the whole file) and the field.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "engine/model/hash_slots.hpp"

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
/// field and the line of the first. O(1) expected per id: HashSlots of (hash, id, line) over one
/// arena of id bytes (a million ids: about 40 bytes each and no allocation per id; the
/// node-based map it replaces took a tenth of loading a 1M-job Accelerator farm).
class JobIds {
 public:
  /// The error for job `id` on `line` whose id the job on `first_line` has already (for readers that find
  /// repeats another way, in parallel: the same words).
  static LoadError duplicate_id(const std::string& path, size_t line, const std::string& field, std::string_view id,
                                size_t first_line) {
    return LoadError(path, line, field, fmt::format("duplicate job id '{}' (first on line {})", id, first_line));
  }
  JobIds() = default;
  /// Sized for `expected` ids (an input that knows its count: no rehash until then).
  explicit JobIds(size_t expected) : seen_(expected) { ends_.reserve(expected + 1); }
  /// Records `id` met on `line` of `path`; throws LoadError on `field` if it was met before.
  void add(const std::string& path, size_t line, const std::string& field, std::string_view id) {
    const uint64_t h = std::hash<std::string_view>{}(id);
    size_t at = 0;
    if (const Seen* s = seen_.find(
            h, [&](const Seen& x) { return text(x.id) == id; }, at))
      throw duplicate_id(path, line, field, id, s->line);
    seen_.insert(at, h, {static_cast<uint32_t>(ends_.size()), line});
    arena_.append(id);
    ends_.push_back(arena_.size());
  }

 private:
  struct Seen {
    uint32_t id = 0;  ///< the id's bytes end at ends_[id]; 0: an empty slot
    size_t line = 0;
    bool empty() const noexcept { return id == 0; }
  };
  std::string_view text(uint32_t id) const noexcept {
    return std::string_view(arena_).substr(ends_[id - 1], ends_[id] - ends_[id - 1]);
  }
  HashSlots<Seen> seen_;
  std::string arena_;            // the ids' bytes, one after another
  std::vector<size_t> ends_{0};  // id i's bytes are arena_[ends_[i - 1], ends_[i])
};

/// Throws LoadError when `path` names a folder (reading one would look like an empty file).
void require_not_directory(const std::string& path);

}  // namespace colmatch::loaders
