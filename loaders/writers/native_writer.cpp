#include "loaders/writers/native_writer.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "loaders/writers/text.hpp"

namespace colmatch::writers {

std::string native_cannot_hold(const loaders::Dataset& ds) {
  std::vector<std::string> lost;
  if (ds.dispatch.queues) lost.push_back("queues that block (Slurm's partitions in its main pass)");
  if (ds.dispatch.allocation != AllocationPolicy::GreatestPower)
    lost.push_back(ds.dispatch.allocation == AllocationPolicy::ConsecutiveBestFit
                       ? "its node choice (Slurm's consecutive best fit on one consumable)"
                       : "its node choice (an allocation policy other than the greatest power)");
  if (ds.dispatch.fit_limit != SIZE_MAX) lost.push_back("per-CPU memory limits of a node fit");
  if (lost.empty()) return {};
  return fmt::format(
      "the native format cannot hold how this farm dispatches: {}; a saved farm would place its "
      "jobs differently. Match or simulate the input itself",
      fmt::join(lost, ", "));
}

std::string farm_toml_text(const loaders::Dataset& ds) {
  std::string s = fmt::format("name = \"{}\"\n", json_escape(ds.name));
  const bool design60 = ds.catalog.reading == GridEngineReading::Design60;
  // the scheduling its format assumes (an Accelerator farm's dispatcher: greedy) travels with it
  const bool greedy = ds.policy_defaults.backfill == BackfillPolicy::Greedy;
  if (!ds.power_attribute.empty() || design60 || greedy) s += "\n[policy]\n";
  if (!ds.power_attribute.empty()) s += fmt::format("power = \"{}\"\n", json_escape(ds.power_attribute));
  if (greedy) s += "backfill = \"greedy\"\n";
  // the request semantics travel with the farm: an imported DIRAC farm keeps its literal values
  if (design60) s += "grid_engine = \"6.0-design\"\n";
  // Global values (already combined from fixed and load values: written back as fixed values).
  std::string global;
  for (uint32_t a = 0; a < ds.taskers.columns.size(); ++a) {
    const Column& c = ds.taskers.columns[a];
    if (!c.global().present) continue;
    global += fmt::format("\"{}\" = ", json_escape(ds.catalog.at(a).name));  // quoted: `map:License:x` too
    if (is_numeric(c.type)) global += fmt::format("{}\n", c.global().num);
    else global += fmt::format("\"{}\"\n", json_escape(c.dict.value(c.global().id)));
  }
  if (!global.empty()) s += "\n[global]\n" + global;
  for (uint32_t a = 0; a < ds.catalog.size(); ++a) {
    const AttributeDef& d = ds.catalog.at(a);
    s += fmt::format("\n[[attribute]]\nname = \"{}\"\n", json_escape(d.name));
    if (!d.shortcut.empty()) s += fmt::format("shortcut = \"{}\"\n", json_escape(d.shortcut));
    if (!d.label.empty()) s += fmt::format("label = \"{}\"\n", json_escape(d.label));
    s += fmt::format("type = \"{}\"\nrelop = \"{}\"\n", type_name(d.type), relop_name(d.relop));
    if (d.consumable)
      s += fmt::format("consumable = true\nper = \"{}\"\n", d.scope == ConsumeScope::PerSlot ? "slot" : "job");
    if (d.requestable != Requestable::Yes)
      s += fmt::format("requestable = \"{}\"\n", d.requestable == Requestable::No ? "no" : "forced");
    if (d.default_amount) s += fmt::format("default = {}\n", *d.default_amount);
    if (d.multi_valued) s += "multi_valued = true\n";
  }
  return s;
}

namespace {

// The taskers in input order (the rows of taskers.jsonl).
std::vector<uint32_t> taskers_in_input_order(const TaskerTable& t) {
  std::vector<uint32_t> by_input(t.size());
  for (uint32_t r = 0; r < t.size(); ++r) by_input[t.input_index[r]] = r;
  return by_input;
}

// Lines [from, to) of taskers.jsonl, appended to s: one tasker a line, field by field as
// loaders/native.cpp reads them back.
void append_tasker_lines(const loaders::Dataset& ds, const std::vector<uint32_t>& by_input, size_t from, size_t to,
                         std::string& s) {
  const TaskerTable& t = ds.taskers;
  for (size_t line = from; line < to; ++line) {
    const uint32_t r = by_input[line];
    s += fmt::format("{{\"name\":\"{}\",", json_escape(t.names[r]));
    if (t.host_of[r] != kNone) s += fmt::format("\"host\":\"{}\",", json_escape(t.host_names[t.host_of[r]]));
    s += fmt::format("\"power\":{},\"attrs\":{{", t.power[r]);
    bool first = true;
    for (uint32_t a = 0; a < ds.catalog.size(); ++a) {
      const Column& c = t.columns[a];
      if (!c.has(r)) continue;
      if (!first) s += ',';
      first = false;
      s += fmt::format("\"{}\":", json_escape(ds.catalog.at(a).name));
      if (is_numeric(c.type)) {
        s += fmt::format("{}", c.queue().num(r));
      } else if (c.multi) {
        std::vector<std::string> items;
        for (std::string_view e : set_elements(c.dict.value(c.queue().id(r)))) items.push_back(json_string(e));
        s += fmt::format("[{}]", fmt::join(items, ","));
      } else {
        s += fmt::format("\"{}\"", json_escape(c.dict.value(c.queue().id(r))));
      }
    }
    s += '}';
    std::string used;  // Moab's R.Utilized by other than jobs (FarmEvents::load)
    for (size_t k = 0; k < ds.farm.load.size(); ++k)
      if (!ds.farm.load[k].empty() && ds.farm.load[k][r] != 0)
        used += fmt::format("{}\"{}\":{}", used.empty() ? "" : ",",
                            json_escape(ds.catalog.at(ds.catalog.consumables()[k]).name), ds.farm.load[k][r]);
    if (!used.empty()) s += ",\"utilized\":{" + used + "}";
    s += "}\n";
  }
}

}  // namespace

std::string taskers_jsonl_text(const loaders::Dataset& ds) {
  std::string s;
  append_tasker_lines(ds, taskers_in_input_order(ds.taskers), 0, ds.taskers.size(), s);
  return s;
}

std::string hosts_jsonl_text(const loaders::Dataset& ds) {
  const TaskerTable& t = ds.taskers;
  std::string s;
  bool any = false;
  for (uint32_t h = 0; h < t.host_names.size(); ++h) {
    s += fmt::format("{{\"name\":\"{}\",\"attrs\":{{", json_escape(t.host_names[h]));
    bool first = true;
    for (uint32_t a = 0; a < ds.catalog.size(); ++a) {
      const Column& c = t.columns[a];
      if (!c.by_host().has(h)) continue;
      any = true;
      if (!first) s += ',';
      first = false;
      s += fmt::format("\"{}\":", json_escape(ds.catalog.at(a).name));
      if (is_numeric(c.type)) s += fmt::format("{}", c.by_host().num(h));
      else s += fmt::format("\"{}\"", json_escape(c.dict.value(c.by_host().id(h))));
    }
    s += "}}\n";
  }
  return any ? s : std::string();
}

namespace {

// Lines [from, to) of jobs.jsonl (one job a line, in input order), appended to s. Long on purpose: the
// fields as loaders/native_jobs.cpp reads them back.
void append_job_lines(const loaders::Dataset& ds, uint32_t from, uint32_t to, std::string& s) {
  const JobTable& j = ds.jobs;
  const auto& cons = ds.catalog.consumables();
  for (uint32_t i = from; i < to; ++i) {
    s += fmt::format("{{\"id\":\"{}\",\"owner\":\"{}\",\"group\":\"{}\",\"priority\":{},\"submit\":{},\"slots\":{}",
                     json_escape(j.id[i]), json_escape(j.owners.value(j.owner[i])),
                     json_escape(j.groups.value(j.group[i])), j.priority[i], j.submit[i], j.slots[i]);
    if (j.request[i] != 0) s += fmt::format(",\"requests\":\"{}\"", json_escape(j.request_text[j.request[i]]));
    if (j.soft[i] != 0) s += fmt::format(",\"soft\":\"{}\"", json_escape(j.request_text[j.soft[i]]));
    if (j.rule[i] == AllocationRule::FillUp) s += ",\"allocation_rule\":\"$fill_up\"";
    if (j.rule[i] == AllocationRule::OnePerTasker) s += ",\"allocation_rule\":\"1\"";
    if (j.rule[i] == AllocationRule::HostPeSlots) s += ",\"allocation_rule\":\"host $pe_slots\"";
    if (j.rule[i] == AllocationRule::HostFillUp) s += ",\"allocation_rule\":\"host $fill_up\"";
    if (j.rule[i] == AllocationRule::HostRoundRobin) s += ",\"allocation_rule\":\"host $round_robin\"";
    if (j.rule[i] == AllocationRule::HostBlocks)
      s += fmt::format(",\"allocation_rule\":\"host {}\"", j.pe_shape_of(i).per_host);
    if (j.pe_shape_of(i).min_slots > 0) s += fmt::format(",\"min_slots\":{}", j.pe_shape_of(i).min_slots);
    if (j.pe_shape_of(i).master != kNone)
      s += fmt::format(",\"master_queue\":\"{}\"", json_escape(j.request_text[j.pe_shape_of(i).master]));
    if (j.pe_shape_of(i).master_only != kNone)
      s += fmt::format(",\"master_only_queue\":\"{}\"", json_escape(j.request_text[j.pe_shape_of(i).master_only]));
    for (const auto& [key, amounts] : {std::pair<const char*, const JobAmounts*>{"resources", &j.amount},
                                       std::pair<const char*, const JobAmounts*>{"utilization", &j.utilization}}) {
      std::string obj;
      for (const JobAmounts::Entry& e : amounts->of(i))
        obj += fmt::format("{}\"{}\":{}", obj.empty() ? "" : ",", json_escape(ds.catalog.at(cons[e.consumable]).name),
                           e.amount);
      if (!obj.empty()) s += fmt::format(",\"{}\":{{{}}}", key, obj);
    }
    if (const uint32_t ch = j.choice_of(i); ch != kNone) {  // Accelerator scheduling solutions
      const JobTable::Choice& c = j.choices[ch];
      s += ",\"solutions\":[";
      for (size_t x = 0; x < c.request.size(); ++x) {
        std::string obj;
        for (const JobAmounts::Entry& e : c.amounts[x])
          obj += fmt::format("{}\"{}\":{}", obj.empty() ? "" : ",", json_escape(ds.catalog.at(cons[e.consumable]).name),
                             e.amount);
        s += fmt::format("{}{{\"requests\":\"{}\",\"resources\":{{{}}}}}", x == 0 ? "" : ",",
                         json_escape(j.request_text[c.request[x]]), obj);
      }
      s += "]";
      if (!c.outcome.empty()) {  // its gate: [[pool, amount], ...], and per mask what it does
        s += ",\"gate\":[";
        for (size_t g = 0; g < c.gate.size(); ++g)
          s += fmt::format("{}[\"{}\",{}]", g == 0 ? "" : ",",
                           json_escape(ds.catalog.at(cons[c.gate[g].consumable]).name), c.gate[g].amount);
        s += "],\"outcomes\":[";
        for (size_t m = 0; m < c.outcome.size(); ++m) {
          const JobTable::Choice::Outcome& o = c.outcome[m];
          s += m == 0 ? "" : ",";
          switch (o.kind) {
            case JobTable::Choice::Outcome::Kind::Place:
              s += fmt::format("{{\"place\":[{}]}}", fmt::join(o.solutions, ","));
              break;
            case JobTable::Choice::Outcome::Kind::Wait: s += fmt::format("{{\"wait\":{}}}", o.wait_on); break;
            case JobTable::Choice::Outcome::Kind::Remove:
              s += fmt::format("{{\"remove\":{}}}", json_string(o.why));
              break;
          }
        }
        s += "]";
      }
    }
    if (!std::isnan(j.runtime[i])) s += fmt::format(",\"runtime\":{}", j.runtime[i]);
    if (!std::isnan(j.walltime[i])) s += fmt::format(",\"walltime\":{}", j.walltime[i]);
    if (std::isinf(j.hold_until[i]) && j.hold_until[i] > 0) s += ",\"hold\":true";
    else if (std::isfinite(j.hold_until[i])) s += fmt::format(",\"hold\":{}", j.hold_until[i]);
    if (!j.depends[i].empty()) {
      std::vector<std::string> ids;
      for (uint32_t d : j.depends[i]) ids.push_back(json_string(j.id[d]));
      s += fmt::format(",\"depends\":[{}]", fmt::join(ids, ","));
    }
    if (!j.queues.value(j.queue[i]).empty()) s += fmt::format(",\"queue\":{}", json_string(j.queues.value(j.queue[i])));
    if (!j.accounts.value(j.account[i]).empty())
      s += fmt::format(",\"account\":{}", json_string(j.accounts.value(j.account[i])));
    if (!j.qos_names.value(j.qos[i]).empty()) s += fmt::format(",\"qos\":{}", json_string(j.qos_names.value(j.qos[i])));
    if (j.rejected(i)) s += fmt::format(",\"rejected\":\"{}\"", json_escape(j.reject_reason[j.reject[i]]));
    if (j.note[i] != kNone) s += fmt::format(",\"note\":{}", json_string(j.notes.value(j.note[i])));
    s += "}\n";
  }
}

}  // namespace

std::string jobs_jsonl_text(const loaders::Dataset& ds) {
  std::string s;
  append_job_lines(ds, 0, static_cast<uint32_t>(ds.jobs.size()), s);
  return s;
}

void write_farm_toml(const std::string& path, const loaders::Dataset& ds) {
  write_file_atomic(path, farm_toml_text(ds));
}
void write_taskers_jsonl(const std::string& path, const loaders::Dataset& ds) {
  write_file_atomic(path, taskers_jsonl_text(ds));
}
bool write_hosts_jsonl(const std::string& path, const loaders::Dataset& ds) {
  const std::string text = hosts_jsonl_text(ds);
  if (text.empty()) return false;
  write_file_atomic(path, text);
  return true;
}
void write_jobs_jsonl(const std::string& path, const loaders::Dataset& ds) {
  write_file_atomic(path, jobs_jsonl_text(ds));
}

bool save_native(const std::string& dir, const loaders::Dataset& ds) {
  // taskers.jsonl and jobs.jsonl in pieces of kRowsPerPiece rows, formatted in parallel and written in
  // order: never a whole file in memory (issue 45: import ran out of memory where match of the same
  // jobs fit)
  constexpr size_t kRowsPerPiece = 16384;
  auto pieces = [](size_t rows) { return (rows + kRowsPerPiece - 1) / kRowsPerPiece; };
  OutputSet out(dir);
  out.add("farm.toml", farm_toml_text(ds));
  const std::vector<uint32_t> by_input = taskers_in_input_order(ds.taskers);
  out.add_pieces("taskers.jsonl", pieces(by_input.size()), [&](size_t i, std::string& text) {
    append_tasker_lines(ds, by_input, i * kRowsPerPiece, std::min(by_input.size(), (i + 1) * kRowsPerPiece), text);
  });
  const std::string hosts = hosts_jsonl_text(ds);
  if (!hosts.empty()) out.add("hosts.jsonl", hosts);
  out.add_pieces("jobs.jsonl", pieces(ds.jobs.size()), [&](size_t i, std::string& text) {
    append_job_lines(ds, static_cast<uint32_t>(i * kRowsPerPiece),
                     static_cast<uint32_t>(std::min(ds.jobs.size(), (i + 1) * kRowsPerPiece)), text);
  });
  out.publish();
  return !hosts.empty();
}

}  // namespace colmatch::writers
