// Slurm's scheduling settings (slurm.conf's names and value syntax, as `scontrol show config` prints them)
// read into the simulator's policy: what `simulate --format slurm` takes from a dump's scontrol-config.txt,
// and what a policy file's [policy.slurm] table overrides. One concern: the settings; the rules they set
// live in the engine (engine/schedule/slurm_priority.hpp for priority/multifactor, the Moab iteration's
// backfill_interval for sched/backfill).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/schedule/policy.hpp"

namespace colmatch::loaders::slurm {

/// The settings read (slurm.conf names, case-insensitive as slurm.conf's):
///   SchedulerType          sched/backfill: conservative backfill every bf_interval, the main pass between;
///                          sched/builtin: the main pass only (strict priority order)
///   SchedulerParameters    bf_interval=S (default 30; -1 backfill off), bf_window=MINUTES (1440),
///                          bf_resolution=S, bf_max_job_test, bf_max_job_user, bf_max_job_assoc, bf_max_job_part,
///                          bf_max_job_user_part, bf_min_prio_reserve, bf_min_age_reserve, default_queue_depth,
///                          partition_job_depth, sched_max_job_start, sched_interval (docs/formats/slurm.md); the
///                          other options are Slurm's, not modeled
///   PriorityType           priority/basic (the loader's priorities: submit order) or priority/multifactor
///   PriorityWeightAge, PriorityWeightFairshare, PriorityWeightJobSize   whole numbers >= 0
///   PriorityMaxAge, PriorityDecayHalfLife   Slurm times (7-0, 00:05:00, minutes); PriorityCalcPeriod minutes
///   PriorityFavorSmall     Yes/No
///   PriorityUsageResetPeriod   NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY, YEARLY (any case)
///   PriorityWeightPartition, PriorityWeightQOS   whole numbers >= 0 (the factors: the dump's partitions'
///                          PriorityJobFactor, sacctmgr's QOS priorities)
///   PriorityFlags          NO_FAIR_TREE: the classic fair-share formula; DEPTH_OBLIVIOUS: the same with the
///                          depth-oblivious effective usage; SMALL_RELATIVE_TO_TIME, INCR_ONLY, MAX_TRES,
///                          NO_NORMAL_PART/_QOS/_ASSOC/_TRES/_ALL; CALCULATE_RUNNING and ACCRUE_ALWAYS read
///                          and without effect here (no preemption; age counts from submit always)
///   FairShareDampeningFactor   a whole number from 1 (the classic formula's D)
///   PriorityWeightTRES     TYPE[/NAME]=WEIGHT[UNIT],... (parse_tres_weights): cpu, mem, node, billing and
///                          GRES counted (the dump's loader works out each job's TRES over its partition's);
///                          licenses and burst buffers not (a warning)
///   PriorityWeightAssoc    a whole number >= 0 (the factor: sacctmgr's association priorities)
///   AccountingStorageType  without accounting_storage/slurmdbd priority/multifactor ignores the age and
///                          fair-share weights and never recalculates (SlurmMultifactor::accounting)
///   BOOT_TIME              (scontrol's, not slurm.conf's) slurmctld's start: the priority calculations
///                          come at it plus whole PriorityCalcPeriods, the backfill cycles (at first) at it
///                          plus whole bf_intervals
bool is_setting(std::string_view key);

/// A TRES weight list as slurm.conf writes one (PriorityWeightTRES, a partition's TRESBillingWeights):
/// "TYPE[/NAME]=WEIGHT[UNIT],...", TYPE cpu, mem, node, billing, energy, vmem, pages, fs/disk, gres/NAME,
/// license/NAME or bb/NAME in any case; a unit (K, M, G, T, P) divides the weight by 1024 per step above the
/// TRES's base unit (MB for mem and bb, none for the others), as slurm_get_tres_weight_array does
/// (Mem=0.25G: 0.25 per GB). Returns (TRES name, weight) in the order written, the type in lower case
/// ("gres/gpu:a100"); "" or "(null)": none. Throws std::invalid_argument for an entry slurmctld refuses.
std::vector<std::pair<std::string, double>> parse_tres_weights(std::string_view text);

/// Applies setting `key` = `value` to `policy`. Returns a warning ("" when none) for a value Slurm takes but
/// colmatch does not model; throws std::invalid_argument (saying why) for a value Slurm would refuse, or
/// a key that is_setting() does not know.
std::string apply_setting(std::string_view key, std::string_view value, SimConfig& policy);

}  // namespace colmatch::loaders::slurm
