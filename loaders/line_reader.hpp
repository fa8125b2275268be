// Reads a text file line by line, transparently gunzipping (.gz or not, zlib decides by magic).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace colmatch::loaders {

/// Called now and then with (path, lines read so far, bytes read so far); used for progress output.
using ProgressFn = std::function<void(const std::string& path, uint64_t lines, uint64_t bytes)>;

/// The longest line a LineReader returns (64 MiB): a longer one is a LoadError naming file and line, so
/// that one line of an input (a runaway file without newlines) cannot take the run's memory.
inline constexpr size_t kMaxLineBytes = size_t{64} << 20;

class LineReader {
 public:
  /// Opens `path`; throws LoadError naming the file if it cannot be opened.
  explicit LineReader(std::string path, ProgressFn progress = {});
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  /// Reads the next line without its '\n' (and '\r'); false at end of file. Throws LoadError on a
  /// read error (truncated or corrupt gzip). The view is valid until the next call. `line()` is the
  /// 1-based number of the line returned last.
  bool next(std::string_view& out);
  size_t line() const noexcept { return line_; }
  const std::string& path() const noexcept { return path_; }

 private:
  bool refill();
  std::string path_;
  void* gz_ = nullptr;
  std::vector<char> buf_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  std::string carry_;
  size_t line_ = 0;
  uint64_t bytes_ = 0;
  ProgressFn progress_;
};

/// Splits a CSV line on commas (the traces have no quoted fields). Fields are views into `line`.
void split_csv(std::string_view line, std::vector<std::string_view>& fields);

}  // namespace colmatch::loaders
