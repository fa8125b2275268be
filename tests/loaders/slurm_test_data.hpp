// What the Slurm tests share (tests/loaders/test_slurm*.cpp): where the oracle's data is, a temporary file of
// job lines, why a job was rejected, and Slurm's host lists as sets.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "loaders/dataset.hpp"
#include "loaders/slurm.hpp"
#include "loaders/slurm_text.hpp"

namespace colmatch::slurm_test {

/// datasets/slurm/ (what bench/peers/slurm_oracle.sh and slurm_run.sh recorded; its README says how).
inline const std::string kData = std::string(COLMATCH_SOURCE_DIR) + "/datasets/slurm/";

/// A temporary file holding `text`, named after this process and `name`; the caller removes it.
inline std::string temp_file(const std::string& name, const std::string& text) {
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("colmatch-slurm-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p) << text;
  return p.string();
}

/// The c100 cluster with the jobs of `lines` (sbatch options, one job a line).
inline loaders::Dataset load_lines(const std::string& name, const std::string& lines) {
  const std::string p = temp_file(name, lines);
  loaders::Dataset ds = loaders::load_slurm(kData + "c100", p);
  std::filesystem::remove(p);
  return ds;
}

/// Why job j was rejected ("" when it was not).
inline std::string why_rejected(const loaders::Dataset& ds, uint32_t j) {
  return ds.jobs.reject[j] == kNone ? std::string() : ds.jobs.reject_reason[ds.jobs.reject[j]];
}

/// The fields of `line` between `sep`s, `n` of them (the last takes the rest of the line; missing ones empty).
inline std::vector<std::string> tsv_fields(const std::string& line, size_t n, char sep = '\t') {
  std::vector<std::string> out(n);
  size_t b = 0;
  for (size_t i = 0; i < n && b <= line.size(); ++i) {
    const size_t e = i + 1 == n ? std::string::npos : line.find(sep, b);
    out[i] = line.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

/// A file of `request<TAB>verdict` lines in kData (what slurm_oracle.sh submit and ask record), as a map.
inline std::map<std::string, std::string> read_verdicts(const std::string& name) {
  std::map<std::string, std::string> out;
  std::ifstream in(kData + name);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f = tsv_fields(line, 2);
    out[f[0]] = std::move(f[1]);
  }
  return out;
}

/// Slurm's host list as the oracle recorded it (`n[001-003,010]`; "-" for none).
inline std::set<std::string> split(const std::string& s) {
  if (s == "-") return {};
  const auto names = loaders::slurm::expand_hostlist(s);
  return {names.begin(), names.end()};
}

}  // namespace colmatch::slurm_test
