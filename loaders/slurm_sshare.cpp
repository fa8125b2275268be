#include "loaders/slurm_sshare.hpp"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/slurm_pipe_table.hpp"
#include "loaders/slurm_text.hpp"

namespace colmatch::loaders::slurm {

std::vector<SlurmAssociation> read_sshare(const std::string& path, std::vector<std::string>& warnings) {
  PipeTable table(path, {"Account", "User", "RawShares"}, "sshare -P's header naming Account, User and RawShares");
  const size_t account_col = 0, user_col = 1, shares_col = 2;  // (table.col of each)
  std::vector<std::string> parents;                            // by depth: the account last seen there
  std::vector<SlurmAssociation> out;
  std::vector<std::string_view> f;
  while (table.next(f)) {
    const size_t ln = table.line();
    std::string_view account = f[table.col(account_col)];
    const size_t depth = account.find_first_not_of(' ');
    if (depth == std::string_view::npos) throw LoadError(path, ln, "Account", "empty");
    account.remove_prefix(depth);
    const std::string user(f[table.col(user_col)]);
    // a user's line is indented one level below its account's
    const size_t level = user.empty() ? depth : depth - (depth > 0 ? 1 : 0);
    if (level > parents.size() || (level == 0 && depth > 0 && user.empty()))
      throw LoadError(path, ln, "Account", "indented more than one level below the line before");
    if (level >= kMaxSlurmTreeDepth)
      throw LoadError(path, ln, "Account", fmt::format("the tree is deeper than {}", kMaxSlurmTreeDepth));
    SlurmAssociation a;
    a.account = std::string(account);
    a.user = user;
    if (const size_t c = table.find("RawUsage"); c != SIZE_MAX && !f[c].empty()) {  // (optional)
      const double u = parse_number(f[c]);
      if (!(u >= 0) || !std::isfinite(u))
        throw LoadError(path, ln, "RawUsage", fmt::format("'{}' is not a number >= 0", f[c]));
      a.usage = u;
    }
    const std::string_view raw = f[table.col(shares_col)];
    if (raw == "parent") {
      warnings.push_back(fmt::format("{}:{}: RawShares parent (Fairshare=parent) is read as 1", path, ln));
    } else if (!raw.empty()) {
      const double x = parse_number(raw);
      if (!(x >= 0) || !std::isfinite(x))
        throw LoadError(path, ln, "RawShares", fmt::format("'{}' is not a number >= 0 or parent", raw));
      a.shares = x;
    }
    if (user.empty()) {
      parents.resize(level);
      a.parent = level == 0 ? "" : parents[level - 1];
      parents.push_back(a.account);
      if (level == 0) continue;  // root: the tree's root itself
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace colmatch::loaders::slurm
