#include "loaders/policy.hpp"

#include <cmath>

#include <fmt/format.h>

#include "loaders/errors.hpp"

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

}  // namespace

void read_policy_table(const toml::table& table, const std::string& path, SimPolicy& policy, bool allow_power_key) {
  for (auto&& [k, node] : table) {
    const std::string key(k.str());
    if (key == "power" && allow_power_key) continue;
    if (key == "interval") {
      policy.interval = non_negative(path, node, key);
    } else if (key == "allocation") {
      const std::string v = text(path, node, key);
      if (v == "greatest_power") policy.allocation = AllocationPolicy::GreatestPower;
      else if (v == "first_available") policy.allocation = AllocationPolicy::FirstAvailable;
      else if (v == "best_fit") policy.allocation = AllocationPolicy::BestFit;
      else if (v == "worst_fit") policy.allocation = AllocationPolicy::WorstFit;
      else bad(path, node, key, "expected greatest_power, first_available, best_fit or worst_fit");
    } else if (key == "backfill") {
      const std::string v = text(path, node, key);
      if (v == "none") policy.backfill = BackfillPolicy::None;
      else if (v == "easy") policy.backfill = BackfillPolicy::Easy;
      else bad(path, node, key, "expected none or easy");
    } else if (key == "resource_availability") {
      if (text(path, node, key) != "dedicated")
        bad(path, node, key, "only \"dedicated\" is supported: the inputs carry no utilization over time yet");
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
}

SimPolicy read_policy_toml(const std::string& path) {
  require_not_directory(path);
  toml::table tbl;
  try {
    tbl = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw LoadError(path, e.source().begin.line, "", std::string(e.description()));
  }
  SimPolicy p;
  if (const auto* t = tbl["policy"].as_table()) read_policy_table(*t, path, p);
  else read_policy_table(tbl, path, p);
  return p;
}

}  // namespace colmatch::loaders
