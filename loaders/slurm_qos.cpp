#include "loaders/slurm_qos.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"
#include "loaders/slurm_text.hpp"

namespace colmatch::loaders::slurm {

std::map<std::string, double> read_qos(const std::string& path) {
  require_not_directory(path);
  LineReader in(path);
  std::string_view line;
  size_t name_col = SIZE_MAX, prio_col = SIZE_MAX, width = 0;
  std::map<std::string, double> out;
  while (in.next(line)) {
    if (line.empty()) continue;
    const size_t ln = in.line();
    if (ln > kMaxHosts) throw LoadError(path, ln, "", fmt::format("more than {} lines", kMaxHosts));
    std::vector<std::string_view> f;
    for (size_t b = 0;;) {
      const size_t e = line.find('|', b);
      f.push_back(line.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
      if (e == std::string_view::npos) break;
      b = e + 1;
    }
    if (width == 0) {  // the header
      for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] == "Name") name_col = i;
        if (f[i] == "Priority") prio_col = i;
      }
      if (name_col == SIZE_MAX || prio_col == SIZE_MAX)
        throw LoadError(path, ln, "", "expected sacctmgr -P's header naming Name and Priority");
      width = f.size();
      continue;
    }
    if (f.size() != width)
      throw LoadError(path, ln, "", fmt::format("{} fields, the header names {}", f.size(), width));
    const std::string name(f[name_col]);
    if (name.empty()) throw LoadError(path, ln, "Name", "empty");
    const double p = parse_number(f[prio_col]);  // (NaN when not a number)
    if (!(p >= 0 && p <= 4294967295.0 && p == std::floor(p)))
      throw LoadError(path, ln, "Priority",
                      fmt::format("'{}' is not a whole number from 0 to 4294967295", f[prio_col]));
    if (!out.emplace(name, p).second) throw LoadError(path, ln, "Name", fmt::format("'{}' twice", name));
  }
  return out;
}

}  // namespace colmatch::loaders::slurm
