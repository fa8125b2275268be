// Expansions into the engine's requests and choices (Altair Accelerator, seed 000): loaders/vov_build.hpp.
#include <fmt/format.h>

#include "loaders/vov_build.hpp"

namespace colmatch::loaders {

Request compile_expansion(const vov::Expr& e, const Catalog& cat, uint32_t a_names, bool top,
                          std::vector<std::pair<uint32_t, double>>& charges) {
  Request r;
  switch (e.op) {
    case vov::Expr::Op::Token: {
      if (e.token.kind == vov::Token::Kind::Held) return r;  // a counted map's units: the caller charges them
      const auto quantified = cat.find(e.token.name);
      if (!quantified || *quantified == a_names) {  // offered only as an attribute, or by no tasker
        r.kind = Request::Kind::Clause;
        r.clause.attr = a_names;
        r.clause.op = Relop::EQ;
        r.clause.strs.push_back(e.token.name);
        return r;
      }
      const uint32_t a = *quantified;
      const double n = e.token.kind == vov::Token::Kind::Has ? 1.0 : e.token.amount;
      if (e.token.kind == vov::Token::Kind::Consumes && top && cat.consumable_slot(a) >= 0) {
        charges.emplace_back(a, n);
        return r;  // the charge needs the room; the request itself asks nothing more
      }
      r.kind = Request::Kind::Clause;
      r.clause.attr = a;
      r.clause.op = Relop::GE;
      r.clause.nums.push_back(n);
      return r;
    }
    case vov::Expr::Op::Not:
      r.kind = Request::Kind::Not;
      r.kids.push_back(compile_expansion(e.kids[0], cat, a_names, false, charges));
      return r;
    case vov::Expr::Op::And:
      r.kind = Request::Kind::And;
      for (const vov::Expr& k : e.kids) r.kids.push_back(compile_expansion(k, cat, a_names, top, charges));
      return r;
    case vov::Expr::Op::Or:
      r.kind = Request::Kind::Or;
      for (const vov::Expr& k : e.kids) r.kids.push_back(compile_expansion(k, cat, a_names, false, charges));
      return r;
  }
  return r;
}

uint32_t gated_choice_of(const vov::GatedExpansion& g, const Catalog& cat, uint32_t a_names, JobBuilder& protos,
                         uint8_t& cut) {
  using Outcome = JobTable::Choice::Outcome;
  std::vector<std::string> keys;  // a solution's list and held maps, as text
  std::vector<Request> requests;
  std::vector<std::vector<std::pair<uint32_t, double>>> charges;
  auto solution = [&](const vov::Expr& list, const std::vector<vov::Held>& held) {
    std::string key = vov::to_text(list);
    for (const vov::Held& h : held) key += fmt::format("\x1f{}\x1f{}", h.map, h.units);
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == key) return static_cast<uint32_t>(i);
    keys.push_back(std::move(key));
    charges.emplace_back();
    requests.push_back(compile_expansion(list, cat, a_names, true, charges.back()));
    for (const vov::Held& h : held) charges.back().emplace_back(*cat.find("map:" + h.map), h.units);
    return static_cast<uint32_t>(keys.size() - 1);
  };
  std::vector<Outcome> outcomes(g.by_mask.size());
  for (size_t m = 0; m < g.by_mask.size(); ++m) {
    const vov::Expansion& e = g.by_mask[m];
    Outcome& o = outcomes[m];
    if (e.outcome == vov::Expansion::Outcome::Cycle) {
      o.kind = Outcome::Kind::Remove;
      o.why = "a cycle in the resource maps: " + e.detail;
    } else if (e.outcome == vov::Expansion::Outcome::NotAvailable) {
      o.kind = Outcome::Kind::Wait;
      for (size_t i = 0; i < g.gate.size(); ++i)  // the map the walk stopped at: one not available in m
        if (g.gate[i].map == e.detail && !((m >> i) & 1)) o.wait_on = static_cast<uint32_t>(i);
    } else if (!vov::chooses(e.expanded)) {
      o.solutions.push_back(solution(e.expanded, e.held));
    } else {
      bool more = false;
      for (const vov::Solution& s : vov::solutions(e.expanded, vov::kMaxSolutions, more))
        o.solutions.push_back(solution(s.list, s.held));
      cut = cut || more;
    }
  }
  const uint32_t c = protos.add_choice(protos.intern_all(std::move(requests)), charges);
  std::vector<std::pair<uint32_t, double>> gate;
  for (const vov::Held& h : g.gate) gate.emplace_back(*cat.find("map:" + h.map), h.units);
  protos.set_gate(c, gate, std::move(outcomes));
  return c;
}

}  // namespace colmatch::loaders
