// A table as Slurm's commands print it with -P (sshare, sacctmgr): a header line naming the columns, then
// one row a line, fields split at `|`. Used by loaders/slurm_sshare.cpp and loaders/slurm_qos.cpp.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/line_reader.hpp"

namespace colmatch::loaders::slurm {

/// Rows of `path` with the columns `names` found by the header. Throws LoadError naming file and line for a
/// header without every one of `names` (message "expected HEADER_WHAT"), a row of another field count than
/// the header's, or more than kMaxHosts lines; blank lines are skipped.
class PipeTable {
 public:
  PipeTable(const std::string& path, std::initializer_list<std::string_view> names, std::string header_what);
  /// The next row's fields (views valid until the next call); false at the end.
  bool next(std::vector<std::string_view>& fields);
  /// The field index of names[i].
  size_t col(size_t i) const { return cols_.at(i); }
  /// The field index of `name` in the header, SIZE_MAX when it has none (a column not required; valid once
  /// next() has read the header).
  size_t find(std::string_view name) const;
  /// The 1-based line of the row returned last.
  size_t line() const noexcept { return in_.line(); }

 private:
  std::string path_, what_;
  LineReader in_;
  std::vector<std::string_view> names_;
  std::vector<std::string> header_;
  std::vector<size_t> cols_;
  size_t width_ = 0;
};

}  // namespace colmatch::loaders::slurm
