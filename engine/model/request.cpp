#include "engine/model/request.hpp"
#include "engine/model/wildcard.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>

#include <fmt/format.h>

namespace colmatch {
namespace {

class Parser {
 public:
  Parser(std::string_view text, const Catalog& cat) : s_(text), cat_(cat) {}

  Request parse() {
    skip();
    if (pos_ == s_.size()) return Request{};  // empty request: true
    Request r = parse_or();
    skip();
    if (pos_ != s_.size()) fail(fmt::format("unexpected '{}'", s_.substr(pos_, 8)));
    return r;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const { throw RequestError(msg, pos_ + 1); }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(std::string_view tok) {
    skip();
    if (s_.substr(pos_, tok.size()) == tok) {
      pos_ += tok.size();
      return true;
    }
    return false;
  }

  // operand (token operand)*: one child alone, else a node of `kind` over all of them.
  Request parse_chain(Request::Kind kind, std::string_view token, Request (Parser::*operand)()) {
    Request first = (this->*operand)();
    if (!peek(token)) return first;
    Request r;
    r.kind = kind;
    r.kids.push_back(std::move(first));
    while (eat(token)) r.kids.push_back((this->*operand)());
    return r;
  }
  Request parse_or() { return parse_chain(Request::Kind::Or, "||", &Parser::parse_and); }
  Request parse_and() { return parse_chain(Request::Kind::And, "&&", &Parser::parse_unary); }
  bool peek(std::string_view tok) {
    skip();
    return s_.substr(pos_, tok.size()) == tok;
  }
  // Parentheses and '!' nest at most this deep: the parser recurses once per level, and so do
  // canonicalization and evaluation over the tree it builds.
  static constexpr size_t kMaxDepth = 128;

  struct Nest {  // one level of '(' or '!' while it is being parsed
    explicit Nest(Parser& p) : depth(++p.depth_) {
      if (depth > kMaxDepth) p.fail(fmt::format("parentheses and '!' nest deeper than {} levels", kMaxDepth));
    }
    ~Nest() { --depth; }
    size_t& depth;
  };

  Request parse_unary() {
    skip();
    if (pos_ < s_.size() && s_[pos_] == '!' && !(pos_ + 1 < s_.size() && s_[pos_ + 1] == '=')) {
      const Nest nest(*this);
      ++pos_;
      Request r;
      r.kind = Request::Kind::Not;
      r.kids.push_back(parse_unary());
      return r;
    }
    if (eat("(")) {
      const Nest nest(*this);
      Request r = parse_or();
      if (!eat(")")) fail("expected ')'");
      return r;
    }
    return parse_clause();
  }

  static bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

  Request parse_clause() {
    skip();
    const size_t name_start = pos_;
    while (pos_ < s_.size() && name_char(s_[pos_])) ++pos_;
    if (pos_ == name_start)
      fail(pos_ == s_.size() ? "expected an attribute name, found the end" : "expected an attribute name");
    const std::string_view name = s_.substr(name_start, pos_ - name_start);
    const auto attr = cat_.find(name);
    if (name == "true" || name == "false") {  // the constants canonical_text writes for {} and (||)
      size_t next = pos_;
      while (next < s_.size() && (s_[next] == ' ' || s_[next] == '\t')) ++next;
      const bool relop_follows = next < s_.size() && std::strchr("=!<>", s_[next]) != nullptr;
      if (!attr || !relop_follows) {  // an attribute of that name takes it only before a relop
        Request r;
        r.kind = name == "true" ? Request::Kind::And : Request::Kind::Or;
        return r;
      }
    }
    if (!attr) {
      pos_ = name_start;
      fail(fmt::format("unknown attribute '{}'", name));
    }
    const AttributeDef& def = cat_.at(*attr);
    if (def.requestable == Requestable::No) {
      pos_ = name_start;
      fail(fmt::format("attribute '{}' is not requestable", def.name));
    }
    skip();
    const size_t op_start = pos_;
    Relop op;
    if (eat("==")) op = Relop::EQ;
    else if (eat("!=")) op = Relop::NE;
    else if (eat("<=")) op = Relop::LE;
    else if (eat(">=")) op = Relop::GE;
    else if (eat("<")) op = Relop::LT;
    else if (eat(">")) op = Relop::GT;
    else if (eat("=")) op = flip(def.relop);  // request relop tasker  <=>  tasker flip(relop) request
    else fail(fmt::format("expected a relop after '{}'", name));
    if (is_string_like(def.type) && op != Relop::EQ && op != Relop::NE) {
      pos_ = op_start;
      fail(fmt::format("attribute '{}' of type {} allows only == and !=", def.name, type_name(def.type)));
    }
    if (def.type == AttrType::Boolean && op != Relop::EQ) {
      pos_ = op_start;
      fail(fmt::format("attribute '{}' of type boolean allows only ==", def.name));
    }
    Request r;
    r.kind = Request::Kind::Clause;
    r.clause.attr = *attr;
    r.clause.op = op;
    skip();
    std::vector<std::pair<std::string, size_t>> values;
    if (eat("{")) {
      while (true) {
        skip();
        const size_t at = pos_ + 1;  // the value's first column (read before parse_value moves on)
        values.emplace_back(parse_value(true), at);
        if (eat(",")) continue;
        if (eat("}")) break;
        fail("expected ',' or '}' in a value list");
      }
      if (op != Relop::EQ && op != Relop::NE) fail("a value list takes only == or !=");
    } else {
      const size_t at = pos_ + 1;
      values.emplace_back(parse_value(false), at);
    }
    for (auto& [v, at] : values) {
      if (is_numeric(def.type)) {
        try {
          r.clause.nums.push_back(parse_request_number(def.type, v, cat_.reading));
        } catch (const ValueError& e) {
          throw RequestError(fmt::format("attribute '{}': {}", def.name, e.what()), at);
        }
      } else {
        if (cat_.reading == GridEngineReading::SoGE819) {
          // a blank ends a Grid Engine value: trailing ones are dropped, text after one is refused
          // (qsub reads it as the next resource: "unknown resource")
          while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.pop_back();
          if (const size_t blank = v.find_first_of(" \t"); blank != std::string::npos)
            throw RequestError(fmt::format("attribute '{}': a blank ends a Grid Engine value; '{}' follows it",
                                           def.name, v.substr(blank + 1)),
                               at + blank);
          try {
            if (!WildcardExpression(v).literal()) r.clause.expression = true;
          } catch (const WildcardError& e) {
            throw RequestError(
                fmt::format("attribute '{}': {} at position {} of \"{}\"", def.name, e.what(), e.position, v),
                at + e.position - 1);
          }
        }
        try {
          r.clause.strs.push_back(normalize_string(def.type, v));
        } catch (const ValueError& e) {
          throw RequestError(fmt::format("attribute '{}': {}", def.name, e.what()), at);
        }
      }
    }
    return r;
  }

  std::string parse_value(bool in_list) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == '"') {
      std::string out;
      ++pos_;
      while (pos_ < s_.size() && s_[pos_] != '"') {
        if (s_[pos_] == '\\' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '"') ++pos_;
        out.push_back(s_[pos_++]);
      }
      if (pos_ == s_.size()) fail("unterminated string");
      ++pos_;
      return out;
    }
    const size_t start = pos_;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (std::isspace(static_cast<unsigned char>(c)) || c == ')' || c == '(') break;
      if (in_list && (c == ',' || c == '}')) break;
      if ((c == '&' || c == '|') && pos_ + 1 < s_.size() && s_[pos_ + 1] == c) break;
      ++pos_;
    }
    if (pos_ == start) fail("expected a value");
    return std::string(s_.substr(start, pos_ - start));
  }

  std::string_view s_;
  const Catalog& cat_;
  size_t pos_ = 0, depth_ = 0;
};

std::string num_text(double v) { return fmt::format("{}", v); }

void collect(const Request& r, std::vector<uint32_t>& out) {
  if (r.kind == Request::Kind::Clause) out.push_back(r.clause.attr);
  for (const auto& k : r.kids) collect(k, out);
}

}  // namespace

Request parse_request(std::string_view text, const Catalog& catalog) {
  Request r = Parser(text, catalog).parse();
  canonicalize(r, catalog);
  return r;
}

namespace {

std::string clause_text(const Request& r, const Catalog& catalog) {
  const AttributeDef& d = catalog.at(r.clause.attr);
  std::vector<std::string> vals;
  for (double v : r.clause.nums) vals.push_back(num_text(v));
  for (const auto& v : r.clause.strs) vals.push_back(quote_value(v));
  if (vals.size() == 1) return fmt::format("{}{}{}", d.name, relop_name(r.clause.op), vals[0]);
  return fmt::format("{}{}{{{}}}", d.name, relop_name(r.clause.op), fmt::join(vals, ","));
}

bool is_group(const Request& r) { return r.kind == Request::Kind::And || r.kind == Request::Kind::Or; }

// The text of an And/Or node from its kids' texts (canonical_text's rule).
std::string group_text(const Request& r, const std::vector<std::string>& parts) {
  if (r.kids.empty()) return r.kind == Request::Kind::And ? "true" : "false";
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += r.kind == Request::Kind::And ? " && " : " || ";
    if (is_group(r.kids[i])) out += "(" + parts[i] + ")";
    else out += parts[i];
  }
  return out;
}

// A canonicalized node's text and, for And/Or, each kid's text.
struct Canon {
  std::string text;
  std::vector<std::string> parts;
};

Canon parts_of(const Request& r, const Catalog& catalog, std::string text) {
  Canon c{std::move(text), {}};
  if (is_group(r))
    for (const Request& k : r.kids) c.parts.push_back(canonical_text(k, catalog));
  return c;
}

// canonicalize, computing each node's canonical text once, from its kids' texts (a parent sorts its
// kids by those texts): O(size x depth) in all, where computing every kid's text afresh at every level
// costs O(size x depth^2) (a 5 MB request nested 126 deep took 17 s).
Canon canon(Request& r, const Catalog& catalog) {
  if (r.kind == Request::Kind::Clause) {
    auto& n = r.clause.nums;
    std::sort(n.begin(), n.end());
    n.erase(std::unique(n.begin(), n.end()), n.end());
    auto& s = r.clause.strs;
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    return {clause_text(r, catalog), {}};
  }
  if (r.kind == Request::Kind::Not) {
    Canon c = canon(r.kids[0], catalog);
    if (r.kids[0].kind == Request::Kind::Not) {  // !!x is x; the text of x is inside "!(x)"
      Request inner = std::move(r.kids[0].kids[0]);
      r = std::move(inner);
      return parts_of(r, catalog, c.text.substr(2, c.text.size() - 3));
    }
    return {"!(" + c.text + ")", {}};
  }
  struct Kid {
    std::string text;
    Request node;
    std::optional<std::vector<std::string>> parts;  // its kids' texts, when known
  };
  std::vector<Kid> keyed;
  keyed.reserve(r.kids.size());
  for (auto& k : r.kids) {
    Canon ck = canon(k, catalog);
    if (k.kind == r.kind) {  // flattened: its kids join this node, with the texts just computed
      for (size_t i = 0; i < k.kids.size(); ++i) keyed.push_back({std::move(ck.parts[i]), std::move(k.kids[i]), {}});
    } else {
      keyed.push_back({std::move(ck.text), std::move(k), std::move(ck.parts)});
    }
  }
  std::sort(keyed.begin(), keyed.end(), [](const Kid& a, const Kid& b) { return a.text < b.text; });
  keyed.erase(std::unique(keyed.begin(), keyed.end(), [](const Kid& a, const Kid& b) { return a.text == b.text; }),
              keyed.end());
  if (keyed.size() == 1) {  // one kid left: the node is that kid
    Kid only = std::move(keyed[0]);
    r = std::move(only.node);
    if (only.parts) return {std::move(only.text), std::move(*only.parts)};
    return parts_of(r, catalog, std::move(only.text));
  }
  r.kids.clear();
  std::vector<std::string> parts;
  for (auto& k : keyed) {
    r.kids.push_back(std::move(k.node));
    parts.push_back(std::move(k.text));
  }
  std::string text = group_text(r, parts);
  return {std::move(text), std::move(parts)};
}

}  // namespace

void canonicalize(Request& r, const Catalog& catalog) { canon(r, catalog); }

std::string canonical_text(const Request& r, const Catalog& catalog) {
  switch (r.kind) {
    case Request::Kind::Clause: return clause_text(r, catalog);
    case Request::Kind::Not: return fmt::format("!({})", canonical_text(r.kids[0], catalog));
    case Request::Kind::And:
    case Request::Kind::Or: {
      std::vector<std::string> parts;
      for (const auto& k : r.kids) parts.push_back(canonical_text(k, catalog));
      return group_text(r, parts);
    }
  }
  return {};
}

std::string quote_value(std::string_view v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::vector<uint32_t> mentioned_attributes(const Request& r) {
  std::vector<uint32_t> out;
  collect(r, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace colmatch
