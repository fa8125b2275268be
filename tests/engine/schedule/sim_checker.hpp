// An independent checker of simulated schedules: shares no code with engine/simulation (it uses the
// naive matcher's row-by-row eligibility and charges). Returns the first violation found, or "".
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "engine/schedule/simulation.hpp"
#include "tests/reference/naive_matcher.hpp"

namespace colmatch::simcheck {

// With `farm`: no job starts on a tasker that is down, and configured amounts follow the Configure
// events (a pool may go below 0 when its amount shrinks under running jobs, but no start may charge a
// pool that ends the instant below 0).
inline std::string check_schedule(const Catalog& cat, const TaskerTable& tk, const JobTable& jobs, const SimConfig& pol,
                                  const SimResult& r, const FarmEvents& farm = {}) {
  const size_t n = jobs.size();
  struct Ev {
    double time;
    int kind;  // 0 end, 1 farm event (j: its index), 2 start
    uint32_t j;
  };
  std::vector<Ev> evs;
  for (uint32_t j = 0; j < n; ++j) {
    const std::string who = "job " + std::string(jobs.id[j]);
    if (std::isnan(r.start[j])) continue;
    if (jobs.rejected(j)) return who + ": rejected but started";
    if (r.start[j] < jobs.submit[j]) return who + ": starts before it is submitted";
    if (jobs.hold_until[j] > r.start[j]) return who + ": starts while held";
    double d = jobs.runtime[j] > 0 ? jobs.runtime[j] : 0;
    if (jobs.walltime[j] >= 0) d = std::min(d, jobs.walltime[j]);
    if (r.end[j] != r.start[j] + d) return who + ": end is not start + min(runtime, walltime)";
    for (uint32_t dep : jobs.depends[j])
      if (std::isnan(r.end[dep]) || r.end[dep] > r.start[j]) return who + ": starts before a dependency ended";
    uint64_t slots = 0;
    for (uint32_t a = 0; a < r.alloc_count[j]; ++a) {
      const Allocation& x = r.allocations[r.alloc_first[j] + a];
      slots += x.slots;
      if (!naive::eligible(cat, tk, jobs, x.tasker, j)) return who + ": runs on a tasker it is not eligible for";
    }
    if (slots != jobs.slots[j]) return who + ": its allocations do not add up to its slots";
    if (jobs.rule[j] == AllocationRule::PeSlots && r.alloc_count[j] != 1) return who + ": $pe_slots on several taskers";
    evs.push_back({r.start[j], 2, j});
    evs.push_back({r.end[j], 0, j});
  }
  for (uint32_t i = 0; i < farm.events.size(); ++i) evs.push_back({farm.events[i].time, 1, i});
  std::sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.kind != b.kind) return a.kind < b.kind;  // ends, then the farm's changes, then starts
    return a.kind == 1 && a.j < b.j;               // farm events in their order
  });
  std::vector<uint8_t> down = farm.down_at_start;
  down.resize(tk.size(), 0);
  // Pools on every level, charged and released independently of the engine.
  const auto& cons = cat.consumables();
  std::vector<std::vector<double>> q(cons.size()), h(cons.size());
  std::vector<double> g(cons.size());
  for (size_t k = 0; k < cons.size(); ++k) {
    const Column& c = tk.columns[cons[k]];
    q[k].assign(tk.size(), 0);
    for (uint32_t t = 0; t < tk.size(); ++t) q[k][t] = c.has(t) ? c.queue().num(t) : 0;
    h[k].assign(tk.host_names.size(), 0);
    for (uint32_t x = 0; x < tk.host_names.size(); ++x) h[k][x] = c.by_host().has(x) ? c.by_host().num(x) : 0;
    g[k] = c.global().present ? c.global().num : 0;
  }
  std::map<std::pair<size_t, uint32_t>, double> configured;  // (consumable, tasker) -> amount, once changed
  // Moab's utilized availability: per queue-only consumable and tasker, what is used there (the load
  // plus each running charge times its job's utilization); the occupancy checked is that (utilized) or
  // the larger of it and the charges (combined), instead of the charges alone.
  std::vector<std::vector<double>> used(cons.size());
  auto tracked = [&](size_t k) {
    return pol.availability != ResourceAvailability::Dedicated && !tk.columns[cons[k]].multi_level();
  };
  for (size_t k = 0; k < cons.size(); ++k) {
    used[k].assign(tk.size(), 0);
    if (k < farm.load.size() && !farm.load[k].empty()) used[k] = farm.load[k];
  }
  std::map<std::pair<int, std::string>, std::pair<uint64_t, double>> usage;  // (kind, name) -> jobs, slots
  auto creds = [&](uint32_t j) {
    return std::vector<std::pair<int, std::string>>{{0, jobs.owners.value(jobs.owner[j])},
                                                    {1, jobs.groups.value(jobs.group[j])},
                                                    {2, jobs.queues.value(jobs.queue[j])},
                                                    {3, jobs.accounts.value(jobs.account[j])},
                                                    {4, jobs.qos_names.value(jobs.qos[j])}};
  };
  // FBSNG process-type quotas: (type name) -> sections, slots, amount per consumable
  struct TypeUse {
    uint64_t sections = 0;
    double slots = 0;
    std::vector<double> amount;
  };
  std::map<std::string, TypeUse> type_use;
  auto type_of = [&](uint32_t j) {
    switch (pol.process_type) {
      case CredentialKind::User: return jobs.owners.value(jobs.owner[j]);
      case CredentialKind::Group: return jobs.groups.value(jobs.group[j]);
      case CredentialKind::Class: return jobs.queues.value(jobs.queue[j]);
      case CredentialKind::Account: return jobs.accounts.value(jobs.account[j]);
      default: return jobs.qos_names.value(jobs.qos[j]);
    }
  };
  std::vector<std::tuple<int, size_t, uint32_t>> charged;  // pools charged this instant: (level, k, index)
  for (size_t e = 0; e < evs.size(); ++e) {
    const Ev& ev = evs[e];
    if (ev.kind == 1) {
      const TaskerEvent& fe = farm.events[ev.j];
      if (fe.kind == TaskerEvent::Kind::Configure) {
        const Column& c = tk.columns[cons[fe.consumable]];
        const double was = configured.count({fe.consumable, fe.tasker}) ? configured[{fe.consumable, fe.tasker}]
                                                                        : c.queue().num(fe.tasker);
        q[fe.consumable][fe.tasker] += fe.amount - was;
        configured[{fe.consumable, fe.tasker}] = fe.amount;
      } else {
        down[fe.tasker] = fe.kind == TaskerEvent::Kind::Down ? 1 : 0;
      }
    } else {
      const double sign = ev.kind == 2 ? -1.0 : 1.0;
      const auto need = naive::charge(cat, jobs, ev.j), once = naive::master_charge(cat, jobs, ev.j);
      for (uint32_t a = 0; a < r.alloc_count[ev.j]; ++a) {
        const Allocation& x = r.allocations[r.alloc_first[ev.j] + a];
        for (size_t k = 0; k < cons.size(); ++k) {
          const double amount =
              jobs.rule[ev.j] == AllocationRule::FillUp ? x.slots * need[k] + (a == 0 ? once[k] : 0.0) : need[k];
          if (!(amount > 0)) continue;
          const Column& c = tk.columns[cons[k]];
          const bool start = ev.kind == 2;
          if (c.has(x.tasker)) {
            q[k][x.tasker] += sign * amount;
            const double f = jobs.utilization.at(k, ev.j);
            used[k][x.tasker] -= sign * (std::isnan(f) ? 1.0 : f) * amount;
            if (start) charged.emplace_back(0, k, x.tasker);
          }
          const uint32_t host = tk.host_of[x.tasker];
          if (host != kNone && c.by_host().has(host)) {
            h[k][host] += sign * amount;
            if (start) charged.emplace_back(1, k, host);
          }
          if (c.global().present) {
            g[k] += sign * amount;
            if (start) charged.emplace_back(2, k, 0);
          }
        }
        if (ev.kind == 2 && down[x.tasker])
          return fmt::format("at {}: job {} starts on tasker {}, which is down", ev.time, jobs.id[ev.j],
                             tk.names[x.tasker]);
      }
      TypeUse& tu = type_use[type_of(ev.j)];
      tu.amount.resize(cons.size(), 0.0);
      tu.sections += ev.kind == 2 ? 1 : -1;
      tu.slots -= sign * jobs.slots[ev.j];
      for (uint32_t a = 0; a < r.alloc_count[ev.j]; ++a) {
        const Allocation& x = r.allocations[r.alloc_first[ev.j] + a];
        for (size_t k = 0; k < cons.size(); ++k) {
          const double amount =
              jobs.rule[ev.j] == AllocationRule::FillUp ? x.slots * need[k] + (a == 0 ? once[k] : 0.0) : need[k];
          if (amount > 0) tu.amount[k] -= sign * amount;
        }
      }
      for (const auto& key : creds(ev.j)) {
        usage[key].first += ev.kind == 2 ? 1 : -1;
        usage[key].second -= sign * jobs.slots[ev.j];
      }
    }
    const bool instant_done = e + 1 == evs.size() || evs[e + 1].time != ev.time;
    if (!instant_done) continue;
    const double eps = 1e-9;
    for (const auto& [level, k, x] : charged) {
      if (level == 0 && tracked(k)) {
        const double conf = configured.count({k, x}) ? configured[{k, x}] : tk.columns[cons[k]].queue().num(x);
        const double dedicated = conf - q[k][x];
        const double occupied =
            pol.availability == ResourceAvailability::Utilized ? used[k][x] : std::max(dedicated, used[k][x]);
        if (conf - occupied < -eps)
          return fmt::format("at {}: tasker {} over-committed on {} (utilized)", ev.time, tk.names[x], cons[k]);
        continue;
      }
      if (level == 0 && q[k][x] < -eps)
        return fmt::format("at {}: tasker {} over-committed on {}", ev.time, tk.names[x], cons[k]);
      if (level == 1 && h[k][x] < -eps) return fmt::format("at {}: host {} over-committed", ev.time, tk.host_names[x]);
      if (level == 2 && g[k] < -eps) return fmt::format("at {}: global pool over-committed", ev.time);
    }
    charged.clear();
    if (pol.scheduler == SchedulerKind::Fbsng)
      for (const FbsngProcessType& pt : pol.fbsng.process_types) {
        if (!type_use.count(pt.name)) continue;
        const TypeUse& u = type_use[pt.name];
        if (u.sections > pt.max_sections || u.slots > pt.max_slots + eps)
          return fmt::format("at {}: process type {} over its quota of sections or slots", ev.time, pt.name);
        for (const auto& [name, max] : pt.max_amount)
          for (size_t k = 0; k < cons.size(); ++k)
            if (cat.at(cons[k]).name == name && u.amount[k] > max + eps)
              return fmt::format("at {}: process type {} over its quota of {}", ev.time, pt.name, name);
      }
    for (const Throttle& th : pol.throttles)
      for (const auto& [key, use] : usage) {
        if (key.first != static_cast<int>(th.kind)) continue;
        if (!th.name.empty() && th.name != key.second) continue;
        bool named_elsewhere = false;  // a default limit gives way to a named one
        if (th.name.empty())
          for (const Throttle& o : pol.throttles)
            named_elsewhere = named_elsewhere || (o.kind == th.kind && o.name == key.second);
        if (named_elsewhere) continue;
        if (use.first > th.max_jobs || use.second > th.max_slots)
          return fmt::format("at {}: credential {} over its throttle", ev.time, key.second);
      }
  }
  return {};
}

}  // namespace colmatch::simcheck
