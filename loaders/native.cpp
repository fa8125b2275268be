#include "loaders/native.hpp"

#include <cmath>
#include <map>
#include <numeric>
#include <unordered_set>

#include <fmt/format.h>
#include <simdjson.h>
#include <toml++/toml.h>

#include "loaders/errors.hpp"
#include "loaders/native_json.hpp"
#include "loaders/policy.hpp"
#include "loaders/vov.hpp"

namespace colmatch::loaders {
namespace {

using namespace native_json;  // scalar_text, number_of, numeric_value, parse_object, blank, element

}  // namespace

namespace {

FarmFile farm_from_toml(const toml::table& tbl, const std::string& path) {
  FarmFile farm;
  farm.path = path;
  farm.catalog.reading = GridEngineReading::SoGE819;  // real Grid Engine unless [policy] says otherwise
  for (auto&& [k, v] : tbl) {
    const std::string_view key = k.str();
    if (key != "name" && key != "policy" && key != "attribute" && key != "global")
      throw LoadError(path, v.source().begin.line, std::string(key), "unknown key");
  }
  farm.name = tbl["name"].value_or(std::string("farm"));
  if (auto* pol = tbl["policy"].as_table()) {
    read_policy_table(*pol, path, farm.policy, true);  // everything but power: loaders/policy.hpp
    farm.power_attribute = (*pol)["power"].value_or(std::string());
    if (auto* ge = pol->get("grid_engine")) {
      const auto v = ge->value<std::string>();
      if (v && *v == "6.0-design") farm.catalog.reading = GridEngineReading::Design60;
      else if (!v || *v != "8.1.9")
        throw LoadError(path, ge->source().begin.line, "policy.grid_engine", "expected \"8.1.9\" or \"6.0-design\"");
    }
  }
  auto* attrs = tbl["attribute"].as_array();
  if (attrs == nullptr) throw LoadError(path, 0, "attribute", "no [[attribute]] tables");
  for (auto& node : *attrs) {
    auto* t = node.as_table();
    const size_t line = node.source().begin.line;
    if (t == nullptr) throw LoadError(path, line, "attribute", "expected a table");
    AttributeDef def;
    auto str = [&](const char* key, std::string def_value) -> std::string {
      auto* n = t->get(key);
      if (n == nullptr) return def_value;
      if (auto s = n->value<std::string>()) return *s;
      throw LoadError(path, n->source().begin.line, key, "expected a string");
    };
    for (auto&& [k, v] : *t) {
      static const std::unordered_set<std::string_view> known{
          "name", "shortcut", "label", "type", "relop", "consumable", "per", "requestable", "default", "multi_valued"};
      if (!known.count(k.str())) throw LoadError(path, v.source().begin.line, std::string(k.str()), "unknown key");
    }
    def.name = str("name", "");
    if (def.name.empty()) throw LoadError(path, line, "name", "an attribute needs a name");
    def.shortcut = str("shortcut", "");
    def.label = str("label", "");
    const std::string type = str("type", "string");
    if (auto ty = parse_type(type)) def.type = *ty;
    else throw LoadError(path, line, "type", fmt::format("attribute '{}': unknown type '{}'", def.name, type));
    if (auto* c = t->get("consumable")) {
      if (auto b = c->value<bool>()) def.consumable = *b;
      else throw LoadError(path, c->source().begin.line, "consumable", "expected true or false");
    }
    const std::string relop = str("relop", def.consumable ? "<=" : "==");
    if (auto r = parse_relop(relop)) def.relop = *r;
    else throw LoadError(path, line, "relop", fmt::format("attribute '{}': unknown relop '{}'", def.name, relop));
    const std::string per = str("per", "slot");
    if (per == "slot") def.scope = ConsumeScope::PerSlot;
    else if (per == "job") def.scope = ConsumeScope::PerJob;
    else throw LoadError(path, line, "per", "expected \"slot\" or \"job\"");
    if (auto* rq = t->get("requestable")) {
      std::string r;
      if (auto b = rq->value<bool>()) r = *b ? "yes" : "no";
      else if (auto s = rq->value<std::string>()) r = *s;
      if (r == "yes") def.requestable = Requestable::Yes;
      else if (r == "no") def.requestable = Requestable::No;
      else if (r == "forced") def.requestable = Requestable::Forced;
      else throw LoadError(path, rq->source().begin.line, "requestable", "expected yes, no or forced");
    }
    if (auto* mv = t->get("multi_valued")) {
      if (auto b = mv->value<bool>()) def.multi_valued = *b;
      else throw LoadError(path, mv->source().begin.line, "multi_valued", "expected true or false");
    }
    if (auto* d = t->get("default")) {
      try {
        if (auto s = d->value<std::string>()) def.default_amount = parse_number(def.type, *s);
        else if (auto x = d->value<double>()) def.default_amount = *x;
        else throw ValueError("expected a number or a string");
        if (def.consumable) check_number(def, *def.default_amount);
        if (!is_numeric(def.type)) throw ValueError("only consumables may have a default value");
      } catch (const ValueError& e) {
        throw LoadError(path, d->source().begin.line, "default", fmt::format("attribute '{}': {}", def.name, e.what()));
      }
    }
    try {
      farm.catalog.add(std::move(def));
    } catch (const ValueError& e) {
      throw LoadError(path, line, "attribute", e.what());
    }
  }
  if (auto* glob = tbl["global"].as_table()) {
    auto read_values = [&](const toml::table& t, ValueKind kind, const std::string& prefix) {
      for (auto&& [k, v] : t) {
        const std::string key(k.str());
        if (kind == ValueKind::Fixed && key == "load" && v.is_table()) continue;
        const auto attr = farm.catalog.find(key);
        if (!attr) throw LoadError(path, v.source().begin.line, prefix + key, "unknown attribute");
        std::string text;
        if (auto str = v.value<std::string>()) text = *str;
        else if (const auto* i = v.as_integer()) text = fmt::format("{}", i->get());  // (not a float's conversion)
        else if (auto d = v.value<double>()) text = fmt::format("{}", *d);
        else if (auto b = v.value<bool>()) text = *b ? "true" : "false";
        else throw LoadError(path, v.source().begin.line, prefix + key, "expected a string, number or boolean");
        farm.globals.push_back({*attr, text, kind, v.source().begin.line});
      }
    };
    read_values(*glob, ValueKind::Fixed, "global.");
    if (auto* load = (*glob)["load"].as_table()) read_values(*load, ValueKind::Load, "global.load.");
  }
  if (!farm.power_attribute.empty()) {
    auto a = farm.catalog.find(farm.power_attribute);
    if (!a || !is_numeric(farm.catalog.at(*a).type))
      throw LoadError(path, 0, "policy.power", fmt::format("'{}' is not a numeric attribute", farm.power_attribute));
  }
  return farm;
}

}  // namespace

FarmFile read_farm_toml(const std::string& path) {
  require_not_directory(path);
  try {
    return farm_from_toml(toml::parse_file(path), path);
  } catch (const toml::parse_error& e) {
    throw LoadError(path, e.source().begin.line, "", std::string(e.description()));
  }
}

FarmFile read_farm_toml_text(std::string_view text, const std::string& source) {
  try {
    return farm_from_toml(toml::parse(text, source), source);
  } catch (const toml::parse_error& e) {
    throw LoadError(source, e.source().begin.line, "", std::string(e.description()));
  }
}

namespace {

// Sets the values of an "attrs" or "load" object through `setter(attr index, text or number)`.
template <class Setter>
void read_values(const simdjson::dom::object& values, const FarmFile& farm, const std::string& path, size_t ln,
                 const std::string& prefix, Setter setter) {
  std::string text;
  for (auto a : values) {
    const std::string field_name = fmt::format("{}.{}", prefix, std::string_view(a.key));
    const auto idx = farm.catalog.find(a.key);
    if (!idx) throw LoadError(path, ln, field_name, "unknown attribute");
    const AttributeDef& def = farm.catalog.at(*idx);
    if (def.multi_valued && a.value.type() == element_type::ARRAY) continue;  // handled by the caller
    try {
      if (is_numeric(def.type)) {
        setter(*idx, std::string_view{}, numeric_value(def, a.value));
      } else {
        if (!scalar_text(a.value, text)) throw ValueError("expected a string");
        setter(*idx, std::string_view(text), 0.0);
      }
    } catch (const ValueError& e) {
      throw LoadError(path, ln, field_name, e.what());
    }
  }
}

void read_hosts(const std::string& path, const FarmFile& farm, TaskerBuilder& b, const ProgressFn& progress) {
  LineReader in(path, progress);
  simdjson::dom::parser parser;
  std::string_view line;
  while (in.next(line)) {
    if (blank(line)) continue;
    const size_t ln = in.line();
    auto obj = parse_object(parser, line, path, ln);
    element name_el;
    if (obj["name"].get(name_el) || name_el.type() != element_type::STRING)
      throw LoadError(path, ln, "name", "a host needs a string name");
    uint32_t h = 0;
    try {
      h = b.add_host(std::string(std::string_view(name_el.get_string().value_unsafe())));
    } catch (const ValueError& e) {
      throw LoadError(path, ln, "name", e.what());
    }
    for (auto field : obj) {
      const std::string_view key = field.key;
      if (key == "name") continue;
      if (key != "attrs" && key != "load") throw LoadError(path, ln, std::string(key), "unknown key");
      simdjson::dom::object values;
      if (field.value.get_object().get(values)) throw LoadError(path, ln, std::string(key), "expected an object");
      const ValueKind kind = key == "load" ? ValueKind::Load : ValueKind::Fixed;
      read_values(values, farm, path, ln, std::string(key), [&](uint32_t attr, std::string_view text, double num) {
        b.set_host(h, attr,
                   text.empty() && is_numeric(farm.catalog.at(attr).type) ? fmt::format("{}", num) : std::string(text),
                   kind);
      });
    }
  }
}

}  // namespace

TaskerTable read_taskers_jsonl(const std::string& path, const FarmFile& farm, const std::string& hosts_path,
                               const ProgressFn& progress, std::vector<std::vector<double>>* utilized) {
  struct Utilized {
    size_t tasker;
    int k;
    double amount;
  };
  std::vector<Utilized> used;
  size_t count = 0;
  TaskerBuilder b(farm.catalog);
  apply_globals(farm, b);
  if (!hosts_path.empty()) read_hosts(hosts_path, farm, b, progress);
  LineReader in(path, progress);
  simdjson::dom::parser parser;
  const uint32_t power_attr =
      farm.power_attribute.empty() ? kNone : farm.catalog.find(farm.power_attribute).value_or(kNone);
  std::string_view line;
  while (in.next(line)) {
    if (blank(line)) continue;
    const size_t ln = in.line();
    auto obj = parse_object(parser, line, path, ln);
    element name_el, host_el;
    if (obj["name"].get(name_el) || name_el.type() != element_type::STRING)
      throw LoadError(path, ln, "name", "a tasker needs a string name");
    uint32_t host = kNone;
    if (!obj["host"].get(host_el)) {
      if (host_el.type() != element_type::STRING) throw LoadError(path, ln, "host", "expected a string");
      const std::string_view hn = host_el.get_string().value_unsafe();
      const auto found = b.find_host(hn);
      host = found ? *found : b.add_host(std::string(hn));
    }
    try {
      b.add(std::string(std::string_view(name_el.get_string().value_unsafe())), 1.0, host);
    } catch (const ValueError& e) {
      throw LoadError(path, ln, "name", e.what());
    }
    ++count;
    bool power_given = false;
    for (auto field : obj) {
      const std::string_view key = field.key;
      if (key == "name" || key == "host") continue;
      if (key == "power") {
        double p = 0;
        if (!number_of(field.value, p)) throw LoadError(path, ln, "power", "expected a number");
        b.set_power(p);
        power_given = true;
        continue;
      }
      if (key == "utilized") {
        simdjson::dom::object values;
        if (field.value.get_object().get(values)) throw LoadError(path, ln, "utilized", "expected an object");
        read_values(values, farm, path, ln, "utilized", [&](uint32_t attr, std::string_view, double num) {
          const int k = farm.catalog.consumable_slot(attr);
          if (k < 0) throw ValueError("not a consumable");
          if (!(num >= 0)) throw ValueError("must not be negative");
          used.push_back({count - 1, k, num});
        });
        continue;
      }
      if (key != "attrs") throw LoadError(path, ln, std::string(key), "unknown key");
      simdjson::dom::object attrs;
      if (field.value.get_object().get(attrs)) throw LoadError(path, ln, "attrs", "expected an object");
      for (auto a : attrs) {  // set-valued attributes: a list (or one string)
        const auto idx = farm.catalog.find(a.key);
        if (!idx || !farm.catalog.at(*idx).multi_valued) continue;
        std::vector<std::string> vals;
        std::string text;
        if (a.value.type() == element_type::ARRAY) {
          simdjson::dom::array arr;
          if (a.value.get_array().get(arr))
            throw LoadError(path, ln, fmt::format("attrs.{}", std::string_view(a.key)), "expected a list");
          for (auto item : arr) {
            if (!scalar_text(item, text))
              throw LoadError(path, ln, fmt::format("attrs.{}", std::string_view(a.key)), "list items must be strings");
            vals.push_back(text);
          }
        } else if (scalar_text(a.value, text)) {
          vals.push_back(text);
        } else {
          throw LoadError(path, ln, fmt::format("attrs.{}", std::string_view(a.key)), "expected a list of strings");
        }
        if (!vals.empty()) b.set_list(*idx, vals);
      }
      read_values(attrs, farm, path, ln, "attrs", [&](uint32_t attr, std::string_view text, double num) {
        if (farm.catalog.at(attr).multi_valued) return;  // set above
        if (is_numeric(farm.catalog.at(attr).type)) {
          b.set_number(attr, num);
          if (attr == power_attr && !power_given) b.set_power(num);
        } else {
          b.set(attr, text);
        }
      });
    }
  }
  try {
    TaskerTable table = std::move(b).build();
    if (utilized && !used.empty()) {  // by tasker row (rows are not in input order)
      std::vector<uint32_t> row_of(table.size());
      for (uint32_t r = 0; r < table.size(); ++r) row_of[table.input_index[r]] = r;
      utilized->assign(farm.catalog.consumables().size(), {});
      for (const Utilized& u : used) {
        auto& per = (*utilized)[static_cast<size_t>(u.k)];
        if (per.empty()) per.assign(count, 0.0);
        per[row_of[u.tasker]] = u.amount;
      }
    }
    return table;
  } catch (const OverrideError& e) {  // name the file the lower value came from
    throw LoadError(e.host_level && !hosts_path.empty() ? hosts_path : path, 0, "", e.what());
  } catch (const ValueError& e) {
    throw LoadError(path, 0, "", e.what());
  }
}

void apply_globals(const FarmFile& farm, TaskerBuilder& b) {
  for (const auto& g : farm.globals) {
    try {
      b.set_global(g.attr, g.text, g.kind);
    } catch (const ValueError& e) {
      throw LoadError(farm.path, g.line, "global." + farm.catalog.at(g.attr).name, e.what());
    }
  }
}

Dataset dataset_from(FarmFile&& farm, TaskerTable taskers, JobTable jobs) {
  Dataset ds;
  ds.taskers = std::move(taskers);
  ds.jobs = std::move(jobs);
  ds.catalog = std::move(farm.catalog);
  ds.name = std::move(farm.name);
  ds.power_attribute = std::move(farm.power_attribute);
  ds.policy = std::move(farm.policy);
  return ds;
}

Dataset load_native(const NativePaths& paths, const ProgressFn& progress, const std::string& policy) {
  if (is_accelerator_farm(paths.farm)) {
    if (!paths.hosts.empty())
      throw LoadError(paths.hosts, 0, "", "an Accelerator farm ([accelerator] in farm.toml) has no hosts file");
    return load_vov_native(paths.farm, paths.taskers, paths.jobs, progress, policy);
  }
  FarmFile farm = read_farm_toml(paths.farm);
  std::vector<std::vector<double>> utilized;
  TaskerTable taskers = read_taskers_jsonl(paths.taskers, farm, paths.hosts, progress, &utilized);
  JobTable jobs = read_jobs_jsonl(paths.jobs, farm.catalog, progress);
  Dataset ds = dataset_from(std::move(farm), std::move(taskers), std::move(jobs));
  ds.farm.load = std::move(utilized);
  return ds;
}

std::optional<Dataset> load_native_job(const NativePaths& paths, std::string_view id, const ProgressFn& progress) {
  if (is_accelerator_farm(paths.farm)) return std::nullopt;
  FarmFile farm = read_farm_toml(paths.farm);
  std::optional<JobTable> job = find_job_jsonl(paths.jobs, farm.catalog, id, progress);
  if (!job) return std::nullopt;
  std::vector<std::vector<double>> utilized;
  TaskerTable taskers = read_taskers_jsonl(paths.taskers, farm, paths.hosts, progress, &utilized);
  Dataset ds = dataset_from(std::move(farm), std::move(taskers), std::move(*job));
  ds.farm.load = std::move(utilized);
  return ds;
}

}  // namespace colmatch::loaders
