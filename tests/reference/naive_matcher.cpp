#include "tests/reference/naive_matcher.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "engine/model/wildcard.hpp"

namespace colmatch::naive {

bool satisfies(const TaskerTable& taskers, uint32_t t, const Request& r) {
  if (r.kind == Request::Kind::And) {
    for (const auto& k : r.kids)
      if (!satisfies(taskers, t, k)) return false;
    return true;
  }
  if (r.kind == Request::Kind::Or) {
    for (const auto& k : r.kids)
      if (satisfies(taskers, t, k)) return true;
    return false;
  }
  if (r.kind == Request::Kind::Not) return !satisfies(taskers, t, r.kids[0]);

  const Clause& c = r.clause;
  const Column& col = taskers.columns[c.attr];
  // One value against the clause.
  auto holds = [&](double num, uint32_t id) {
    bool any = false, all = true;
    if (is_numeric(col.type)) {
      for (double v : c.nums) {
        const bool ok = apply(c.op, num, v);
        any = any || ok;
        all = all && ok;
      }
    } else {
      const std::string& value = col.dict.value(id);
      for (const auto& s : c.strs) {
        bool equal = false;
        // Son of Grid Engine 8.1.9: a wildcard expression; else restring patterns or equality
        auto same = [&](std::string_view e) {
          if (c.expression) return WildcardExpression(s).matches(e);
          return col.type == AttrType::ReString ? WildcardPattern(s).matches(e) : e == s;
        };
        if (col.multi) {  // set-valued: one of the tasker's values
          for (std::string_view e : set_elements(value)) equal = equal || same(e);
        } else {
          equal = same(value);
        }
        const bool ok = c.op == Relop::EQ ? equal : !equal;
        any = any || ok;
        all = all && ok;
      }
    }
    return c.op == Relop::NE ? all : any;  // == over a list: any of; != over a list: none of
  };
  // Strict hierarchy: global, then host, then queue; a level that has the attribute and does not
  // match rejects; a level without it defers; no level with it rejects.
  bool seen = false;
  if (col.global().present) {
    seen = true;
    if (!holds(col.global().num, col.global().id)) return false;
  }
  const uint32_t h = taskers.host_of[t];
  if (h != kNone && col.by_host().has(h)) {
    seen = true;
    if (!holds(is_numeric(col.type) ? col.by_host().num(h) : 0, is_numeric(col.type) ? 0 : col.by_host().id(h)))
      return false;
  }
  if (col.has(t)) {
    seen = true;
    if (!holds(is_numeric(col.type) ? col.queue().num(t) : 0, is_numeric(col.type) ? 0 : col.queue().id(t)))
      return false;
  }
  return seen;
}

std::vector<double> queue_values(const Column& col, size_t taskers) {
  std::vector<double> out;
  for (uint32_t t = 0; t < taskers; ++t) out.push_back(col.queue().num(t));
  return out;
}

std::vector<double> master_charge(const Catalog& catalog, const JobTable& jobs, uint32_t j) {
  std::vector<double> out;
  for (size_t k = 0; k < catalog.consumables().size(); ++k) {
    const AttributeDef& d = catalog.at(catalog.consumables()[k]);
    const double requested = jobs.amount.at(k, j);
    double c = 0;
    if (jobs.rule[j] != AllocationRule::PeSlots) {
      if (d.name == "slots") c = std::isnan(requested) ? 0 : requested;
      else if (d.scope == ConsumeScope::PerJob) c = std::isnan(requested) ? d.default_amount.value_or(0.0) : requested;
    }
    out.push_back(c);
  }
  return out;
}

std::vector<double> charge(const Catalog& catalog, const JobTable& jobs, uint32_t j) {
  std::vector<double> out;
  for (size_t k = 0; k < catalog.consumables().size(); ++k) {
    const AttributeDef& d = catalog.at(catalog.consumables()[k]);
    const double requested = jobs.amount.at(k, j);
    double c;
    if (jobs.rule[j] != AllocationRule::PeSlots) {  // one slot instance
      if (d.name == "slots") c = std::isnan(requested) ? 1 : 0;
      else if (d.scope == ConsumeScope::PerSlot) c = std::isnan(requested) ? d.default_amount.value_or(0.0) : requested;
      else c = 0;
      out.push_back(c);
      continue;
    }
    if (d.name == "slots") {
      c = std::isnan(requested) ? jobs.slots[j] : requested;
    } else {
      const double a = std::isnan(requested) ? d.default_amount.value_or(0.0) : requested;
      c = d.scope == ConsumeScope::PerSlot ? a * jobs.slots[j] : a;
    }
    out.push_back(c);
  }
  return out;
}

namespace {
bool names(const Request& r, uint32_t a) {
  if (r.kind == Request::Kind::Clause) return r.clause.attr == a;
  for (const auto& k : r.kids)
    if (names(k, a)) return true;
  return false;
}

// SGE 8.1.9 (issue 8, classes 6 and 7): 1 = a default charge, binding only where the consumable is
// defined; 2 = a requested 0, which needs it defined; 0 = as charged.
std::vector<int> charge_kinds(const Catalog& catalog, const JobTable& jobs, uint32_t j) {
  std::vector<int> out(catalog.consumables().size(), 0);
  if (catalog.reading != GridEngineReading::SoGE819) return out;
  for (size_t k = 0; k < out.size(); ++k) {
    const AttributeDef& d = catalog.at(catalog.consumables()[k]);
    if (d.name == "slots") continue;
    const double a = jobs.amount.at(k, j);
    if (std::isnan(a) && d.default_amount.value_or(0.0) > 0) out[k] = 1;
    else if (a == 0) out[k] = 2;
  }
  return out;
}

bool defined_anywhere(const TaskerTable& taskers, const Column& col, uint32_t t) {
  const uint32_t h = taskers.host_of[t];
  return col.global().present || (h != kNone && col.by_host().has(h)) || col.has(t);
}

bool eligible_for(const Catalog& catalog, const TaskerTable& taskers, const Request& request,
                  const std::vector<double>& need, uint32_t t, const std::vector<int>& kinds) {
  if (!satisfies(taskers, t, request)) return false;
  // SGE 8.1.9: a FORCED attribute the job does not request keeps it off the taskers that define it
  for (uint32_t a = 0; a < catalog.size() && catalog.reading == GridEngineReading::SoGE819; ++a) {
    if (catalog.at(a).requestable != Requestable::Forced) continue;
    const int slot = catalog.consumable_slot(a);
    if (slot >= 0 ? need[static_cast<size_t>(slot)] > 0 : names(request, a)) continue;
    const Column& col = taskers.columns[a];
    const uint32_t h = taskers.host_of[t];
    if (col.global().present || (h != kNone && col.by_host().has(h)) || col.has(t)) return false;
  }
  for (size_t k = 0; k < need.size(); ++k) {
    const Column& col = taskers.columns[catalog.consumables()[k]];
    if (kinds[k] == 2 && !defined_anywhere(taskers, col, t)) return false;
    if (need[k] <= 0) continue;
    if (kinds[k] == 1 && !defined_anywhere(taskers, col, t)) continue;
    const uint32_t h = taskers.host_of[t];
    const bool at_host = h != kNone && col.by_host().has(h);
    if (!col.global().present && !at_host && !col.has(t)) return false;
    if (col.global().present && !(col.global().num >= need[k])) return false;
    if (at_host && !(col.by_host().num(h) >= need[k])) return false;
    if (col.has(t) && !(col.queue().num(t) >= need[k])) return false;
  }
  return true;
}
}  // namespace

// A $fill_up job whose master (one slot instance and the per-job charges) fits no tasker never starts.
bool master_fits_somewhere(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs, uint32_t j,
                           const std::vector<double>& need, const std::vector<int>& kinds) {
  const auto once = master_charge(catalog, jobs, j);
  if (std::none_of(once.begin(), once.end(), [](double x) { return x > 0; })) return true;
  const Request& request = jobs.requests[jobs.request[j]];
  auto with_master = need;
  for (size_t k = 0; k < need.size(); ++k) with_master[k] += once[k];
  for (uint32_t m = 0; m < taskers.size(); ++m)
    if (eligible_for(catalog, taskers, request, need, m, kinds) &&
        eligible_for(catalog, taskers, request, with_master, m, kinds))
      return true;
  return false;
}

// One slot a tasker: at least as many eligible taskers as slots.
bool enough_taskers(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs, uint32_t j,
                    const std::vector<double>& need, const std::vector<int>& kinds) {
  if (jobs.rule[j] != AllocationRule::OnePerTasker) return true;
  uint32_t n = 0;
  for (uint32_t t = 0; t < taskers.size(); ++t)
    n += eligible_for(catalog, taskers, jobs.requests[jobs.request[j]], need, t, kinds) ? 1 : 0;
  return n >= fewest_taskers(jobs, j);
}

bool eligible(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs, uint32_t t, uint32_t j) {
  const auto need = charge(catalog, jobs, j);
  const auto kinds = charge_kinds(catalog, jobs, j);
  return eligible_for(catalog, taskers, jobs.requests[jobs.request[j]], need, t, kinds) &&
         master_fits_somewhere(catalog, taskers, jobs, j, need, kinds) &&
         enough_taskers(catalog, taskers, jobs, j, need, kinds);
}

namespace {

// Job j's slot instances taken tasker by tasker from a copy of the pools: how many tasker t can take now
// (at most `want`; a master also pays the per-job charges), and taking them.
struct Taking {
  const Catalog& catalog;
  const TaskerTable& taskers;
  const JobTable& jobs;
  uint32_t j;
  std::vector<double> need, once;
  std::vector<int> kinds;
  Pools p;
  Taking(const Catalog& c, const TaskerTable& t, const JobTable& js, uint32_t job, const Pools& pools)
      : catalog(c),
        taskers(t),
        jobs(js),
        j(job),
        need(charge(c, js, job)),
        once(master_charge(c, js, job)),
        kinds(charge_kinds(c, js, job)),
        p(pools) {}
  uint32_t fit(uint32_t t, bool master, uint32_t want) const {
    const uint32_t h = taskers.host_of[t];
    uint32_t n = jobs.rule[j] == AllocationRule::OnePerTasker ? std::min(want, 1u) : want;
    for (size_t k = 0; k < need.size() && n > 0; ++k) {
      const double o = master ? once[k] : 0.0, inst = need[k];
      if (o <= 0 && inst <= 0) continue;
      const Column& col = taskers.columns[catalog.consumables()[k]];
      double a = std::numeric_limits<double>::quiet_NaN();
      if (col.has(t)) a = p.queue[k][t];
      if (h != kNone && col.by_host().has(h)) a = std::isnan(a) ? p.host[k][h] : std::min(a, p.host[k][h]);
      if (col.global().present) a = std::isnan(a) ? p.global[k] : std::min(a, p.global[k]);
      if (std::isnan(a) && kinds[k] == 1) continue;  // no pool: an SGE 8.1.9 default charge takes nothing
      a -= o;
      if (!(a >= 0) || (inst > 0 && !(a >= inst))) return 0u;
      if (inst > 0) {
        double most = std::floor(a / inst);
        if (most * inst > a) most -= 1;
        n = static_cast<uint32_t>(std::min<double>(n, most));
      }
    }
    return n;
  }
  void put(uint32_t t, uint32_t n, bool master) {
    const uint32_t h = taskers.host_of[t];
    for (size_t k = 0; k < need.size(); ++k) {
      const double amount = n * need[k] + (master ? once[k] : 0.0);
      if (amount <= 0) continue;
      const Column& col = taskers.columns[catalog.consumables()[k]];
      if (col.has(t)) p.queue[k][t] -= amount;
      if (h != kNone && col.by_host().has(h)) p.host[k][h] -= amount;
      if (col.global().present) p.global[k] -= amount;
    }
  }
};

}  // namespace

std::vector<std::pair<uint32_t, uint32_t>> place_fill_up(const Catalog& catalog, const TaskerTable& taskers,
                                                         const JobTable& jobs, uint32_t j,
                                                         const std::vector<uint32_t>& order, Pools& pools,
                                                         const std::vector<uint32_t>* exact) {
  Taking take(catalog, taskers, jobs, j, pools);
  Pools& p = take.p;
  uint32_t remaining = jobs.slots[j];
  std::vector<std::pair<uint32_t, uint32_t>> placed;
  auto fit = [&](uint32_t t, bool master) { return take.fit(t, master, remaining); };
  auto put = [&](uint32_t t, uint32_t n, bool master) {
    take.put(t, n, master);
    placed.emplace_back(t, n);
    remaining -= n;
  };
  if (exact != nullptr) {  // each its count, the first the master (the counts are the job: a node count
    // range's may be fewer than its slots)
    for (size_t i = 0; i < order.size(); ++i) {
      if (fit(order[i], i == 0) < (*exact)[i]) return {};
      put(order[i], (*exact)[i], i == 0);
    }
    pools = std::move(p);
    return placed;
  }
  uint32_t master = kNone;
  for (uint32_t t : order)
    if (const uint32_t n = fit(t, true)) {
      put(t, n, true);
      master = t;
      break;
    }
  if (master != kNone)
    for (uint32_t t : order) {
      if (remaining == 0) break;
      if (t == master) continue;
      if (const uint32_t n = fit(t, false)) put(t, n, false);
    }
  if (remaining > 0) return {};
  pools = std::move(p);
  return placed;
}

std::vector<std::pair<uint32_t, uint32_t>> place_by_host(const Catalog& catalog, const TaskerTable& taskers,
                                                         const JobTable& jobs, uint32_t j,
                                                         const std::vector<uint32_t>& order, Pools& pools) {
  // each host's taskers in `order` (a tasker of no host alone); the hosts by the place in `order` of their
  // first tasker with room for a slot now; hosts without room are out
  const Taking now(catalog, taskers, jobs, j, pools);
  std::vector<std::pair<size_t, std::vector<uint32_t>>> keyed;  // (first free, taskers)
  for (const uint32_t t : order) {
    const uint32_t h = taskers.host_of[t];
    bool joined = false;
    for (auto& [key, g] : keyed)
      if (h != kNone && taskers.host_of[g.front()] == h) g.push_back(t), joined = true;
    if (!joined) keyed.push_back({SIZE_MAX, {t}});
  }
  for (auto& [key, g] : keyed)
    for (size_t i = 0; i < order.size() && key == SIZE_MAX; ++i)
      if (std::find(g.begin(), g.end(), order[i]) != g.end() && now.fit(order[i], false, 1) > 0) key = i;
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::vector<uint32_t>> hosts;
  for (auto& [key, g] : keyed)
    if (key != SIZE_MAX) hosts.push_back(std::move(g));
  const JobTable::PeShape shape = jobs.pe_shape_of(j);
  const uint32_t most = jobs.slots[j], fewest = shape.min_slots > 0 ? shape.min_slots : most;
  using Placed = std::vector<std::pair<uint32_t, uint32_t>>;
  // The master task (Grid Engine's slot harvesting): on a tasker of the job's master queue request (qsub
  // -masterq; any without one); the last such the first host that gives one gives slots from; until then a
  // tasker that could not hold it leaves the job's last slot for one. The per-job charges go on the first
  // tasker that may be the master.
  const uint32_t master_request = jobs.pe_shape_of(j).master;
  const auto need = charge(catalog, jobs, j);
  const auto kinds = charge_kinds(catalog, jobs, j);
  auto candidate = [&](uint32_t t) {
    return master_request == kNone || eligible_for(catalog, taskers, jobs.requests[master_request], need, t, kinds);
  };
  // -masterq beside -q: a candidate that -q does not name gives one slot at most until a host gave the master
  const uint32_t master_only_request = jobs.pe_shape_of(j).master_only;
  auto master_only = [&](uint32_t t) {
    return master_only_request != kNone &&
           eligible_for(catalog, taskers, jobs.requests[master_only_request], need, t, kinds);
  };
  struct Harvest {
    Taking take;
    Placed placed;
    uint32_t charged = kNone;  // the tasker with the per-job charges
    uint32_t master = kNone;   // the master, once a host gave one
  };
  // Up to `want` slots on host g's taskers in order, `before` slots placed on earlier hosts; the host's
  // master (kNone: none), kept if the host is.
  auto fill = [&](Harvest& h, const std::vector<uint32_t>& g, uint32_t want, uint32_t before, uint32_t& host_master) {
    uint32_t got = 0;
    host_master = kNone;
    for (const uint32_t t : g) {
      if (got == want) break;
      const bool may_master = h.master == kNone && candidate(t);
      const bool master = may_master && h.charged == kNone;
      uint32_t n = h.take.fit(t, master, want - got);
      if (h.master == kNone && host_master == kNone && !candidate(t) && before + got + n == most) --n;
      if (h.master == kNone && host_master == kNone && master_only(t)) n = std::min(n, 1u);
      if (n == 0) continue;
      h.take.put(t, n, master);
      if (master) h.charged = t;
      if (may_master) host_master = t;
      auto it = std::find_if(h.placed.begin(), h.placed.end(), [&](const auto& x) { return x.first == t; });
      if (it != h.placed.end()) it->second += n;
      else h.placed.emplace_back(t, n);
      got += n;
    }
    return got;
  };
  auto keep = [](Harvest& h, uint32_t host_master) {
    if (h.master == kNone) h.master = host_master;
  };
  auto adopt = [](Harvest& to, Harvest& from) {  // (Taking holds references: its pools move)
    to.take.p = std::move(from.take.p);
    to.placed = std::move(from.placed);
    to.charged = from.charged;
    to.master = from.master;
  };
  Harvest h{Taking(catalog, taskers, jobs, j, pools), {}, kNone, kNone};
  uint32_t total = 0, hm = kNone;
  switch (jobs.rule[j]) {
    case AllocationRule::HostPeSlots:  // the most slots any one host takes, on the first host that takes them
      for (uint32_t n = most; n >= fewest && total == 0; --n)
        for (const auto& g : hosts) {
          Harvest trial = h;
          if (fill(trial, g, n, 0, hm) == n && hm != kNone) {
            keep(trial, hm);
            adopt(h, trial), total = n;
            break;
          }
        }
      break;
    case AllocationRule::HostFillUp:
      for (const auto& g : hosts) {
        total += fill(h, g, most - total, total, hm);
        keep(h, hm);
      }
      break;
    case AllocationRule::HostRoundRobin:
      for (uint32_t before = ~0u; total < most && total != before;) {
        before = total;
        for (const auto& g : hosts)
          if (total < most) {
            total += fill(h, g, 1, total, hm);
            keep(h, hm);
          }
      }
      break;
    case AllocationRule::HostBlocks:
      for (const auto& g : hosts) {
        if (total == most) break;
        Harvest trial = h;
        if (fill(trial, g, shape.per_host, total, hm) == shape.per_host) {
          keep(trial, hm);
          adopt(h, trial), total += shape.per_host;
        }
      }
      break;
    default: return {};
  }
  if (total < fewest || h.placed.empty() || h.master == kNone) return {};
  pools = std::move(h.take.p);
  Placed placed = std::move(h.placed);
  const uint32_t first =
      std::any_of(h.take.once.begin(), h.take.once.end(), [](double o) { return o > 0; }) ? h.charged : h.master;
  const auto at = std::find_if(placed.begin(), placed.end(), [&](const auto& x) { return x.first == first; });
  const auto master = *at;
  placed.erase(at);
  placed.insert(placed.begin(), master);
  return placed;
}

std::vector<std::pair<uint32_t, uint32_t>> place_each_once(const Catalog& catalog, const TaskerTable& taskers,
                                                           const JobTable& jobs, uint32_t j,
                                                           const std::vector<uint32_t>& chosen, Pools& pools) {
  const std::vector<uint32_t> ones(chosen.size(), 1);
  return place_fill_up(catalog, taskers, jobs, j, chosen, pools, &ones);
}

namespace {
constexpr double kNoLimit = std::numeric_limits<double>::quiet_NaN();  // slurm_offer: no fit limit configured
}  // namespace

double slurm_offer(const JobTable& jobs, uint32_t j, double fit_free, double limit_free) {
  const JobTable::FitUnit u = jobs.fit_unit_of(j);
  if (u.fit <= 0) return fit_free;
  double tasks = std::floor(fit_free / u.fit);
  if (u.limit > 0 && !std::isnan(limit_free)) tasks = std::min(tasks, std::floor(limit_free / u.limit));
  if (u.tasks > 0) tasks = std::min(tasks, u.tasks);
  return tasks;
}

namespace {
// The sets slurm_pick and slurm_spread choose among: taskers of consecutive input indices and one power, in
// input order, each with the sum of `value` over its taskers.
struct NodeSet {
  std::vector<uint32_t> taskers;
  double free = 0;
  bool used = false;
};
std::vector<NodeSet> node_sets(const TaskerTable& taskers, std::vector<uint32_t> fitting,
                               const std::function<double(uint32_t)>& value) {
  std::sort(fitting.begin(), fitting.end(),
            [&](uint32_t a, uint32_t b) { return taskers.input_index[a] < taskers.input_index[b]; });
  std::vector<NodeSet> sets;
  for (const uint32_t t : fitting) {
    if (sets.empty() || taskers.input_index[t] != taskers.input_index[sets.back().taskers.back()] + 1 ||
        taskers.power[t] != taskers.power[sets.back().taskers.back()])
      sets.emplace_back();
    sets.back().taskers.push_back(t);
    sets.back().free += value(t);
  }
  return sets;
}
// The next set _eval_nodes takes, marked used (nullptr when none is left): the greatest power; among equals
// the first `sufficient` one, a later sufficient one with less free, or an insufficient one with more.
NodeSet* next_set(const TaskerTable& taskers, std::vector<NodeSet>& sets,
                  const std::function<bool(const NodeSet&)>& sufficient) {
  NodeSet* best = nullptr;
  bool best_sufficient = false;
  for (NodeSet& x : sets) {
    if (x.used) continue;
    const bool enough = sufficient(x);
    const double power = taskers.power[x.taskers[0]];
    bool better = best == nullptr || power > taskers.power[best->taskers[0]];
    if (!better && power == taskers.power[best->taskers[0]])
      better = (enough && !best_sufficient) || (enough && x.free < best->free) || (!enough && x.free > best->free);
    if (better) best = &x, best_sufficient = enough;
  }
  if (best != nullptr) best->used = true;
  return best;
}
}  // namespace

uint32_t fewest_taskers(const JobTable& jobs, uint32_t j) {
  if (jobs.rule[j] != AllocationRule::OnePerTasker) return 1;
  return jobs.pe_shape_of(j).min_slots > 0 ? jobs.pe_shape_of(j).min_slots : jobs.slots[j];
}

std::vector<uint32_t> slurm_pick(const TaskerTable& taskers, std::vector<uint32_t> fitting,
                                 const std::function<double(uint32_t)>& free, uint32_t want, uint32_t fewest) {
  std::vector<NodeSet> sets = node_sets(taskers, std::move(fitting), free);
  std::vector<uint32_t> chosen;
  uint32_t rem = want;
  while (rem > 0) {
    NodeSet* best = next_set(taskers, sets, [&](const NodeSet& x) { return x.taskers.size() + want >= rem + fewest; });
    if (best == nullptr && chosen.size() < fewest) return {};
    if (best == nullptr) break;
    if (rem == 1) {
      uint32_t pick = best->taskers[0];
      for (const uint32_t t : best->taskers)
        if (free(t) < free(pick)) pick = t;
      chosen.push_back(pick);
      rem = 0;
    } else {
      for (size_t i = 0; i < best->taskers.size() && rem > 0; ++i, --rem) chosen.push_back(best->taskers[i]);
    }
  }
  std::sort(chosen.begin(), chosen.end(),
            [&](uint32_t a, uint32_t b) { return taskers.input_index[a] < taskers.input_index[b]; });
  return chosen;
}

std::vector<std::pair<uint32_t, uint32_t>> slurm_tasks_on_nodes(const TaskerTable& taskers,
                                                                std::vector<uint32_t> fitting,
                                                                const std::function<double(uint32_t)>& cpus,
                                                                uint32_t nodes, uint32_t tasks, double per_task) {
  std::vector<NodeSet> sets = node_sets(taskers, std::move(fitting), cpus);
  double rem_nodes = nodes, rem_cpus = tasks * per_task, rem_max = rem_cpus, max_nodes = nodes;
  std::vector<std::pair<uint32_t, double>> took;
  while (max_nodes > 0 && !(rem_nodes <= 0 && rem_cpus <= 0)) {
    NodeSet* best = next_set(taskers, sets, [&](const NodeSet& x) {
      return x.free >= rem_cpus && static_cast<double>(x.taskers.size()) >= rem_nodes;
    });
    if (best == nullptr) return {};
    std::vector<uint32_t> list = best->taskers;
    if (rem_nodes <= 1) {  // the best fit alone, if one holds all that is left
      uint32_t fit = kNone;
      for (const uint32_t t : list)
        if (cpus(t) >= rem_cpus && (fit == kNone || cpus(t) < cpus(fit))) {
          fit = t;
          if (cpus(t) == rem_cpus) break;
        }
      if (fit != kNone) list = {fit};
    }
    for (const uint32_t t : list) {
      if (max_nodes == 0 || (rem_nodes <= 0 && rem_cpus <= 0)) break;
      if (max_nodes == 1 && cpus(t) < rem_cpus) continue;
      const double take = std::min(cpus(t), std::max(rem_max - std::max(rem_nodes - 1, 0.0), per_task));
      took.emplace_back(t, take);
      rem_cpus -= take;
      rem_max -= take;
      rem_nodes -= 1;
      max_nodes -= 1;
    }
  }
  if (!(rem_nodes <= 0 && rem_cpus <= 0)) return {};
  std::sort(took.begin(), took.end(),
            [&](const auto& a, const auto& b) { return taskers.input_index[a.first] < taskers.input_index[b.first]; });
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (const auto& [t, c] : took) out.emplace_back(t, 0);
  uint32_t left = tasks;
  for (bool any = true; left > 0 && any;) {
    any = false;
    for (size_t i = 0; i < out.size() && left > 0; ++i)
      if ((out[i].second + 1) * per_task <= took[i].second) ++out[i].second, --left, any = true;
  }
  if (left > 0) return {};
  return out;
}

std::vector<std::pair<uint32_t, uint32_t>> slurm_spread(const TaskerTable& taskers, std::vector<uint32_t> fitting,
                                                        const std::function<uint32_t(uint32_t)>& offer, uint32_t want) {
  std::vector<NodeSet> sets = node_sets(taskers, std::move(fitting), [&](uint32_t t) { return offer(t); });
  std::vector<std::pair<uint32_t, uint32_t>> chosen;
  uint32_t rem = want;
  while (rem > 0) {
    NodeSet* best = next_set(taskers, sets, [&](const NodeSet& x) { return x.free >= rem; });
    if (best == nullptr) return {};
    uint32_t holds_all = kNone;
    for (const uint32_t t : best->taskers)
      if (offer(t) >= rem && (holds_all == kNone || offer(t) < offer(holds_all))) holds_all = t;
    if (holds_all != kNone) {
      chosen.emplace_back(holds_all, rem);
      break;
    }
    for (size_t i = 0; i < best->taskers.size() && rem > 0; ++i) {
      const uint32_t k = std::min(offer(best->taskers[i]), rem);
      chosen.emplace_back(best->taskers[i], k);
      rem -= k;
    }
  }
  std::sort(chosen.begin(), chosen.end(),
            [&](const auto& a, const auto& b) { return taskers.input_index[a.first] < taskers.input_index[b.first]; });
  return chosen;
}

Result run(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs, const DispatchOptions& options) {
  Result res;
  const size_t nj = jobs.size(), nt = taskers.size();
  res.status.assign(nj, JobStatus::Pending);
  res.tasker.assign(nj, kNone);
  res.reason.assign(nj, PendingReason::None);
  auto& free_host = res.free_host;
  auto& free_global = res.free_global;
  for (uint32_t k : catalog.consumables()) {
    const Column& col = taskers.columns[k];
    res.free.push_back(queue_values(col, taskers.size()));
    free_host.push_back(col.by_host().nums());
    free_global.push_back(col.global().present ? col.global().num : std::numeric_limits<double>::quiet_NaN());
  }
  // Room in every pool above tasker t that defines consumable k.
  auto room = [&](size_t k, uint32_t t, double need) {
    const Column& col = taskers.columns[catalog.consumables()[k]];
    const uint32_t h = taskers.host_of[t];
    if (col.global().present && !(free_global[k] >= need)) return false;
    if (h != kNone && col.by_host().has(h) && !(free_host[k][h] >= need)) return false;
    if (col.has(t) && !(res.free[k][t] >= need)) return false;
    return true;
  };

  std::vector<uint32_t> order;
  for (uint32_t j = 0; j < nj; ++j) {
    if (jobs.rejected(j)) res.status[j] = JobStatus::Rejected;
    else order.push_back(j);
  }
  // Priority descending, submit ascending, input order.
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (jobs.priority[a] != jobs.priority[b]) return jobs.priority[a] > jobs.priority[b];
    if (jobs.submit[a] != jobs.submit[b]) return jobs.submit[a] < jobs.submit[b];
    return a < b;
  });
  res.allocations.assign(nj, {});
  // Blocking queues (Slurm's main pass), from their definition: a blocked queue's later jobs wait behind
  // it; a queue whose taskers are all held waits too, and blocks; a job that finds no room blocks its
  // queue and holds every tasker of it from later jobs.
  const BlockingQueues* queues = options.queues.get();
  std::vector<uint8_t> held(nt, 0), blocked(queues ? queues->names.size() : 0, 0);
  auto block = [&](uint32_t q) {
    blocked[q] = 1;
    for (uint32_t t = 0; t < nt; ++t)
      if (queues->taskers[q].contains(t)) held[t] = 1;
  };
  auto queue_of = [&](uint32_t j) { return queues ? queues->queue_of_job[j] : kNone; };
  // Job j found no tasker: none eligible, or every eligible one held (it waits, blocking nothing), or
  // some eligible tasker not held has no room (it blocks its queue).
  // Some tasker not held that job j's request alone admits is busy: a pool of the busy consumable there
  // has nothing free (Slurm: nodes_busy, an --exclusive job's node).
  auto busy = [&](uint32_t j, const std::function<bool(uint32_t)>& inside) {
    if (queues == nullptr || queues->busy_consumable == kNone) return false;
    const uint32_t k = queues->busy_consumable;
    const Column& col = taskers.columns[catalog.consumables()[k]];
    const std::vector<double> none(catalog.consumables().size(), 0.0);
    const std::vector<int> kinds(catalog.consumables().size(), 0);
    for (uint32_t t = 0; t < nt; ++t) {
      if (held[t] || !inside(t) || !eligible_for(catalog, taskers, jobs.requests[jobs.request[j]], none, t, kinds))
        continue;
      const uint32_t h = taskers.host_of[t];
      const bool defined = col.has(t) || (h != kNone && col.by_host().has(h)) || col.global().present;
      double a = std::numeric_limits<double>::infinity();
      if (col.has(t)) a = res.free[k][t];
      if (h != kNone && col.by_host().has(h)) a = std::min(a, free_host[k][h]);
      if (col.global().present) a = std::min(a, free_global[k]);
      if (defined && a <= 0) return true;
    }
    return false;
  };
  // ReqNodeNotAvail: fewer eligible taskers unheld than it needs (it could not run on them even idle)
  // (`inside`: the taskers it was tried on, a queue's for a job of several)
  auto fail = [&](uint32_t j, bool any_eligible, uint32_t unheld, const std::function<bool(uint32_t)>& inside) {
    const PendingReason r = !any_eligible ? PendingReason::NoEligibleTasker
                            : queues != nullptr && unheld < fewest_taskers(jobs, j) && !busy(j, inside)
                                ? PendingReason::EligibleHeld
                                : PendingReason::NoFreeCapacity;
    res.reason[j] = r;
    // a job that names its taskers holds them, whatever kept it from running, and blocks no queue
    const bool own = queues != nullptr && j < queues->holds_own.size() && queues->holds_own[j] != 0;
    if (own) {
      for (uint32_t t = 0; t < nt; ++t)
        if (inside(t) && eligible(catalog, taskers, jobs, t, j)) held[t] = 1;
    } else if (r == PendingReason::NoFreeCapacity && queue_of(j) != kNone && !blocked[queue_of(j)]) {
      block(queue_of(j));
    }
  };
  // What tasker t has free of consumable k: the least of the pools above it that define k (0: none).
  auto available = [&](size_t k, uint32_t t) {
    const Column& col = taskers.columns[catalog.consumables()[k]];
    double a = std::numeric_limits<double>::infinity();
    bool any = false;
    if (col.has(t)) a = res.free[k][t], any = true;
    const uint32_t h = taskers.host_of[t];
    if (h != kNone && col.by_host().has(h)) a = std::min(a, free_host[k][h]), any = true;
    if (col.global().present) a = std::min(a, free_global[k]), any = true;
    return any ? a : 0.0;
  };
  auto offer = [&](uint32_t j, uint32_t t) {  // Slurm's count of what tasker t offers job j
    const double limit = options.fit_limit == SIZE_MAX ? kNoLimit : available(options.fit_limit, t);
    return slurm_offer(jobs, j, available(options.fit_consumable, t), limit);
  };
  // Job j tried on the taskers `inside` admits (all, or a queue's for a job of several): placed, or
  // pending for why (fail()).
  auto attempt = [&](uint32_t j, const std::function<bool(uint32_t)>& inside) {
    const auto need = charge(catalog, jobs, j);
    const auto kinds = charge_kinds(catalog, jobs, j);
    if (jobs.rule[j] != AllocationRule::PeSlots) {
      // Every eligible tasker in preference order, filled in turn on copies of the pools.
      const auto once = master_charge(catalog, jobs, j);
      const auto soft = soft_terms(jobs.requests[jobs.soft[j]]);
      std::vector<std::pair<size_t, uint32_t>> cand;  // (violations, tasker)
      const bool master = master_fits_somewhere(catalog, taskers, jobs, j, need, kinds) &&
                          enough_taskers(catalog, taskers, jobs, j, need, kinds);
      bool any_eligible = false;
      uint32_t unheld = 0;
      // Slurm's -N K under ConsecutiveBestFit takes all K from one soft level (one choice of a matching
      // OR): it can never run when no level has K eligible, and is held when no level has K unheld
      const bool by_level = jobs.rule[j] == AllocationRule::OnePerTasker &&
                            options.allocation == AllocationPolicy::ConsecutiveBestFit && jobs.slots[j] > 1;
      std::map<size_t, std::pair<uint32_t, uint32_t>> per_level;  // violations -> (eligible, unheld)
      uint32_t eligible_here = 0;  // (a job of K slots needs K eligible where it is tried)
      for (uint32_t t = 0; t < nt && master; ++t) {
        if (!inside(t) || !eligible_for(catalog, taskers, jobs.requests[jobs.request[j]], need, t, kinds)) continue;
        any_eligible = true;
        ++eligible_here;
        size_t v = 0;
        if (jobs.soft[j] != 0)
          for (const Request* term : soft) v += satisfies(taskers, t, *term) ? 0 : 1;
        ++per_level[v].first;
        if (held[t]) continue;
        ++unheld;
        ++per_level[v].second;
        cand.emplace_back(v, t);
      }
      if (jobs.rule[j] == AllocationRule::OnePerTasker && eligible_here < fewest_taskers(jobs, j)) any_eligible = false;
      if (by_level) {
        uint32_t most = 0, most_unheld = 0;
        for (const auto& [v, n] : per_level)
          most = std::max(most, n.first), most_unheld = std::max(most_unheld, n.second);
        any_eligible = any_eligible && most >= fewest_taskers(jobs, j);
        unheld = most_unheld;
      }
      std::sort(cand.begin(), cand.end(), [&](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first < b.first;
        if (taskers.power[a.second] != taskers.power[b.second])
          return taskers.power[a.second] > taskers.power[b.second];
        return taskers.input_index[a.second] < taskers.input_index[b.second];
      });
      std::vector<uint32_t> preference;
      for (const auto& [v, t] : cand) preference.push_back(t);
      Pools pools{res.free, free_host, free_global};
      std::vector<std::pair<uint32_t, uint32_t>> placed;
      // the soft levels of the candidates, fewest violations first, and a level's taskers with room for a slot
      auto levels_of = [&] {
        std::vector<size_t> levels;
        for (const auto& [v, t] : cand) levels.push_back(v);
        levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
        return levels;
      };
      auto with_room_at = [&](size_t level) {
        std::vector<uint32_t> list;
        for (const auto& [v, t] : cand) {
          bool fits = v == level;
          for (size_t k = 0; k < need.size() && fits; ++k)
            if (need[k] > 0 && !room(k, t, need[k])) fits = false;
          if (fits) list.push_back(t);
        }
        return list;
      };
      if (jobs.rule[j] == AllocationRule::OnePerTasker && jobs.fit_unit_of(j).total > 0) {
        // Slurm's -n N -N K with N > K, whatever the policy: for each soft level in turn, the taskers with room
        // for one task, each offering its free CPUs (no more than its free memory pays for at the fit unit's
        // limit, then whole tasks' CPUs, nor its cap of tasks); slurm_tasks_on_nodes; each its unit, the first
        // the master, and the fit consumable (and limit) of the tasks beyond the first
        const JobTable::FitUnit u = jobs.fit_unit_of(j);
        auto cpus = [&](uint32_t t) {
          double a = available(options.fit_consumable, t);
          if (!(a >= 0)) a = 0;
          if (u.limit > 0 && options.fit_limit != SIZE_MAX) {
            const double m = available(options.fit_limit, t);
            a = std::min(a, m >= 0 ? std::floor(m / (u.limit / u.fit)) : 0.0);
            a = std::floor(a);  // Slurm's `cpus -= cpus % cpus_per_task`
            if (std::ceil(u.fit) > 1) a -= std::fmod(a, std::ceil(u.fit));
          }
          if (u.tasks > 0) a = std::min(a, u.tasks * u.fit);
          return std::max(std::ceil(u.fit), std::floor(std::min(a, 1e15)));
        };
        for (const size_t level : levels_of()) {
          const std::vector<uint32_t> list = with_room_at(level);
          const auto spread = slurm_tasks_on_nodes(taskers, list, cpus, jobs.slots[j], static_cast<uint32_t>(u.total),
                                                   std::ceil(u.fit));
          if (spread.empty()) continue;
          Taking take(catalog, taskers, jobs, j, pools);  // on a copy of the pools
          std::vector<std::pair<uint32_t, uint32_t>> got;
          for (size_t i = 0; i < spread.size(); ++i) {
            const uint32_t t = spread[i].first, n = spread[i].second;
            if (take.fit(t, i == 0, 1) == 0) {
              got.clear();
              break;
            }
            take.put(t, 1, i == 0);
            bool short_of = false;
            u.each_extra_task_charge(n, options.fit_consumable, options.fit_limit, [&](size_t k, double amount) {
              const Column& col = taskers.columns[catalog.consumables()[k]];
              const uint32_t h = taskers.host_of[t];
              double a = std::numeric_limits<double>::infinity();
              if (col.has(t)) a = take.p.queue[k][t];
              if (h != kNone && col.by_host().has(h)) a = std::min(a, take.p.host[k][h]);
              if (col.global().present) a = std::min(a, take.p.global[k]);
              if (!(a >= amount)) short_of = true;
              if (col.has(t)) take.p.queue[k][t] -= amount;
              if (h != kNone && col.by_host().has(h)) take.p.host[k][h] -= amount;
              if (col.global().present) take.p.global[k] -= amount;
            });
            if (short_of) {
              got.clear();
              break;
            }
            got.emplace_back(t, n);
          }
          if (got.empty()) continue;
          pools = std::move(take.p);
          placed = std::move(got);
          break;
        }
      } else if (jobs.rule[j] == AllocationRule::OnePerTasker &&
                 options.allocation == AllocationPolicy::ConsecutiveBestFit) {
        // Slurm's _eval_nodes for a job of K nodes, from its text: for each soft level in turn, the
        // taskers with room for one slot in node (input) order; sets of consecutive ones of one power;
        // repeatedly the best set (greatest power; among equals the first sufficient, a sufficient one
        // with fewer free, or an insufficient one with more free), its first taskers (or its best fit
        // one when one is left), until K; the master is the first in node order.
        for (const size_t level : levels_of()) {
          const std::vector<uint32_t> list = with_room_at(level);
          const std::vector<uint32_t> chosen = slurm_pick(
              taskers, list, [&](uint32_t t) { return offer(j, t); }, jobs.slots[j], fewest_taskers(jobs, j));
          if (chosen.empty()) continue;
          placed = place_each_once(catalog, taskers, jobs, j, chosen, pools);  // or this level fails
          if (!placed.empty()) break;
        }
      } else if (jobs.rule[j] == AllocationRule::FillUp && options.allocation == AllocationPolicy::ConsecutiveBestFit &&
                 jobs.fit_unit_of(j).fit > 0) {
        // Slurm's -n N without -N: for each soft level in turn, the tasks spread over the taskers with room
        // for one (slurm_spread), each taking its count, the first in node order the master
        std::vector<size_t> levels;
        for (const auto& [v, t] : cand) levels.push_back(v);
        levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
        auto tasks_at = [&](uint32_t t) {  // whole tasks t offers: the fit unit's count and every charge's
          double n = offer(j, t);
          for (size_t k = 0; k < need.size(); ++k)
            if (need[k] > 0) n = std::min(n, std::floor(available(k, t) / need[k]));
          return n >= 0 ? static_cast<uint32_t>(n) : 0u;
        };
        for (const size_t level : levels) {
          std::vector<uint32_t> list;
          for (const auto& [v, t] : cand)
            if (v == level && tasks_at(t) > 0) list.push_back(t);
          const auto spread = slurm_spread(taskers, list, tasks_at, jobs.slots[j]);
          if (spread.empty()) continue;
          std::vector<uint32_t> spread_order, counts;
          for (const auto& [t, k] : spread) spread_order.push_back(t), counts.push_back(k);
          placed = place_fill_up(catalog, taskers, jobs, j, spread_order, pools, &counts);  // or this level fails
          if (!placed.empty()) break;
        }
      } else if (by_host(jobs.rule[j])) {
        placed = place_by_host(catalog, taskers, jobs, j, preference, pools);
      } else {
        placed = place_fill_up(catalog, taskers, jobs, j, preference, pools);
      }
      if (!placed.empty()) {
        res.free = std::move(pools.queue);
        free_host = std::move(pools.host);
        free_global = std::move(pools.global);
        res.status[j] = JobStatus::Assigned;
        res.tasker[j] = placed.front().first;
        res.allocations[j] = placed;
      } else {
        fail(j, any_eligible, unheld, inside);
      }
      return;
    }
    bool any_eligible = false;
    uint32_t unheld = 0;
    uint32_t best = kNone;
    size_t best_violations = 0;
    const auto soft = soft_terms(jobs.requests[jobs.soft[j]]);
    auto violations = [&](uint32_t t) {
      if (jobs.soft[j] == 0) return size_t{0};
      size_t v = 0;
      for (const Request* term : soft) v += satisfies(taskers, t, *term) ? 0 : 1;
      return v;
    };
    std::vector<uint32_t> fitting;  // ConsecutiveBestFit's: every tasker with room
    for (uint32_t t = 0; t < nt; ++t) {
      if (!inside(t) || !eligible_for(catalog, taskers, jobs.requests[jobs.request[j]], need, t, kinds)) continue;
      any_eligible = true;
      if (held[t]) continue;
      ++unheld;
      bool fits = true;
      for (size_t k = 0; k < need.size(); ++k)
        if (need[k] > 0 && !room(k, t, need[k])) fits = false;
      if (!fits) continue;
      fitting.push_back(t);
      // fewest soft violations, then greatest effective power, then lowest input index
      const size_t v = violations(t);
      if (best == kNone || v < best_violations ||
          (v == best_violations &&
           (taskers.power[t] > taskers.power[best] ||
            (taskers.power[t] == taskers.power[best] && taskers.input_index[t] < taskers.input_index[best])))) {
        best = t;
        best_violations = v;
      }
    }
    if (best == kNone) {
      fail(j, any_eligible, unheld, inside);
      return;
    }
    if (options.allocation == AllocationPolicy::ConsecutiveBestFit) {  // Slurm's, over the fewest violations
      std::vector<uint32_t> level;
      for (const uint32_t t : fitting)
        if (violations(t) == best_violations) level.push_back(t);
      best = slurm_pick(
          taskers, level, [&](uint32_t t) { return offer(j, t); }, 1, 1)[0];
    }
    for (size_t k = 0; k < need.size(); ++k) {
      if (need[k] <= 0) continue;
      const Column& col = taskers.columns[catalog.consumables()[k]];
      const uint32_t h = taskers.host_of[best];
      if (col.global().present) free_global[k] -= need[k];
      if (h != kNone && col.by_host().has(h)) free_host[k][h] -= need[k];
      if (kinds[k] == 1 && !defined_anywhere(taskers, col, best)) continue;  // no pool to charge
      if (col.has(best) || !col.multi_level()) res.free[k][best] -= need[k];
    }
    res.status[j] = JobStatus::Assigned;
    res.tasker[j] = best;
    res.allocations[j] = {{best, jobs.slots[j]}};
  };
  // SchedulerParameters (DispatchOptions::max_starts, queue_depth): the pass stops after that many starts; a
  // queue's records past that many are not tried; either way the job waits behind higher-priority ones
  uint64_t starts = 0;
  std::vector<uint64_t> records(queues ? queues->names.size() : 0, 0);
  auto past_depth = [&](uint32_t q) {
    return queues && options.queue_depth > 0 && records[q]++ >= options.queue_depth;
  };
  for (uint32_t j : order) {
    if (queues != nullptr && options.max_starts > 0 && starts >= options.max_starts) {
      res.reason[j] = PendingReason::BehindHigherPriority;
      continue;
    }
    // a job of several queues: in each in turn (the order given) not blocked, on that queue's taskers;
    // no room there blocks it; a blocked queue after no room (or none tried) says behind, else the
    // reason stays
    if (queues != nullptr && !queues->several_first.empty() &&
        queues->several_first[j + 1] > queues->several_first[j]) {
      PendingReason r = PendingReason::None;
      for (uint32_t i = queues->several_first[j]; i < queues->several_first[j + 1]; ++i) {
        const uint32_t q = queues->several[i];
        if (past_depth(q)) {
          if (r == PendingReason::None) r = PendingReason::BehindHigherPriority;
          continue;
        }
        if (blocked[q]) {
          if (r == PendingReason::None || r == PendingReason::NoFreeCapacity || r == PendingReason::TaskersHeld)
            r = PendingReason::BehindHigherPriority;
          continue;
        }
        uint32_t up = 0;
        for (uint32_t t = 0; t < nt; ++t) up += queues->taskers[q].contains(t) && !held[t] ? 1 : 0;
        if (up < fewest_taskers(jobs, j)) {
          r = PendingReason::TaskersHeld;
          block(q);
          continue;
        }
        attempt(j, [&](uint32_t t) { return queues->taskers[q].contains(t); });
        if (res.status[j] == JobStatus::Assigned) break;
        r = res.reason[j];
        const bool own = j < queues->holds_own.size() && queues->holds_own[j] != 0;
        if (r == PendingReason::NoFreeCapacity && !own) block(q);
      }
      res.reason[j] = res.status[j] == JobStatus::Assigned ? PendingReason::None : r;  // (an earlier queue's)
      starts += res.status[j] == JobStatus::Assigned;
      continue;
    }
    if (const uint32_t q = queue_of(j); q != kNone) {
      if (past_depth(q)) {
        res.reason[j] = PendingReason::BehindHigherPriority;
        continue;
      }
      if (blocked[q]) {
        res.reason[j] = PendingReason::BehindHigherPriority;
        continue;
      }
      uint32_t up = 0;  // Slurm: a partition with fewer available nodes than the job's min_nodes
      for (uint32_t t = 0; t < nt; ++t) up += queues->taskers[q].contains(t) && !held[t] ? 1 : 0;
      if (up < fewest_taskers(jobs, j)) {
        res.reason[j] = PendingReason::TaskersHeld;
        block(q);
        continue;
      }
    }
    attempt(j, [](uint32_t) { return true; });
    starts += res.status[j] == JobStatus::Assigned;
  }
  return res;
}

}  // namespace colmatch::naive
