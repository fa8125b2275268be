// Slurm's association tree as `sshare -a -P` prints it (with or without -l): a header naming Account, User
// and RawShares, then one association a line, an account's depth in the tree as the leading spaces of its
// Account field (`root`, ` physics`, `  physics|alice`). What priority/multifactor's fair share ranks
// (engine/schedule/slurm_priority.hpp); tools/slurm-dump.sh writes it as sshare.txt.
#pragma once

#include <string>
#include <vector>

#include "engine/schedule/policy.hpp"

namespace colmatch::loaders::slurm {

/// The associations of `path` in order, each account's parent from the indentation (root's own line, the
/// tree's root, is left out). RawShares "parent" (sacctmgr's Fairshare=parent) is read as 1 with a warning
/// added to `warnings`. Throws LoadError naming file, line and field for a missing column, a RawShares that
/// is not a number >= 0 or "parent", a line indented more than one level below the line before, or a tree
/// deeper than kMaxSlurmTreeDepth.
std::vector<SlurmAssociation> read_sshare(const std::string& path, std::vector<std::string>& warnings);

}  // namespace colmatch::loaders::slurm
