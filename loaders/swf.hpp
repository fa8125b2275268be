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
///
/// With `machines` (the CERIT-SC wagap 2013 log's machines file: `id cluster nodes ppn - memory_kb` per
/// line), the farm is those clusters' nodes, `<cluster><i>.cerit-sc.cz`, each offering `ppn` slots and
/// the set-valued attribute `properties`: its host name, `cl_<cluster>`, `nodecpus<ppn>` and the
/// properties every CERIT-SC node has (x86_64, brno, nfs4, debian, linux; the machines file names no
/// others). Each job line then carries three more fields: the allocated node list `{...}` (ignored),
/// the queue name (the job's class) and the PBS node request, `part+part...` with `part :=
/// [N|hostname](:item)*`, items `ppn=P`, a property, `^property` (must not have it), `mem=...`
/// (ignored), `#excl` (whole node). A one-node request is a $pe_slots job of P slots on a node with
/// every property (#excl: all of the node's slots, when the request names its cluster); a request of
/// several nodes a $fill_up job of their slots (their split over nodes is not kept). A request that
/// does not parse rejects the job naming the field.
/// Throws LoadError naming file, line and field for a malformed line or header.
Dataset load_swf(const std::string& path, const ProgressFn& progress = {}, const std::string& machines = "");

}  // namespace colmatch::loaders
