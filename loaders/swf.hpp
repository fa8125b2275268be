// The Standard Workload Format of the Parallel Workloads Archive (Feitelson et al.): one job per line,
// 18 whitespace-separated fields, -1 for unknown; `;` header lines such as `MaxNodes: 1024`.
#pragma once

#include <string>

#include "loaders/dataset.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders {

/// Loads an SWF log (plain or gzip) as a farm and its jobs for `colmatch simulate`.
///  Farm: `MaxNodes` taskers `node0001`... each offering MaxProcs / MaxNodes of the consumable `slots`
///  (one node with MaxProcs slots when MaxNodes is missing; MaxProcs defaults to the largest job).
///  Jobs (field numbers of the format): id = field 1; submit = 2 (seconds); runtime = 4; slots = 5
///  (allocated processors, else 8, requested); walltime = 9 (requested time; -1: none); user = 12 as
///  `u<N>`, group = 13 as `g<N>`, class = 15 as `q<N>`. Each job charges one slot per processor and may
///  spread over nodes ($fill_up). A job with no processors or an unknown runtime is kept as rejected
///  with the reason. Lines after the 18 fields (site extensions) are ignored.
/// Throws LoadError naming file, line and field for a malformed line or header.
Dataset load_swf(const std::string& path, const ProgressFn& progress = {});

}  // namespace colmatch::loaders
