#include "loaders/slurm_qos.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/slurm_pipe_table.hpp"
#include "loaders/slurm_text.hpp"

namespace colmatch::loaders::slurm {

std::map<std::string, double> read_qos(const std::string& path, std::map<std::string, double>* usage_factor) {
  PipeTable table(path, {"Name", "Priority"}, "sacctmgr -P's header naming Name and Priority");
  std::map<std::string, double> out;
  std::vector<std::string_view> f;
  while (table.next(f)) {
    const size_t ln = table.line();
    if (const size_t u = table.find("UsageFactor"); u != SIZE_MAX) {
      const double v = f[u].empty() ? 1.0 : parse_number(f[u]);  // (empty: unset; NaN when not a number)
      if (!(v >= 0 && v <= 1e6))
        throw LoadError(path, ln, "UsageFactor", fmt::format("'{}' is not a number from 0 to 1000000", f[u]));
      if (usage_factor != nullptr) (*usage_factor)[std::string(f[table.col(0)])] = v;
    }
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

std::map<std::tuple<std::string, std::string, std::string>, double> read_assoc_priorities(const std::string& path) {
  PipeTable table(path, {"Account", "User", "Partition", "Priority"},
                  "sacctmgr -P's header naming Account, User, Partition and Priority");
  std::map<std::tuple<std::string, std::string, std::string>, double> out;
  std::vector<std::string_view> f;
  while (table.next(f)) {
    const size_t ln = table.line();
    std::tuple<std::string, std::string, std::string> key(f[table.col(0)], f[table.col(1)], f[table.col(2)]);
    if (std::get<0>(key).empty()) throw LoadError(path, ln, "Account", "empty");
    const std::string_view text = f[table.col(3)];
    const double p = text.empty() ? 0.0 : parse_number(text);  // (NaN when not a number)
    if (!(p >= 0 && p <= 4294967295.0 && p == std::floor(p)))
      throw LoadError(path, ln, "Priority", fmt::format("'{}' is not a whole number from 0 to 4294967295", text));
    if (!out.emplace(key, p).second)
      throw LoadError(
          path, ln, "Account",
          fmt::format("'{}' (user '{}', partition '{}') twice", std::get<0>(key), std::get<1>(key), std::get<2>(key)));
  }
  return out;
}

}  // namespace colmatch::loaders::slurm
