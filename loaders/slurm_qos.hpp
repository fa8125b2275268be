// Slurm's QOS and association priorities as `sacctmgr -P show qos format=Name,Priority[,UsageFactor]` and `sacctmgr -P
// show assoc format=Account,User,Partition,Priority` print them: a header, then one QOS or association a line. What
// priority/multifactor's QOS and association factors read (a job's QOS or association priority over the
// largest, assoc_mgr's norm_priority and priority_norm; engine/schedule/slurm_priority.hpp); tools/slurm-dump.sh
// writes them as sacctmgr-qos.txt and sacctmgr-assoc.txt (only where slurmdbd keeps them).
#pragma once

#include <map>
#include <string>
#include <tuple>

namespace colmatch::loaders::slurm {

/// QOS name -> Priority (a whole number >= 0) of `path`, and where the header names UsageFactor (`format=
/// Name,Priority,UsageFactor`, tools/slurm-dump.sh since 2026-12-01) QOS name -> UsageFactor into
/// `usage_factor` when given (what fair share multiplies a job's usage by: priority_multifactor.c
/// _apply_new_usage; sacctmgr prints 1.000000 unless set, empty when unset: 1). Throws LoadError naming file, line and
/// field for a header without Name and Priority, a line of another field count, an empty or repeated name, a Priority
/// that is not a whole number from 0 to 2^32 - 1, a UsageFactor that is not a number from 0 to 10^6, or more
/// than kMaxHosts lines.
std::map<std::string, double> read_qos(const std::string& path, std::map<std::string, double>* usage_factor = nullptr);

/// The associations' priorities as `sacctmgr -P show assoc format=Account,User,Partition,Priority` prints them
/// (slurmdbd's, each inherited from its parent where not set): (account, user, partition) -> Priority, user
/// and partition "" for an account's own row (and a row of no partition); an empty Priority is 0 (assoc_mgr:
/// INFINITE counts as 0). What priority/multifactor's association factor reads (its priority over the largest);
/// tools/slurm-dump.sh writes it as sacctmgr-assoc.txt. Throws LoadError naming file, line and field for a
/// header without those four fields, a line of another field count, an empty or repeated account, user and
/// partition, a Priority that is not a whole number from 0 to 2^32 - 1, or more than kMaxHosts lines.
std::map<std::tuple<std::string, std::string, std::string>, double> read_assoc_priorities(const std::string& path);

}  // namespace colmatch::loaders::slurm
