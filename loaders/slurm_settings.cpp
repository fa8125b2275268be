#include "loaders/slurm_settings.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "loaders/slurm_text.hpp"

namespace colmatch::loaders::slurm {
namespace {

// slurm.conf's keys are case-insensitive (`scontrol show config` prints PriorityWeightFairShare)
constexpr std::array<std::string_view, 19> kKeys = {"schedulertype",
                                                    "schedulerparameters",
                                                    "prioritytype",
                                                    "priorityweightage",
                                                    "priorityweightfairshare",
                                                    "priorityweightjobsize",
                                                    "prioritymaxage",
                                                    "prioritydecayhalflife",
                                                    "prioritycalcperiod",
                                                    "priorityfavorsmall",
                                                    "priorityweightpartition",
                                                    "priorityweightqos",
                                                    "priorityweightassoc",
                                                    "priorityweighttres",
                                                    "priorityflags",
                                                    "priorityusageresetperiod",
                                                    "fairsharedampeningfactor",
                                                    "boot_time",
                                                    "accountingstoragetype"};

std::string lower(std::string_view text) {
  std::string v(text);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return v;
}

// A PriorityWeight*: a whole number from 0 to 2^32 - 1 (slurm.conf reads it as uint32).
double weight(std::string_view value) {
  const double w = parse_number(value);
  if (!(w >= 0) || w > 4294967295.0 || w != std::floor(w))
    throw std::invalid_argument(fmt::format("'{}' is not a weight (a whole number from 0 to 4294967295)", value));
  return w;
}

// A time as slurm.conf and `scontrol show config` write PriorityMaxAge (7-0, 00:05:00, a number of minutes).
double duration(std::string_view value, bool positive) {
  const double s = parse_slurm_time(value);  // throws std::invalid_argument naming the text
  if (!std::isfinite(s) || s < 0 || (positive && s <= 0))
    throw std::invalid_argument(fmt::format("'{}' is not a {}time", value, positive ? "positive " : ""));
  return s;
}

bool yes(std::string_view key, std::string_view value) {
  const std::string v = lower(value);
  if (v == "yes" || v == "1") return true;
  if (v == "no" || v == "0") return false;
  throw std::invalid_argument(fmt::format("{}: '{}' is not Yes or No", key, value));
}

}  // namespace

std::vector<std::pair<std::string, double>> parse_tres_weights(std::string_view text) {
  std::vector<std::pair<std::string, double>> out;
  if (text.empty() || text == "(null)") return out;
  for (size_t from = 0; from <= text.size();) {
    const size_t comma = std::min(text.find(',', from), text.size());
    const std::string item(text.substr(from, comma - from));
    from = comma + 1;
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw std::invalid_argument(fmt::format("\"{}\" is an invalid TRES weight entry", item));
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    const size_t slash = key.find('/');
    const std::string type = lower(key.substr(0, slash));
    const std::string name = slash == std::string::npos ? "" : key.substr(slash + 1);
    // the TRES types assoc_mgr knows; a GRES, license or burst buffer by its name
    static const std::set<std::string> kAlone = {"cpu", "mem", "energy", "node", "billing", "vmem", "pages"};
    const bool named = type == "gres" || type == "license" || type == "bb" || type == "fs";
    if (named ? name.empty() || (type == "fs" && name != "disk") : !(kAlone.count(type) && name.empty()))
      throw std::invalid_argument(fmt::format("TRES weight '{}' is not a configured TRES type", key));
    char* end = nullptr;
    double w = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || !std::isfinite(w) || w < 0)
      throw std::invalid_argument(fmt::format("\"{}\" is not a TRES weight", item));
    if (*end != '\0') {  // a unit: the weight per that many of the TRES's base unit (MB for mem and bb)
      static constexpr std::string_view kUnits = "KMGTP";
      const size_t unit = kUnits.find(static_cast<char>(std::toupper(static_cast<unsigned char>(*end))));
      if (unit == std::string_view::npos || end[1] != '\0')
        throw std::invalid_argument(fmt::format("\"{}\": invalid unit (K, M, G, T or P)", item));
      const int base = type == "mem" || type == "bb" ? 2 : 0;  // UNIT_MEGA, else UNIT_NONE
      for (int u = base; u < static_cast<int>(unit) + 1; ++u) w /= 1024;
    }
    out.emplace_back(type + (named ? "/" + name : ""), w);
  }
  return out;
}

bool is_setting(std::string_view key) { return std::find(kKeys.begin(), kKeys.end(), lower(key)) != kKeys.end(); }

// Long (about 170 lines) on purpose: one branch per key of slurm_settings.hpp's list.
std::string apply_setting(std::string_view name, std::string_view value, SimConfig& policy) {
  SlurmMultifactor& mf = policy.slurm_priority;
  const std::string key = lower(name);
  if (key == "schedulertype") {
    // (bf_interval=-1, read before: SchedulerParameters comes first in scontrol's order, keeps it off)
    if (value == "sched/backfill")
      policy.backfill = policy.backfill_interval < 0 ? BackfillPolicy::None : BackfillPolicy::Conservative;
    else if (value == "sched/builtin") policy.backfill = BackfillPolicy::None;
    else throw std::invalid_argument(fmt::format("'{}' is not sched/backfill or sched/builtin", value));
  } else if (key == "schedulerparameters") {
    policy.backfill_interval = 30;  // the defaults: bf_interval 30 s, bf_window 1 day, bf_max_job_test 500,
    // bf_resolution 60 s
    policy.backfill_window = 86400;
    policy.backfill_max_jobs = 500;
    policy.backfill_resolution = 60;
    policy.main_pass_depth = 100;  // default_queue_depth and sched_interval too
    policy.main_pass_full_interval = 60;
    if (value == "(null)") return "";
    // slurmctld takes an option out of range with an error in its log and its default: so does this, warning
    std::string warnings;
    auto whole = [&](std::string_view option, size_t name_length, double lo, double hi, double& out) {
      const double x = parse_number(option.substr(name_length));
      if (x >= lo && x <= hi && x == std::floor(x)) out = x;
      else
        warnings += fmt::format("{}SchedulerParameters {} is out of range ({} to {}): Slurm's default is used",
                                warnings.empty() ? "" : "; ", option, lo, hi);
    };
    // slurmctld finds each option with xstrcasestr: the first of an option given twice counts
    std::set<std::string_view> seen;
    size_t at = 0;
    while (at <= value.size()) {
      const size_t comma = std::min(value.find(',', at), value.size());
      const std::string_view option = value.substr(at, comma - at);
      at = comma + 1;
      if (!seen.insert(option.substr(0, option.find('='))).second) continue;
      double x = 0;
      if (option.rfind("bf_window=", 0) == 0) {  // minutes
        x = policy.backfill_window / 60;
        whole(option, 10, 1, 43200, x);
        policy.backfill_window = x * 60;
      } else if (option.rfind("bf_max_job_test=", 0) == 0) {
        x = static_cast<double>(policy.backfill_max_jobs);
        whole(option, 16, 1, 1000000, x);
        policy.backfill_max_jobs = static_cast<uint64_t>(x);
      } else if (option.rfind("bf_max_job_user=", 0) == 0) {  // (0: none, as slurmctld takes it)
        x = static_cast<double>(policy.backfill_max_jobs_per_user);
        whole(option, 16, 0, 1e9, x);
        policy.backfill_max_jobs_per_user = static_cast<uint64_t>(x);
      } else if (option.rfind("bf_max_job_assoc=", 0) == 0) {  // (0: none; slurmctld takes < 0 as 0)
        x = static_cast<double>(policy.backfill_max_jobs_per_association);
        whole(option, 17, 0, 1e9, x);
        policy.backfill_max_jobs_per_association = static_cast<uint64_t>(x);
      } else if (option.rfind("bf_min_prio_reserve=", 0) == 0) {  // 1 to 2^32 - 1 (0 is an error there too)
        x = policy.backfill_min_priority_reserve;
        whole(option, 20, 1, 4294967295.0, x);
        policy.backfill_min_priority_reserve = x;
      } else if (option.rfind("bf_min_age_reserve=", 0) == 0) {  // seconds (0: none)
        whole(option, 19, 0, 1e9, policy.backfill_min_age_reserve);
      } else if (option.rfind("default_queue_depth=", 0) == 0) {  // (0: every job, as slurmctld takes it)
        x = static_cast<double>(policy.main_pass_depth);
        whole(option, 20, 0, 1e9, x);
        policy.main_pass_depth = static_cast<uint64_t>(x);
      } else if (option.rfind("partition_job_depth=", 0) == 0) {  // (0: none; slurmctld takes < 0 as 0)
        x = static_cast<double>(policy.main_pass_partition_depth);
        whole(option, 20, 0, 1e9, x);
        policy.main_pass_partition_depth = static_cast<uint64_t>(x);
      } else if (option.rfind("sched_max_job_start=", 0) == 0) {  // (0: none; slurmctld takes < 0 as 0)
        x = static_cast<double>(policy.main_pass_max_starts);
        whole(option, 20, 0, 1e9, x);
        policy.main_pass_max_starts = static_cast<uint64_t>(x);
      } else if (option.rfind("sched_interval=", 0) == 0) {  // seconds (-1, no main pass at all: not modelled)
        whole(option, 15, 1, 1e9, policy.main_pass_full_interval);
      } else if (option.rfind("bf_max_job_part=", 0) == 0) {  // (0: none)
        x = static_cast<double>(policy.backfill_max_jobs_per_partition);
        whole(option, 16, 0, 1e9, x);
        policy.backfill_max_jobs_per_partition = static_cast<uint64_t>(x);
      } else if (option.rfind("bf_max_job_user_part=", 0) == 0) {  // (0: none)
        x = static_cast<double>(policy.backfill_max_jobs_per_user_partition);
        whole(option, 21, 0, 1e9, x);
        policy.backfill_max_jobs_per_user_partition = static_cast<uint64_t>(x);
      } else if (option.rfind("bf_resolution=", 0) == 0) {  // seconds, 1 to MAX_BACKFILL_RESOLUTION
        whole(option, 14, 1, 3600, policy.backfill_resolution);
      } else if (option == "bf_interval=-1") {  // backfill off
        policy.backfill = BackfillPolicy::None;
        policy.backfill_interval = -1;
      } else if (option.rfind("bf_interval=", 0) == 0) {
        whole(option, 12, 1, 10800, policy.backfill_interval);
      }
    }
    // backfill.c: "Both bf_max_job_user and bf_max_job_assoc are set: bf_max_job_assoc taking precedence"
    if (policy.backfill_max_jobs_per_association > 0) policy.backfill_max_jobs_per_user = 0;
    return warnings;
  } else if (key == "prioritytype") {
    if (value == "priority/multifactor") mf.enabled = true;
    else if (value == "priority/basic") mf.enabled = false;
    else throw std::invalid_argument(fmt::format("'{}' is not priority/basic or priority/multifactor", value));
  } else if (key == "priorityweightage") {
    mf.weight_age = weight(value);
  } else if (key == "priorityweightfairshare") {
    mf.weight_fairshare = weight(value);
  } else if (key == "priorityweightjobsize") {
    mf.weight_job_size = weight(value);
  } else if (key == "priorityweightpartition") {
    mf.weight_partition = weight(value);
  } else if (key == "prioritymaxage") {
    mf.max_age = duration(value, true);
  } else if (key == "prioritydecayhalflife") {
    mf.decay_half_life = duration(value, false);
  } else if (key == "prioritycalcperiod") {  // whole minutes (slurm.conf: a number of minutes)
    mf.calc_period = duration(value, true);
    if (mf.calc_period < 60 || mf.calc_period != std::floor(mf.calc_period / 60) * 60)
      throw std::invalid_argument(fmt::format("'{}' is not a whole number of minutes (at least 1)", value));
  } else if (key == "priorityfavorsmall") {
    mf.favor_small = yes(name, value);
  } else if (key == "priorityweightqos") {
    mf.weight_qos = weight(value);
  } else if (key == "priorityweightassoc") {
    mf.weight_assoc = weight(value);
  } else if (key == "priorityweighttres") {
    mf.weight_tres = parse_tres_weights(value);
    std::string other;  // licenses and burst buffers are not requests colmatch reads
    for (const auto& [tres, w] : mf.weight_tres)
      if (w != 0 && (tres.rfind("license/", 0) == 0 || tres.rfind("bb/", 0) == 0))
        other += fmt::format("{}{}", other.empty() ? "" : ", ", tres);
    if (!other.empty()) return fmt::format("PriorityWeightTRES: {} not modeled (their factors count as 0)", other);
  } else if (key == "accountingstoragetype") {
    mf.accounting = value == "accounting_storage/slurmdbd";
  } else if (key == "boot_time") {  // slurmctld's start: its decay thread runs then, its backfill after
    policy.slurm_priority.calc_phase = parse_slurm_date(value) + 1;
    policy.main_pass_full_phase = parse_slurm_date(value);  // its background thread's clock likewise
  } else if (key == "priorityflags") {
    // read_config.c: each flag found anywhere in the text, any case; NO_FAIR_TREE (or DEPTH_OBLIVIOUS) turns
    // Fair Tree off. The classic formula and its depth-oblivious effective usage are modelled; NO_NORMAL_ALL
    // sets the four NO_NORMAL_* flags.
    const std::string v = lower(value);
    mf.depth_oblivious = v.find("depth_oblivious") != std::string::npos;
    mf.fair_tree = v.find("no_fair_tree") == std::string::npos && !mf.depth_oblivious;
    mf.size_relative_to_time = v.find("small_relative_to_time") != std::string::npos;
    mf.increase_only = v.find("incr_only") != std::string::npos;
    mf.max_tres = v.find("max_tres") != std::string::npos;
    const bool all = v.find("no_normal_all") != std::string::npos;
    mf.no_normal_part = all || v.find("no_normal_part") != std::string::npos;
    mf.no_normal_qos = all || v.find("no_normal_qos") != std::string::npos;
    mf.no_normal_assoc = all || v.find("no_normal_assoc") != std::string::npos;
    mf.no_normal_tres = all || v.find("no_normal_tres") != std::string::npos;
    // ACCRUE_ALWAYS counts a job's age from its submit even while it waits for --begin, a dependency or a
    // release (acct_policy.c acct_policy_handle_accrue_time; else from its begin time: sacct's Eligible).
    // CALCULATE_RUNNING changes nothing a schedule here reads: it recalculates running jobs' priorities too
    // (no decision reads a running job's: no preemption).
    mf.accrue_always = v.find("accrue_always") != std::string::npos;
  } else if (key == "fairsharedampeningfactor") {  // read_config.c: a uint16, 1 when absent
    const double x = parse_number(value);
    if (!(x >= 0 && x <= 65535 && x == std::floor(x)))
      throw std::invalid_argument(fmt::format("'{}' is not a whole number from 0 to 65535", value));
    if (x == 0) return "FairShareDampeningFactor=0 is not modeled (the classic formula would divide by 0): 1 is used";
    mf.dampening = x;
  } else if (key == "priorityusageresetperiod") {
    // read_config.c: the seven names, any case; anything else stops slurmctld ("Bad value")
    static constexpr std::pair<std::string_view, SlurmUsageReset> kPeriods[] = {
        {"none", SlurmUsageReset::None},       {"now", SlurmUsageReset::Now},
        {"daily", SlurmUsageReset::Daily},     {"weekly", SlurmUsageReset::Weekly},
        {"monthly", SlurmUsageReset::Monthly}, {"quarterly", SlurmUsageReset::Quarterly},
        {"yearly", SlurmUsageReset::Yearly}};
    const std::string v = lower(value);
    const auto* it =
        std::find_if(std::begin(kPeriods), std::end(kPeriods), [&](const auto& p) { return p.first == v; });
    if (it == std::end(kPeriods))
      throw std::invalid_argument(
          fmt::format("'{}' is not NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY", value));
    mf.usage_reset = it->second;
  } else {
    throw std::invalid_argument(fmt::format("{} is not a setting colmatch reads", name));
  }
  return "";
}

}  // namespace colmatch::loaders::slurm
