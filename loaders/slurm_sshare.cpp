#include "loaders/slurm_sshare.hpp"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"
#include "loaders/slurm_text.hpp"

namespace colmatch::loaders::slurm {

std::vector<SlurmAssociation> read_sshare(const std::string& path, std::vector<std::string>& warnings) {
  require_not_directory(path);
  LineReader in(path);
  std::string_view line;
  size_t account_col = SIZE_MAX, user_col = SIZE_MAX, shares_col = SIZE_MAX, width = 0;
  std::vector<std::string> parents;  // by depth: the account last seen there
  std::vector<SlurmAssociation> out;
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
        if (f[i] == "Account") account_col = i;
        if (f[i] == "User") user_col = i;
        if (f[i] == "RawShares") shares_col = i;
      }
      if (account_col == SIZE_MAX || user_col == SIZE_MAX || shares_col == SIZE_MAX)
        throw LoadError(path, ln, "", "expected sshare -P's header naming Account, User and RawShares");
      width = f.size();
      continue;
    }
    if (f.size() != width)
      throw LoadError(path, ln, "", fmt::format("{} fields, the header names {}", f.size(), width));
    std::string_view account = f[account_col];
    const size_t depth = account.find_first_not_of(' ');
    if (depth == std::string_view::npos) throw LoadError(path, ln, "Account", "empty");
    account.remove_prefix(depth);
    const std::string user(f[user_col]);
    // a user's line is indented one level below its account's
    const size_t level = user.empty() ? depth : depth - (depth > 0 ? 1 : 0);
    if (level > parents.size() || (level == 0 && depth > 0 && user.empty()))
      throw LoadError(path, ln, "Account", "indented more than one level below the line before");
    if (level >= kMaxSlurmTreeDepth)
      throw LoadError(path, ln, "Account", fmt::format("the tree is deeper than {}", kMaxSlurmTreeDepth));
    SlurmAssociation a;
    a.account = std::string(account);
    a.user = user;
    const std::string_view raw = f[shares_col];
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
