// Shared by the libFuzzer targets: inputs become files (the loaders read paths), two-file formats
// split their input at a separator line, and a run that ends in an exception is a clean rejection
// (the CLI turns it into an error message and exit 1). A crash, a sanitizer report, a stall past
// libFuzzer's -timeout or memory past -rss_limit_mb is a finding.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>

#include "engine/batch/matcher.hpp"
#include "loaders/dataset.hpp"

namespace colmatch::fuzz {

/// Separates the two files of a two-file input ("first\n--8<--\nsecond").
inline constexpr std::string_view kSeparator = "\n--8<--\n";

/// Writes `data` to a per-process temporary file named after `name`; returns its path.
inline std::string temp_file(std::string_view name, std::string_view data) {
  const std::string path = "/tmp/colmatch-fuzz-" + std::to_string(::getpid()) + "-" + std::string(name);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(data.data(), static_cast<std::streamsize>(data.size()));
  return path;
}

/// The input split at the first separator (the second part empty when there is none).
inline std::pair<std::string_view, std::string_view> split(const uint8_t* data, size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t at = all.find(kSeparator);
  if (at == std::string_view::npos) return {all, {}};
  return {all.substr(0, at), all.substr(at + kSeparator.size())};
}

/// Runs the whole match over a loaded dataset (so loader output also exercises the engine).
inline void match(const loaders::Dataset& ds) {
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  if (m.dispatch.assigned + m.dispatch.pending + m.dispatch.rejected != ds.jobs.size()) std::abort();
}

/// Calls f(); exceptions derived from std::exception are clean rejections.
template <class F>
int run(F&& f) {
  try {
    f();
  } catch (const std::exception&) {}
  return 0;
}

}  // namespace colmatch::fuzz
