#include "loaders/slurm_qos.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/slurm_pipe_table.hpp"
#include "loaders/slurm_text.hpp"

namespace colmatch::loaders::slurm {

std::map<std::string, double> read_qos(const std::string& path) {
  PipeTable table(path, {"Name", "Priority"}, "sacctmgr -P's header naming Name and Priority");
  std::map<std::string, double> out;
  std::vector<std::string_view> f;
  while (table.next(f)) {
    const size_t ln = table.line();
    const std::string name(f[table.col(0)]);
    if (name.empty()) throw LoadError(path, ln, "Name", "empty");
    const double p = parse_number(f[table.col(1)]);  // (NaN when not a number)
    if (!(p >= 0 && p <= 4294967295.0 && p == std::floor(p)))
      throw LoadError(path, ln, "Priority",
                      fmt::format("'{}' is not a whole number from 0 to 4294967295", f[table.col(1)]));
    if (!out.emplace(name, p).second) throw LoadError(path, ln, "Name", fmt::format("'{}' twice", name));
  }
  return out;
}

}  // namespace colmatch::loaders::slurm
