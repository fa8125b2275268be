#include "loaders/dirac.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <variant>

#include <fmt/format.h>
#include <simdjson.h>

#include "loaders/dirac_resources.hpp"
#include "loaders/errors.hpp"

namespace colmatch::loaders {
namespace {

using dirac::is_cfg_text;
using dirac::Param;
using dirac::Params;
using dirac::Queue;
using dirac::read_resources_cfg;

// --- JDL: a small ClassAd-style reader ---------------------------------------------------------------
struct JdlValue;
using JdlRecord = std::vector<std::pair<std::string, JdlValue>>;
struct JdlValue {
  enum class Kind { String, Number, Word, List, Record } kind = Kind::String;
  std::string text;  // String, Number (as written), Word
  std::vector<JdlValue> items;
  std::shared_ptr<JdlRecord> record;
  size_t line = 0;
};
struct JdlJob {
  JdlRecord fields;
  size_t line = 0;
};

class JdlReader {
 public:
  JdlReader(std::string text, std::string path) : s_(std::move(text)), path_(std::move(path)) {}

  std::vector<JdlJob> jobs() {
    std::vector<JdlJob> out;
    while (true) {
      skip();
      if (pos_ == s_.size()) return out;
      JdlJob job;
      job.line = line_;
      expect('[', "a job description '['");
      job.fields = record_body();
      skip();
      if (pos_ < s_.size() && s_[pos_] == ';') ++pos_;
      out.push_back(std::move(job));
    }
  }

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& msg) {
    throw LoadError(path_, line_, field, msg);
  }
  void skip() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else if (c == '#' || (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/')) {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else if (s_.compare(pos_, 3, "...") == 0) {  // elisions as written in the RFC's example
        pos_ += 3;
      } else {
        return;
      }
    }
  }
  void expect(char c, const char* what) {
    skip();
    if (pos_ >= s_.size() || s_[pos_] != c) fail("", fmt::format("expected {}", what));
    ++pos_;
  }
  static bool word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  }

  JdlRecord record_body() {
    JdlRecord rec;
    while (true) {
      skip();
      if (pos_ >= s_.size()) fail("", "unterminated '[': expected ']'");
      if (s_[pos_] == ']') {
        ++pos_;
        return rec;
      }
      const size_t start = pos_;
      while (pos_ < s_.size() && word_char(s_[pos_])) ++pos_;
      if (pos_ == start) fail("", fmt::format("expected a name, found '{}'", s_[pos_]));
      std::string name = s_.substr(start, pos_ - start);
      skip();
      if (pos_ >= s_.size() || s_[pos_] != '=') fail(name, "expected '='");
      ++pos_;
      JdlValue v = value(name);
      rec.emplace_back(std::move(name), std::move(v));
      skip();
      if (pos_ < s_.size() && s_[pos_] == ';') ++pos_;
      else if (pos_ < s_.size() && s_[pos_] != ']') fail(rec.back().first, "expected ';' or ']'");
    }
  }

  // Lists and records nest at most this deep: the reader recurses once per level.
  static constexpr size_t kMaxNesting = 64;
  struct Nest {
    explicit Nest(JdlReader& r, const std::string& field) : r_(r) {
      if (++r_.depth_ > kMaxNesting)
        r_.fail(field, fmt::format("lists and records nest deeper than {} levels", kMaxNesting));
    }
    ~Nest() { --r_.depth_; }
    JdlReader& r_;
  };

  JdlValue value(const std::string& field) {
    skip();
    const Nest nest(*this, field);
    JdlValue v;
    v.line = line_;
    if (pos_ >= s_.size()) fail(field, "expected a value");
    const char c = s_[pos_];
    if (c == '"') {
      ++pos_;
      while (pos_ < s_.size() && s_[pos_] != '"') {
        if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
        if (s_[pos_] == '\n') ++line_;
        v.text.push_back(s_[pos_++]);
      }
      if (pos_ >= s_.size()) fail(field, "unterminated string");
      ++pos_;
      v.kind = JdlValue::Kind::String;
    } else if (c == '{') {
      ++pos_;
      v.kind = JdlValue::Kind::List;
      skip();
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return v;
      }
      while (true) {
        v.items.push_back(value(field));
        skip();
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        expect('}', "',' or '}' in a list");
        break;
      }
    } else if (c == '[') {
      ++pos_;
      v.kind = JdlValue::Kind::Record;
      v.record = std::make_shared<JdlRecord>(record_body());
    } else {
      const size_t start = pos_;
      while (pos_ < s_.size() && (word_char(s_[pos_]) || s_[pos_] == '+')) ++pos_;
      if (pos_ == start) fail(field, fmt::format("unexpected '{}'", c));
      v.text = s_.substr(start, pos_ - start);
      double d;
      std::istringstream is(v.text);
      v.kind = (is >> d && is.eof()) ? JdlValue::Kind::Number : JdlValue::Kind::Word;
    }
    return v;
  }

  std::string s_, path_;
  size_t pos_ = 0, line_ = 1, depth_ = 0;
};

// --- resources ----------------------------------------------------------------------------------------
Param param_of(simdjson::dom::element v, const std::string& path, const std::string& field) {
  using T = simdjson::dom::element_type;
  Param p;
  switch (v.type()) {
    case T::INT64:
      p.number = true;
      p.num = static_cast<double>(int64_t(v.get_int64().value_unsafe()));
      break;
    case T::UINT64:
      p.number = true;
      p.num = static_cast<double>(uint64_t(v.get_uint64().value_unsafe()));
      break;
    case T::DOUBLE:
      p.number = true;
      p.num = v.get_double().value_unsafe();
      break;
    case T::STRING: p.text = std::string(std::string_view(v.get_string().value_unsafe())); break;
    case T::BOOL: p.text = v.get_bool().value_unsafe() ? "true" : "false"; break;
    case T::ARRAY: {
      p.list = true;
      simdjson::dom::array arr;
      if (v.get_array().get(arr)) throw LoadError(path, 0, field, "expected a list");
      for (auto item : arr) {
        if (item.type() == T::STRING) p.items.emplace_back(std::string_view(item.get_string().value_unsafe()));
        else if (item.type() == T::INT64 || item.type() == T::UINT64 || item.type() == T::DOUBLE)
          p.items.push_back(fmt::format("{}", double(item.get_double().value_unsafe())));
        else throw LoadError(path, 0, field, "list items must be strings or numbers");
      }
      break;
    }
    default: throw LoadError(path, 0, field, "expected a number, string, boolean or list");
  }
  return p;
}

std::vector<Queue> read_resources_json(const std::string& path) {
  simdjson::dom::parser parser;
  simdjson::padded_string json;
  require_not_directory(path);
  if (auto err = simdjson::padded_string::load(path).get(json))
    throw LoadError(path, 0, "", std::string("cannot read: ") + simdjson::error_message(err));
  std::string_view text(json.data(), json.size());
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte-order mark is not data
  simdjson::dom::element doc;
  if (auto err = parser.parse(text.data(), text.size(), true).get(doc))
    throw LoadError(path, 0, "", std::string("malformed JSON: ") + simdjson::error_message(err));
  simdjson::dom::object sites;
  if (doc["Sites"].get_object().get(sites)) throw LoadError(path, 0, "Sites", "expected an object of sites");
  std::vector<Queue> out;
  for (auto site : sites) {
    const std::string sname(site.key);
    simdjson::dom::object sobj;
    if (site.value.get_object().get(sobj)) throw LoadError(path, 0, "Sites." + sname, "expected an object");
    Params sp;
    simdjson::dom::object ces;
    bool has_ces = false;
    for (auto f : sobj) {
      const std::string key(f.key);
      if (key == "CEs") {
        if (f.value.get_object().get(ces)) throw LoadError(path, 0, "Sites." + sname + ".CEs", "expected an object");
        has_ces = true;
      } else {
        sp[key] = param_of(f.value, path, fmt::format("Sites.{}.{}", sname, key));
      }
    }
    if (!has_ces) continue;
    for (auto ce : ces) {
      const std::string cname(ce.key);
      const std::string where = fmt::format("Sites.{}.CEs.{}", sname, cname);
      simdjson::dom::object cobj;
      if (ce.value.get_object().get(cobj)) throw LoadError(path, 0, where, "expected an object");
      Params cp = sp;  // CE parameters override the site's
      simdjson::dom::object queues;
      bool has_queues = false;
      for (auto f : cobj) {
        const std::string key(f.key);
        if (key == "Queues") {
          if (f.value.get_object().get(queues)) throw LoadError(path, 0, where + ".Queues", "expected an object");
          has_queues = true;
        } else {
          cp[key] = param_of(f.value, path, fmt::format("{}.{}", where, key));
        }
      }
      if (!has_queues) continue;
      for (auto q : queues) {
        const std::string qname(q.key);
        simdjson::dom::object qobj;
        if (q.value.get_object().get(qobj))
          throw LoadError(path, 0, fmt::format("{}.Queues.{}", where, qname), "expected an object");
        Queue queue{sname, cname, qname, cp};  // queue parameters override the CE's
        for (auto f : qobj)
          queue.params[std::string(f.key)] =
              param_of(f.value, path, fmt::format("{}.Queues.{}.{}", where, qname, std::string_view(f.key)));
        out.push_back(std::move(queue));
      }
    }
  }
  return out;
}

}  // namespace

// Long (about 190 lines) on purpose: the Site -> CE -> Queue inheritance, then each JDL field in the
// order seed 003 lists them, read once each; split, each piece would carry the whole dataset under build.
Dataset load_dirac(const std::string& resources, const std::string& jdl, const ProgressFn&) {
  const std::vector<Queue> queues =
      is_cfg_text(resources) ? read_resources_cfg(resources) : read_resources_json(resources);
  require_not_directory(jdl);
  std::ifstream in(jdl, std::ios::binary);
  if (!in) throw LoadError(jdl, 0, "", "cannot open");
  std::stringstream buf;
  buf << in.rdbuf();
  std::string jdl_text = buf.str();
  if (jdl_text.compare(0, 3, "\xEF\xBB\xBF") == 0) jdl_text.erase(0, 3);  // a UTF-8 byte-order mark is not data
  const std::vector<JdlJob> jobs = JdlReader(jdl_text, jdl).jobs();

  // Catalog: Site, CE, Queue, then every parameter (resource side decides the type; job-only ones by
  // the job's value).
  Dataset ds;
  ds.name = "dirac";
  std::map<std::string, std::pair<bool, bool>> kinds;  // name -> (all numeric, any list)
  for (const Queue& q : queues)
    for (const auto& [name, p] : q.params) {
      auto [it, fresh] = kinds.try_emplace(name, p.number, p.list);
      if (!fresh) {
        it->second.first = it->second.first && p.number;
        it->second.second = it->second.second || p.list;
      }
    }
  auto job_param_kind = [&](const std::string& name, const JdlValue& v) {
    if (kinds.count(name)) return;
    const bool numeric = v.kind == JdlValue::Kind::Number ||
                         (v.kind == JdlValue::Kind::List && !v.items.empty() &&
                          std::all_of(v.items.begin(), v.items.end(),
                                      [](const JdlValue& i) { return i.kind == JdlValue::Kind::Number; }));
    kinds.emplace(name, std::make_pair(numeric, false));
  };
  for (const JdlJob& j : jobs)
    for (const auto& [name, v] : j.fields) {
      if (name == "Requirements" && v.kind == JdlValue::Kind::Record)
        for (const auto& [rn, rv] : *v.record) job_param_kind(rn, rv);
      else if (name == "Platform" || name == "CPUTime") job_param_kind(name, v);
    }
  for (const char* builtin : {"Site", "CE", "Queue"}) {
    kinds.erase(builtin);
    AttributeDef d;
    d.name = builtin;
    ds.catalog.add(d);
  }
  for (const auto& [name, kind] : kinds) {
    AttributeDef d;
    d.name = name;
    d.type = kind.first && !kind.second ? AttrType::Double : AttrType::String;
    d.relop = d.type == AttrType::Double ? Relop::LE : Relop::EQ;
    d.multi_valued = kind.second;
    try {
      ds.catalog.add(d);
    } catch (const ValueError& e) {
      throw LoadError(resources, 0, name, e.what());
    }
  }

  TaskerBuilder tb(ds.catalog);
  for (const Queue& q : queues) {
    try {  // a queue named twice in one CE (duplicate JSON keys, which the parser keeps) is fatal, with its path
      tb.add(q.site + "/" + q.ce + "/" + q.queue);
    } catch (const ValueError&) {
      throw LoadError(resources, 0, fmt::format("Sites.{}.CEs.{}.Queues.{}", q.site, q.ce, q.queue),
                      "queue defined twice");
    }
    const std::string path = fmt::format("Sites.{}.CEs.{}.Queues.{}", q.site, q.ce, q.queue);
    std::string field = path;
    try {  // a value the catalog refuses (longer than kMaxStringValue) names the queue's path
      tb.set(*ds.catalog.find("Site"), q.site);
      tb.set(*ds.catalog.find("CE"), q.ce);
      tb.set(*ds.catalog.find("Queue"), q.queue);
      for (const auto& [name, p] : q.params) {
        if (name == "Site" || name == "CE" || name == "Queue") continue;
        field = path + "." + name;
        const uint32_t a = *ds.catalog.find(name);
        const AttributeDef& d = ds.catalog.at(a);
        if (d.multi_valued)
          tb.set_list(a, p.list ? p.items : std::vector<std::string>{p.number ? fmt::format("{}", p.num) : p.text});
        else if (p.number && d.type == AttrType::Double) tb.set_number(a, p.num);
        else tb.set(a, p.number ? fmt::format("{}", p.num) : p.text);
      }
    } catch (const ValueError& e) {
      throw LoadError(resources, 0, field, e.what());
    }
  }
  ds.taskers = std::move(tb).build();

  JobBuilder jb(ds.catalog);
  JobIds ids;
  size_t n = 0;
  for (const JdlJob& j : jobs) {
    ++n;
    std::string id, owner, group, number_field, number_why;
    double priority = 0;
    uint32_t slots = 1;
    // A number as written, or NaN when it is not one a double holds (1e-400, 1e400).
    auto as_number = [](const std::string& text) {
      double d = 0;
      const char* b = text.data() + (!text.empty() && text[0] == '+');
      const auto [p, ec] = std::from_chars(b, text.data() + text.size(), d);
      return ec == std::errc() && p == text.data() + text.size() && std::isfinite(d)
                 ? d
                 : std::numeric_limits<double>::quiet_NaN();
    };
    for (const auto& [name, v] : j.fields) {
      if (name == "JobID" || (name == "JobName" && id.empty())) {
        id = v.text;  // JobID wins over JobName
      } else if (name == "Owner") {
        owner = v.text;
      } else if (name == "OwnerGroup") {
        group = v.text;
      } else if (name == "Priority" && v.kind == JdlValue::Kind::Number) {
        priority = as_number(v.text);
        if (std::isnan(priority)) {
          number_field = name;
          number_why = fmt::format("'{}' is not a number a double can hold", v.text);
          priority = 0;
        }
      } else if (name == "NumberOfProcessors" && v.kind == JdlValue::Kind::Number) {
        const double p = as_number(v.text);
        if (!(p >= 1 && p <= 1e9 && p == std::floor(p))) {
          number_field = name;
          number_why = fmt::format("'{}' is not a whole number from 1 to 10^9", v.text);
        } else {
          slots = static_cast<uint32_t>(p);
        }
      }
    }
    std::string id_field;  // where the id came from: JobID, else JobName, else the record's number
    for (const auto& [name, v] : j.fields)
      if (name == "JobID") id_field = name;
      else if (name == "JobName" && id_field.empty()) id_field = name;
    if (id_field.empty()) id_field = "JobID";
    if (id.empty()) id = fmt::format("{}", n);
    ids.add(jdl, j.line, id_field, id);
    const uint32_t jid = jb.add(id, owner, group, priority, static_cast<double>(n), slots);
    if (!number_field.empty()) {
      jb.reject(jid, fmt::format("{}:{}: job {}: field '{}': {}", jdl, j.line, id, number_field, number_why));
      continue;
    }
    // Requirements -> clauses, in name order (the RFC sorts them to name the submit pool).
    std::vector<std::string> clauses;
    std::string bad_field, bad_why;
    auto values_text = [&](const JdlValue& v) {
      if (v.kind != JdlValue::Kind::List) return v.kind == JdlValue::Kind::Number ? v.text : quote_value(v.text);
      std::vector<std::string> parts;
      for (const auto& i : v.items) parts.push_back(i.kind == JdlValue::Kind::Number ? i.text : quote_value(i.text));
      return "{" + fmt::format("{}", fmt::join(parts, ",")) + "}";
    };
    auto requirement = [&](const std::string& name, const JdlValue& v) {
      if (v.kind == JdlValue::Kind::Record) {
        bad_field = name;
        bad_why = "a requirement cannot be a record";
        return;
      }
      if (v.kind == JdlValue::Kind::List && v.items.empty()) return;                                 // nothing asked
      if (v.kind == JdlValue::Kind::Number) clauses.push_back(fmt::format("{}>={}", name, v.text));  // a capacity
      else clauses.push_back(fmt::format("{}=={}", name, values_text(v)));  // one of the values
    };
    for (const auto& [name, v] : j.fields) {
      if (name == "Requirements") {
        if (v.kind != JdlValue::Kind::Record) {
          bad_field = name;
          bad_why = "expected a [ ... ] section";
          continue;
        }
        for (const auto& [rn, rv] : *v.record) requirement(rn, rv);
      } else if (name == "Site" || name == "Platform" || name == "CPUTime") {
        requirement(name, v);
      } else if (name == "BannedSite") {
        if (!(v.kind == JdlValue::Kind::List && v.items.empty()))
          clauses.push_back(fmt::format("Site!={}", values_text(v)));
      }
    }
    if (!bad_field.empty()) {
      jb.reject(jid, fmt::format("{}:{}: job {}: field '{}': {}", jdl, j.line, id, bad_field, bad_why));
      continue;
    }
    std::sort(clauses.begin(), clauses.end());
    const std::string text = fmt::format("{}", fmt::join(clauses, " && "));
    try {
      jb.set_request(text);
    } catch (const RequestError& e) {
      jb.reject(jid, fmt::format("{}:{}: job {}: field 'Requirements': {}", jdl, j.line, id, e.what()));
    }
  }
  ds.jobs = std::move(jb).build();
  return ds;
}

}  // namespace colmatch::loaders
