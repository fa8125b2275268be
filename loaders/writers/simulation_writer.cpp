#include "loaders/writers/simulation_writer.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "loaders/writers/text.hpp"

namespace colmatch::writers {
namespace {

std::string num(double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string(); }

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(std::ceil(q * static_cast<double>(v.size()))) - (q > 0));
  return v[i];
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

struct Share {
  uint64_t starts = 0;
  double slot_seconds = 0;
};

std::string shares_json(const std::map<std::string, Share>& m, double total) {
  std::string out = "{";
  bool first = true;
  for (const auto& [name, s] : m) {
    out += fmt::format("{}{}: {{\"starts\": {}, \"slot_share\": {:.6f}}}", first ? "" : ", ", json_string(name),
                       s.starts, total > 0 ? s.slot_seconds / total : 0.0);
    first = false;
  }
  return out + "}";
}

// Amount-seconds the farm offers over [from, from + span]: each tasker's own (queue-level) amount of
// consumable k, or one a tasker when k < 0, while it is up, the farm's events (Dataset::farm) applied
// as they come.
double offered_seconds(const loaders::Dataset& ds, int k, double from, double span) {
  const size_t n = ds.taskers.size();
  std::vector<double> value(n, 1.0);
  if (k >= 0) {
    const Column& col = ds.taskers.columns[ds.catalog.consumables()[static_cast<size_t>(k)]];
    for (uint32_t t = 0; t < n; ++t) value[t] = col.has(t) ? col.queue().num(t) : 0;
  }
  std::vector<uint8_t> up(n, 1);
  double rate = 0;
  for (uint32_t t = 0; t < n; ++t) {
    if (t < ds.farm.down_at_start.size() && ds.farm.down_at_start[t]) up[t] = 0;
    if (up[t]) rate += value[t];
  }
  if (ds.farm.events.empty()) return rate * span;
  const double to = from + span;
  double total = 0, now = from;
  for (const TaskerEvent& e : ds.farm.events) {
    if (e.time >= to) break;
    if (e.time > now) {
      total += rate * (e.time - now);
      now = e.time;
    }
    const uint32_t t = e.tasker;
    switch (e.kind) {
      case TaskerEvent::Kind::Up:
        if (!up[t]) rate += value[t];
        up[t] = 1;
        break;
      case TaskerEvent::Kind::Down:
        if (up[t]) rate -= value[t];
        up[t] = 0;
        break;
      case TaskerEvent::Kind::Configure:
        if (static_cast<int>(e.consumable) != k) break;
        if (up[t]) rate += e.amount - value[t];
        value[t] = e.amount;
        break;
    }
  }
  if (to > now) total += rate * (to - now);
  return total;
}

}  // namespace

std::string simulation_metrics_json(const loaders::Dataset& ds, const SimResult& r) {
  const JobTable& jobs = ds.jobs;
  std::vector<double> waits, slowdowns;
  double first_submit = std::numeric_limits<double>::infinity(), last_end = -first_submit, busy = 0;
  std::map<std::string, Share> by_queue, by_user, by_group;
  uint64_t held = 0, throttled = 0, backfilled = 0;
  for (uint32_t j = 0; j < jobs.size(); ++j) {
    if (jobs.rejected(j)) continue;
    first_submit = std::min(first_submit, jobs.submit[j]);
    held += r.was_held[j];
    throttled += r.was_throttled[j];
    backfilled += r.backfilled[j];
    if (std::isnan(r.start[j])) continue;
    const double wait = r.start[j] - jobs.submit[j], run = r.end[j] - r.start[j];
    waits.push_back(wait);
    slowdowns.push_back(std::max(1.0, (wait + run) / std::max(run, 10.0)));
    last_end = std::max(last_end, r.end[j]);
    const double ss = run * jobs.slots[j];
    busy += ss;
    for (auto* m : {&by_queue, &by_user, &by_group}) {
      const std::string& key = m == &by_queue  ? jobs.queues.value(jobs.queue[j])
                               : m == &by_user ? jobs.owners.value(jobs.owner[j])
                                               : jobs.groups.value(jobs.group[j]);
      ++(*m)[key].starts;
      (*m)[key].slot_seconds += ss;
    }
  }
  const double makespan = waits.empty() ? 0 : last_end - first_submit;
  // slots: the consumable "slots" if the farm has one, else one a tasker
  const auto slots_attr = ds.catalog.find("slots");
  const int slots_k = slots_attr ? ds.catalog.consumable_slot(*slots_attr) : -1;
  const double offered = offered_seconds(ds, slots_k, first_submit, makespan);
  // per consumable: what started jobs held over what the taskers' own pools offered
  const auto& cons = ds.catalog.consumables();
  std::string per_consumable = "{";
  std::string utilisation_of = slots_k >= 0 ? "slots" : "";
  double utilisation = offered > 0 ? busy / offered : 0.0;
  for (size_t k = 0; k < cons.size() && k < r.held_seconds.size(); ++k) {
    const double o = offered_seconds(ds, static_cast<int>(k), first_submit, makespan);
    if (!(o > 0)) continue;
    const std::string& name = ds.catalog.at(cons[k]).name;
    per_consumable +=
        fmt::format("{}{}: {:.6f}", per_consumable.size() > 1 ? ", " : "", json_string(name), r.held_seconds[k] / o);
    if (utilisation_of.empty()) {
      utilisation_of = name;
      utilisation = r.held_seconds[k] / o;
    }
  }
  per_consumable += "}";
  if (utilisation_of.empty()) utilisation_of = "taskers";
  std::vector<double> cycle_ms;
  for (double s : r.cycle_seconds) cycle_ms.push_back(s * 1e3);
  return fmt::format(
      "{{\n  \"utilisation\": {:.6f},\n  \"utilisation_of\": {},\n  \"utilisation_per_consumable\": {},\n"
      "  \"busy_slot_seconds\": {},\n  \"offered_slot_seconds\": {},\n"
      "  \"wait_seconds\": {{\"mean\": {:.3f}, \"median\": {}, \"p95\": {}}},\n"
      "  \"mean_bounded_slowdown\": {:.4f},\n  \"makespan_seconds\": {},\n"
      "  \"started\": {},\n  \"held\": {},\n  \"throttled\": {},\n  \"backfilled\": {},\n"
      "  \"per_queue\": {},\n  \"per_user\": {},\n  \"per_group\": {},\n"
      "  \"cycles\": {},\n  \"full_cycles\": {},\n  \"cycle_ms\": {{\"p50\": {:.4f}, \"p99\": {:.4f}, \"max\": {:.4f}, "
      "\"mean\": "
      "{:.4f}}}\n}}\n",
      utilisation, json_string(utilisation_of), per_consumable, busy, offered, mean(waits), quantile(waits, 0.5),
      quantile(waits, 0.95), mean(slowdowns), makespan, waits.size(), held, throttled, backfilled,
      shares_json(by_queue, busy), shares_json(by_user, busy), shares_json(by_group, busy), r.cycles, r.full_cycles,
      quantile(cycle_ms, 0.5), quantile(cycle_ms, 0.99), quantile(cycle_ms, 1.0), mean(cycle_ms));
}

std::string simulation_summary_json(const loaders::Dataset& ds, const SimResult& r, const SimRunInfo& info) {
  uint64_t started = 0, pending = 0, rejected = 0;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    if (ds.jobs.rejected(j)) ++rejected;
    else if (std::isnan(r.start[j])) ++pending;
    else ++started;
  }
  return fmt::format(
      "{{\n  \"farm\": {},\n  \"format\": {},\n  \"taskers\": {},\n  \"jobs\": {},\n  \"started\": {},\n"
      "  \"pending\": {},\n  \"rejected\": {},\n  \"cycles\": {},\n  \"categories_evaluated\": {},\n"
      "  \"seconds\": {{\"load\": {:.6f}, \"simulate\": {:.6f}}},\n  \"threads\": {},\n  \"instruction_set\": {}\n}}\n",
      json_string(ds.name), json_string(info.format), ds.taskers.size(), ds.jobs.size(), started, pending, rejected,
      r.cycles, r.categories_evaluated, info.load_s, info.simulate_s, info.threads,
      json_string(kernels::isa_name(info.isa)));
}

std::string schedule_csv(const loaders::Dataset& ds, const SimResult& r) {
  const JobTable& jobs = ds.jobs;
  std::string csv = "job,submit,start,end,wait,tasker,slots,queue,user,status,reason\n";
  for (uint32_t j = 0; j < jobs.size(); ++j) {
    auto head = [&] {
      csv_field(csv, jobs.id[j]);
      csv += ',' + num(jobs.submit[j]) + ',';
    };
    auto tail = [&](const std::string& status, const std::string& reason) {
      csv += ',';
      csv_field(csv, jobs.queues.value(jobs.queue[j]));
      csv += ',';
      csv_field(csv, jobs.owners.value(jobs.owner[j]));
      csv += ',' + status + ',';
      csv_field(csv, reason);
      csv += '\n';
    };
    if (jobs.rejected(j)) {
      head();
      csv += ",,,,0";
      tail("rejected", jobs.reject_reason[jobs.reject[j]]);
      continue;
    }
    if (std::isnan(r.start[j])) {
      head();
      csv += ",,,,0";
      std::string why = sim_reason_text(r.reason[j]);
      if (!r.detail[j].empty()) why += ": " + r.detail[j];
      tail("pending", why);
      continue;
    }
    for (uint32_t a = 0; a < r.alloc_count[j]; ++a) {
      const Allocation& x = r.allocations[r.alloc_first[j] + a];
      head();
      csv += fmt::format("{},{},{},", num(r.start[j]), num(r.end[j]), num(r.start[j] - jobs.submit[j]));
      csv_field(csv, ds.taskers.names[x.tasker]);
      csv += fmt::format(",{}", x.slots);
      tail("started", r.backfilled[j] ? "backfilled" : "");
    }
  }
  return csv;
}

std::string timeline_csv(const loaders::Dataset& ds, const SimResult& r) {
  std::string timeline = "time,running,queued";
  for (uint32_t a : ds.catalog.consumables()) timeline += ",used_" + ds.catalog.at(a).name;
  timeline += '\n';
  for (const auto& row : r.timeline) {
    timeline += fmt::format("{},{},{}", num(row.time), row.running, row.queued);
    for (double u : row.used) timeline += ',' + num(u);
    timeline += '\n';
  }
  return timeline;
}

void write_simulation(const std::string& dir, const loaders::Dataset& ds, const SimResult& r, const SimRunInfo& info) {
  OutputSet out(dir);
  out.add("schedule.csv", schedule_csv(ds, r));
  out.add("metrics.json", simulation_metrics_json(ds, r));
  out.add("timeline.csv", timeline_csv(ds, r));
  out.add("summary.json", simulation_summary_json(ds, r, info));
  out.publish();
}

}  // namespace colmatch::writers
