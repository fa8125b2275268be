#include "loaders/writers/simulation_writer.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <map>
#include <span>

#include <fmt/format.h>

#include "loaders/writers/results.hpp"
#include "loaders/writers/text.hpp"

namespace colmatch::writers {
namespace {

std::string num(double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string(); }

// The q-quantile of `v` (the smallest value with at least q of them at or below it; 0 when empty).
template <class T>
double quantile(std::vector<T> v, double q) {
  if (v.empty()) return 0;
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(std::ceil(q * static_cast<double>(v.size()))) - (q > 0));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return static_cast<double>(v[i]);
}

template <class T>
double mean(const std::vector<T>& v) {
  double s = 0;
  for (const T x : v) s += x;
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
    out += fmt::format("{}{}: {{\"starts\": {}, \"slot_share\": {}}}", first ? "" : ", ", json_string(name), s.starts,
                       json_number(total > 0 ? s.slot_seconds / total : 0.0, 6));
    first = false;
  }
  return out + "}";
}

// What the farm offers of consumable k (each tasker's own, queue-level amount), or one per tasker
// when k < 0, while the taskers are up, the farm's events (Dataset::farm) applied in time order.
class OfferedRate {
 public:
  OfferedRate(const loaders::Dataset& ds, int k) : ds_(ds), k_(k), value_(ds.taskers.size(), 1.0) {
    const size_t n = ds.taskers.size();
    if (k >= 0) {
      const Column& col = ds.taskers.columns[ds.catalog.consumables()[static_cast<size_t>(k)]];
      for (uint32_t t = 0; t < n; ++t) value_[t] = col.has(t) ? col.queue().num(t) : 0;
    }
    up_.assign(n, 1);
    for (uint32_t t = 0; t < n; ++t) {
      if (t < ds.farm.down_at_start.size() && ds.farm.down_at_start[t]) up_[t] = 0;
      if (up_[t]) rate_ += value_[t];
    }
  }
  double rate() const { return rate_; }
  bool more() const { return next_ < ds_.farm.events.size(); }
  double next_time() const { return ds_.farm.events[next_].time; }
  /// Applies the next event.
  void apply() {
    const TaskerEvent& e = ds_.farm.events[next_++];
    const uint32_t t = e.tasker;
    switch (e.kind) {
      case TaskerEvent::Kind::Up:
        if (!up_[t]) rate_ += value_[t];
        up_[t] = 1;
        break;
      case TaskerEvent::Kind::Down:
        if (up_[t]) rate_ -= value_[t];
        up_[t] = 0;
        break;
      case TaskerEvent::Kind::Configure:
        if (static_cast<int>(e.consumable) != k_) break;
        if (up_[t]) rate_ += e.amount - value_[t];
        value_[t] = e.amount;
        break;
    }
  }

 private:
  const loaders::Dataset& ds_;
  int k_;
  std::vector<double> value_;
  std::vector<uint8_t> up_;
  double rate_ = 0;
  size_t next_ = 0;
};

// Amount-seconds the farm offers of consumable k (see OfferedRate) over [from, from + span].
double offered_seconds(const loaders::Dataset& ds, int k, double from, double span) {
  OfferedRate offered(ds, k);
  const double to = from + span;
  double total = 0, now = from;
  while (offered.more() && offered.next_time() < to) {
    if (offered.next_time() > now) {
      total += offered.rate() * (offered.next_time() - now);
      now = offered.next_time();
    }
    offered.apply();
  }
  if (to > now) total += offered.rate() * (to - now);
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
    if (jobs.rejected(j) || r.reason[j] == SimReason::Removed || r.reason[j] == SimReason::Rejected) continue;
    first_submit = std::min(first_submit, jobs.submit[j]);
    held += r.was_held[j];
    throttled += r.was_throttled[j];
    backfilled += r.backfilled[j];
    if (std::isnan(r.start[j])) continue;
    const double wait = r.start[j] - jobs.submit[j], run = r.end[j] - r.start[j];
    waits.push_back(wait);
    slowdowns.push_back(std::max(1.0, (wait + run) / std::max(run, 10.0)));
    last_end = std::max(last_end, r.end[j]);
    // the slots its allocations hold (Slurm's -n N over -N K nodes: N, not K), its own count if none
    uint64_t held_slots = 0;
    for (uint32_t a = 0; a < r.alloc_count[j]; ++a) held_slots += r.allocations[r.alloc_first[j] + a].slots;
    const double ss = run * static_cast<double>(held_slots > 0 ? held_slots : jobs.slots[j]);
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
    per_consumable += fmt::format("{}{}: {}", per_consumable.size() > 1 ? ", " : "", json_string(name),
                                  json_number(r.held_seconds[k] / o, 6));
    if (utilisation_of.empty()) {
      utilisation_of = name;
      utilisation = r.held_seconds[k] / o;
    }
  }
  per_consumable += "}";
  if (utilisation_of.empty()) utilisation_of = "taskers";
  return fmt::format(
      "{{\n  \"utilisation\": {},\n  \"utilisation_of\": {},\n  \"utilisation_per_consumable\": {},\n"
      "  \"busy_slot_seconds\": {},\n  \"offered_slot_seconds\": {},\n"
      "  \"wait_seconds\": {{\"mean\": {}, \"median\": {}, \"p95\": {}}},\n"
      "  \"mean_bounded_slowdown\": {},\n  \"makespan_seconds\": {},\n"
      "  \"started\": {},\n  \"held\": {},\n  \"throttled\": {},\n  \"backfilled\": {},\n"
      "  \"per_queue\": {},\n  \"per_user\": {},\n  \"per_group\": {},\n"
      "  \"cycles\": {},\n  \"full_cycles\": {}\n}}\n",
      json_number(utilisation, 6), json_string(utilisation_of), per_consumable, json_number(busy), json_number(offered),
      json_number(mean(waits), 3), json_number(quantile(waits, 0.5)), json_number(quantile(waits, 0.95)),
      json_number(mean(slowdowns), 4), json_number(makespan), waits.size(), held, throttled, backfilled,
      shares_json(by_queue, busy), shares_json(by_user, busy), shares_json(by_group, busy), r.cycles, r.full_cycles);
}

std::string simulation_summary_json(const loaders::Dataset& ds, const SimResult& r, const SimRunInfo& info) {
  uint64_t started = 0, pending = 0, rejected = 0;
  // wall clock: here, not in metrics.json, which is the same run to run; quantiles over the floats (a
  // copy of 4 bytes a cycle), the mean in doubles
  const std::vector<float>& s = r.cycle_seconds;
  const double p50 = quantile(s, 0.5) * 1e3, p99 = quantile(s, 0.99) * 1e3, max_ms = quantile(s, 1.0) * 1e3,
               mean_ms = mean(s) * 1e3;
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    if (ds.jobs.rejected(j) || r.reason[j] == SimReason::Removed || r.reason[j] == SimReason::Rejected) ++rejected;
    else if (std::isnan(r.start[j])) ++pending;
    else ++started;
  }
  // said only when the timeline leaves consumables out (kTimelineConsumables)
  const size_t width = ds.catalog.consumables().size();
  const std::string tracked = timeline_consumables(width) < width
                                  ? fmt::format("  \"timeline_consumables\": {{\"tracked\": {}, \"of\": {}}},\n",
                                                timeline_consumables(width), width)
                                  : "";
  return fmt::format(
      "{{\n  \"farm\": {},\n  \"format\": {},\n  \"taskers\": {},\n  \"jobs\": {},\n  \"started\": {},\n"
      "  \"pending\": {},\n  \"rejected\": {},\n  \"cycles\": {},\n  \"categories_evaluated\": {},\n"
      "  \"seconds\": {{\"load\": {:.6f}, \"simulate\": {:.6f}}},\n"
      "  \"cycle_ms\": {{\"p50\": {:.4f}, \"p99\": {:.4f}, \"max\": {:.4f}, \"mean\": {:.4f}}},\n"
      "{}  \"notes\": {},\n  \"threads\": {},\n  \"instruction_set\": {},\n  \"huge_pages\": {}\n}}\n",
      json_string(ds.name), json_string(info.format), ds.taskers.size(), ds.jobs.size(), started, pending, rejected,
      r.cycles, r.categories_evaluated, info.load_s, info.simulate_s, p50, p99, max_ms, mean_ms, tracked,
      notes_json(ds.jobs), info.threads, json_string(kernels::isa_name(info.isa)), info.huge_pages);
}

namespace {

constexpr uint32_t kScheduleJobsPerPiece = 8192;  // ~1 MB of schedule.csv: formatted and written cache-warm
constexpr const char* kScheduleHeader = "job,submit,start,end,wait,tasker,slots,queue,user,status,reason\n";

// The rows of schedule.csv for jobs [first, end).
void schedule_rows(const loaders::Dataset& ds, const SimResult& r, uint32_t first, uint32_t end, std::string& csv) {
  const JobTable& jobs = ds.jobs;
  for (uint32_t j = first; j < end; ++j) {
    auto head = [&] {
      csv_field(csv, jobs.id[j]);
      csv += ',' + num(jobs.submit[j]) + ',';
    };
    auto with_note = [&](std::string reason, uint32_t job) {  // a remark from reading the job (depth limit)
      if (jobs.note[job] == kNone) return reason;
      return reason.empty() ? jobs.notes.value(jobs.note[job]) : reason + "; " + jobs.notes.value(jobs.note[job]);
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
    if (jobs.rejected(j) || r.reason[j] == SimReason::Rejected) {  // (by the simulator: its detail says why)
      head();
      csv += ",,,,0";
      tail("rejected", jobs.rejected(j) ? jobs.reject_reason[jobs.reject[j]] : r.detail[j]);
      continue;
    }
    if (r.reason[j] == SimReason::Removed) {  // removed when a cycle considered it
      head();
      csv += ",,,,0";
      tail("rejected", with_note("removed " + r.detail[j], j));
      continue;
    }
    if (std::isnan(r.start[j])) {
      head();
      csv += ",,,,0";
      std::string why = sim_reason_text(r.reason[j]);
      if (!r.detail[j].empty()) why += ": " + r.detail[j];
      tail("pending", with_note(why, j));
      continue;
    }
    // a row per tasker: what comes before and after the tasker and its slots is the job's, written once
    const size_t at = csv.size();
    head();
    fmt::format_to(std::back_inserter(csv), "{},{},{},", num(r.start[j]), num(r.end[j]),
                   num(r.start[j] - jobs.submit[j]));
    const size_t prefix = csv.size() - at;
    tail("started", with_note(r.backfilled[j] ? "backfilled" : "", j));
    const std::string before = csv.substr(at, prefix), after = csv.substr(at + prefix);
    csv.resize(at);
    for (uint32_t a = 0; a < r.alloc_count[j]; ++a) {
      const Allocation& x = r.allocations[r.alloc_first[j] + a];
      csv += before;
      csv_field(csv, ds.taskers.names[x.tasker]);
      csv += ',';
      fmt::format_to(std::back_inserter(csv), "{}", x.slots);
      csv += after;
    }
  }
}

size_t schedule_pieces(const loaders::Dataset& ds) {
  return (ds.jobs.size() + kScheduleJobsPerPiece - 1) / kScheduleJobsPerPiece;
}

void schedule_piece(const loaders::Dataset& ds, const SimResult& r, size_t p, std::string& csv) {
  const auto first = static_cast<uint32_t>(p * kScheduleJobsPerPiece);
  schedule_rows(ds, r, first,
                static_cast<uint32_t>(std::min<size_t>(ds.jobs.size(), first + size_t{kScheduleJobsPerPiece})), csv);
}

}  // namespace

std::string schedule_csv(const loaders::Dataset& ds, const SimResult& r) {
  std::string csv = kScheduleHeader;
  for (size_t p = 0; p < schedule_pieces(ds); ++p) schedule_piece(ds, r, p, csv);
  return csv;
}

std::string timeline_csv(const loaders::Dataset& ds, const SimResult& r) {
  const auto& all = ds.catalog.consumables();
  const std::span<const uint32_t> consumables(all.data(), timeline_consumables(all.size()));
  std::string timeline = "time,running,queued";
  for (uint32_t a : consumables) timeline += ",used_" + ds.catalog.at(a).name;
  for (uint32_t a : consumables) timeline += ",offered_" + ds.catalog.at(a).name;
  timeline += '\n';
  std::vector<OfferedRate> offered;
  for (size_t k = 0; k < consumables.size(); ++k) offered.emplace_back(ds, static_cast<int>(k));
  for (size_t i = 0; i < r.timeline.size(); ++i) {
    const SimResult::Row& row = r.timeline[i];
    timeline += fmt::format("{},{},{}", num(row.time), row.running, row.queued);
    for (double u : r.used_at(i)) timeline += ',' + num(u);
    for (OfferedRate& o : offered) {  // the farm's events up to the row's cycle are applied in it
      while (o.more() && o.next_time() <= row.time) o.apply();
      timeline += ',' + num(o.rate());
    }
    timeline += '\n';
  }
  return timeline;
}

std::string cycles_csv(const SimResult& r) {
  std::string csv = "time,cycles,scheduler_us,max_cycle_us\n";
  for (const SimResult::CycleMinute& m : r.cycle_minutes)
    csv += fmt::format("{},{},{:.3f},{:.3f}\n", num(m.time), m.cycles, m.seconds * 1e6, m.max_seconds * 1e6);
  return csv;
}

void write_simulation(const std::string& dir, const loaders::Dataset& ds, const SimResult& r, const SimRunInfo& info,
                      SimOutputs which) {
  OutputSet out(dir);
  if (which != SimOutputs::Metrics)
    out.add_pieces("schedule.csv", schedule_pieces(ds) + 1, [&](size_t p, std::string& csv) {
      if (p == 0) csv = kScheduleHeader;
      else schedule_piece(ds, r, p - 1, csv);
    });
  out.add("metrics.json", simulation_metrics_json(ds, r));
  if (which == SimOutputs::All) {
    out.add("timeline.csv", timeline_csv(ds, r));
    out.add("cycles.csv", cycles_csv(r));
  }
  out.add("summary.json", simulation_summary_json(ds, r, info));
  out.publish();
}

}  // namespace colmatch::writers
