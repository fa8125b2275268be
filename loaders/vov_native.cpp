// A farm in the native files with an [accelerator] table (loaders/vov.hpp, load_vov_native): farm.toml's
// maps and policy, taskers.jsonl's resource lists; jobs.jsonl as --format vov reads it.
#include <cmath>

#include <simdjson.h>
#include <toml++/toml.h>

#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"
#include "loaders/policy.hpp"
#include "loaders/vov_build.hpp"

namespace colmatch::loaders {

SimConfig accelerator_policy_defaults() {
  SimConfig p;
  p.backfill = BackfillPolicy::Greedy;
  return p;
}

bool is_accelerator_farm(const std::string& farm_toml) { return read_toml_file(farm_toml).contains("accelerator"); }

Dataset load_vov_native(const std::string& farm_toml, const std::string& taskers_jsonl, const std::string& jobs_jsonl,
                        const ProgressFn& progress, const std::string& policy) {
  const toml::table tbl = read_toml_file(farm_toml);
  VovTclFile farm;
  SimConfig sim = accelerator_policy_defaults();
  VovOptions options;
  for (auto&& [k, v] : tbl) {
    const std::string key(k.str());
    if (key != "name" && key != "policy" && key != "accelerator")
      throw LoadError(farm_toml, v.source().begin.line, key,
                      "unknown key in an Accelerator farm (name, policy, accelerator; resources are named by the "
                      "taskers' lists, not [[attribute]] tables)");
  }
  if (auto* pol = tbl["policy"].as_table()) {
    read_policy_table(*pol, farm_toml, sim);  // checks [policy.vov] too
    if (auto* vov = (*pol)["vov"].as_table()) options = read_vov_table(*vov, farm_toml);
  }
  if (!policy.empty()) options = read_vov_policy_toml(policy);  // --policy wins, as with --format vov
  auto* acc = tbl["accelerator"].as_table();
  if (acc == nullptr)
    throw LoadError(farm_toml, tbl["accelerator"].node()->source().begin.line, "accelerator", "expected a table");
  for (auto&& [k, v] : *acc) {
    const std::string key(k.str());
    if (key != "map") throw LoadError(farm_toml, v.source().begin.line, "accelerator." + key, "unknown key (map)");
    auto* list = v.as_array();
    if (list == nullptr)
      throw LoadError(farm_toml, v.source().begin.line, "accelerator.map", "expected [[accelerator.map]] tables");
    for (auto& node : *list) {
      auto* t = node.as_table();
      const size_t line = node.source().begin.line;
      if (t == nullptr) throw LoadError(farm_toml, line, "accelerator.map", "expected a table");
      VovMapDef m;
      m.line = line;
      for (auto&& [mk, mv] : *t) {
        const std::string f(mk.str());
        const size_t at = mv.source().begin.line;
        if (f == "name") {
          const auto s = mv.value<std::string>();
          if (!s || s->empty()) throw LoadError(farm_toml, at, "accelerator.map.name", "expected a resource name");
          m.name = *s;
        } else if (f == "count") {
          const auto* c = mv.as_integer();  // (a float such as 1e20 is no count, and no conversion of one)
          if (c == nullptr || c->get() < 0)
            throw LoadError(farm_toml, at, "accelerator.map.count", "expected a whole count >= 0");
          m.count = static_cast<uint64_t>(c->get());
        } else if (f == "map") {
          const auto s = mv.value<std::string>();
          if (!s) throw LoadError(farm_toml, at, "accelerator.map.map", "expected a resource list");
          m.map = *s;
        } else {
          throw LoadError(farm_toml, at, "accelerator.map." + f, "unknown key (name, count, map)");
        }
      }
      if (m.name.empty()) throw LoadError(farm_toml, line, "accelerator.map.name", "a map needs a name");
      farm.maps.push_back(std::move(m));
    }
  }
  // taskers.jsonl: {"name": "...", "host": "...", "resources": "...", "cpus": N, "power": P}
  // (read beside jobs.jsonl, on another thread: without progress reports, which are not shared)
  const auto read_farm = [&] {
    LineReader in(taskers_jsonl);
    simdjson::dom::parser parser;
    std::string_view line;
    while (in.next(line)) {
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      const size_t ln = in.line();
      simdjson::dom::element doc;
      if (parser.parse(line).get(doc) || doc.type() != simdjson::dom::element_type::OBJECT)
        throw LoadError(taskers_jsonl, ln, "", "malformed JSON: expected one object per line");
      VovTaskerDef d;
      d.line = ln;
      simdjson::dom::object obj;
      if (doc.get_object().get(obj)) throw LoadError(taskers_jsonl, ln, "", "expected an object");
      for (auto field : obj) {
        const std::string f(field.key);
        if (f == "name" || f == "host" || f == "resources") {
          std::string_view sv;
          if (field.value.get_string().get(sv)) throw LoadError(taskers_jsonl, ln, f, "expected a string");
          (f == "name" ? d.name : f == "host" ? d.host : d.resources) = std::string(sv);
        } else if (f == "cpus") {
          int64_t c = 0;
          if (field.value.get_int64().get(c) || c < 0 || c > 1000000)
            throw LoadError(taskers_jsonl, ln, f, "expected a whole number of CPUs from 0 to 10^6");
          d.cpus = static_cast<uint32_t>(c);
        } else if (f == "power") {
          double p = 0;
          if (field.value.get_double().get(p)) {
            int64_t i = 0;
            if (field.value.get_int64().get(i)) throw LoadError(taskers_jsonl, ln, f, "expected a number");
            p = static_cast<double>(i);
          }
          if (!std::isfinite(p)) throw LoadError(taskers_jsonl, ln, f, "expected a finite number");
          d.power = p;
        } else {
          throw LoadError(taskers_jsonl, ln, f, "unknown key (name, host, resources, cpus, power)");
        }
      }
      if (d.name.empty() && d.host.empty())
        throw LoadError(taskers_jsonl, ln, "name", "a tasker needs a name or a host");
      if (d.host.empty()) d.host = d.name;
      if (d.name.empty()) d.name = d.host;
      farm.taskers.push_back(std::move(d));
    }
    return std::move(farm);
  };
  Dataset ds = build_vov(read_farm, {taskers_jsonl, farm_toml, true}, jobs_jsonl, progress, options);
  ds.name = tbl["name"].value_or(std::string("vov"));
  ds.policy = sim;
  return ds;
}

}  // namespace colmatch::loaders
