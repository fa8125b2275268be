// Scheduling over time: jobs arrive, wait, start, run and end, and the scheduler runs cycle after
// cycle. Each cycle is Moab's scheduling iteration (seed 001) in its order:
//   1. refresh resources: R.Available = R.Configured - R.Dedicated (what running jobs were charged;
//      Capacity::release gives a job's charge back when it ends), with the farm's own changes due by
//      then applied (FarmEvents: taskers down, up, reconfigured);
//   2. feasible jobs: submitted, not held, dependencies ended, some tasker eligible;
//   3. priority: a weighted sum of factors (credential priority, minutes queued, expansion factor, slots);
//   4. throttling per credential (user, group, class, account): running jobs and slots;
//   5. allocation: the job's taskers by the node allocation policy (Placer);
//   6. backfill: none (strict priority order: the first job that cannot start blocks the rest) or EASY
//      (the first blocked job gets a reservation at the earliest time it fits, from the running jobs'
//      walltime estimates; a later job starts now only if it ends by then or leaves the reserved
//      taskers alone).
// Matching is the columnar engine's: job categories, their eligibility computed once (lazily, when a
// category's first job is submitted), dispatch cursors that live across cycles and are pulled back
// only to the taskers whose capacity grew (a job ended there, it came up or was enlarged).
//
// Cost: when no priority factor depends on time, a cycle visits what can change the schedule (ready
// jobs up to the first that does not fit; with EASY, one candidate per category per start; parked
// held, dependency-waiting and throttled jobs only when their event comes; engine/wait_queue.hpp),
// not every waiting job, and gives the same schedule as the full cycle that does (SimPolicy::
// full_cycles). The run's last cycle is a full one, which sets every waiting job's reason.
//
// Times are seconds (doubles). A job runs min(runtime, walltime) seconds: a scheduler ends a job at its
// walltime, which keeps EASY's reservations honest.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "engine/dispatch.hpp"
#include "engine/fbsng.hpp"

namespace colmatch {

enum class BackfillPolicy : uint8_t { None, Easy };
/// Moab's RESOURCEAVAILABILITYPOLICY (seed 001: R.Available = R.Configured - MAX(R.Dedicated,
/// R.Utilized)), per consumable and tasker: Dedicated counts what running jobs were charged; Utilized
/// what is used there (FarmEvents::load plus each running job's charge times its JobTable::utilization);
/// Combined the larger of the two. A job fits where the available amount covers its charge; while one
/// job is placed its charges count in full (its load is known once it runs). Consumables with host or
/// global pools are always Dedicated.
enum class ResourceAvailability : uint8_t { Dedicated, Utilized, Combined };
/// Moab credentials: user, group, class (queue), account, quality of service.
enum class CredentialKind : uint8_t { User = 0, Group = 1, Class = 2, Account = 3, QoS = 4 };

/// The names of the credentials of `kind` in `jobs` (owners, groups, queues, accounts, QoS names).
inline const Dictionary& credential_names(const JobTable& jobs, CredentialKind kind) noexcept {
  switch (kind) {
    case CredentialKind::User: return jobs.owners;
    case CredentialKind::Group: return jobs.groups;
    case CredentialKind::Class: return jobs.queues;
    case CredentialKind::Account: return jobs.accounts;
    default: return jobs.qos_names;
  }
}

/// Per job: the id (into credential_names) of its credential of `kind`.
inline const std::vector<uint32_t>& credential_ids(const JobTable& jobs, CredentialKind kind) noexcept {
  switch (kind) {
    case CredentialKind::User: return jobs.owner;
    case CredentialKind::Group: return jobs.group;
    case CredentialKind::Class: return jobs.queue;
    case CredentialKind::Account: return jobs.account;
    default: return jobs.qos;
  }
}

/// Moab throttling policy for one credential kind: a limit for one named credential, or for each
/// credential of that kind when `name` is empty (a named limit wins over the default one).
struct Throttle {
  CredentialKind kind = CredentialKind::User;
  std::string name;
  uint64_t max_jobs = std::numeric_limits<uint64_t>::max();    ///< running jobs at once
  double max_slots = std::numeric_limits<double>::infinity();  ///< running slots at once
};

/// Moab credential priority (USERCFG[alice] PRIORITY=10, QOSCFG[high] PRIORITY=1000, CLASSCFG, GROUPCFG,
/// ACCOUNTCFG): added to the credential factor of every job holding that credential.
struct CredentialPriority {
  CredentialKind kind = CredentialKind::User;
  std::string name;
  double priority = 0;
};

/// Moab priority factor weights: priority = credential x (the job's priority field + the priorities
/// of its user, group, class, account and QoS) + queue_time x (minutes queued) + expansion x
/// ((wait + walltime) / walltime) + size x (slots). Ties: earlier submit, then input order.
struct PriorityWeights {
  double credential = 1, queue_time = 0, expansion = 0, size = 0;
};

/// Which scheduler chooses the starts: Moab's scheduling iteration (priority order, throttles,
/// backfill) or FBSNG's dynamic queue and section priorities (engine/fbsng.hpp, seed 004).
enum class Scheduler : uint8_t { Moab, Fbsng };

struct SimPolicy {
  double interval = 0;  ///< 0: a cycle at every event time (event driven); > 0: every `interval` s
  /// At least this many seconds between two cycles (FBSNG: the scheduler runs at most once per 5 s);
  /// a cycle due earlier waits for it.
  double min_interval = 0;
  Scheduler scheduler = Scheduler::Moab;
  FbsngPolicy fbsng;  ///< scheduler = Fbsng: queues and process types
  CredentialKind process_type =
      CredentialKind::Account;  ///< scheduler = Fbsng: the credential naming a section's process type
  AllocationPolicy allocation = AllocationPolicy::GreatestPower;
  BackfillPolicy backfill = BackfillPolicy::None;
  ResourceAvailability availability = ResourceAvailability::Dedicated;
  PriorityWeights weights;
  std::vector<Throttle> throttles;
  std::vector<CredentialPriority> credential_priorities;
  double until = std::numeric_limits<double>::infinity();  ///< no cycle after this time
  /// Every cycle visits every waiting job and makes its reservation anew (the full cycle the fast one
  /// must equal). For verification: same schedule, slower.
  bool full_cycles = false;
};

/// A change of the farm during the run (Google cluster-data 2011 machine events ADD, REMOVE, UPDATE).
/// Down: the tasker takes no new job; the jobs running on it keep running to their end with their
/// charges (Moab's default when a node fails: no action on its jobs). Up: it takes jobs again.
/// Configure: the configured amount of consumable `consumable` (catalog.consumables() order) on the
/// tasker's own pool becomes `amount` (base units); R.Available = R.Configured - R.Dedicated, at least
/// 0 (Capacity::set_configured). Only for consumables with no host or global pool, on taskers that have a
/// value for them. The scheduler does not know the future: a reservation counts on the taskers up now.
struct TaskerEvent {
  enum class Kind : uint8_t { Up, Down, Configure };
  double time = 0;  ///< seconds, the clock of the jobs' submit times
  uint32_t tasker = 0;
  Kind kind = Kind::Up;
  uint32_t consumable = 0;
  double amount = 0;
};

/// The farm over time: which taskers are down when the run starts, and the events after (ascending
/// time; events at one instant apply in order). Empty: every tasker up with its configured values.
struct FarmEvents {
  std::vector<uint8_t> down_at_start;  ///< per tasker, or empty (all up)
  std::vector<TaskerEvent> events;
  /// Per consumable (catalog.consumables() order), per tasker: what is used there by other than the
  /// jobs (interactive users, daemons; part of Moab's R.Utilized), in the consumable's base units.
  /// Empty, or an empty vector for a consumable: none. Read under resource_availability "utilized" or
  /// "combined" only, and only for consumables without host or global pools.
  std::vector<std::vector<double>> load;
  bool empty() const noexcept { return down_at_start.empty() && events.empty() && load.empty(); }
};

/// Why a job did not start in the last cycle that considered it.
enum class SimReason : uint8_t {
  None,              ///< started
  NotSubmitted,      ///< submitted after `until`
  Held,              ///< job hold
  Dependency,        ///< a job it depends on has not ended
  NoEligibleTasker,  ///< no tasker can ever run it
  TooLarge,          ///< its eligible taskers together never have room for it (even on an idle farm)
  Throttled,         ///< a credential limit (detail names it)
  Blocked,           ///< strict priority order: a higher-priority job waits first
  Reservation,       ///< would delay the EASY reservation of a higher-priority job
  NoFreeCapacity,    ///< eligible taskers exist, none has room now
  PriorityGap,       ///< FBSNG: its queue is held by a queue priority gap, or a section priority gap (detail)
  Rejected,          ///< bad input (JobTable::reject_reason)
};
const char* sim_reason_text(SimReason r) noexcept;

/// The schedule and what happened on the way.
struct SimResult {
  std::vector<double> start, end;  ///< per job; NaN if it never started
  std::vector<Allocation> allocations;
  std::vector<uint32_t> alloc_first, alloc_count;  ///< per job, into allocations
  std::vector<SimReason> reason;                   ///< per job: None if started, else the last reason
  std::vector<std::string> detail;                 ///< per job: throttle detail ("user alice max_jobs 2")
  std::vector<uint8_t> backfilled;                 ///< per job: started ahead of a reservation
  /// Per job: ever held; ever held back by a credential limit when a cycle looked at it. A fast cycle
  /// looks at fewer waiting jobs than a full one (only those that could start), so was_throttled, unlike
  /// the schedule, depends on which cycles ran: a lower bound of the jobs a limit concerned.
  std::vector<uint8_t> was_held, was_throttled;
  uint64_t cycles = 0;
  /// Cycles that visited every waiting job (Simulator's full cycle: time-dependent priorities, or a
  /// cycle that may be the run's last); the others visited only what could change the schedule.
  uint64_t full_cycles = 0;
  std::vector<double> cycle_seconds;  ///< wall-clock time of each cycle
  std::vector<double> cycle_time;     ///< simulated time of each cycle (seconds), beside cycle_seconds
  /// Timeline: one row per cycle (the last cycle of each simulated minute when there are many).
  struct Row {
    double time;
    uint64_t running, queued;
    std::vector<double> used;  ///< per consumable: configured queue-level total minus free
  };
  std::vector<Row> timeline;
  /// Per consumable (catalog.consumables() order): the amount x seconds the started jobs hold, each
  /// from its start to its end (for utilisation: over what the taskers offer).
  std::vector<double> held_seconds;
  uint64_t categories_evaluated = 0;
  /// Fast cycles: jobs taken back into the ready queue after a credential limit parked them (each is
  /// taken back lazily, when the scan in priority order reaches it while its credential has room).
  uint64_t unparked = 0;
};

/// Progress of a run: the simulated time reached (seconds), the jobs that have ended, the jobs to
/// schedule (not rejected). Called every 1,024 cycles and once at the end, on the simulating thread.
using SimProgress = std::function<void(double time, uint64_t ended, uint64_t jobs)>;

/// Runs the simulation. `jobs` carry submit, runtime, walltime, holds, dependencies and credentials;
/// `farm` the taskers' changes over time (applied in a cycle before its submits, after its ends).
/// Deterministic; the result does not depend on the thread count. Allocates O(jobs + taskers).
/// Throws std::invalid_argument for a farm event naming a tasker or consumable that does not exist,
/// events out of time order, or a Configure on a consumable with a host or global pool.
SimResult simulate(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs, const SimPolicy& policy,
                   const kernels::KernelTable& k, const FarmEvents& farm = {}, const SimProgress& progress = {});

/// The time job j occupies its taskers: min(runtime, walltime), NaN or negative counted as 0.
double sim_duration(const JobTable& jobs, uint32_t j) noexcept;
/// The time the scheduler expects job j to take (walltime, else its duration).
double sim_estimate(const JobTable& jobs, uint32_t j) noexcept;

}  // namespace colmatch
