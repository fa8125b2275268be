// Grid Engine's ticket policies as a dump holds them: sched_conf(5)'s ticket settings, and the users
// (sge_user(5)), projects (sge_project(5)) and departments (access_list(5), type DEPT) with their
// functional shares (fshare) and override tickets (oticket). The tickets themselves are computed by
// engine/schedule/sge_tickets.cpp.
#include <charconv>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/sge_conf.hpp"
#include "loaders/sge_farm.hpp"

namespace colmatch::loaders::sge {

namespace {

// A u_long32 field (fshare, oticket, max_functional_jobs_to_schedule): a whole number >= 0.
uint64_t whole(const Record& r, std::string_view key, uint64_t fallback, const std::string& path) {
  const Field* fd = r.find(key);
  if (!fd) return fallback;
  uint64_t v = 0;
  const char* end = fd->value.data() + fd->value.size();
  const auto [p, ec] = std::from_chars(fd->value.data(), end, v);
  if (ec != std::errc() || p != end || v > 0xffffffffu)
    throw LoadError(path, fd->line, std::string(key),
                    fmt::format("'{}' is not a whole number from 0 to 4294967295", fd->value));
  return v;
}

double decimal(const Record& r, std::string_view key, double fallback, const std::string& path) {
  const Field* fd = r.find(key);
  if (!fd) return fallback;
  try {
    size_t used = 0;
    const double v = std::stod(fd->value, &used);
    if (used != fd->value.size() || !(v >= 0) || !std::isfinite(v)) throw std::invalid_argument(fd->value);
    return v;
  } catch (const std::exception&) {
    throw LoadError(path, fd->line, std::string(key), fmt::format("'{}' is not a finite number >= 0", fd->value));
  }
}

bool boolean(const Record& r, std::string_view key, bool fallback, const std::string& path) {
  const Field* fd = r.find(key);
  if (!fd) return fallback;
  if (fd->value == "TRUE" || fd->value == "true" || fd->value == "1") return true;
  if (fd->value == "FALSE" || fd->value == "false" || fd->value == "0") return false;
  throw LoadError(path, fd->line, std::string(key), fmt::format("'{}' is not TRUE or FALSE", fd->value));
}

SgeShareHolder holder_of(const Record& r, const std::string& path) {
  return {static_cast<double>(whole(r, "fshare", 0, path)), static_cast<double>(whole(r, "oticket", 0, path))};
}

}  // namespace

void read_ticket_settings(FarmModel& f, const Record& conf, const std::string& path) {
  SgeTicketConfig& c = f.ticket_config;
  // (u_long32 in sched_conf(5): whole, at most 4294967295, so that every ticket sum stays finite)
  c.weight_tickets_functional = static_cast<double>(whole(conf, "weight_tickets_functional", 0, path));
  c.weight_user = decimal(conf, "weight_user", c.weight_user, path);
  c.weight_project = decimal(conf, "weight_project", c.weight_project, path);
  c.weight_department = decimal(conf, "weight_department", c.weight_department, path);
  c.weight_job = decimal(conf, "weight_job", c.weight_job, path);
  c.share_functional_shares = boolean(conf, "share_functional_shares", true, path);
  c.share_override_tickets = boolean(conf, "share_override_tickets", true, path);
  c.max_functional_jobs_to_schedule =
      static_cast<uint32_t>(whole(conf, "max_functional_jobs_to_schedule", c.max_functional_jobs_to_schedule, path));
  c.max_pending_tasks_per_job =
      static_cast<uint32_t>(whole(conf, "max_pending_tasks_per_job", c.max_pending_tasks_per_job, path));
  if (const Field* fd = conf.find("policy_hierarchy")) {
    c.policy_hierarchy = fd->value;
    try {
      sge_tickets(c, {}, {});  // checks the letters
    } catch (const std::invalid_argument& e) {
      throw LoadError(path, fd->line, "policy_hierarchy", e.what());
    }
  }
  if (const uint64_t share = whole(conf, "weight_tickets_share", 0, path); share != 0 && f.weights.weight_ticket != 0)
    f.warnings.push_back(
        fmt::format("weight_tickets_share {}: the share tree policy is not computed: its tickets count as 0 "
                    "(functional and override tickets are)",
                    share));
}

void read_share_holders(FarmModel& f, const std::string& dir) {
  auto each = [&](const char* name, auto&& take) {
    const std::string path = dump_file(dir, name);
    if (!std::filesystem::exists(path)) return;
    for (const Record& r : read_records(path, "name")) take(r, path);
  };
  each("qconf-suser.txt", [&](const Record& r, const std::string& path) {
    f.user_holder[r.value("name")] = static_cast<int32_t>(f.holders.users.size());
    f.holders.users.push_back(holder_of(r, path));
  });
  each("qconf-sprj.txt", [&](const Record& r, const std::string& path) {
    f.project_holder[r.value("name")] = static_cast<int32_t>(f.holders.projects.size());
    f.holders.projects.push_back(holder_of(r, path));
  });
  each("qconf-su.txt", [&](const Record& r, const std::string& path) {
    if (r.value("type").find("DEPT") == std::string::npos) return;  // an access list only
    const auto d = static_cast<int32_t>(f.holders.departments.size());
    for (const std::string& e : split_words(r.value("entries"))) f.department_of.emplace(e, d);  // the first wins
    if (r.value("name") == "defaultdepartment") f.default_department = d;
    f.holders.departments.push_back(holder_of(r, path));
  });
}

SgeTicketJob ticket_job(const FarmModel& f, const std::string& owner, const std::string& group,
                        const std::string& project, double jobshare, double override_tickets) {
  SgeTicketJob t;
  if (const auto u = f.user_holder.find(owner); u != f.user_holder.end()) t.user = u->second;
  if (const auto p = f.project_holder.find(project); p != f.project_holder.end()) t.project = p->second;
  auto department = [&](const std::string& entry) {
    const auto d = f.department_of.find(entry);
    return d == f.department_of.end() ? -1 : d->second;
  };
  if (!owner.empty()) t.department = department(owner);
  if (t.department < 0 && !group.empty()) t.department = department("@" + group);
  if (t.department < 0) t.department = f.default_department;
  t.jobshare = jobshare;
  t.override_tickets = override_tickets;
  return t;
}

}  // namespace colmatch::loaders::sge
