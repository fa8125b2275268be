// Grid Engine's dispatch priority (sge_priority(5); Son of Grid Engine 8.1.9, libs/sched/sge_urgency.c and
// sgeee.c): the order in which its scheduler considers pending jobs.
//
//   prio    = weight_priority * npprior + weight_urgency * nurg + weight_ticket * ntckts
//   npprior = (ppri + 1024) / 2048                 ppri: qsub -p, -1023 .. 1024 (JB_priority - 1024)
//   urg     = rrcontr + wtcontr + dlcontr
//   rrcontr = urgency(slots) * slots + the sum over the hard -l requests of
//             urgency * slots * value (numeric complexes) or urgency (string-like ones)
//   wtcontr = weight_waiting_time * (now - submission time)
//   dlcontr = weight_deadline / max(deadline - now, 1), 0 without a deadline
//   nurg    = (urg - min) / (max - min) over the pending and the running jobs, 0.5 when max - min < 1e-6
//   ntckts  = tickets / the most tickets of any pending or running job, 0.5 when that is < 1e-6
//             (tickets: engine/schedule/sge_tickets.hpp, the functional and override policies)
// Jobs go in prio descending, then submission time, then job number (sge_support.c, sgeee_sort_jobs).
// Checked against a real qmaster's qstat -urg / -pri: tests/loaders/test_sge_priority.cpp.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/schedule/sge_tickets.hpp"

namespace colmatch {

/// sched_conf(5)'s weights; the defaults are the manual's (Debian's init_cluster writes others, which a
/// dump's qconf -ssconf carries).
struct SgePriorityWeights {
  double weight_priority = 1.0;
  double weight_urgency = 0.1;
  double weight_ticket = 0.01;
  double weight_waiting_time = 0.0;
  double weight_deadline = 3600000.0;
};

/// One job as the priority sees it.
struct SgeUrgencyInput {
  double posix_priority = 0;  ///< qsub -p: -1023 .. 1024
  double rrcontr = 0;         ///< the resource requirement contribution (sge_request_urgency summed)
  double submit = 0;          ///< submission time, seconds
  double deadline = 0;        ///< qsub -dl, seconds; 0: none
  /// Whether the job widens the urgency range: Grid Engine's pending and running jobs do, a held or
  /// failed one does not (the scheduler gives it no priority: its prio is 0, as qstat prints it).
  bool ranged = true;
  SgeTickets tickets;  ///< from sge_tickets (all 0 without a ticket policy)
};

/// A job's terms, as qstat -urg and -pri print them.
struct SgePriorityTerms {
  double npprior = 0, rrcontr = 0, wtcontr = 0, dlcontr = 0, urg = 0, nurg = 0, ntckts = 0, prio = 0;
  SgeTickets tickets;  ///< qstat -ext's tckts, otckt, ftckt
};

/// The contribution of one hard request to rrcontr (centry_urgency_contribution): `urgency` (the
/// complex's last column of qconf -sc) times `slots` times `value` for a numeric complex (INT, DOUBLE,
/// MEMORY in bytes, TIME in seconds, BOOL as 1 or 0), `urgency` alone for a string-like one.
double sge_request_urgency(bool numeric, double urgency, double value, double slots) noexcept;

/// The slot count the urgency assumes for a PE slot range `lo`-`hi` (sge_pe(5) urgency_slots: "min",
/// "max", "avg" or a number; sge_job_slot_request). Throws std::invalid_argument for another text.
double sge_urgency_slots(const std::string& urgency_slots, double lo, double hi);

/// Every job's terms at time `now` (seconds), urgency normalised over the `ranged` jobs (over all of
/// them when none is), tickets over every job's. O(jobs). Pass the running jobs too: they widen the ranges.
std::vector<SgePriorityTerms> sge_priorities(const SgePriorityWeights& w, std::span<const SgeUrgencyInput> jobs,
                                             double now);

/// The terms as one line: `prio 0.51 = 1 * npprior 0.5 + 0.1 * nurg 1 (urg 2000 = rrcontr 2000 + wtcontr 0
/// + dlcontr 0) + 0.01 * ntckts 0.5`, then `(tckts 833 = otckt 0 + ftckt 833)` when the job has tickets.
std::string sge_priority_text(const SgePriorityWeights& w, const SgePriorityTerms& t);

}  // namespace colmatch
