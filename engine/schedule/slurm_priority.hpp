// Slurm's priority/multifactor (slurmctld 22.05.8: plugins/priority/multifactor/priority_multifactor.c and
// fair_tree.c) as the job priority of the simulator's Slurm runs (SimConfig::slurm_priority): the age, job
// size and fair-share factors, weighted and summed, recomputed as slurmctld's decay thread does (at submit,
// then every PriorityCalcPeriod), with the running jobs' usage charged and decayed by PriorityDecayHalfLife,
// reset by PriorityUsageResetPeriod, and ranked by Fair Tree or weighed by the classic formula (NO_FAIR_TREE). It hears
// of submits, starts and ends and knows nothing of taskers. Internal to engine/schedule/ (the Moab iteration asks it
// for priorities instead of its own factors).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "engine/model/capacity.hpp"
#include "engine/model/catalog.hpp"
#include "engine/model/jobs.hpp"
#include "engine/model/per_job.hpp"
#include "engine/model/taskers.hpp"
#include "engine/placement/placer.hpp"
#include "engine/schedule/policy.hpp"

namespace colmatch {

/// The normalised factors of one job at one time, each in [0, 1] (what `sprio -n` prints), and its TRES
/// factors already weighted and summed (sprio -l's TRES column, added up).
struct SlurmFactors {
  double age = 0, fairshare = 0, job_size = 0, partition = 0, qos = 0, assoc = 0;
  double tres = 0;
};

/// Priorities by priority/multifactor. O(jobs + associations) memory; a calculation costs O(pending jobs
/// + running jobs + associations x log). Not thread-safe.
class SlurmPriority {
 public:
  /// `cpus`: per job, the CPUs it asks in all (Slurm's min_cpus); `nodes`: per job, its node count (1 for
  /// a job Slurm may spread). `cluster_cpus` and `cluster_nodes`: the farm's totals (> 0). Keeps references
  /// to `jobs` and `config`; throws PolicyError for a calc_period below 1 s, a max_age not above 0, a negative
  /// decay_half_life, a dampening below 1 or a calc_phase that is not finite. The association tree:
  /// `config.associations`, then each job's account under root and its user (JobTable::owners) in that account.
  SlurmPriority(const JobTable& jobs, const SlurmMultifactor& config, std::vector<double> cpus,
                std::vector<double> nodes, double cluster_cpus, double cluster_nodes);

  /// The priorities of `jobs` on a farm as the simulator sees it: a job's CPUs are its slots' units of the
  /// fit consumable (Slurm's cpus; 1 a slot when it asks none), its nodes its slots when it takes one slot
  /// a tasker (else 1: Slurm's min_nodes), the cluster's CPUs every tasker's configured amount of it.
  static SlurmPriority of_farm(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                               const SimConfig& policy);

  /// Runs the calculations due by time t (at calc_phase + k x calc_period <= t, each once): usage set to 0
  /// at the first one past a PriorityUsageResetPeriod boundary, decayed and the running jobs' added, Fair
  /// Tree, every pending job's priority anew. Call before the events of
  /// time t.
  void advance(double t);
  /// Job j was submitted at t: its priority as slurmctld sets it then (age 0, the last calculation's fair share).
  void submitted(uint32_t j, double t);
  /// Job j started at t: no longer pending; its CPUs count as usage from t at the calculations it runs
  /// through. `total_cpus`: the CPUs it was given (slurmctld's total_cpus: a job that takes its nodes whole is
  /// given every CPU of them, slurm_whole_node_cpus), which a job charged by CPUs (no TRESBillingWeights)
  /// is billed for; NaN: what it asks.
  /// `billable`: its billable TRES as given (slurm_whole_node_billable), NaN: as asked.
  void started(uint32_t j, double t, double total_cpus = std::numeric_limits<double>::quiet_NaN(),
               double billable = std::numeric_limits<double>::quiet_NaN());
  /// Job j ended at t: it no longer runs (what it ran since the last calculation is never charged, as
  /// slurmctld 22.05.8 was measured to do); a job whose last dependency it was accrues age from t.
  void ended(uint32_t j, double t);

  /// Job j's priority as last computed, above its tier (JobTable::priority's multiples of 2^32).
  double priority(uint32_t j) const noexcept { return priority_[j]; }
  /// When the last calculation ran (NaN: none yet).
  double last_calculation() const noexcept { return ran_ ? last_ran_ : std::numeric_limits<double>::quiet_NaN(); }
  /// Job j's factors if computed at t (age from when it became eligible, its submit under ACCRUE_ALWAYS;
  /// fair share and size as they stand).
  SlurmFactors factors(uint32_t j, double t) const;

 private:
  enum class State : uint8_t { Unsubmitted, Pending, Running, Ended };
  struct Assoc {
    uint32_t parent = 0;  // index of the parent (root: itself)
    double shares = 1;
    double usage = 0;  // raw usage, CPU-seconds, decayed
    double level_fs = 0;
    double fs_factor = 1;
    // the classic formula (config.fair_tree false): shares over the siblings', multiplied down from the
    // root; the siblings' shares; effective usage (NaN: a user's, not yet computed since the last calculation)
    double shares_norm = 0, level_shares = 0;
    double efctv = std::numeric_limits<double>::quiet_NaN();
    // its normalised usage as last computed (DEPTH_OBLIVIOUS reads its siblings'); before that, slurmdb_defs.c's
    // initial NO_VAL (4294967294), which such a sibling adds as it stands
    double norm = 4294967294.0;
    bool user = false;
    std::vector<uint32_t> children;
  };
  void calculate(double at);
  void init_accrue();
  void add_usage(uint32_t j, double from, double to);
  void fair_tree(const std::vector<uint32_t>& siblings, uint32_t& rank, uint32_t& rnt, bool account_tied);
  void classic_usage(uint32_t a);
  void depth_oblivious_usage(Assoc& a);
  void recompute(uint32_t j, double at);
  void classic_user(uint32_t u);
  double compute(uint32_t j, double t) const;

  const JobTable& jobs_;
  const SlurmMultifactor& config_;
  std::vector<double> cpus_, nodes_;
  std::vector<double> tres_weight_;  // per column of config.tres_names: its PriorityWeightTRES (0 if none)
  double cluster_cpus_, cluster_nodes_;
  double decay_factor_ = 1;             // per second: 1 - ln 2 / half-life, as slurmctld approximates it
  std::vector<Assoc> assocs_;           // [0] is root
  std::vector<uint32_t> assoc_of_job_;  // the user association of each job
  uint32_t user_assocs_ = 0;            // Fair Tree's g_user_assoc_count
  std::vector<double> priority_;        // per job
  std::vector<State> state_;            // per job
  std::vector<uint32_t> pending_;       // submitted, not started (pruned at each calculation)
  std::vector<uint32_t> running_;       // started, not ended (pruned at each calculation)
  std::vector<double> started_at_;      // per job, once it runs: its start
  std::vector<double> total_cpus_;      // per job, once it runs: the CPUs it was given (NaN: what it asks)
  std::vector<double> given_billable_;  // per job given its nodes whole under billing weights (empty: none)
  // per job: when it accrues age from (acct_policy_handle_accrue_time's begin time: its submit, the end of
  // a hold after it, or when its last dependency ended; +inf while one has not), and the dependencies
  // left to end; per job, the jobs depending on it (dependents_[dependents_first_[j] .. [j + 1]))
  std::vector<double> accrue_;
  std::vector<uint32_t> deps_left_, dependents_first_, dependents_;
  bool ran_ = false;       // a calculation has run
  double last_ran_ = 0;    // the last calculation's time
  double next_ = 0;        // the next calculation's time
  double next_reset_ = 0;  // PriorityUsageResetPeriod: the next boundary (set at the first calculation)
};

/// The CPUs slurmctld gives a job that takes its nodes whole (SlurmMultifactor::whole_node; job_record's
/// total_cpus): every CPU configured (`cpu` in `configured`) on each tasker of `allocs`, counted once.
double slurm_whole_node_cpus(std::span<const Allocation> allocs, const Capacity& configured, size_t cpu);

/// The billable TRES of a job given the taskers of `allocs` whole (SlurmWholeNodeBilling), not truncated: its
/// CPUs are every CPU configured there (`cpu`), its memory as `b` says, every MB configured there (`mem`,
/// bytes) when it asked none.
double slurm_whole_node_billable(const SlurmWholeNodeBilling& b, std::span<const Allocation> allocs,
                                 const Capacity& configured, size_t cpu, size_t mem);

/// The first PriorityUsageResetPeriod boundary strictly after time t (seconds since the epoch, read as UTC):
/// the next midnight, Sunday midnight, first of a month, of a quarter or of a year, as slurmctld's
/// _next_reset (priority_multifactor.c) computes it from the last reset (its catch-up loops, for a
/// slurmctld that was down across boundaries, are not needed by one whose calculations never stop).
/// None and Now, a t that is not finite or beyond +-10^13 s: +infinity.
double slurm_usage_reset_after(SlurmUsageReset period, double t);

/// Job j's priority/multifactor priority as it stood when a run decided on it, what `sprio -l` would have
/// shown then: at its start, or, if it never started, at the run's last cycle.
struct SlurmPriorityAt {
  double decided = 0;    ///< the time: the job's start or the last cycle
  double computed = 0;   ///< when that priority was computed: its submit or a calculation
  double priority = 0;   ///< above the job's tier
  SlurmFactors factors;  ///< normalised, at `computed`
};

/// Replays run `r`'s submits, starts and ends into priority/multifactor (policy.slurm_priority, which must be
/// enabled) up to job j's decision, as the simulator heard them. O(jobs log jobs).
SlurmPriorityAt slurm_priority_at(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                                  const SimConfig& policy, const std::vector<double>& start,
                                  const std::vector<double>& end, double last_cycle, uint32_t j);

}  // namespace colmatch
