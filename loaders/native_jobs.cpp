// The native format's jobs.jsonl (issue 29: read in parallel pieces like the Accelerator's jobs, one
// prototype per kind of job): native.hpp.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <simdjson.h>
#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

#include "loaders/errors.hpp"
#include "loaders/jsonl_jobs.hpp"
#include "loaders/native.hpp"
#include "loaders/native_json.hpp"

namespace colmatch::loaders {
namespace {

// A count of 1 to 10^9 written as a whole decimal number.
bool whole_count(std::string_view text, uint32_t& out) {
  uint64_t v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v < 1 || v > 1000000000) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

using namespace native_json;  // scalar_text, number_of, numeric_value, parse_object, blank, element
using Choices = std::map<std::string, uint32_t, std::less<>>;  // a job's "solutions" as read -> its choice

// A job's "solutions" (with "gate" and "outcomes" when gated) as a choice of `b`, one per distinct text
// (`seen`); "" in `why` unless something is wrong, then the reason.
// Long (about 130 lines) on purpose: the solutions, the gate and its outcomes, each field checked where
// it is read so that an error names it.
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

// A job line's keys as the reader tells them apart (Other: a known key the job's kind holds).
enum class Field : uint8_t {
  Id,
  Owner,
  Group,
  Priority,
  Submit,
  Slots,
  Runtime,
  Walltime,
  Depends,
  Rejected,
  Other,
  Unknown
};

// The key's Field: by its length first (one comparison or two per key, not one per known key).
Field field_of(std::string_view k) noexcept {
  auto is = [&](std::string_view x) { return k == x; };
  switch (k.size()) {
    case 2: return is("id") ? Field::Id : Field::Unknown;
    case 3: return is("qos") ? Field::Other : Field::Unknown;
    case 4: return is("soft") || is("hold") || is("gate") || is("note") ? Field::Other : Field::Unknown;
    case 5:
      if (is("owner")) return Field::Owner;
      if (is("group")) return Field::Group;
      if (is("slots")) return Field::Slots;
      return is("queue") || is("class") ? Field::Other : Field::Unknown;
    case 6: return is("submit") ? Field::Submit : Field::Unknown;
    case 7:
      if (is("runtime")) return Field::Runtime;
      if (is("depends")) return Field::Depends;
      return is("account") ? Field::Other : Field::Unknown;
    case 8:
      if (is("priority")) return Field::Priority;
      if (is("walltime")) return Field::Walltime;
      if (is("rejected")) return Field::Rejected;
      return is("requests") || is("outcomes") ? Field::Other : Field::Unknown;
    case 9: return is("resources") || is("solutions") || is("min_slots") ? Field::Other : Field::Unknown;
    case 11: return is("utilization") ? Field::Other : Field::Unknown;
    case 12: return is("master_queue") ? Field::Other : Field::Unknown;
    case 15: return is("allocation_rule") ? Field::Other : Field::Unknown;
    case 17: return is("master_only_queue") ? Field::Other : Field::Unknown;
    default: return Field::Unknown;
  }
}

// A job's id (a string or a number, not empty) from its "id" member (`el`, absent: nullopt). Throws
// LoadError.
std::string job_id(const std::optional<element>& el, const std::string& path, size_t ln) {
  if (!el) throw LoadError(path, ln, "id", "a job needs an id");
  std::string id;
  if (!scalar_text(*el, id) || id.empty()) throw LoadError(path, ln, "id", "expected a string or number");
  return id;
}

// The members every job line may state about who, how important, when and how many slots (absent:
// nullopt), each the first of its name.
struct HeadFields {
  std::optional<element> owner, group, priority, submit, slots;
};
HeadFields head_fields(const simdjson::dom::object& obj) {
  HeadFields f;
  element el;
  if (!obj["owner"].get(el)) f.owner = el;
  if (!obj["group"].get(el)) f.group = el;
  if (!obj["priority"].get(el)) f.priority = el;
  if (!obj["submit"].get(el)) f.submit = el;
  if (!obj["slots"].get(el)) f.slots = el;
  return f;
}

// What those members say, checked in that order. Throws LoadError.
struct JobHead {
  std::string owner, group;
  double priority = 0, submit = 0, slots = 1;
};
JobHead job_head(const HeadFields& f, const std::string& path, size_t ln) {
  JobHead h;
  if (f.owner && !scalar_text(*f.owner, h.owner)) throw LoadError(path, ln, "owner", "expected a string");
  if (f.group && !scalar_text(*f.group, h.group)) throw LoadError(path, ln, "group", "expected a string");
  if (f.priority && !number_of(*f.priority, h.priority)) throw LoadError(path, ln, "priority", "expected a number");
  if (f.submit && !number_of(*f.submit, h.submit)) throw LoadError(path, ln, "submit", "expected a number");
  if (f.slots && (!number_of(*f.slots, h.slots) || h.slots < 1 || h.slots != std::floor(h.slots) || h.slots > 1e9))
    throw LoadError(path, ln, "slots", "expected a whole number >= 1");
  return h;
}

// The "id" member of a job line, or nullopt.
std::optional<element> id_field(const simdjson::dom::object& obj) {
  element el;
  if (obj["id"].get(el)) return std::nullopt;
  return el;
}

// What reading a job's fields found wrong with it, in field order (the first stands): a field and why,
// or a rejection saved by write_jobs_jsonl (`saved`: its reason as it was).
struct Rejection {
  std::string field, why;
  bool saved = false;
};

// Job line `obj` (line `ln` of `path`, id `id`, head `h`) as a job of `b`: added, its fields set, its
// rejections in `rejected`, its dependencies in `depends`. Throws LoadError for an unknown key.
// Long (about 120 lines) on purpose: one branch per field of a job line (docs/formats/native.md).
void add_job(const simdjson::dom::object& obj, const std::string& path, size_t ln, const std::string& id,
             const JobHead& h, const Catalog& catalog, JobBuilder& b, Choices& choices,
             std::vector<Rejection>& rejected, std::optional<std::vector<std::string>>& depends) {
  rejected.clear();
  depends.reset();
  const uint32_t j = b.add(id, h.owner, h.group, h.priority, h.submit, static_cast<uint32_t>(h.slots));
  double runtime = std::numeric_limits<double>::quiet_NaN(), walltime = runtime;
  uint32_t min_slots = 0, per_host = 0;  // a Grid Engine host rule's range and slots a host
  std::string master_queue;              // its master's request (qsub -masterq)
  std::string master_only_queue;         // its master-only request (-masterq beside -q)
  std::string queue, account, qos;
  std::optional<element> solutions_el, gate_el, outcomes_el;
  auto reject = [&](const std::string& field, const std::string& why) { rejected.push_back({field, why, false}); };
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
      else if (rule == "1") b.set_rule(AllocationRule::OnePerTasker);
      else if (rule == "host $pe_slots") b.set_rule(AllocationRule::HostPeSlots);
      else if (rule == "host $fill_up") b.set_rule(AllocationRule::HostFillUp);
      else if (rule == "host $round_robin") b.set_rule(AllocationRule::HostRoundRobin);
      else if (rule.rfind("host ", 0) == 0 && whole_count(rule.substr(5), per_host))
        b.set_rule(AllocationRule::HostBlocks);
      else if (rule != "$pe_slots")
        reject("allocation_rule",
               "expected \"$pe_slots\", \"$fill_up\", \"1\" or a Grid Engine host rule (\"host $pe_slots\", "
               "\"host $fill_up\", \"host $round_robin\", \"host N\")");
    } else if (key == "master_queue") {
      if (field.value.type() != element_type::STRING || !scalar_text(field.value, master_queue) || master_queue.empty())
        reject("master_queue", "expected a request (the taskers that may hold the master task)");
    } else if (key == "master_only_queue") {
      if (field.value.type() != element_type::STRING || !scalar_text(field.value, master_only_queue) ||
          master_only_queue.empty())
        reject("master_only_queue",
               "expected a request (the master queue's taskers that give one slot at most until a host gave the "
               "master)");
    } else if (key == "min_slots") {
      double v = 0;
      if (!number_of(field.value, v) || !(v >= 1) || v != std::floor(v) || v > h.slots) {
        reject("min_slots", "expected a whole number from 1 to the job's slots");
        continue;
      }
      min_slots = static_cast<uint32_t>(v);
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
      depends = std::move(deps);
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
      rejected.push_back({"rejected", why, true});  // saved by write_jobs_jsonl: its original reason
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
  if (min_slots > 0 || per_host > 0) {
    try {
      b.set_pe_shape(min_slots, per_host);
    } catch (const ValueError& e) {
      reject("min_slots", e.what());
    }
  }
  if (!master_only_queue.empty() && master_queue.empty()) {
    reject("master_only_queue", "a master-only queue needs a master_queue");
  } else if (!master_queue.empty() && min_slots > 0) {
    reject("master_queue", "a master queue beside a slot range (min_slots) is not placed yet");
  } else if (!master_queue.empty()) {
    const char* field = "master_queue";
    try {
      b.set_master_request(master_queue);
      field = "master_only_queue";
      if (!master_only_queue.empty()) b.set_master_only_request(master_only_queue);
    } catch (const RequestError& e) {
      reject(field, e.what());
    } catch (const ValueError& e) {
      reject(field, e.what());
    }
  }
}

// The reason job `id` on line `ln` is rejected with.
std::string rejection_text(const Rejection& r, const std::string& path, size_t ln, std::string_view id) {
  return r.saved ? r.why : fmt::format("{}:{}: job {}: field '{}': {}", path, ln, id, r.field, r.why);
}

// Appends a canonical form of JSON value `v` to `key`: its type, then its content (texts with their
// length, numbers as their bits, lists and objects member by member). Equal forms, equal values as the
// reader takes them; the depth is simdjson's, bounded when parsed.
void append_value(element v, std::string& key) {
  auto bytes = [&](const auto& x) { key.append(reinterpret_cast<const char*>(&x), sizeof x); };
  auto text = [&](std::string_view s) {
    bytes(static_cast<uint32_t>(s.size()));
    key.append(s);
  };
  switch (v.type()) {
    case element_type::STRING:
      key += 's';
      text(v.get_string().value_unsafe());
      return;
    case element_type::INT64:
      key += 'i';
      bytes(int64_t(v.get_int64().value_unsafe()));
      return;
    case element_type::UINT64:
      key += 'u';
      bytes(uint64_t(v.get_uint64().value_unsafe()));
      return;
    case element_type::DOUBLE:
      key += 'd';
      bytes(double(v.get_double().value_unsafe()));
      return;
    case element_type::BOOL: key += v.get_bool().value_unsafe() ? 'T' : 'F'; return;
    case element_type::NULL_VALUE: key += 'n'; return;
    case element_type::ARRAY: {
      simdjson::dom::array list;
      if (v.get_array().get(list)) return;
      key += '[';
      for (element x : list) append_value(x, key);
      key += ']';
      return;
    }
    case element_type::OBJECT: {
      simdjson::dom::object members;
      if (v.get_object().get(members)) return;
      key += '{';
      for (auto f : members) {
        text(f.key);
        append_value(f.value, key);
      }
      key += '}';
      return;
    }
  }
}

// A job's own time given as `el`: a number of seconds >= 0 (else the job is read alone: its line says why).
bool own_time(element el, double& out) { return number_of(el, out) && out >= 0 && std::isfinite(out); }

// Reads the jobs of `piece` into `out`: each job's id, line, times, owner, group and priority, and its
// kind in `kinds` (the line but for those; a job whose line says something of its own, dependencies, a saved rejection
// or a time the copies cannot take, is a kind of its own). The first LoadError is kept in out.error (the
// job of its line is kept, without a kind, when its id was read: a repeated id comes first).
void read_piece(const std::string& path, const LinePiece& piece, jsonl::KindTexts& kinds, jsonl::JobPiece& out) {
  jsonl::KindTexts::Local& my_kinds = kinds.local();
  static thread_local simdjson::dom::parser parser;
  std::string key;
  out.first_line = piece.first_line;
  out.reset(piece.text.size());
  std::unordered_map<std::string, uint32_t> owners, groups;  // the piece's names -> their index
  auto name_index = [](std::unordered_map<std::string, uint32_t>& seen, std::vector<std::string>& names,
                       const std::string& name) {
    if (const auto it = seen.find(name); it != seen.end()) return it->second;  // no node made per job
    const auto index = static_cast<uint32_t>(names.size());
    seen.emplace(name, index);
    names.push_back(name);
    return index;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto take = [&](const element& doc, size_t ln, std::string_view text) {
    simdjson::dom::object obj;
    if (doc.get_object().get(obj)) throw LoadError(path, ln, "", "expected a JSON object");
    // One pass over the members: the id, the head, the times, the first unknown key; the rest is the key
    std::optional<element> id_el;
    HeadFields hf;
    std::optional<std::string_view> unknown;  // the first unknown key ("" is a key too)
    double runtime = nan, walltime = nan;
    bool alone = false;
    key.clear();
    for (auto field : obj) {
      const std::string_view name = field.key;
      auto first = [&](std::optional<element>& slot) {
        if (!slot) slot = field.value;
      };
      switch (field_of(name)) {
        case Field::Id: first(id_el); continue;
        case Field::Owner: first(hf.owner); continue;
        case Field::Group: first(hf.group); continue;
        case Field::Priority: first(hf.priority); continue;
        case Field::Submit: first(hf.submit); continue;
        case Field::Slots: first(hf.slots); break;  // the prototype's: in the key
        case Field::Runtime:
        case Field::Walltime: {
          const bool ok = own_time(field.value, name == "runtime" ? runtime : walltime);
          alone = alone || !ok;
          continue;
        }
        case Field::Unknown:
          if (!unknown) unknown = name;
          continue;
        case Field::Depends:
        case Field::Rejected: alone = true; break;
        case Field::Other: break;
      }
      key += 'k';
      key.append(name);
      key += '\0';
      append_value(field.value, key);
    }
    const std::string id = job_id(id_el, path, ln);
    if (out.id_text.size() + id.size() > UINT32_MAX)  // a piece is at most a few lines of 64 MiB
      throw LoadError(path, ln, "id", "more than 4 GiB of ids in one piece of the file");
    out.kind.push_back(kNone);
    out.line.push_back(static_cast<uint32_t>(ln - piece.first_line));
    out.id_text.append(id);
    out.id_end.push_back(static_cast<uint32_t>(out.id_text.size()));
    out.id_hash.push_back(std::hash<std::string_view>{}(id));
    const JobHead h = job_head(hf, path, ln);
    if (unknown) throw LoadError(path, ln, std::string(*unknown), "unknown key");
    alone = alone || !(h.submit >= 0);
    if (alone) {  // a kind of its own: the piece and the line make the key
      key.assign("\x01");
      key.append(reinterpret_cast<const char*>(&piece.index), sizeof piece.index);
      key.append(reinterpret_cast<const char*>(&ln), sizeof ln);
      if (!(runtime >= 0)) runtime = nan;
      if (!(walltime >= 0)) walltime = nan;
    }
    out.kind.back() = kinds.find_or_add(my_kinds, key, text);
    out.priority.push_back(h.priority);
    out.owner.push_back(name_index(owners, out.owner_names, h.owner));
    out.group.push_back(name_index(groups, out.group_names, h.group));
    out.push(out.submit, h.submit >= 0 ? h.submit : 0.0, 0.0);
    out.push(out.runtime, runtime, nan);
    out.push(out.walltime, walltime, nan);
  };
  jsonl::read_piece_documents(path, piece, parser, out, take);
}

}  // namespace

namespace {

// One job line read line by line: parsed, its id checked (and recorded in `ids` unless null), its head and
// keys checked, added to `b` and rejected there if its line says so. Its dependencies' ids, if any, are
// left in `depends` for the caller. The errors are the ones read_jobs_jsonl_sequential meets, in its order.
void read_job_line(std::string_view line, const std::string& path, size_t ln, const Catalog& catalog,
                   simdjson::dom::parser& parser, JobIds* ids, Choices& choices, JobBuilder& b,
                   std::optional<std::vector<std::string>>& depends) {
  auto obj = parse_object(parser, line, path, ln);
  const std::string id = job_id(id_field(obj), path, ln);
  if (ids != nullptr) ids->add(path, ln, "id", id);
  const JobHead h = job_head(head_fields(obj), path, ln);
  for (auto field : obj)
    if (field_of(field.key) == Field::Unknown)
      throw LoadError(path, ln, std::string(std::string_view(field.key)), "unknown key");
  std::vector<Rejection> rejected;
  add_job(obj, path, ln, id, h, catalog, b, choices, rejected, depends);
  if (!rejected.empty()) b.reject(static_cast<uint32_t>(b.size() - 1), rejection_text(rejected.front(), path, ln, id));
}

}  // namespace

JobTable read_jobs_jsonl_sequential(const std::string& path, const Catalog& catalog, const ProgressFn& progress) {
  LineReader in(path, progress);
  simdjson::dom::parser parser;
  JobBuilder b(catalog);
  JobIds ids;
  Choices choices;
  std::optional<std::vector<std::string>> depends;
  std::string_view line;
  while (in.next(line)) {
    if (blank(line)) continue;
    read_job_line(line, path, in.line(), catalog, parser, &ids, choices, b, depends);
    if (depends) b.set_depends(std::move(*depends));
  }
  return std::move(b).build();
}

std::optional<JobTable> find_job_jsonl(const std::string& path, const Catalog& catalog, std::string_view id,
                                       const ProgressFn& progress) {
  // The id as the file writes it when it needs no escape, quoted: a line without it is not the job's (a
  // line could escape characters that need none; then the scan misses it, and the caller reads the file).
  const bool quotable = std::none_of(
      id.begin(), id.end(), [](char ch) { return ch == '"' || ch == '\\' || static_cast<unsigned char>(ch) < 0x20; });
  if (!quotable) return std::nullopt;
  const std::string needle = fmt::format("\"{}\"", id);
  // The pieces are searched in parallel (memmem); a line holding the needle is parsed, and it is the job's
  // when its id is `id` (a line that does not parse is not: if it was the job's, the caller's whole read
  // reports it). The first such line in the file wins.
  std::mutex found_mutex;
  size_t found_piece = SIZE_MAX, found_line = 0;
  std::string found_text;
  for_each_line_piece(path, progress, [&](const LinePiece& piece) {
    {
      const std::lock_guard<std::mutex> lock(found_mutex);
      if (piece.index > found_piece) return;  // found earlier in the file
    }
    const std::string_view t = piece.text;
    std::optional<simdjson::dom::parser> parser;
    for (size_t at = 0; at < t.size();) {
      const void* hit = memmem(t.data() + at, t.size() - at, needle.data(), needle.size());
      if (hit == nullptr) return;
      const size_t pos = static_cast<size_t>(static_cast<const char*>(hit) - t.data());
      const size_t nl = t.rfind('\n', pos);
      const size_t begin = nl == std::string_view::npos ? 0 : nl + 1;
      const size_t end = std::min(t.find('\n', pos), t.size());
      std::string_view line = t.substr(begin, end - begin);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      at = end + 1;
      if (!parser) parser.emplace();
      simdjson::dom::object obj;
      std::string_view got;
      const auto el = parser->parse(line.data(), line.size());  // (the piece is padded for simdjson)
      if (el.get_object().get(obj) || obj["id"].get_string().get(got) || got != id) continue;
      const std::lock_guard<std::mutex> lock(found_mutex);
      if (piece.index < found_piece) {
        found_piece = piece.index;
        found_line = piece.first_line +
                     static_cast<size_t>(std::count(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(begin), '\n'));
        found_text = std::string(line);
      }
      return;
    }
  });
  if (found_piece == SIZE_MAX) return std::nullopt;
  // read as the line-by-line reader reads it (its dependencies left out: the other jobs are not read)
  simdjson::dom::parser parser;
  JobBuilder b(catalog);
  Choices choices;
  std::optional<std::vector<std::string>> depends;
  read_job_line(found_text, path, found_line, catalog, parser, nullptr, choices, b, depends);
  return std::move(b).build();
}

JobTable read_jobs_jsonl(const std::string& path, const Catalog& catalog, const ProgressFn& progress,
                         size_t piece_bytes) {
  // Jobs, read in parallel pieces, each into its own JobPiece, put in file order afterwards (the kinds
  // are shared: one table).
  std::mutex done_mutex;
  std::map<size_t, std::unique_ptr<jsonl::JobPiece>> done;  // by piece index
  jsonl::KindTexts table;
  for_each_line_piece(
      path, progress,
      [&](const LinePiece& piece) {
        auto mine = std::make_unique<jsonl::JobPiece>();
        read_piece(path, piece, table, *mine);
        const std::lock_guard<std::mutex> lock(done_mutex);
        done.emplace(piece.index, std::move(mine));
      },
      std::max(size_t{32} << 20, piece_bytes), piece_bytes);
  const std::vector<std::string_view> texts = table.texts();
  jsonl::Ordered ordered = jsonl::order_pieces(done, texts.size());
  const jsonl::PiecesInOrder& order = ordered.order;
  std::optional<std::pair<size_t, size_t>> repeated;
  tbb::task_group beside;
  beside.run([&] { repeated = jsonl::first_repeated_id(order); });
  // One prototype per kind, in the order the file shows the kinds, read from its first job's line as a
  // job alone would be (its rejections and dependencies kept for its jobs: copies take neither).
  JobBuilder protos(catalog);
  Choices choices;
  std::vector<std::vector<Rejection>> why(ordered.met.size());
  std::vector<std::optional<std::vector<std::string>>> depends(ordered.met.size());
  std::exception_ptr proto_error;
  try {
    simdjson::dom::parser parser;
    for (size_t x = 0; x < ordered.met.size(); ++x) {
      const std::string_view text = texts[ordered.met[x]];
      auto obj = parse_object(parser, text, path, 0);
      const std::string id = job_id(id_field(obj), path, 0);
      add_job(obj, path, 0, id, job_head(head_fields(obj), path, 0), catalog, protos, choices, why[x], depends[x]);
    }
  } catch (...) {  // cannot happen for a line its piece read; waited for below either way
    proto_error = std::current_exception();
  }
  beside.wait();
  jsonl::throw_first_error(path, ordered, repeated);
  if (proto_error) std::rethrow_exception(proto_error);
  const JobTable prototypes = std::move(protos).build();
  std::vector<JobBuilder::CopiedJobs> copied;
  for (const jsonl::JobPiece* p : order.pieces)
    copied.push_back({p->kind, p->id_text, p->id_end, p->submit, p->runtime, p->walltime, p->priority, p->owner,
                      p->group, p->owner_names, p->group_names});
  JobBuilder b(catalog);
  try {
    b.add_copies(prototypes, copied);
  } catch (const ValueError& e) {  // a negative or infinite time: the pieces keep times >= 0 only
    throw LoadError(path, 0, "", e.what());
  }
  // What copies do not take, job by job: rejections, dependencies, a submit time before 0.
  for (size_t q = 0; q < order.pieces.size(); ++q) {
    const jsonl::JobPiece& p = *order.pieces[q];
    for (size_t i = 0; i < p.size(); ++i) {
      const uint32_t x = p.kind[i];
      if (why[x].empty() && !depends[x] && !(prototypes.submit[x] < 0)) continue;
      const auto j = static_cast<uint32_t>(order.start[q] + i);
      if (!why[x].empty()) b.reject(j, rejection_text(why[x].front(), path, p.line_of(i), p.id(i)));
      if (depends[x]) b.set_depends(j, *depends[x]);
      if (prototypes.submit[x] < 0) b.set_submit(j, prototypes.submit[x]);
    }
  }
  return std::move(b).build();
}

}  // namespace colmatch::loaders
