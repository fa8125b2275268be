#include "tests/reference/naive_vov.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "engine/model/vov.hpp"

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
  bool cycle = false;  // failed on a cycle in the maps
  // The units each counted map has left now (a walk at dispatch, the seed's order of stops), or null
  // (every map available). `unavailable`: the walk stopped at a map without enough units.
  const std::map<std::string, double>* live = nullptr;
  bool unavailable = false;

  std::vector<Expr> items(const Expr& e) {
    std::vector<Expr> out;
    if (failed || unavailable) return out;
    if (e.op == Expr::Op::And) {
      for (const Expr& k : e.kids) {
        for (Expr& x : items(k)) out.push_back(std::move(x));
        if (failed || unavailable) return out;
      }
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
      for (const Expr& k : e.kids) {
        std::vector<Expr> alt = items(k);
        if (failed) return {};
        if (unavailable) {  // an alternative whose map has no unit left is dropped
          unavailable = false;
          continue;
        }
        o.kids.push_back(all_of(std::move(alt)));
      }
      if (o.kids.empty()) {
        unavailable = true;
        return {};
      }
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
        failed = cycle = true;
        return {};
      }
    std::vector<Expr> out;
    if (m->second.count) {  // `name#N`, `name/N`: N units of the map, held where the map is met
      Expr h = e;
      h.token.kind = Token::Kind::Held;
      h.token.amount = e.token.kind == Token::Kind::Has ? 1.0 : e.token.amount;
      if (live != nullptr && live->at(name) < h.token.amount) {
        unavailable = true;
        return {};
      }
      out.push_back(h);
    }
    if (!m->second.map) return out;  // a counter: satisfied by the map itself
    if (depth > vov::kMaxDepthCount || resources_seen > 65536) {
      curtailed = true;
      out.push_back(e);
      return out;
    }
    const int before = depth;
    ++depth;
    path.push_back(name);
    for (Expr& x : items(vov::parse_resources(*m->second.map))) out.push_back(std::move(x));
    path.pop_back();
    depth = before;
    return out;
  }
};

// One scheduling solution: the items a tasker must satisfy and the counted maps held (each once, the
// larger quantity).
struct NaiveSolution {
  std::vector<Expr> items;
  std::map<std::string, double> held;
};

bool has_held(const Expr& e) {
  if (e.op == Expr::Op::Token) return e.token.kind == Token::Kind::Held;
  for (const Expr& k : e.kids)
    if (has_held(k)) return true;
  return false;
}

// `e` with its held tokens taken out into `held`.
Expr take_held(const Expr& e, std::map<std::string, double>& held) {
  Expr out = e;
  out.kids.clear();
  for (const Expr& k : e.kids) {
    if (k.op == Expr::Op::Token && k.token.kind == Token::Kind::Held) {
      held[k.token.name] = std::max(held[k.token.name], k.token.amount);
      if (e.op == Expr::Op::Or) out.kids.push_back(all_of({}));  // an alternative that only holds
      continue;
    }
    out.kids.push_back(take_held(k, held));
  }
  if (out.op == Expr::Op::Not && out.kids.empty()) out.kids.push_back(all_of({}));
  return out;
}

// Every solution of an item list, by recursion: an OR holding a counted map is one solution per
// alternative (first alternative first); anything else is kept whole, its held maps taken out.
std::vector<NaiveSolution> solutions_of(const std::vector<Expr>& list, size_t from) {
  if (from == list.size()) return {NaiveSolution{}};
  const Expr& e = list[from];
  std::vector<NaiveSolution> firsts;
  if (e.op == Expr::Op::Token && e.token.kind == Token::Kind::Held) {
    NaiveSolution s;
    s.held[e.token.name] = e.token.amount;
    firsts.push_back(s);
  } else if (e.op == Expr::Op::Or && has_held(e)) {
    for (const Expr& k : e.kids) {
      const std::vector<Expr> alt = k.op == Expr::Op::And ? k.kids : std::vector<Expr>{k};
      for (NaiveSolution& s : solutions_of(alt, 0)) firsts.push_back(std::move(s));
    }
  } else if (e.op == Expr::Op::And && has_held(e)) {
    firsts = solutions_of(e.kids, 0);
  } else {
    NaiveSolution s;
    s.items.push_back(take_held(e, s.held));
    firsts.push_back(s);
  }
  std::vector<NaiveSolution> out;
  for (const NaiveSolution& a : firsts)
    for (const NaiveSolution& b : solutions_of(list, from + 1)) {
      NaiveSolution s = a;
      s.items.insert(s.items.end(), b.items.begin(), b.items.end());
      for (const auto& [m, n] : b.held) s.held[m] = std::max(s.held[m], n);
      out.push_back(std::move(s));
      if (out.size() == vov::kMaxSolutions) return out;
    }
  return out;
}

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

// The farm as the naive dispatcher sees it: each tasker's own offers and what is free of them, and the
// counted maps' units.
struct Farm {
  std::vector<std::map<std::string, double>> offered, free;
  std::set<std::string> consumable{"CPUS", "PERCENT"};
  std::map<std::string, double> configured_units, units;  // counted maps: units farm-wide, units left

  Farm(const std::vector<VovTasker>& taskers, const std::map<std::string, VovMap>& maps) {
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
    for (const auto& [name, m] : maps)
      if (m.count) configured_units[name] = static_cast<double>(*m.count);
    units = configured_units;
  }
};

// One scheduling solution priced: the conditions on a tasker's offers, the charges of its consumables
// and the counted maps' units it holds.
struct Priced {
  Expr need;
  std::map<std::string, double> charge, held;
};

// A job as expanded: rejected (a cycle, a bad list), waiting (a walk at dispatch stopped at a map with
// no unit left), or its solutions.
struct Prepared {
  bool rejected = false, curtailed = false, cycle = false, waiting = false;
  std::vector<Priced> priced;
};

Prepared prepare(const Farm& farm, const std::map<std::string, VovMap>& maps,
                 const std::map<std::string, std::string>& dollars, const VovJob& job,
                 const std::map<std::string, double>* live = nullptr) {
  Prepared out;
  JobExpansion x{maps, dollars, {}, 0, 0, false, false};
  x.live = live;
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
      if (x.failed || x.unavailable) break;
    }
  } catch (const vov::ResourceError&) {
    x.failed = true;
  }
  out.curtailed = x.curtailed;
  if (x.failed) {
    out.rejected = true;
    out.cycle = x.cycle;
    return out;
  }
  if (x.unavailable) {
    out.waiting = true;
    return out;
  }
  Expr timeleft = name_token("TIMELEFT");
  timeleft.token.kind = Token::Kind::AtLeast;
  timeleft.token.amount = std::ceil(job.expected_duration);
  list.push_back(timeleft);
  // Per solution, its top-level `name/N` of a consumable is a charge (the last one of a name stands;
  // CPUS/1 by default) and the rest are conditions.
  for (NaiveSolution& s : solutions_of(list, 0)) {
    Priced p;
    p.charge["CPUS"] = 1;
    std::vector<Expr> conditions, flat;
    for (Expr& e : s.items) {
      if (e.op == Expr::Op::And) flat.insert(flat.end(), e.kids.begin(), e.kids.end());
      else flat.push_back(e);
    }
    for (const Expr& e : flat) {
      if (e.op == Expr::Op::Token && e.token.kind == Token::Kind::Consumes && farm.consumable.count(e.token.name))
        p.charge[e.token.name] = e.token.amount;
      else conditions.push_back(e);
    }
    p.need = all_of(conditions);
    p.held = s.held;
    out.priced.push_back(std::move(p));
  }
  return out;
}

bool eligible_by(const Farm& farm, const Priced& p, size_t t) {
  bool ok = holds(p.need, farm.offered[t]);
  for (const auto& [name, amount] : p.charge) {
    if (amount <= 0) continue;
    const auto v = farm.offered[t].find(name);
    ok = ok && v != farm.offered[t].end() && v->second >= amount;
  }
  for (const auto& [h, n] : p.held) ok = ok && farm.configured_units.at(h) >= n;
  return ok;
}

bool room_by(const Farm& farm, const Priced& p, size_t t) {
  bool ok = eligible_by(farm, p, t);
  for (const auto& [name, amount] : p.charge) ok = ok && (amount <= 0 || farm.free[t].at(name) >= amount);
  for (const auto& [h, n] : p.held) ok = ok && farm.units.at(h) >= n;
  return ok;
}

// Places job `x` now: the tasker with room by some solution that has the greatest power (ties: the one
// defined first), charged by the first solution that has room there. Returns the tasker, or -1 (with
// `any_eligible` set when some tasker is eligible by some solution); `charged` gets the solution.
int place(Farm& farm, const std::vector<VovTasker>& taskers, const Prepared& x, bool& any_eligible, size_t& charged) {
  int best = -1;
  any_eligible = false;
  for (size_t t = 0; t < taskers.size(); ++t) {
    bool eligible = false, room = false;
    for (const Priced& p : x.priced) {
      eligible = eligible || eligible_by(farm, p, t);
      room = room || room_by(farm, p, t);
    }
    any_eligible = any_eligible || eligible;
    if (room && (best < 0 || taskers[t].power > taskers[static_cast<size_t>(best)].power)) best = static_cast<int>(t);
  }
  if (best < 0) return best;
  const auto b = static_cast<size_t>(best);
  for (charged = 0; charged < x.priced.size(); ++charged) {  // the first solution that takes the tasker
    const Priced& p = x.priced[charged];
    if (!room_by(farm, p, b)) continue;
    for (const auto& [name, amount] : p.charge)
      if (amount > 0) farm.free[b][name] -= amount;
    for (const auto& [h, n] : p.held) farm.units[h] -= n;
    break;
  }
  return best;
}

void release(Farm& farm, const Priced& p, size_t t) {
  for (const auto& [name, amount] : p.charge)
    if (amount > 0) farm.free[t][name] += amount;
  for (const auto& [h, n] : p.held) farm.units[h] += n;
}

}  // namespace

VovOutcome vov_match(const std::vector<VovTasker>& taskers, const std::map<std::string, VovMap>& maps,
                     const std::map<std::string, std::string>& dollars, const std::vector<VovJob>& jobs) {
  Farm farm(taskers, maps);
  VovOutcome out;
  for (const VovJob& job : jobs) {
    Prepared x = prepare(farm, maps, dollars, job);
    out.tasker.emplace_back();
    out.curtailed.push_back(x.curtailed);
    // A walk that meets a cycle is walked again now: the maps before it may stop it first (seed 000's
    // order of stops: the job waits), or drop the alternative that leads to it.
    if (x.cycle) x = prepare(farm, maps, dollars, job, &farm.units);
    if (x.rejected) {
      out.status.push_back("rejected");
      continue;
    }
    if (x.waiting) {
      out.status.push_back("pending: no room");
      continue;
    }
    bool any_eligible = false;
    size_t charged = 0;
    const int best = place(farm, taskers, x, any_eligible, charged);
    if (best < 0) {
      out.status.push_back(any_eligible ? "pending: no room" : "pending: no eligible tasker");
      continue;
    }
    out.tasker.back() = taskers[static_cast<size_t>(best)].name;
    out.status.push_back("assigned");
  }
  return out;
}

VovSchedule vov_simulate(const std::vector<VovTasker>& taskers, const std::map<std::string, VovMap>& maps,
                         const std::map<std::string, std::string>& dollars, const std::vector<VovJob>& jobs) {
  Farm farm(taskers, maps);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  VovSchedule out;
  out.start.assign(jobs.size(), nan);
  out.tasker.assign(jobs.size(), "");
  std::vector<Prepared> x;
  for (const VovJob& job : jobs) x.push_back(prepare(farm, maps, dollars, job));
  std::vector<size_t> order(jobs.size());  // dispatch order: submit time, then input order
  for (size_t j = 0; j < jobs.size(); ++j) order[j] = j;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return jobs[a].submit < jobs[b].submit; });
  struct Running {
    double end;
    size_t job, tasker, solution;
  };
  std::vector<Running> running;
  std::vector<bool> waiting(jobs.size(), true);
  double t = -std::numeric_limits<double>::infinity();
  while (true) {
    // the next time something happens: a submit not yet seen, or an end
    double next = std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < jobs.size(); ++j)
      if ((!x[j].rejected || x[j].cycle) && waiting[j] && jobs[j].submit > t) next = std::min(next, jobs[j].submit);
    for (const Running& r : running) next = std::min(next, r.end);
    if (!std::isfinite(next)) break;
    t = next;
    for (size_t i = 0; i < running.size();) {  // ends first
      if (running[i].end <= t) {
        release(farm, x[running[i].job].priced[running[i].solution], running[i].tasker);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    for (const size_t j : order) {  // every waiting job that can start does, in order
      if ((x[j].rejected && !x[j].cycle) || !waiting[j] || jobs[j].submit > t) continue;
      const Prepared now = x[j].cycle ? prepare(farm, maps, dollars, jobs[j], &farm.units) : Prepared{};
      if (x[j].cycle && now.rejected) {  // the walk reaches the cycle now: removed
        waiting[j] = false;
        continue;
      }
      if (x[j].cycle && now.waiting) continue;
      const Prepared& use = x[j].cycle ? now : x[j];
      bool any_eligible = false;
      size_t charged = 0;
      const int best = place(farm, taskers, use, any_eligible, charged);
      if (best < 0) continue;
      waiting[j] = false;
      out.start[j] = t;
      out.tasker[j] = taskers[static_cast<size_t>(best)].name;
      running.push_back({t + jobs[j].runtime, j, static_cast<size_t>(best), charged});
      if (x[j].cycle) x[j] = now;  // (its charges, for its end)
    }
  }
  return out;
}

}  // namespace colmatch::naive
