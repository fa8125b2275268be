#include "loaders/native.hpp"

#include <cmath>
#include <map>
#include <numeric>
#include <unordered_set>

#include <fmt/format.h>
#include <simdjson.h>
#include <toml++/toml.h>

#include "loaders/errors.hpp"
#include "loaders/policy.hpp"
#include "loaders/vov.hpp"

namespace colmatch::loaders {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// The text of a JSON scalar, for attribute values given as strings, numbers or booleans.
bool scalar_text(element v, std::string& out) {
  switch (v.type()) {
    case element_type::STRING: out = std::string(std::string_view(v.get_string().value_unsafe())); return true;
    case element_type::INT64: out = fmt::format("{}", int64_t(v.get_int64().value_unsafe())); return true;
    case element_type::UINT64: out = fmt::format("{}", uint64_t(v.get_uint64().value_unsafe())); return true;
    case element_type::DOUBLE: out = fmt::format("{}", double(v.get_double().value_unsafe())); return true;
    case element_type::BOOL: out = v.get_bool().value_unsafe() ? "true" : "false"; return true;
    default: return false;
  }
}

bool number_of(element v, double& out) {
  switch (v.type()) {
    case element_type::INT64: out = static_cast<double>(int64_t(v.get_int64().value_unsafe())); return true;
    case element_type::UINT64: out = static_cast<double>(uint64_t(v.get_uint64().value_unsafe())); return true;
    case element_type::DOUBLE: out = v.get_double().value_unsafe(); return true;
    default: return false;
  }
}

// Parses a value of attribute `def` given as JSON (number, bool or string).
double numeric_value(const AttributeDef& def, element v) {
  double d = 0;
  if (number_of(v, d)) return check_number(def, d);  // the same rules as the same value as text
  if (v.type() == element_type::BOOL) return v.get_bool().value_unsafe() ? 1 : 0;
  std::string text;
  if (!scalar_text(v, text)) throw ValueError("expected a number or a string");
  return check_number(def, parse_number(def.type, text));
}

simdjson::dom::object parse_object(simdjson::dom::parser& parser, std::string_view line, const std::string& path,
                                   size_t lineno) {
  element doc;
  if (auto err = parser.parse(line.data(), line.size(), true).get(doc))
    throw LoadError(path, lineno, "", fmt::format("malformed JSON: {}", simdjson::error_message(err)));
  simdjson::dom::object obj;
  if (doc.get_object().get(obj)) throw LoadError(path, lineno, "", "expected a JSON object");
  return obj;
}

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }

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

// A job's "solutions" (with "gate" and "outcomes" when gated) as a choice of `b`, one per distinct text
// (`seen`); "" in `why` unless something is wrong, then the reason.
uint32_t read_choice(const std::optional<simdjson::dom::element>& solutions_el,
                     const std::optional<simdjson::dom::element>& gate_el,
                     const std::optional<simdjson::dom::element>& outcomes_el, const Catalog& catalog, JobBuilder& b,
                     std::map<std::string, uint32_t, std::less<>>& seen, std::string& why) {
  using simdjson::dom::element_type;
  std::string key;
  for (const auto* el : {&solutions_el, &gate_el, &outcomes_el}) {
    key += *el ? std::string(simdjson::minify(**el)) : std::string();
    key += '\n';
  }
  if (const auto it = seen.find(key); it != seen.end()) return it->second;
  const bool gated = gate_el || outcomes_el;
  if (gated != (gate_el && outcomes_el)) {
    why = "a gate needs both \"gate\" and \"outcomes\"";
    return 0;
  }
  simdjson::dom::array arr;
  std::vector<uint32_t> requests;
  std::vector<std::vector<std::pair<uint32_t, double>>> amounts;
  const size_t least = gated ? 0 : 2;
  if (!solutions_el || solutions_el->get_array().get(arr) || arr.size() < least || arr.size() > 4096) {
    why = fmt::format("expected a list of {} to 4096 solutions", least);
    return 0;
  }
  auto consumable = [&](std::string_view name, simdjson::dom::element v, std::pair<uint32_t, double>& out) {
    const auto idx = catalog.find(name);
    if (!idx || catalog.consumable_slot(*idx) < 0) {
      why = fmt::format("{}: not a consumable", name);
      return false;
    }
    try {
      out = {*idx, numeric_value(catalog.at(*idx), v)};
    } catch (const ValueError& e) {
      why = fmt::format("{}: {}", name, e.what());
      return false;
    }
    return true;
  };
  for (auto item : arr) {
    simdjson::dom::object sol;
    if (item.get_object().get(sol)) {
      why = "expected a solution {\"requests\": ..., \"resources\": {...}}";
      return 0;
    }
    requests.push_back(0);
    amounts.emplace_back();
    for (auto f : sol) {
      const std::string_view k = f.key;
      std::string text;
      simdjson::dom::object res;
      if (k == "requests" && f.value.type() == element_type::STRING && scalar_text(f.value, text)) {
        try {
          requests.back() = b.intern_text(text);
        } catch (const RequestError& e) {
          why = fmt::format("requests: {}", e.what());
          return 0;
        }
      } else if (k == "resources" && !f.value.get_object().get(res)) {
        for (auto r : res) {
          std::pair<uint32_t, double> a;
          if (!consumable(r.key, r.value, a)) return 0;
          amounts.back().push_back(a);
        }
      } else {
        why = fmt::format("{}: expected \"requests\" (a string) or \"resources\" (an object)", k);
        return 0;
      }
    }
  }
  uint32_t c = 0;
  try {
    c = b.add_choice(requests, amounts);
    if (gated) {
      std::vector<std::pair<uint32_t, double>> gate;
      simdjson::dom::array g, outs;
      if (gate_el->get_array().get(g) || g.size() > JobBuilder::kMaxGate) {
        why = fmt::format("gate: expected a list of at most {} [pool, amount] pairs", JobBuilder::kMaxGate);
        return 0;
      }
      for (auto pair : g) {
        simdjson::dom::array p;
        std::string name;
        if (pair.get_array().get(p) || p.size() != 2 || !scalar_text(p.at(0).value_unsafe(), name)) {
          why = "gate: expected [pool, amount] pairs";
          return 0;
        }
        gate.emplace_back();
        if (!consumable(name, p.at(1).value_unsafe(), gate.back())) return 0;
      }
      std::vector<JobTable::Choice::Outcome> outcomes;
      if (outcomes_el->get_array().get(outs)) {
        why = "outcomes: expected a list";
        return 0;
      }
      for (auto o : outs) {
        simdjson::dom::object obj;
        JobTable::Choice::Outcome x;
        if (o.get_object().get(obj) || obj.size() != 1) {
          why = "outcomes: expected {\"place\": [...]}, {\"wait\": n} or {\"remove\": \"why\"}";
          return 0;
        }
        const auto f = *obj.begin();
        const std::string_view k = f.key;
        simdjson::dom::array list;
        double n = 0;
        if (k == "place" && !f.value.get_array().get(list)) {
          for (auto s : list) {
            if (!number_of(s, n) || n < 0 || n != std::floor(n) || n >= 4096) {
              why = "outcomes: a solution's index";
              return 0;
            }
            x.solutions.push_back(static_cast<uint32_t>(n));
          }
        } else if (k == "wait" && number_of(f.value, n) && n >= 0 && n == std::floor(n) && n < 64) {
          x.kind = JobTable::Choice::Outcome::Kind::Wait;
          x.wait_on = static_cast<uint32_t>(n);
        } else if (k == "remove" && scalar_text(f.value, x.why)) {
          x.kind = JobTable::Choice::Outcome::Kind::Remove;
        } else {
          why = "outcomes: expected {\"place\": [...]}, {\"wait\": n} or {\"remove\": \"why\"}";
          return 0;
        }
        outcomes.push_back(std::move(x));
      }
      b.set_gate(c, gate, std::move(outcomes));
    }
  } catch (const ValueError& e) {
    why = e.what();
    return 0;
  }
  seen.emplace(std::move(key), c);
  return c;
}

JobTable read_jobs_jsonl(const std::string& path, const Catalog& catalog, const ProgressFn& progress) {
  LineReader in(path, progress);
  simdjson::dom::parser parser;
  JobBuilder b(catalog);
  JobIds ids;
  std::map<std::string, uint32_t, std::less<>> choices;  // a job's "solutions" as read (minified) -> its choice
  std::string_view line;
  while (in.next(line)) {
    if (blank(line)) continue;
    const size_t ln = in.line();
    auto obj = parse_object(parser, line, path, ln);
    element id_el;
    if (obj["id"].get(id_el)) throw LoadError(path, ln, "id", "a job needs an id");
    std::string id;
    if (!scalar_text(id_el, id) || id.empty()) throw LoadError(path, ln, "id", "expected a string or number");
    ids.add(path, ln, "id", id);
    std::string owner, group;
    double priority = 0, submit = 0, slots = 1;
    element el;
    if (!obj["owner"].get(el) && !scalar_text(el, owner)) throw LoadError(path, ln, "owner", "expected a string");
    if (!obj["group"].get(el) && !scalar_text(el, group)) throw LoadError(path, ln, "group", "expected a string");
    if (!obj["priority"].get(el) && !number_of(el, priority))
      throw LoadError(path, ln, "priority", "expected a number");
    if (!obj["submit"].get(el) && !number_of(el, submit)) throw LoadError(path, ln, "submit", "expected a number");
    if (!obj["slots"].get(el) && (!number_of(el, slots) || slots < 1 || slots != std::floor(slots) || slots > 1e9))
      throw LoadError(path, ln, "slots", "expected a whole number >= 1");
    const uint32_t j = b.add(id, owner, group, priority, submit, static_cast<uint32_t>(slots));
    double runtime = std::numeric_limits<double>::quiet_NaN(), walltime = runtime;
    std::string queue, account, qos;
    std::optional<element> solutions_el, gate_el, outcomes_el;
    auto reject = [&](const std::string& field, const std::string& why) {
      b.reject(j, fmt::format("{}:{}: job {}: field '{}': {}", path, ln, id, field, why));
    };
    for (auto field : obj) {
      const std::string_view key = field.key;
      if (key == "id" || key == "owner" || key == "group" || key == "priority" || key == "submit" || key == "slots")
        continue;
      if (key == "requests" || key == "soft") {  // the hard request, or the soft requests
        const std::string name(key);
        std::string text;
        if (field.value.type() != element_type::STRING || !scalar_text(field.value, text)) {
          reject(name, "expected a string");
          continue;
        }
        try {
          if (key == "requests") b.set_request(text);
          else b.set_soft(text);
        } catch (const RequestError& e) {
          reject(name, e.what());
        }
      } else if (key == "resources" || key == "utilization") {
        // per consumable: the amount requested, or the fraction of its charge the job uses
        const std::string name(key);
        simdjson::dom::object res;
        if (field.value.get_object().get(res)) {
          reject(name, "expected an object");
          continue;
        }
        for (auto r : res) {
          const std::string fname = fmt::format("{}.{}", name, std::string_view(r.key));
          const auto idx = catalog.find(r.key);
          if (!idx) {
            reject(fname, "unknown attribute");
            break;
          }
          try {
            if (key == "resources") {
              b.set_amount(*idx, numeric_value(catalog.at(*idx), r.value));
            } else {
              double v = 0;
              if (!number_of(r.value, v)) throw ValueError("expected a number");
              b.set_utilization(*idx, v);
            }
          } catch (const ValueError& e) {
            reject(fname, e.what());
            break;
          }
        }
      } else if (key == "allocation_rule") {
        std::string rule;
        scalar_text(field.value, rule);
        if (rule == "$fill_up") b.set_rule(AllocationRule::FillUp);
        else if (rule != "$pe_slots") reject("allocation_rule", "expected \"$pe_slots\" or \"$fill_up\"");
      } else if (key == "runtime" || key == "walltime") {
        double v = 0;
        if (!number_of(field.value, v) || !(v >= 0) || !std::isfinite(v)) {
          reject(std::string(key), "expected a number of seconds >= 0");
          continue;
        }
        if (key == "runtime") runtime = v;
        else walltime = v;
      } else if (key == "hold") {  // true: held until the end; a number: held until that time
        double until = 0;
        if (field.value.type() == element_type::BOOL) {
          if (field.value.get_bool().value_unsafe()) b.set_hold(std::numeric_limits<double>::infinity());
        } else if (number_of(field.value, until) && std::isfinite(until)) {
          b.set_hold(until);
        } else {
          reject("hold", "expected true, false or a release time in seconds");
        }
      } else if (key == "depends") {
        simdjson::dom::array arr;
        std::vector<std::string> deps;
        std::string text;
        bool ok = !field.value.get_array().get(arr);
        if (ok)
          for (auto item : arr) ok = ok && scalar_text(item, text) && (deps.push_back(text), true);
        if (!ok) {
          reject("depends", "expected a list of job ids");
          continue;
        }
        b.set_depends(std::move(deps));
      } else if (key == "queue" || key == "class" || key == "account" || key == "qos") {
        std::string text;
        if (!scalar_text(field.value, text)) {
          reject(std::string(key), "expected a string");
          continue;
        }
        (key == "account" ? account : key == "qos" ? qos : queue) = text;
      } else if (key == "rejected") {
        std::string why;
        scalar_text(field.value, why);
        b.reject(j, why);  // a rejection saved by write_jobs_jsonl: keep its original reason
      } else if (key == "solutions" || key == "gate" || key == "outcomes") {  // Accelerator scheduling solutions
        (key == "solutions" ? solutions_el : key == "gate" ? gate_el : outcomes_el) = field.value;
      } else if (key == "note") {  // a remark saved with the job (an Accelerator "depth limit")
        std::string note;
        if (!scalar_text(field.value, note) || note.empty() || note.size() > 256) {
          reject("note", "expected a short string (1 to 256 bytes)");
          continue;
        }
        b.set_note(j, note);
      } else {
        throw LoadError(path, ln, std::string(key), "unknown key");
      }
    }
    if (solutions_el || gate_el || outcomes_el) {
      std::string why;
      const uint32_t c = read_choice(solutions_el, gate_el, outcomes_el, catalog, b, choices, why);
      if (why.empty()) b.set_choice(c);
      else reject("solutions", why);
    }
    b.set_times(runtime, walltime);
    b.set_credentials(queue, account, qos);
  }
  return std::move(b).build();
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

}  // namespace colmatch::loaders
