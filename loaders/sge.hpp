// A Grid Engine farm as its master describes itself (`--format sge`): the folder tools/sge-dump.sh writes
// and, for `simulate`, the accounting file. Son of Grid Engine 8.1.9's meaning for every field read.
//
// DIR (one file per command, several records concatenated where the command is run per object):
//   qconf-sc.txt        qconf -sc                       the complex list (required)
//   qconf-se.txt        qconf -se global; qconf -se H   execution hosts, `global` first (or qhost-F.xml)
//   qhost-F.xml         qhost -F -xml                   the hosts' values, read when qconf-se.txt is absent
//   qconf-sq.txt        qconf -sq Q for each queue      cluster queues (required)
//   qconf-shgrp.txt     qconf -shgrp @G for each group  host groups (optional)
//   qconf-sp.txt        qconf -sp PE for each PE        parallel environments (optional)
//   qstat-f.xml         qstat -f -xml                   queue instance states (optional)
//   qstat-r.xml         qstat -u '*' -r -xml            pending and running jobs (optional)
//   qstat-j.xml         qstat -j '*' -xml               job details: priority, group, project (optional)
// The farm: the global host's values on the global level; each execution host's complex_values (fixed)
// and load_values (load) and its name (`hostname`) on the host level; one tasker per queue instance
// QUEUE@HOST (where the queue's hostlist, with its @groups, meets the execution hosts), with the queue's
// `qname`, `slots`, `complex_values` and limits (h_rt, h_vmem, ...; INFINITY is the largest value) on
// the queue level, each with its per-host overrides, and its pe_list. Queue instances that are not
// dispatchable (a state of d, s, S, E, C, u, a, A, D in qstat-f.xml, or a qtype without BATCH) are left
// out with a warning; so are settings colmatch does not represent (access lists), each
// named once. Taskers rank by seq_no (lower first).
#pragma once

#include <string>

#include "loaders/dataset.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders {

/// Loads a Grid Engine dump. Jobs come from `accounting` when given (each finished job or task arrives
/// at its submission time with its recorded category and slots and runs its recorded wall clock), else
/// from `jobs_path` when given (qsub options, one job a line: -l, -q, -pe, -hard, -soft, -p, -P, -h; ids
/// 1, 2, ... in line order; what qsub refuses is rejected with its reason, e.g. a soft request on a
/// consumable), else from DIR/qstat-r.xml's pending jobs (held ones noted "held"). Under
/// LoadMode::Snapshot the dump's running jobs' charges are taken off the queue instances they run on
/// (they are not matched again; a warning counts them). Each job's priority is Grid Engine's
/// (engine/schedule/sge_priority.hpp) over the pending and running jobs, weighted by qconf-ssconf.txt. Under
/// LoadMode::Snapshot with no accounting, parallel jobs take Grid Engine's host rules (AllocationRule::HostPeSlots
/// ...: a host's queue instances together, a slot range the most that fit); over time $pe_slots, $fill_up and 1.
/// Throws LoadError naming file, line and field; a job whose request colmatch cannot represent (over time a slot
/// range or a $round_robin PE; an unknown complex, a soft request on a consumable) is rejected with the reason.
Dataset load_sge(const std::string& dump_dir, const std::string& accounting, const ProgressFn& progress = {},
                 LoadMode mode = LoadMode::Snapshot, const std::string& jobs_path = "");

}  // namespace colmatch::loaders
