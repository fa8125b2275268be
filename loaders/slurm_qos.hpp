// Slurm's QOS priorities as `sacctmgr -P show qos format=Name,Priority` prints them: a header naming Name
// and Priority, then one QOS a line. What priority/multifactor's QOS factor reads (a job's QOS priority over
// the largest, assoc_mgr's norm_priority; engine/schedule/slurm_priority.hpp); tools/slurm-dump.sh writes it
// as sacctmgr-qos.txt (only where slurmdbd keeps the QOS).
#pragma once

#include <map>
#include <string>

namespace colmatch::loaders::slurm {

/// QOS name -> Priority (a whole number >= 0) of `path`. Throws LoadError naming file, line and field for a
/// header without Name and Priority, a line of another field count, an empty or repeated name, a Priority
/// that is not a whole number from 0 to 2^32 - 1, or more than kMaxHosts lines.
std::map<std::string, double> read_qos(const std::string& path);

}  // namespace colmatch::loaders::slurm
