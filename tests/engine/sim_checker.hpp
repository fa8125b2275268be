// An independent checker of simulated schedules: shares no code with engine/simulation (it uses the
// naive matcher's row-by-row eligibility and charges). Returns the first violation found, or "".
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/simulation.hpp"
#include "tests/reference/naive_matcher.hpp"

namespace colmatch::simcheck {

inline std::string check_schedule(const Catalog& cat, const TaskerTable& tk, const JobTable& jobs, const SimPolicy& pol,
                                  const SimResult& r) {
  const size_t n = jobs.size();
  struct Ev {
    double time;
    int kind;  // 0 end, 1 start
    uint32_t j;
  };
  std::vector<Ev> evs;
  for (uint32_t j = 0; j < n; ++j) {
    const std::string who = "job " + jobs.id[j];
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
    evs.push_back({r.start[j], 1, j});
    evs.push_back({r.end[j], 0, j});
  }
  std::sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) {
    return a.time != b.time ? a.time < b.time : a.kind < b.kind;  // ends before starts at one instant
  });
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
  std::map<std::pair<int, std::string>, std::pair<uint64_t, double>> usage;  // (kind, name) -> jobs, slots
  auto creds = [&](uint32_t j) {
    return std::vector<std::pair<int, std::string>>{{0, jobs.owners.value(jobs.owner[j])},
                                                    {1, jobs.groups.value(jobs.group[j])},
                                                    {2, jobs.queues.value(jobs.queue[j])},
                                                    {3, jobs.accounts.value(jobs.account[j])}};
  };
  for (size_t e = 0; e < evs.size(); ++e) {
    const Ev& ev = evs[e];
    const double sign = ev.kind == 1 ? -1.0 : 1.0;
    const auto need = naive::charge(cat, jobs, ev.j), once = naive::master_charge(cat, jobs, ev.j);
    for (uint32_t a = 0; a < r.alloc_count[ev.j]; ++a) {
      const Allocation& x = r.allocations[r.alloc_first[ev.j] + a];
      for (size_t k = 0; k < cons.size(); ++k) {
        const double amount =
            jobs.rule[ev.j] == AllocationRule::FillUp ? x.slots * need[k] + (a == 0 ? once[k] : 0.0) : need[k];
        if (!(amount > 0)) continue;
        const Column& c = tk.columns[cons[k]];
        if (c.has(x.tasker)) q[k][x.tasker] += sign * amount;
        const uint32_t host = tk.host_of[x.tasker];
        if (host != kNone && c.by_host().has(host)) h[k][host] += sign * amount;
        if (c.global().present) g[k] += sign * amount;
      }
    }
    for (const auto& key : creds(ev.j)) {
      usage[key].first += ev.kind == 1 ? 1 : -1;
      usage[key].second -= sign * jobs.slots[ev.j];
    }
    const bool instant_done = e + 1 == evs.size() || evs[e + 1].time != ev.time;
    if (!instant_done) continue;
    for (size_t k = 0; k < cons.size(); ++k) {
      const double eps = 1e-9;
      for (uint32_t t = 0; t < tk.size(); ++t)
        if (q[k][t] < -eps) return fmt::format("at {}: tasker {} over-committed on {}", ev.time, tk.names[t], cons[k]);
      for (uint32_t x = 0; x < h[k].size(); ++x)
        if (h[k][x] < -eps) return fmt::format("at {}: host {} over-committed", ev.time, tk.host_names[x]);
      if (g[k] < -eps) return fmt::format("at {}: global pool over-committed", ev.time);
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
