#include "loaders/slurm_pipe_table.hpp"

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/slurm_text.hpp"

namespace colmatch::loaders::slurm {

PipeTable::PipeTable(const std::string& path, std::initializer_list<std::string_view> names, std::string header_what)
    : path_(path), what_(std::move(header_what)), in_((require_not_directory(path), path)), names_(names) {}

bool PipeTable::next(std::vector<std::string_view>& fields) {
  std::string_view line;
  while (in_.next(line)) {
    if (line.empty()) continue;
    const size_t ln = in_.line();
    if (ln > kMaxHosts) throw LoadError(path_, ln, "", fmt::format("more than {} lines", kMaxHosts));
    fields = split_fields(line);
    if (width_ == 0) {  // the header
      cols_.assign(names_.size(), SIZE_MAX);
      for (size_t i = 0; i < fields.size(); ++i)
        for (size_t n = 0; n < names_.size(); ++n)
          if (fields[i] == names_[n]) cols_[n] = i;
      for (const size_t c : cols_)
        if (c == SIZE_MAX) throw LoadError(path_, ln, "", "expected " + what_);
      width_ = fields.size();
      header_.assign(fields.begin(), fields.end());
      continue;
    }
    if (fields.size() != width_)
      throw LoadError(path_, ln, "", fmt::format("{} fields, the header names {}", fields.size(), width_));
    return true;
  }
  return false;
}

size_t PipeTable::find(std::string_view name) const {
  for (size_t i = 0; i < header_.size(); ++i)
    if (header_[i] == name) return i;
  return SIZE_MAX;
}

}  // namespace colmatch::loaders::slurm
