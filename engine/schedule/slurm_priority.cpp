#include "engine/schedule/slurm_priority.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "engine/model/capacity.hpp"

namespace colmatch {

SlurmPriority::SlurmPriority(const JobTable& jobs, const SlurmMultifactor& config, std::vector<double> cpus,
                             std::vector<double> nodes, double cluster_cpus, double cluster_nodes)
    : jobs_(jobs),
      config_(config),
      cpus_(std::move(cpus)),
      nodes_(std::move(nodes)),
      cluster_cpus_(std::max(cluster_cpus, 1.0)),
      cluster_nodes_(std::max(cluster_nodes, 1.0)),
      priority_(jobs.size(), 1.0),
      state_(jobs.size(), State::Unsubmitted),
      started_at_(jobs.size(), 0.0),
      total_cpus_(jobs.size(), std::numeric_limits<double>::quiet_NaN()) {
  if (!(config.calc_period >= 1) || !std::isfinite(config.calc_period) || !(config.max_age > 0) ||
      !std::isfinite(config.calc_phase) || !(config.decay_half_life >= 0) || !(config.dampening >= 1) ||
      !std::isfinite(config.dampening))
    throw PolicyError(
        "slurm priority: PriorityCalcPeriod must be at least 1 s, PriorityMaxAge above 0, "
        "PriorityDecayHalfLife at least 0, FairShareDampeningFactor at least 1 and the phase finite");
  init_accrue();
  // PriorityWeightTRES by column; a TRES without one (energy, fs/disk, vmem, pages: no job asks any) weighs 0
  if (!config.tres_names.empty()) {
    tres_weight_.assign(config.tres_names.size(), 0.0);
    for (const auto& [name, w] : config.weight_tres)
      for (size_t k = 0; k < config.tres_names.size(); ++k)
        if (config.tres_names[k] == name) tres_weight_[k] = w;
  }
  // priority_multifactor.c init: decay_factor = 1 - (0.693 / decay_hl)
  if (config.decay_half_life > 0) decay_factor_ = 1 - 0.693 / config.decay_half_life;
  // the tree: root (the account "root"), the configured associations, then the jobs' (by name)
  assocs_.push_back({});
  std::map<std::string, uint32_t> account_at{{"root", 0}};
  std::map<std::pair<std::string, std::string>, uint32_t> user_at;
  std::vector<size_t> depth{0};
  auto child = [&](uint32_t parent, bool user) {
    const auto x = static_cast<uint32_t>(assocs_.size());
    if (depth[parent] + 1 > kMaxSlurmTreeDepth)
      throw PolicyError(fmt::format("slurm priority: the association tree is deeper than {}", kMaxSlurmTreeDepth));
    Assoc a;
    a.parent = parent;
    a.user = user;
    assocs_.push_back(std::move(a));
    depth.push_back(depth[parent] + 1);
    assocs_[parent].children.push_back(x);
    return x;
  };
  auto account = [&](const std::string& name, const std::string& parent) {
    if (const auto it = account_at.find(name); it != account_at.end()) return it->second;
    const auto p = account_at.find(parent);
    const uint32_t x = child(p == account_at.end() ? 0 : p->second, false);
    account_at.emplace(name, x);
    return x;
  };
  auto user = [&](const std::string& acct, const std::string& name) {
    auto [it, fresh] = user_at.try_emplace({acct, name}, 0);
    if (fresh) {
      it->second = child(account(acct, "root"), true);
      ++user_assocs_;
    }
    return it->second;
  };
  for (const SlurmAssociation& s : config.associations) {
    const uint32_t x = s.user.empty() ? account(s.account, s.parent) : user(s.account, s.user);
    assocs_[x].shares = s.shares;
    assocs_[x].usage = s.usage;
  }
  // the root's usage: its children's (as slurmctld sums it up the tree)
  for (const uint32_t x : assocs_[0].children) assocs_[0].usage += assocs_[x].usage;
  assoc_of_job_.resize(jobs.size());
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> by_ids;  // (account id, owner id) -> association
  for (uint32_t j = 0; j < jobs.size(); ++j) {
    auto [it, fresh] = by_ids.try_emplace({jobs.account[j], jobs.owner[j]}, 0);
    if (fresh) it->second = user(jobs.accounts.value(jobs.account[j]), jobs.owners.value(jobs.owner[j]));
    assoc_of_job_[j] = it->second;
  }
  // assoc_mgr.c: each association's level shares are its siblings' (its own among them), and the classic
  // formula's normalised shares their ratios multiplied down from the root (parents come before children)
  std::vector<double> children_shares(assocs_.size(), 0.0);
  for (uint32_t x = 1; x < assocs_.size(); ++x) children_shares[assocs_[x].parent] += assocs_[x].shares;
  for (uint32_t x = 1; x < assocs_.size(); ++x) {
    Assoc& a = assocs_[x];
    a.level_shares = children_shares[a.parent];
    a.shares_norm = a.level_shares > 0 ? a.shares / a.level_shares : 0;
    if (a.parent != 0) a.shares_norm *= assocs_[a.parent].shares_norm;
  }
  assocs_[0].efctv = 1;  // init: the root's effective usage
}

SlurmPriority SlurmPriority::of_farm(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                                     const SimConfig& policy) {
  const size_t k = policy.fit_consumable;
  const bool has_cpus = k < catalog.consumables().size();
  std::vector<double> cpus(jobs.size(), 0.0), nodes(jobs.size(), 1.0);
  for (uint32_t j = 0; j < jobs.size(); ++j) {
    const double per_slot = has_cpus ? jobs.amount.at(k, j) : 1.0;
    // a node count range (`-N 2-4`) counts its minimum: Slurm's job size factor reads details->min_nodes and,
    // before the job runs, min_cpus (its tasks, one a node, by their CPUs)
    const bool per_node = jobs.rule[j] == AllocationRule::OnePerTasker;
    const uint32_t low = per_node ? jobs.pe_shape_of(j).min_slots : 0;
    const uint32_t slots = low > 0 ? low : jobs.slots[j];
    cpus[j] = (std::isnan(per_slot) ? 1.0 : per_slot) * slots;
    if (per_node) nodes[j] = slots;
  }
  double cluster_cpus = 0;
  if (has_cpus) {
    const Capacity configured = Capacity::configured(catalog, taskers);
    for (uint32_t x = 0; x < taskers.size(); ++x) cluster_cpus += configured.configured_amount(k, x);
  }
  return {jobs,
          policy.slurm_priority,
          std::move(cpus),
          std::move(nodes),
          cluster_cpus,
          static_cast<double>(taskers.size())};
}

// One run of the decay thread at time `at` (priority_multifactor.c _decay_thread with Fair Tree,
// fair_tree.c fair_tree_decay): usage decayed over the time since the last run, the running jobs' usage
// since then added, the fair-share factors ranked, the pending jobs' priorities computed anew.
void SlurmPriority::calculate(double at) {
  // _decay_thread: the usage reset comes first, then the decay, then the running jobs' usage since the last
  // run (so a job running across the reset is charged its stretch before the boundary too, as slurmctld does)
  if (!ran_) {
    next_reset_ = slurm_usage_reset_after(config_.usage_reset, at);  // last_reset: slurmctld's start
  } else if (at >= next_reset_) {
    for (Assoc& a : assocs_) a.usage = 0;
    next_reset_ = slurm_usage_reset_after(config_.usage_reset, at);
  }
  // the classic formula: the accounts' effective usage from the usage as it stands before this run's decay
  // and new usage (_set_children_usage_efctv); the users' marked to be computed when first asked
  if (!config_.fair_tree)
    for (uint32_t x = 1; x < assocs_.size(); ++x) {
      if (assocs_[x].user) assocs_[x].efctv = std::numeric_limits<double>::quiet_NaN();
      else classic_usage(x);
    }
  if (ran_ && at > last_ran_) {
    const double real_decay = std::max(std::pow(decay_factor_, at - last_ran_), std::numeric_limits<double>::min());
    if (real_decay != 1)
      for (Assoc& a : assocs_) a.usage *= real_decay;
  }
  const double from = last_ran_;
  const bool charge = ran_;
  last_ran_ = at;
  ran_ = true;
  if (config_.fair_tree) {
    if (charge)
      for (uint32_t j : running_) add_usage(j, std::max(from, started_at_[j]), at);
    for (Assoc& a : assocs_) a.level_fs = 0;
    uint32_t rank = user_assocs_, rnt = user_assocs_;
    fair_tree(assocs_[0].children, rank, rnt, false);
    for (uint32_t j : pending_) recompute(j, at);
    return;
  }
  // the classic formula (_decay_apply_new_usage_and_weighted_factors over slurmctld's job list, which holds
  // jobs as they were made: the table's order): a running job adds its usage, a pending one takes its
  // priority, its user's effective usage computed from the usage as it stands at the first of its jobs
  std::vector<uint32_t> order;
  order.reserve(running_.size() + pending_.size());
  order.insert(order.end(), running_.begin(), running_.end());
  order.insert(order.end(), pending_.begin(), pending_.end());
  std::sort(order.begin(), order.end());
  for (uint32_t j : order) {
    if (state_[j] == State::Running) {
      if (charge) add_usage(j, std::max(from, started_at_[j]), at);
    } else {
      classic_user(assoc_of_job_[j]);
      recompute(j, at);
    }
  }
}

// decay_apply_weighted_factors: a pending job's priority anew; with INCR_ONLY only if it is higher.
void SlurmPriority::recompute(uint32_t j, double at) {
  const double p = compute(j, at);
  if (!config_.increase_only || p > priority_[j]) priority_[j] = p;
}

// priority_p_set_assoc_usage with the classic formula: usage normalised by the root's (at most 1), then
// effective (_set_usage_efctv: moved toward the parent's effective usage by the share of the siblings'; a
// child of the root keeps its own).
void SlurmPriority::classic_usage(uint32_t x) {
  Assoc& a = assocs_[x];
  const double root = assocs_[0].usage;
  const double norm = root > 0 ? std::min(a.usage / root, 1.0) : 0;
  a.norm = norm;
  if (a.parent == 0) {
    a.efctv = norm;
  } else if (config_.depth_oblivious) {
    depth_oblivious_usage(a);
  } else {
    const double parent = assocs_[a.parent].efctv;
    a.efctv = a.level_shares > 0 ? norm + (parent - norm) * (a.shares / a.level_shares) : parent;
  }
}

// _depth_oblivious_set_usage_efctv (22.05.8), in its long doubles: R = Rp x L^k, the effective usage R x S. The
// siblings' normalised usage is theirs as last computed (slurmctld reads what each holds: a later sibling's is
// from the calculation before, a user's from when its first job last asked). Without shares, a parent's
// effective usage or usage of its own: its normalised usage.
void SlurmPriority::depth_oblivious_usage(Assoc& a) {
  const Assoc& p = assocs_[a.parent];
  if (!(a.shares_norm != 0 && p.shares_norm != 0 && p.efctv != 0 && a.norm != 0)) {
    a.efctv = a.norm;
    return;
  }
  const long double ratio_p = static_cast<long double>(p.efctv) / p.shares_norm;
  long double ratio_s = 0;
  for (const uint32_t s : p.children) ratio_s += assocs_[s].norm;
  ratio_s /= p.shares_norm;
  const long double ratio_l = (static_cast<long double>(a.norm) / a.shares_norm) / ratio_s;
  constexpr long double f = 5.0L;  // (slurmctld's "FIXME: This could be a tunable parameter")
  const long double k = ratio_p == 0 || ratio_l == 0 || std::log(ratio_p) * std::log(ratio_l) >= 0
                            ? 1.0L
                            : 1.0L / (1.0L + std::pow(f * std::log(ratio_p), 2.0L));
  a.efctv =
      static_cast<double>(ratio_p * std::pow(static_cast<double>(ratio_l), static_cast<double>(k)) * a.shares_norm);
}

// _get_fairshare_priority with the classic formula: the user's effective usage if not computed since the
// last calculation, then priority_p_calc_fs_factor's 2^(-(U / S) / D) (0 for no shares).
void SlurmPriority::classic_user(uint32_t u) {
  Assoc& a = assocs_[u];
  if (!std::isnan(a.efctv)) return;
  classic_usage(u);
  a.fs_factor = a.shares_norm > 0 ? std::pow(2.0, -(a.efctv / a.shares_norm) / config_.dampening) : 0;
}

void SlurmPriority::advance(double t) {
  if (!config_.accounting) return;  // no decay thread
  // (the phase within one period: exact, and no sum of a huge phase and a small period loses the period)
  const double period = config_.calc_period, phase = std::fmod(config_.calc_phase, period);
  if (!ran_) next_ = phase + std::floor((t - phase) / period) * period;  // slurmctld was up by t
  while (next_ <= t) {
    // (the lists pruned here only: the jobs that left them since the last calculation)
    std::erase_if(pending_, [&](uint32_t j) { return state_[j] != State::Pending; });
    std::erase_if(running_, [&](uint32_t j) { return state_[j] != State::Running; });
    // nothing pending or running: the runs until the last one due change nothing that one does not (decay
    // scales every association alike), so only it runs (a long idle stretch costs one calculation)
    if (pending_.empty() && running_.empty()) next_ += std::max(0.0, std::floor((t - next_) / period)) * period;
    calculate(next_);
    next_ += period;
  }
}

void SlurmPriority::submitted(uint32_t j, double t) {
  advance(t);
  state_[j] = State::Pending;
  pending_.push_back(j);
  if (!config_.fair_tree) classic_user(assoc_of_job_[j]);
  priority_[j] = compute(j, jobs_.submit[j]);  // priority_p_set: no age yet
}

void SlurmPriority::started(uint32_t j, double t, double total_cpus, double billable) {
  advance(t);
  state_[j] = State::Running;
  started_at_[j] = t;
  total_cpus_[j] = total_cpus;
  if (!std::isnan(billable)) {
    if (given_billable_.size() < jobs_.size())
      given_billable_.assign(jobs_.size(), std::numeric_limits<double>::quiet_NaN());
    given_billable_[j] = billable;
  }
  running_.push_back(j);
}

// The plugin's source adds a job's usage since the last calculation when it ends (priority_p_job_end), but
// slurmctld 22.05.8 as measured here does not: sshare's RawUsage grows only at the calculations, by the
// jobs running then (datasets/slurm/run16-fairshare: every value of chem's, phys's within a few jobs'
// seconds). The stretch between a job's last calculation and its end is never charged.
void SlurmPriority::ended(uint32_t j, double t) {
  advance(t);
  state_[j] = State::Ended;
  if (dependents_first_.empty()) return;
  for (uint32_t i = dependents_first_[j]; i < dependents_first_[j + 1]; ++i) {
    const uint32_t k = dependents_[i];
    if (deps_left_[k] > 0 && --deps_left_[k] == 0) accrue_[k] = t;  // job_independent: begin_time = now
  }
}

// Each job's accrue time before the run (JobTable::hold_until after its submit: its begin time), and the
// dependency counts that set the others' as their dependencies end.
void SlurmPriority::init_accrue() {
  const size_t n = jobs_.size();
  accrue_.resize(n);
  bool any = false;
  for (uint32_t j = 0; j < n; ++j) {
    const double submit = jobs_.submit[j], begin = jobs_.hold_until[j];
    accrue_[j] = std::isfinite(begin) && begin > submit ? begin : submit;
    any = any || !jobs_.depends[j].empty();
  }
  if (!any) return;
  deps_left_.assign(n, 0);
  dependents_first_.assign(n + 1, 0);
  for (uint32_t k = 0; k < n; ++k)
    for (const uint32_t d : jobs_.depends[k]) ++dependents_first_[d + 1];
  for (size_t j = 0; j < n; ++j) dependents_first_[j + 1] += dependents_first_[j];
  dependents_.resize(dependents_first_[n]);
  std::vector<uint32_t> at(dependents_first_.begin(), dependents_first_.end() - 1);
  for (uint32_t k = 0; k < n; ++k) {
    deps_left_[k] = static_cast<uint32_t>(jobs_.depends[k].size());
    if (deps_left_[k] > 0) accrue_[k] = std::numeric_limits<double>::infinity();
    for (const uint32_t d : jobs_.depends[k]) dependents_[at[d]++] = k;
  }
}

double slurm_usage_reset_after(SlurmUsageReset period, double t) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (period == SlurmUsageReset::None || period == SlurmUsageReset::Now || !(std::abs(t) <= 1e13)) return kInf;
  constexpr int64_t kDay = 86400;
  const auto secs = static_cast<std::time_t>(std::floor(t));
  std::tm tm{};
  if (gmtime_r(&secs, &tm) == nullptr) return kInf;
  tm.tm_sec = tm.tm_min = tm.tm_hour = 0;
  const auto midnight = static_cast<double>(timegm(&tm));
  switch (period) {
    case SlurmUsageReset::Daily: return midnight + kDay;
    case SlurmUsageReset::Weekly: return midnight + static_cast<double>(kDay * (7 - tm.tm_wday));  // Sunday's
    case SlurmUsageReset::Monthly: tm.tm_mon += 1; break;
    case SlurmUsageReset::Quarterly:
      tm.tm_mon = (tm.tm_mon / 3 + 1) * 3;  // April, July, October, or January next
      break;
    case SlurmUsageReset::Yearly: tm.tm_mon = 12; break;
    default: return kInf;
  }
  if (tm.tm_mon > 11) {  // (December's next: January)
    tm.tm_mon = 0;
    tm.tm_year += 1;
  }
  tm.tm_mday = 1;
  return static_cast<double>(timegm(&tm));
}

namespace {

// What `configured` holds of consumable k on the distinct taskers of `allocs`, and how many they are.
std::pair<double, double> whole_taskers(std::span<const Allocation> allocs, const Capacity& configured, size_t k) {
  double total = 0, count = 0;
  for (size_t a = 0; a < allocs.size(); ++a) {
    bool seen = false;  // (a job's allocations name a tasker once, but count it once whatever they do)
    for (size_t b = 0; b < a && !seen; ++b) seen = allocs[b].tasker == allocs[a].tasker;
    if (seen) continue;
    total += configured.configured_amount(k, allocs[a].tasker);
    count += 1;
  }
  return {total, count};
}

}  // namespace

double slurm_whole_node_cpus(std::span<const Allocation> allocs, const Capacity& configured, size_t cpu) {
  return whole_taskers(allocs, configured, cpu).first;
}

double slurm_whole_node_billable(const SlurmWholeNodeBilling& b, std::span<const Allocation> allocs,
                                 const Capacity& configured, size_t cpu, size_t mem) {
  const auto [cpus, nodes] = whole_taskers(allocs, configured, cpu);
  constexpr double kMiB = 1024.0 * 1024.0;
  const double mb = b.mem_per_node >= 0  ? b.mem_per_node * nodes
                    : b.mem_per_cpu >= 0 ? b.mem_per_cpu * cpus
                    : mem != SIZE_MAX    ? whole_taskers(allocs, configured, mem).first / kMiB
                                         : 0.0;
  if (b.max_tres) return std::max({b.others_max, b.cpu_weight * cpus, b.mem_weight * mb}) + b.others;
  return b.others + b.cpu_weight * cpus + b.mem_weight * mb;
}

// _apply_new_usage: CPU-seconds over [from, to], decayed as one stretch, to the user's association and
// every one above it.
void SlurmPriority::add_usage(uint32_t j, double from, double to) {
  const double run_delta = std::max(0.0, to - from);
  // _apply_new_usage: the job's billable TRES (its CPUs without TRESBillingWeights) a second
  const double rate = j < given_billable_.size() && !std::isnan(given_billable_[j]) ? given_billable_[j]
                      : j < config_.billable.size() && config_.billable[j] > 0      ? config_.billable[j]
                      : std::isnan(total_cpus_[j])                                  ? cpus_[j]
                                                                                    : total_cpus_[j];
  const double factor = j < config_.usage_factor.size() ? config_.usage_factor[j] : 1.0;  // the QOS's UsageFactor
  const double used = rate * run_delta * std::pow(decay_factor_, run_delta) * factor;
  for (uint32_t a = assoc_of_job_[j];; a = assocs_[a].parent) {
    assocs_[a].usage += used;
    if (a == 0) break;
  }
}

// fair_tree.c _calc_tree_fs: siblings by level fair share (shares over usage, both normalised among
// them), users before accounts among equals; users take the rank counting down from the number of user
// associations, tied users (and an account's first user when the account tied) the rank before them.
void SlurmPriority::fair_tree(const std::vector<uint32_t>& siblings, uint32_t& rank, uint32_t& rnt, bool account_tied) {
  double shares = 0;
  for (uint32_t s : siblings) shares += assocs_[s].shares;
  for (uint32_t s : siblings) {
    Assoc& a = assocs_[s];
    const double parent_usage = assocs_[a.parent].usage;
    const double u = parent_usage > 0 ? a.usage / parent_usage : 0;
    const double sn = shares > 0 ? a.shares / shares : 0;
    a.level_fs = sn == 0 ? 0 : (u == 0 ? std::numeric_limits<double>::infinity() : sn / u);
  }
  std::vector<uint32_t> order = siblings;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    if (assocs_[x].level_fs != assocs_[y].level_fs) return assocs_[x].level_fs > assocs_[y].level_fs;
    return assocs_[x].user && !assocs_[y].user;
  });
  double prev = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 0; i < order.size(); ++i) {
    Assoc& a = assocs_[order[i]];
    const bool tied = i == 0 && account_tied ? true : prev == a.level_fs;
    if (a.user) {
      if (!tied) rank = rnt;
      a.fs_factor = static_cast<double>(rank) / static_cast<double>(std::max(user_assocs_, 1u));
      --rnt;
    } else {
      fair_tree(a.children, rank, rnt, tied);
    }
    prev = a.level_fs;
  }
}

SlurmFactors SlurmPriority::factors(uint32_t j, double t) const {
  SlurmFactors f;
  // set_priority_factors: whole seconds since the job could accrue age (accrue_time: its submit under
  // ACCRUE_ALWAYS, else its begin time: acct_policy_handle_accrue_time; none while it waits: age 0)
  const double accrue = config_.accrue_always ? jobs_.submit[j] : accrue_[j];
  const double diff = std::isfinite(accrue) ? std::floor(std::max(0.0, t - accrue)) : 0.0;
  f.age = diff < config_.max_age ? diff / config_.max_age : 1.0;
  f.fairshare = assocs_[assoc_of_job_[j]].fs_factor;
  const double nodes = nodes_[j], cpus = cpus_[j];
  double js = 0;
  if (config_.size_relative_to_time) {
    // SMALL_RELATIVE_TO_TIME: CPUs (at least the nodes' average share) per minute of the time limit (whole
    // minutes, as Slurm keeps it: -t 0:30 is 1; a job without one: INFINITE), over the cluster's CPUs
    const double limit = std::ceil(jobs_.walltime[j] / 60);
    js = std::max(nodes * cluster_cpus_ / cluster_nodes_, cpus) /
         (std::isfinite(limit) && limit > 0 ? limit : 4294967294.0) / cluster_cpus_;
    if (config_.favor_small) js = 1 - js;
  } else if (config_.favor_small) {
    js = (cluster_nodes_ - nodes) / cluster_nodes_;
    if (cpus > 0) js = (js + (cluster_cpus_ - cpus) / cluster_cpus_) / 2;
  } else {
    js = nodes / cluster_nodes_;
    if (cpus > 0) js = (js + cpus / cluster_cpus_) / 2;
  }
  f.job_size = std::clamp(js, 0.0, 1.0);
  if (j < config_.partition_factor.size()) f.partition = config_.partition_factor[j];
  if (j < config_.qos_factor.size()) f.qos = config_.qos_factor[j];
  if (j < config_.assoc_factor.size()) f.assoc = config_.assoc_factor[j];
  // _get_tres_prio_weighted: each TRES's factor by its weight, summed
  const size_t n = tres_weight_.size();
  if ((static_cast<size_t>(j) + 1) * n <= config_.tres_factor.size())  // (a job beyond them: 0)
    for (size_t k = 0; k < n; ++k) f.tres += tres_weight_[k] * config_.tres_factor[j * n + k];
  return f;
}

// _get_priority_internal: the weighted factors summed, at least 1, truncated to a whole number.
double SlurmPriority::compute(uint32_t j, double t) const {
  const SlurmFactors f = factors(j, t);
  const double w_age = config_.accounting ? config_.weight_age : 0;  // ignored without slurmdbd
  const double w_fs = config_.accounting ? config_.weight_fairshare : 0;
  const double w_qos = config_.accounting ? config_.weight_qos : 0;      // (no QOS without slurmdbd)
  const double w_assoc = config_.accounting ? config_.weight_assoc : 0;  // (nor associations)
  const double p = w_age * f.age + w_fs * f.fairshare + config_.weight_job_size * f.job_size +
                   config_.weight_partition * f.partition + w_qos * f.qos + w_assoc * f.assoc + f.tres;
  return std::floor(std::clamp(p, 1.0, 4294967295.0));
}

SlurmPriorityAt slurm_priority_at(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                                  const SimConfig& policy, const std::vector<double>& start,
                                  const std::vector<double>& end, double last_cycle, uint32_t j) {
  SlurmPriority p = SlurmPriority::of_farm(catalog, taskers, jobs, policy);
  const double decided = std::isnan(start[j]) ? last_cycle : start[j];
  // as the event loop tells the scheduler: at one time, ends and submits before the cycle's starts
  std::vector<std::tuple<double, int, uint32_t>> events;  // (time, 0 end, 1 submit, 2 start; job)
  for (uint32_t x = 0; x < jobs.size(); ++x) {
    if (jobs.rejected(x) || !(jobs.submit[x] <= decided)) continue;
    events.emplace_back(jobs.submit[x], 1, x);
    if (start[x] < decided) events.emplace_back(start[x], 2, x);
    if (end[x] <= decided) events.emplace_back(end[x], 0, x);
  }
  std::sort(events.begin(), events.end());
  for (const auto& [t, kind, x] : events) {
    if (kind == 0) p.ended(x, t);
    else if (kind == 1) p.submitted(x, t);
    else p.started(x, t);
  }
  p.advance(decided);
  SlurmPriorityAt at;
  at.decided = decided;
  const double calc = p.last_calculation();
  at.computed = std::isnan(calc) || calc < jobs.submit[j] ? jobs.submit[j] : calc;
  at.priority = p.priority(j);
  at.factors = p.factors(j, at.computed);  // (computed at submit: no age)
  return at;
}

}  // namespace colmatch
