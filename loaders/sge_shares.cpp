// Grid Engine's ticket policies as a dump holds them: sched_conf(5)'s ticket settings, and the users
// (sge_user(5)), projects (sge_project(5)) and departments (access_list(5), type DEPT) with their
// functional shares (fshare) and override tickets (oticket). The tickets themselves are computed by
// engine/schedule/sge_tickets.cpp.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"
#include "loaders/sge_conf.hpp"
#include "loaders/sge_farm.hpp"
#include "loaders/slurm_text.hpp"  // split_fields

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
  return {static_cast<double>(whole(r, "fshare", 0, path)), static_cast<double>(whole(r, "oticket", 0, path)),
          r.value("name")};
}

// The most share tree nodes a dump may hold (each a few lines of qconf -sstree).
constexpr size_t kMaxShareTreeNodes = size_t{1} << 20;

// A whole number of a share tree line.
uint64_t tree_number(std::string_view v, const std::string& path, size_t line, const char* field) {
  uint64_t x = 0;
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || p != v.data() + v.size() || x > 0xffffffffu)
    throw LoadError(path, line, field, fmt::format("'{}' is not a whole number from 0 to 4294967295", v));
  return x;
}

// share_tree(5) as qconf -sstree prints it: records of id=, name=, type=, shares=, childnodes= lines, the
// root first; the children named by id. Refuses (LoadError naming the line) an unknown key, a record
// without its id or name, an id twice, a child that no record has, a node that is the child of two, and
// a tree deeper than kMaxShareTreeDepth.
std::vector<SgeShareTreeNode> read_share_tree(const std::string& path) {
  struct Raw {
    uint64_t id = 0;
    SgeShareTreeNode node;
    std::vector<uint64_t> children;
    size_t line = 0, children_line = 0;
    bool named = false;
  };
  std::vector<Raw> raw;
  LineReader in(path);
  for (std::string_view text; in.next(text);) {
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    if (text.empty() || text == "no sharetree element") continue;
    const size_t eq = text.find('=');
    if (eq == std::string_view::npos)
      throw LoadError(path, in.line(), "share tree", fmt::format("'{}' is not key=value", text));
    const std::string_view key = text.substr(0, eq), value = text.substr(eq + 1);
    if (key == "id") {
      if (raw.size() == kMaxShareTreeNodes)
        throw LoadError(path, in.line(), "id", fmt::format("more than {} share tree nodes", kMaxShareTreeNodes));
      raw.emplace_back();
      raw.back().id = tree_number(value, path, in.line(), "id");
      raw.back().line = in.line();
      continue;
    }
    if (raw.empty()) throw LoadError(path, in.line(), std::string(key), "a share tree node must begin with id=");
    Raw& r = raw.back();
    if (key == "name") {
      r.node.name = std::string(value);
      r.named = !value.empty();
    } else if (key == "shares") {
      r.node.shares = static_cast<double>(tree_number(value, path, in.line(), "shares"));
    } else if (key == "childnodes") {
      r.children_line = in.line();
      if (value != "NONE")
        for (const std::string_view child : slurm::split_fields(value, ','))
          r.children.push_back(tree_number(child, path, in.line(), "childnodes"));
    } else if (key != "type") {
      throw LoadError(path, in.line(), std::string(key), "not a share tree field (id, name, type, shares, childnodes)");
    }
  }
  std::unordered_map<uint64_t, uint32_t> index;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (!raw[i].named) throw LoadError(path, raw[i].line, "name", "a share tree node without a name");
    if (!index.emplace(raw[i].id, static_cast<uint32_t>(i)).second)
      throw LoadError(path, raw[i].line, "id", fmt::format("id {} twice", raw[i].id));
  }
  std::vector<uint8_t> has_parent(raw.size(), 0);
  std::vector<SgeShareTreeNode> out(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    out[i] = std::move(raw[i].node);
    for (const uint64_t c : raw[i].children) {
      const auto at = index.find(c);
      if (at == index.end())
        throw LoadError(path, raw[i].children_line, "childnodes", fmt::format("no node has id {}", c));
      if (at->second == 0 || has_parent[at->second]++)
        throw LoadError(path, raw[i].children_line, "childnodes",
                        fmt::format("node {} is already a child of another node (or the root)", c));
      out[i].children.push_back(at->second);
    }
  }
  try {
    SgeShareHolders probe;
    probe.share_tree = out;
    sge_tickets({}, probe, {});  // checks the depth
  } catch (const std::invalid_argument& e) {
    throw LoadError(path, raw.empty() ? 0 : raw[0].line, "childnodes", e.what());
  }
  return out;
}

// The nodes' usage as sge_share_mon prints it (`-c 1 -h`: a header line naming the tab-separated
// columns, then a line a node): a user's combined usage (a user node outside any project), a user's in a
// project (a user node below it), a project's (its own node). Lines of users or projects the dump does
// not hold are skipped; a value that is not a finite number >= 0 is a LoadError naming the line.
void read_share_usage(FarmModel& f, const std::string& path) {
  LineReader in(path);
  std::vector<std::string_view> header;
  std::string header_text;
  size_t node = 0, user = 0, project = 0, usage = 0;
  for (std::string_view line; in.next(line);) {
    if (line.empty()) continue;
    if (header.empty()) {
      header_text = std::string(line);
      header = slurm::split_fields(header_text, '\t');
      auto column = [&](std::string_view name) {
        const auto at = std::find(header.begin(), header.end(), name);
        if (at == header.end())
          throw LoadError(path, in.line(), std::string(name), "sge_share_mon's header has no such column");
        return static_cast<size_t>(at - header.begin());
      };
      node = column("node_name"), user = column("user_name"), project = column("project_name");
      usage = column("usage");
      continue;
    }
    if (line.substr(0, 9) == "curr_time") continue;  // the header again (a later round)
    const std::vector<std::string_view> v = slurm::split_fields(line, '\t');
    if (v.size() <= std::max({node, user, project, usage}))
      throw LoadError(path, in.line(), "usage",
                      fmt::format("{} columns, the header names {}", v.size(), header.size()));
    double u = 0;
    const auto [p, ec] = std::from_chars(v[usage].data(), v[usage].data() + v[usage].size(), u);
    if (ec != std::errc() || p != v[usage].data() + v[usage].size() || !(u >= 0) || !std::isfinite(u))
      throw LoadError(path, in.line(), "usage", fmt::format("'{}' is not a finite number >= 0", v[usage]));
    const std::string u_name(v[user]), p_name(v[project]);
    const auto ui = f.user_holder.find(u_name);
    const auto pi = f.project_holder.find(p_name);
    const std::string_view n = v[node];
    if (!u_name.empty() && p_name.empty()) {
      if (ui != f.user_holder.end()) f.holders.users[static_cast<size_t>(ui->second)].usage = u;
    } else if (!u_name.empty()) {
      if (ui != f.user_holder.end() && pi != f.project_holder.end())
        f.holders.user_project_usage[{ui->second, pi->second}] = u;
    } else if (!p_name.empty() && n.size() > p_name.size() && n.substr(n.size() - p_name.size()) == p_name &&
               n[n.size() - p_name.size() - 1] == '/') {
      if (pi != f.project_holder.end()) f.holders.projects[static_cast<size_t>(pi->second)].usage = u;
    }
  }
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
  c.weight_tickets_share = static_cast<double>(whole(conf, "weight_tickets_share", 0, path));
  c.compensation_factor = decimal(conf, "compensation_factor", c.compensation_factor, path);
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
  if (const std::string path = dump_file(dir, "qconf-sstree.txt"); std::filesystem::exists(path))
    f.holders.share_tree = read_share_tree(path);
  const std::string usage = dump_file(dir, "sge-share-mon.txt");
  if (!f.holders.share_tree.empty() && std::filesystem::exists(usage)) read_share_usage(f, usage);
  else if (!f.holders.share_tree.empty() && f.ticket_config.weight_tickets_share != 0 && f.weights.weight_ticket != 0)
    f.warnings.push_back(
        fmt::format("weight_tickets_share {:g}: no sge-share-mon.txt: share tree tickets as if no usage were recorded",
                    f.ticket_config.weight_tickets_share));
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
