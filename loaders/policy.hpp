// Scheduling policy for `colmatch simulate`, from a `[policy]` table (in farm.toml or in a file of its
// own given with --policy). Keys, with Moab's names for what they mean (seed 001):
//   interval = 0                      RMPOLLINTERVAL: 0 = a cycle after each batch of events
//   allocation = "greatest_power"     NODEALLOCATIONPOLICY: greatest_power, first_available, best_fit, worst_fit,
//                                     consecutive_best_fit (Slurm's select/cons_tres)
//   backfill = "none"                 BACKFILLPOLICY: none (strict priority order), greedy, easy, conservative
//   backfill_interval = 0             Slurm's bf_interval: backfill only in cycles this far apart (s)
//   backfill_phase = 0                those cycles at phase + k x interval; "slurm": as Slurm's backfill thread
//   backfill_window = inf             with backfill_interval and a book: no reservation past this (bf_window, s)
//   backfill_max_jobs = N             with backfill_interval and a book: node-space map records (bf_max_job_test)
//   backfill_max_jobs_per_partition, backfill_max_jobs_per_user_partition = N   (bf_max_job_part, _user_part)
//   backfill_resolution = S           with backfill_interval and a book: reservations in steps of S s (bf_resolution)
//   reservation_depth = 1             RESERVATIONDEPTH: with easy, how many waiting jobs hold a reservation
//   compression = false               with a book (depth > 1, conservative), true: a job ending before
//                                     its walltime moves the booked reservations earlier where they fit
//   resource_availability = "dedicated"  RESOURCEAVAILABILITYPOLICY: dedicated, utilized or combined
//                                     (the load: a native job's "utilization", a tasker's "utilized")
//   [policy.priority] credential = 1, queue_time = 0, expansion = 0, size = 0   (factor weights)
//   [[policy.throttle]] credential = "user" | "group" | "class" | "account" | "qos", name = "alice"
//     (optional: every credential of that kind), max_jobs = N, max_slots = N   (MAXJOB, MAXPROC)
//   [policy.credential_priority] qos = { high = 1000 }, user = { alice = 10 }, group, class, account
//     (QOSCFG[high] PRIORITY=1000 ...: added to the credential factor of the jobs holding them)
//   scheduler = "moab"                moab (the above) or fbsng (FBSNG's dynamic priorities, seed 004)
//   min_interval = 0                  seconds at least between cycles (5 with scheduler = "fbsng")
//   [policy.fbsng] process_type = "account"   the job credential naming a section's process type
//   [policy.fbsng.queues.NAME] QPmin, QPmax, QPI, QPD, QPG, SPG   (NAME "*": every queue not listed)
//   [policy.fbsng.process_types.NAME] max_sections, max_slots, max = { consumable = amount },
//     requirements = "request"   (quotas and default requirements; engine/schedule/fbsng.hpp)
//   [policy.slurm] slurm.conf's scheduling settings by name (loaders/slurm_settings.hpp): SchedulerType,
//     SchedulerParameters = "bf_interval=30", PriorityType = "priority/multifactor", PriorityWeightAge,
//     PriorityWeightFairshare, PriorityWeightJobSize, PriorityMaxAge = "7-0", PriorityDecayHalfLife,
//     PriorityCalcPeriod (minutes), PriorityFavorSmall; priority_calc_phase (s);
//     [[policy.slurm.associations]] account = "a", user = "u", shares = 2   (sacctmgr's Fairshare=)
#pragma once

#include <string>

#include <toml++/toml.h>

#include "engine/schedule/policy.hpp"
#include "loaders/vov_options.hpp"

namespace colmatch::loaders {

/// Parses a TOML file. Throws LoadError naming the file and line of a syntax error, or the file when it
/// is a folder or cannot be read.
toml::table read_toml_file(const std::string& path);

/// Reads the simulation keys of a [policy] table into `policy` (other keys are the caller's: `power`
/// in farm.toml) and sets its source to `path`. Throws LoadError naming `path`, line and key for an
/// unknown key or a bad value.
void read_policy_table(const toml::table& table, const std::string& path, SimConfig& policy,
                       bool allow_power_key = false);

/// Reads a policy file: its [policy] table (or, without one, its top level), over `base` (what the
/// input's format assumes where the file says nothing: Dataset::policy_defaults).
SimConfig read_policy_toml(const std::string& path, const SimConfig& base = {});

/// Reads an Altair Accelerator `vov` table of a policy (issue 10):
///   [policy.vov]
///   wrappers = ["vov", "vw", "nc run", "time", "env"]   # the tool is found after these
///   [policy.vov.dollars]                                 # `$NAME` in a job's list -> a list
///   BIGMEM = "RAMTOTAL#64000 | bigmem"
///   [policy.vov.symbols]                                 # `@NAME@` in a tasker's list -> a list
///   OS = "linux64"
/// Throws LoadError naming `path`, line and key for an unknown key or a value that is not a string.
VovOptions read_vov_table(const toml::table& table, const std::string& path);

/// The `[policy.vov]` table of a policy file (or its top-level `vov` table); defaults without one.
VovOptions read_vov_policy_toml(const std::string& path);

}  // namespace colmatch::loaders
