#include "loaders/policy.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/slurm_settings.hpp"

namespace colmatch::loaders {
namespace {

[[noreturn]] void bad(const std::string& path, const toml::node& n, const std::string& key, const std::string& why) {
  throw LoadError(path, n.source().begin.line, "policy." + key, why);
}

double non_negative(const std::string& path, const toml::node& n, const std::string& key) {
  const auto v = n.value<double>();
  if (!v || !std::isfinite(*v) || *v < 0) bad(path, n, key, "expected a finite number >= 0");
  return *v;
}

std::string text(const std::string& path, const toml::node& n, const std::string& key) {
  const auto v = n.value<std::string>();
  if (!v) bad(path, n, key, "expected a string");
  return *v;
}

// "user", "group", "class", "account", "qos" -> the kind; false for anything else.
bool credential_kind(const std::string& v, CredentialKind& kind) {
  static const std::pair<const char*, CredentialKind> kinds[] = {{"user", CredentialKind::User},
                                                                 {"group", CredentialKind::Group},
                                                                 {"class", CredentialKind::Class},
                                                                 {"account", CredentialKind::Account},
                                                                 {"qos", CredentialKind::QoS}};
  for (const auto& [name, k] : kinds)
    if (v == name) {
      kind = k;
      return true;
    }
  return false;
}

const toml::table& table_of(const std::string& path, const toml::node& n, const std::string& key) {
  const auto* t = n.as_table();
  if (!t) bad(path, n, key, "expected a table");
  return *t;
}

// [policy.fbsng.queues.NAME] (NAME "*": the queues not listed): QPmin, QPmax, QPI, QPD, QPG, SPG.
FbsngQueue read_fbsng_queue(const std::string& path, const toml::node& n, const std::string& key) {
  FbsngQueue q;
  for (auto&& [k, v] : table_of(path, n, key)) {
    std::string f(k.str());
    std::transform(f.begin(), f.end(), f.begin(), [](unsigned char c) { return std::tolower(c); });
    double* field = f == "qpmin"   ? &q.qp_min
                    : f == "qpmax" ? &q.qp_max
                    : f == "qpi"   ? &q.qpi
                    : f == "qpd"   ? &q.qpd
                    : f == "qpg"   ? &q.qpg
                    : f == "spg"   ? &q.spg
                                   : nullptr;
    const std::string at = key + "." + std::string(k.str());
    if (!field) bad(path, v, at, "unknown key (QPmin, QPmax, QPI, QPD, QPG, SPG)");
    const auto x = v.value<double>();
    if (!x || std::isnan(*x) || (field == &q.qp_min && !std::isfinite(*x)))
      bad(path, v, at, "expected a number (QPG, SPG and QPmax may be inf)");
    if (field != &q.qp_min && field != &q.qp_max && *x < 0) bad(path, v, at, "expected a number >= 0");
    if ((field == &q.qp_min || field == &q.qpi || field == &q.qpd) && !(std::abs(*x) <= kFbsngMaxValue))
      bad(path, v, at, fmt::format("expected a number of at most {} in size", kFbsngMaxValue));
    *field = *x;
  }
  if (!std::isnan(q.qp_max) && q.qp_max < q.qp_min) bad(path, n, key, "QPmax is below QPmin");
  return q;
}

// [policy.fbsng.process_types.NAME]: max_sections, max_slots, max = { consumable = amount }, requirements.
FbsngProcessType read_fbsng_type(const std::string& path, const toml::node& n, const std::string& key) {
  FbsngProcessType t;
  for (auto&& [k, v] : table_of(path, n, key)) {
    const std::string f(k.str()), at = key + "." + f;
    if (f == "max_sections") {
      const double x = non_negative(path, v, at);
      if (x != std::floor(x) || x > 1e15) bad(path, v, at, "expected a whole number");
      t.max_sections = static_cast<uint64_t>(x);
    } else if (f == "max_slots") {
      t.max_slots = non_negative(path, v, at);
    } else if (f == "max") {
      for (auto&& [ck, cv] : table_of(path, v, at))
        t.max_amount.emplace_back(std::string(ck.str()), non_negative(path, cv, at + "." + std::string(ck.str())));
    } else if (f == "requirements") {
      t.requirements = text(path, v, at);
    } else {
      bad(path, v, at, "unknown key (max_sections, max_slots, max, requirements)");
    }
  }
  return t;
}

void read_fbsng(const std::string& path, const toml::node& n, SimConfig& policy) {
  for (auto&& [k, v] : table_of(path, n, "fbsng")) {
    const std::string f(k.str()), at = "fbsng." + f;
    if (f == "process_type") {
      if (!credential_kind(text(path, v, at), policy.process_type))
        bad(path, v, at, "expected user, group, class, account or qos");
    } else if (f == "queues") {
      for (auto&& [qk, qv] : table_of(path, v, at)) {
        const std::string name(qk.str());
        FbsngQueue q = read_fbsng_queue(path, qv, at + "." + name);
        q.name = name;
        if (name == "*") policy.fbsng.defaults = q;
        else policy.fbsng.queues.push_back(std::move(q));
      }
    } else if (f == "process_types") {
      for (auto&& [tk, tv] : table_of(path, v, at)) {
        FbsngProcessType t = read_fbsng_type(path, tv, at + "." + std::string(tk.str()));
        t.name = std::string(tk.str());
        policy.fbsng.process_types.push_back(std::move(t));
      }
    } else {
      bad(path, v, at, "unknown key (process_type, queues, process_types)");
    }
  }
}

// [policy.slurm]: slurm.conf's scheduling settings by their names (loaders/slurm_settings.hpp), over what
// the dump's scontrol-config.txt said; `priority_calc_phase` (seconds: when the priority calculations run);
// [[policy.slurm.associations]] account = "a", user = "u" (optional), shares = N.
void read_slurm(const std::string& path, const toml::node& n, SimConfig& policy) {
  for (auto&& [k, v] : table_of(path, n, "slurm")) {
    const std::string f(k.str()), at = "slurm." + f;
    if (f == "priority_calc_phase") {
      const auto x = v.value<double>();
      if (!x || !std::isfinite(*x)) bad(path, v, at, "expected seconds");
      policy.slurm_priority.calc_phase = *x;
    } else if (f == "associations") {
      const auto* arr = v.as_array();
      if (!arr) bad(path, v, at, "expected [[policy.slurm.associations]] tables");
      for (const toml::node& item : *arr) {
        SlurmAssociation a;
        bool named = false;
        for (auto&& [ak, av] : table_of(path, item, at)) {
          const std::string g(ak.str());
          if (g == "account") {
            a.account = text(path, av, at + ".account");
            named = true;
          } else if (g == "user") {
            a.user = text(path, av, at + ".user");
          } else if (g == "shares") {
            a.shares = non_negative(path, av, at + ".shares");
          } else {
            bad(path, av, at + "." + g, "unknown key (account, user, shares)");
          }
        }
        if (!named) bad(path, item, at, "needs account = \"name\"");
        policy.slurm_priority.associations.push_back(std::move(a));
      }
    } else if (slurm::is_setting(f)) {
      std::string value;
      if (const auto t = v.value<std::string>()) value = *t;
      else if (const auto* b = v.as_boolean()) value = b->get() ? "Yes" : "No";
      else if (const auto* i = v.as_integer()) value = std::to_string(i->get());
      else bad(path, v, at, "expected a string, a whole number or true/false");
      try {
        if (const std::string w = slurm::apply_setting(f, value, policy); !w.empty()) bad(path, v, at, w);
      } catch (const std::invalid_argument& e) {
        bad(path, v, at, e.what());
      }
    } else {
      bad(path, v, at,
          "unknown key (SchedulerType, SchedulerParameters, PriorityType, PriorityWeightAge, "
          "PriorityWeightFairshare, PriorityWeightJobSize, PriorityMaxAge, PriorityDecayHalfLife, "
          "PriorityCalcPeriod, PriorityFavorSmall, priority_calc_phase, associations)");
    }
  }
}

// The backfill cycle's counts of jobs tried (Slurm's bf_max_job_user, _assoc, _part, _user_part) by their
// [policy] keys; null for any other key.
uint64_t SimConfig::*backfill_tried_limit(std::string_view key) {
  if (key == "backfill_max_jobs_per_user") return &SimConfig::backfill_max_jobs_per_user;
  if (key == "backfill_max_jobs_per_association") return &SimConfig::backfill_max_jobs_per_association;
  if (key == "backfill_max_jobs_per_partition") return &SimConfig::backfill_max_jobs_per_partition;
  if (key == "backfill_max_jobs_per_user_partition") return &SimConfig::backfill_max_jobs_per_user_partition;
  return nullptr;
}

}  // namespace

// Long (about 130 lines) on purpose: one branch per key of the [policy] table, as loaders/policy.hpp
// lists them.
void read_policy_table(const toml::table& table, const std::string& path, SimConfig& policy, bool allow_power_key) {
  bool min_interval_set = false;
  const toml::node* depth_node = nullptr;
  policy.source = path;
  for (auto&& [k, node] : table) {
    const std::string key(k.str());
    if ((key == "power" || key == "grid_engine") && allow_power_key) continue;  // farm.toml's own keys
    if (key == "vov" && node.is_table()) {  // the Accelerator loader's (read_vov_table): checked here too
      read_vov_table(*node.as_table(), path);
      continue;
    }
    if (key == "interval") {
      policy.interval = non_negative(path, node, key);
    } else if (key == "min_interval") {
      policy.min_interval = non_negative(path, node, key);
      min_interval_set = true;
    } else if (key == "scheduler") {
      const std::string v = text(path, node, key);
      if (v == "moab") policy.scheduler = SchedulerKind::Moab;
      else if (v == "fbsng") policy.scheduler = SchedulerKind::Fbsng;
      else bad(path, node, key, "expected moab or fbsng");
    } else if (key == "fbsng") {
      read_fbsng(path, node, policy);
    } else if (key == "slurm") {
      read_slurm(path, node, policy);
    } else if (key == "allocation") {
      const std::string v = text(path, node, key);
      if (v == "greatest_power") policy.allocation = AllocationPolicy::GreatestPower;
      else if (v == "first_available") policy.allocation = AllocationPolicy::FirstAvailable;
      else if (v == "best_fit") policy.allocation = AllocationPolicy::BestFit;
      else if (v == "worst_fit") policy.allocation = AllocationPolicy::WorstFit;
      else if (v == "consecutive_best_fit") policy.allocation = AllocationPolicy::ConsecutiveBestFit;
      else
        bad(path, node, key, "expected greatest_power, first_available, best_fit, worst_fit or consecutive_best_fit");
    } else if (key == "backfill") {
      const std::string v = text(path, node, key);
      if (v == "none") policy.backfill = BackfillPolicy::None;
      else if (v == "easy") policy.backfill = BackfillPolicy::Easy;
      else if (v == "conservative") policy.backfill = BackfillPolicy::Conservative;
      else if (v == "greedy") policy.backfill = BackfillPolicy::Greedy;
      else bad(path, node, key, "expected none, easy, conservative or greedy");
    } else if (key == "reservation_depth") {
      // (as_integer, not value<int64_t>: toml++ converts a float such as 1e20 to an integer out of range)
      const auto* v = node.as_integer();
      if (v == nullptr || v->get() < 1 || v->get() > kMaxReservationDepth)
        bad(path, node, key, fmt::format("expected a whole number from 1 to {}", kMaxReservationDepth));
      policy.reservation_depth = static_cast<uint32_t>(v->get());
      depth_node = &node;
    } else if (key == "compression") {
      const auto* v = node.as_boolean();
      if (v == nullptr) bad(path, node, key, "expected true or false");
      policy.compression = v->get();
    } else if (key == "backfill_interval") {
      const auto v = node.value<double>();
      if (!v || !(*v >= 0) || !(*v <= 1e9)) bad(path, node, key, "expected seconds from 0 to 1e9");
      policy.backfill_interval = *v;
    } else if (key == "backfill_window") {
      const auto v = node.value<double>();
      if (!v || !(*v > 0)) bad(path, node, key, "expected seconds above 0 (inf: no window)");
      policy.backfill_window = *v;
    } else if (key == "backfill_max_jobs") {
      const auto* v = node.as_integer();
      if (v == nullptr || v->get() < 1) bad(path, node, key, "expected a whole number of at least 1");
      policy.backfill_max_jobs = static_cast<uint64_t>(v->get());
    } else if (uint64_t SimConfig::*const limit = backfill_tried_limit(key); limit != nullptr) {
      const auto* v = node.as_integer();
      if (v == nullptr || v->get() < 0) bad(path, node, key, "expected a whole number of at least 0 (0: no limit)");
      policy.*limit = static_cast<uint64_t>(v->get());
    } else if (key == "backfill_min_age_reserve") {
      const auto v = node.value<double>();
      if (!v || !(*v >= 0) || !(*v <= 1e9)) bad(path, node, key, "expected seconds from 0 to 1e9 (0: none)");
      policy.backfill_min_age_reserve = *v;
    } else if (key == "backfill_resolution") {
      const auto v = node.value<double>();
      if (!v || !(*v >= 0) || !(*v <= 86400)) bad(path, node, key, "expected seconds from 0 to 86400 (0: exact)");
      policy.backfill_resolution = *v;
    } else if (key == "backfill_min_priority_reserve") {
      const auto v = node.value<double>();
      if (!v || !(*v >= 0) || !(*v <= 1e18)) bad(path, node, key, "expected a priority from 0 to 1e18 (0: none)");
      policy.backfill_min_priority_reserve = *v;
    } else if (key == "backfill_phase") {
      if (node.value<std::string>() == "slurm") {  // as Slurm's backfill thread: after its last run
        policy.backfill_phase = std::numeric_limits<double>::quiet_NaN();
        continue;
      }
      const auto v = node.value<double>();
      if (!v || !std::isfinite(*v)) bad(path, node, key, "expected seconds or \"slurm\"");
      policy.backfill_phase = *v;
    } else if (key == "resource_availability") {
      const std::string v = text(path, node, key);
      if (v == "dedicated") policy.availability = ResourceAvailability::Dedicated;
      else if (v == "utilized") policy.availability = ResourceAvailability::Utilized;
      else if (v == "combined") policy.availability = ResourceAvailability::Combined;
      else bad(path, node, key, "expected dedicated, utilized or combined");
    } else if (key == "priority") {
      const auto* t = node.as_table();
      if (!t) bad(path, node, key, "expected a table");
      for (auto&& [wk, wn] : *t) {
        const std::string w(wk.str());
        double* field = w == "credential"   ? &policy.weights.credential
                        : w == "queue_time" ? &policy.weights.queue_time
                        : w == "expansion"  ? &policy.weights.expansion
                        : w == "size"       ? &policy.weights.size
                                            : nullptr;
        if (!field) bad(path, wn, "priority." + w, "unknown weight (credential, queue_time, expansion, size)");
        const auto v = wn.value<double>();
        if (!v || !std::isfinite(*v)) bad(path, wn, "priority." + w, "expected a finite number");
        *field = *v;
      }
    } else if (key == "credential_priority") {
      const auto* t = node.as_table();
      if (!t) bad(path, node, key, "expected a table of credential kinds");
      for (auto&& [ck, cn] : *t) {
        const std::string kind_text(ck.str());
        CredentialKind kind{};
        if (!credential_kind(kind_text, kind))
          bad(path, cn, key + "." + kind_text, "unknown credential kind (user, group, class, account, qos)");
        const auto* names = cn.as_table();
        if (!names) bad(path, cn, key + "." + kind_text, "expected a table: name = priority");
        for (auto&& [nk, nv] : *names) {
          const std::string field = key + "." + kind_text + "." + std::string(nk.str());
          const auto v = nv.value<double>();
          if (!v || !std::isfinite(*v)) bad(path, nv, field, "expected a finite number");
          policy.credential_priorities.push_back({kind, std::string(nk.str()), *v});
        }
      }
    } else if (key == "throttle") {
      const auto* arr = node.as_array();
      if (!arr) bad(path, node, key, "expected [[policy.throttle]] tables");
      for (auto& item : *arr) {
        const auto* t = item.as_table();
        if (!t) bad(path, item, key, "expected a table");
        Throttle th;
        bool has_kind = false;
        for (auto&& [tk, tn] : *t) {
          const std::string f(tk.str());
          if (f == "credential") {
            const std::string v = text(path, tn, "throttle.credential");
            has_kind = true;
            if (!credential_kind(v, th.kind))
              bad(path, tn, "throttle.credential", "expected user, group, class, account or qos");
          } else if (f == "name") {
            th.name = text(path, tn, "throttle.name");
          } else if (f == "max_jobs") {
            const double v = non_negative(path, tn, "throttle.max_jobs");
            if (v != std::floor(v) || v > 1e15) bad(path, tn, "throttle.max_jobs", "expected a whole number");
            th.max_jobs = static_cast<uint64_t>(v);
          } else if (f == "max_slots") {
            th.max_slots = non_negative(path, tn, "throttle.max_slots");
          } else {
            bad(path, tn, "throttle." + f, "unknown key (credential, name, max_jobs, max_slots)");
          }
        }
        if (!has_kind)
          bad(path, item, "throttle", "needs credential = \"user\", \"group\", \"class\", \"account\" or \"qos\"");
        policy.throttles.push_back(std::move(th));
      }
    } else {
      bad(path, node, key, "unknown key");
    }
  }
  if (depth_node && policy.backfill != BackfillPolicy::Easy)
    bad(path, *depth_node, "reservation_depth", "only with backfill = \"easy\" (conservative has no depth limit)");
  // FBSNG's scheduler runs at most once per 5 s
  if (policy.scheduler == SchedulerKind::Fbsng && !min_interval_set) policy.min_interval = 5;
}

VovOptions read_vov_table(const toml::table& table, const std::string& path) {
  VovOptions o;
  for (auto&& [k, node] : table) {
    const std::string key(k.str());
    if (key == "wrappers") {
      const auto* list = node.as_array();
      if (!list) bad(path, node, "vov.wrappers", "expected a list of strings");
      o.wrappers.clear();
      for (const auto& w : *list) o.wrappers.push_back(text(path, w, "vov.wrappers"));
    } else if (key == "dollars" || key == "symbols") {
      const auto* defs = node.as_table();
      if (!defs) bad(path, node, "vov." + key, "expected a table of NAME = \"resource list\"");
      for (auto&& [name, def] : *defs) {
        const std::string at = "vov." + key + "." + std::string(name.str());
        const std::string list = text(path, def, at);
        if (key == "dollars") {
          try {
            vov::parse_resources(list);
          } catch (const vov::ResourceError& e) {
            bad(path, def, at, fmt::format("column {}: {}", e.position, e.what()));
          }
        }
        (key == "dollars" ? o.dollars : o.symbols)[std::string(name.str())] = list;
      }
    } else {
      bad(path, node, "vov." + key, "unknown key (wrappers, dollars, symbols)");
    }
  }
  return o;
}

toml::table read_toml_file(const std::string& path) {
  require_not_directory(path);
  try {
    return toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw LoadError(path, e.source().begin.line, "", std::string(e.description()));
  }
}

VovOptions read_vov_policy_toml(const std::string& path) {
  const toml::table tbl = read_toml_file(path);
  const toml::node* vov = tbl["policy"]["vov"].node();
  if (vov == nullptr) vov = tbl["vov"].node();
  if (vov == nullptr) return {};
  if (!vov->is_table()) bad(path, *vov, "vov", "expected a table");
  return read_vov_table(*vov->as_table(), path);
}

SimConfig read_policy_toml(const std::string& path, const SimConfig& base) {
  const toml::table tbl = read_toml_file(path);
  SimConfig p = base;
  if (const auto* t = tbl["policy"].as_table()) read_policy_table(*t, path, p);
  else read_policy_table(tbl, path, p);
  return p;
}

}  // namespace colmatch::loaders
