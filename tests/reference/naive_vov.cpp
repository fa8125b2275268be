#include "tests/reference/naive_vov.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "engine/vov.hpp"

namespace colmatch::naive {
namespace {

using vov::Expr;
using vov::Token;

constexpr double kUnbounded = 1e18;

Expr name_token(const std::string& name) {
  Expr e;
  e.op = Expr::Op::Token;
  e.token.name = name;
  return e;
}

Expr all_of(std::vector<Expr> items) {
  if (items.size() == 1) return items[0];
  Expr e;
  e.op = Expr::Op::And;
  e.kids = std::move(items);
  return e;
}

// One job's expansion, by plain recursion. Each function returns the AND-ed items an expression turns
// into; `failed` stops everything (a cycle, a `$` name without definition).
struct JobExpansion {
  const std::map<std::string, VovMap>& maps;
  const std::map<std::string, std::string>& dollars;
  std::vector<std::string> path;  // the maps being expanded, outermost first
  int depth = 0;                  // the seed's depth count
  size_t resources_seen = 0;      // every resource visited (the engine's breadth bound)
  bool failed = false, curtailed = false;
  std::map<std::string, double> held;  // counted map -> units (the largest quantity named)

  std::vector<Expr> items(const Expr& e) {
    std::vector<Expr> out;
    if (failed) return out;
    if (e.op == Expr::Op::And) {
      for (const Expr& k : e.kids)
        for (Expr& x : items(k)) out.push_back(std::move(x));
    } else if (e.op == Expr::Op::Not) {
      Expr n;
      n.op = Expr::Op::Not;
      n.kids.push_back(all_of(items(e.kids[0])));
      out.push_back(std::move(n));
    } else if (e.op == Expr::Op::Or) {
      if (depth > vov::kMaxDepthCount) {  // past the limit only the first alternative is expanded
        curtailed = true;
        return items(e.kids[0]);
      }
      Expr o;
      o.op = Expr::Op::Or;
      for (const Expr& k : e.kids) o.kids.push_back(all_of(items(k)));
      out.push_back(o.kids.size() == 1 ? o.kids[0] : o);
    } else {
      return token(e);
    }
    return out;
  }

  std::vector<Expr> token(const Expr& e) {
    const std::string& name = e.token.name;
    if (name[0] == '$') {  // replaced by its definition, not counted itself
      const auto d = dollars.find(name.substr(1));
      if (d == dollars.end()) {
        failed = true;
        return {};
      }
      return items(vov::parse_resources(d->second));
    }
    ++depth;
    ++resources_seen;
    const auto m = maps.find(name);
    if (m == maps.end()) return {e};
    for (const std::string& p : path)
      if (p == name) {
        failed = true;  // a cycle
        return {};
      }
    if (m->second.count) {  // `name#N`, `name/N`: N units of the map
      double& units = held[name];
      units = std::max(units, e.token.kind == Token::Kind::Has ? 1.0 : e.token.amount);
    }
    if (!m->second.map) return {};  // a counter: satisfied by the map itself
    if (depth > vov::kMaxDepthCount || resources_seen > 65536) {
      curtailed = true;
      return {e};
    }
    const int before = depth;
    ++depth;
    path.push_back(name);
    std::vector<Expr> out = items(vov::parse_resources(*m->second.map));
    path.pop_back();
    depth = before;
    return out;
  }
};

// A tasker's quantity of every name it offers (a name it offers plainly: unbounded).
std::map<std::string, double> offers(const VovTasker& t) {
  std::map<std::string, double> q{{"CPUS", t.cpus}, {"PERCENT", 100}, {"TIMELEFT", kUnbounded}};
  const Expr list = vov::parse_resources(t.resources, false);
  std::vector<const Expr*> stack{&list};
  while (!stack.empty()) {
    const Expr* e = stack.back();
    stack.pop_back();
    if (e->op == Expr::Op::Token) {
      if (e->token.name == "CPUS" || e->token.name == "PERCENT") continue;
      q[e->token.name] = e->token.kind == Token::Kind::Has ? kUnbounded : e->token.amount;
    }
    for (auto it = e->kids.rbegin(); it != e->kids.rend(); ++it) stack.push_back(&*it);
  }
  return q;
}

bool holds(const Expr& e, const std::map<std::string, double>& q) {
  switch (e.op) {
    case Expr::Op::Token: {
      const auto v = q.find(e.token.name);
      const double want = e.token.kind == Token::Kind::Has ? 1.0 : e.token.amount;
      return v != q.end() && v->second >= want;
    }
    case Expr::Op::Not: return !holds(e.kids[0], q);
    case Expr::Op::And:
      for (const Expr& k : e.kids)
        if (!holds(k, q)) return false;
      return true;
    case Expr::Op::Or:
      for (const Expr& k : e.kids)
        if (holds(k, q)) return true;
      return false;
  }
  return false;
}

}  // namespace

VovOutcome vov_match(const std::vector<VovTasker>& taskers, const std::map<std::string, VovMap>& maps,
                     const std::map<std::string, std::string>& dollars, const std::vector<VovJob>& jobs) {
  std::vector<std::map<std::string, double>> offered, free;
  std::set<std::string> consumable{"CPUS", "PERCENT"};
  for (const VovTasker& t : taskers) {
    offered.push_back(offers(t));
    const Expr list = vov::parse_resources(t.resources, false);
    std::vector<const Expr*> stack{&list};
    while (!stack.empty()) {
      const Expr* e = stack.back();
      stack.pop_back();
      if (e->op == Expr::Op::Token && e->token.kind == Token::Kind::Consumes) consumable.insert(e->token.name);
      for (const Expr& k : e->kids) stack.push_back(&k);
    }
  }
  free = offered;
  std::map<std::string, double> configured_units, units;  // counted maps: units farm-wide, units left
  for (const auto& [name, m] : maps)
    if (m.count) configured_units[name] = static_cast<double>(*m.count);
  units = configured_units;

  VovOutcome out;
  for (const VovJob& job : jobs) {
    out.tasker.emplace_back();
    out.curtailed.push_back(false);
    JobExpansion x{maps, dollars, {}, 0, 0, false, false, {}};
    std::vector<Expr> list;
    try {
      list = x.items(vov::parse_resources(job.resources));
      const std::string tool = vov::tool_of(job.command);
      std::vector<std::string> appended{"Priority:" + (job.priority.empty() ? "normal" : job.priority)};
      if (!tool.empty()) appended.push_back("Tool:" + tool);
      appended.push_back("User:" + job.owner);
      appended.push_back("Group:" + job.group);
      for (const std::string& a : appended) {
        if (maps.count(a) == 0) {
          ++x.depth;  // counted, then dropped: no tasker offers User:<owner>
          ++x.resources_seen;
          continue;
        }
        for (Expr& e : x.token(name_token(a))) list.push_back(std::move(e));
      }
    } catch (const vov::ResourceError&) {
      x.failed = true;
    }
    if (x.failed) {
      out.status.push_back("rejected");
      continue;
    }
    out.curtailed.back() = x.curtailed;
    Expr timeleft = name_token("TIMELEFT");
    timeleft.token.kind = Token::Kind::AtLeast;
    timeleft.token.amount = std::ceil(job.expected_duration);
    list.push_back(timeleft);
    // Top-level `name/N` of a consumable is a charge (the last one of a name stands); CPUS/1 by default.
    std::map<std::string, double> charge{{"CPUS", 1}};
    std::vector<Expr> conditions;
    for (const Expr& e : list) {
      if (e.op == Expr::Op::Token && e.token.kind == Token::Kind::Consumes && consumable.count(e.token.name))
        charge[e.token.name] = e.token.amount;
      else conditions.push_back(e);
    }
    const Expr need = all_of(conditions);
    int best = -1;
    bool any_eligible = false;
    for (size_t t = 0; t < taskers.size(); ++t) {
      bool eligible = holds(need, offered[t]);
      for (const auto& [name, amount] : charge) {
        if (amount <= 0) continue;
        const auto v = offered[t].find(name);
        eligible = eligible && v != offered[t].end() && v->second >= amount;
      }
      if (!eligible) continue;
      for (const auto& [h, n] : x.held) eligible = eligible && configured_units.at(h) >= n;
      any_eligible = any_eligible || eligible;
      bool room = eligible;
      for (const auto& [name, amount] : charge) room = room && (amount <= 0 || free[t].at(name) >= amount);
      if (room && (best < 0 || taskers[t].power > taskers[static_cast<size_t>(best)].power)) best = static_cast<int>(t);
    }
    for (const auto& [h, n] : x.held)
      if (units.at(h) < n) best = -1;
    if (best < 0) {
      out.status.push_back(any_eligible ? "pending: no room" : "pending: no eligible tasker");
      continue;
    }
    for (const auto& [name, amount] : charge)
      if (amount > 0) free[static_cast<size_t>(best)][name] -= amount;
    for (const auto& [h, n] : x.held) units[h] -= n;
    out.tasker.back() = taskers[static_cast<size_t>(best)].name;
    out.status.push_back("assigned");
  }
  return out;
}

}  // namespace colmatch::naive
