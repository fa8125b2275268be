#include "engine/model/vov.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace colmatch::vov {
namespace {

constexpr size_t kMaxNesting = 64;
// Breadth bound of one expansion: maps that fan out (a -> b b b ..., b -> c c c ...) would otherwise
// grow the list geometrically within the depth limit. Past this many visited resources no map is
// entered (curtailed, as past the depth limit): the work stays within it plus one map's size.
constexpr size_t kMaxVisited = size_t{1} << 16;

bool blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool operator_char(char c) { return c == '(' || c == ')' || c == '|' || c == '&' || c == '!'; }

class Parser {
 public:
  Parser(std::string_view text, bool job_side) : s_(text), job_side_(job_side) {}

  Expr parse() {
    Expr e = parse_or(0);
    skip();
    if (i_ < s_.size()) fail(fmt::format("unexpected '{}'", s_[i_]));
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw ResourceError(why, i_ + 1); }
  void skip() {
    while (i_ < s_.size() && blank(s_[i_])) ++i_;
  }
  // The word at i_ (not consumed), "" at an operator or the end.
  std::string_view word() const {
    size_t e = i_;
    while (e < s_.size() && !blank(s_[e]) && !operator_char(s_[e])) ++e;
    return s_.substr(i_, e - i_);
  }
  bool eat_or() {
    skip();
    if (i_ < s_.size() && s_[i_] == '|') return ++i_, true;
    if (word() == "OR") return i_ += 2, true;
    return false;
  }
  // An AND: `&`, `AND`, or the start of another operand (juxtaposition).
  bool more_and() {
    skip();
    if (i_ >= s_.size()) return false;
    if (s_[i_] == '&') return ++i_, true;
    if (word() == "AND") return i_ += 3, true;
    const char c = s_[i_];
    return c == '(' || c == '!' || (c != ')' && c != '|' && word() != "OR");
  }
  static Expr group(Expr::Op op, std::vector<Expr> kids) {
    if (kids.size() == 1) return std::move(kids[0]);
    Expr e;
    e.op = op;
    for (Expr& k : kids) {  // flatten a AND (b AND c)
      if (k.op == op) {
        for (Expr& g : k.kids) e.kids.push_back(std::move(g));
      } else {
        e.kids.push_back(std::move(k));
      }
    }
    return e;
  }
  Expr parse_or(size_t depth) {
    std::vector<Expr> kids{parse_and(depth)};
    while (eat_or()) kids.push_back(parse_and(depth));
    return group(Expr::Op::Or, std::move(kids));
  }
  Expr parse_and(size_t depth) {
    std::vector<Expr> kids{parse_unary(depth)};
    while (more_and()) kids.push_back(parse_unary(depth));
    return group(Expr::Op::And, std::move(kids));
  }
  Expr parse_unary(size_t depth) {
    skip();
    if (depth >= kMaxNesting) fail("nested deeper than 64");
    if (i_ >= s_.size()) fail("a resource is missing");
    const bool bang = s_[i_] == '!';
    if (bang || word() == "NOT") {
      if (!job_side_) fail("a tasker cannot offer a negation");
      i_ += bang ? 1 : 3;
      Expr e;
      e.op = Expr::Op::Not;
      e.kids.push_back(parse_unary(depth + 1));
      return e;
    }
    if (s_[i_] == '(') {
      ++i_;
      Expr e = parse_or(depth + 1);
      skip();
      if (i_ >= s_.size() || s_[i_] != ')') fail("'(' without ')'");
      ++i_;
      return e;
    }
    const std::string_view w = word();
    if (w.empty()) fail(fmt::format("unexpected '{}'", s_[i_]));
    if (w == "AND" || w == "OR") fail(fmt::format("'{}' where a resource is expected", w));
    Expr e;
    e.op = Expr::Op::Token;
    e.token.name = std::string(w);
    const size_t cut = w.find_last_of("#/");
    if (cut != std::string_view::npos && cut > 0 && cut + 1 < w.size()) {
      const std::string_view n = w.substr(cut + 1);
      double v = 0;
      const auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), v);
      if (ec == std::errc() && p == n.data() + n.size()) {
        if (!(v >= 0) || !std::isfinite(v)) {
          i_ += cut + 1;
          fail(fmt::format("'{}' is not a count", n));
        }
        e.token.name = std::string(w.substr(0, cut));
        e.token.kind = w[cut] == '#' ? Token::Kind::AtLeast : Token::Kind::Consumes;
        e.token.amount = v;
      }
    }
    i_ += w.size();
    return e;
  }

  std::string_view s_;
  bool job_side_;
  size_t i_ = 0;
};

std::string token_text(const Token& t) {
  switch (t.kind) {
    case Token::Kind::Has: return t.name;
    case Token::Kind::AtLeast: return fmt::format("{}#{}", t.name, t.amount);
    case Token::Kind::Consumes: return fmt::format("{}/{}", t.name, t.amount);
    case Token::Kind::Held: return fmt::format("{{{}/{}}}", t.name, t.amount);
  }
  return t.name;
}

std::string_view tail(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

Expr token_expr(std::string name) {
  Expr e;
  e.op = Expr::Op::Token;
  e.token.name = std::move(name);
  return e;
}

// The seed's walk: replaces mapped names, counts the depth, finds cycles and unavailable maps.
class Expander {
 public:
  Expander(const std::map<std::string, ResourceMap, std::less<>>& maps,
           const std::function<bool(std::string_view, double)>& available,
           const std::map<std::string, std::string, std::less<>>& dollars, Expansion& out, bool mark_held)
      : maps_(maps), available_(available), dollars_(dollars), out_(out), mark_held_(mark_held) {}

  // An appended resource (Priority:, Tool:, User:, Group:): counted like any, expanded through its map
  // if it has one, else dropped (every job has User:<owner>, which no tasker offers: it is a hook for
  // maps and limits, not a requirement).
  bool walk_appended(const Expr& e, std::vector<Expr>& into) {
    if (maps_.find(e.token.name) != maps_.end()) return walk(e, into);
    visit();
    return true;
  }

  // Expands `e` into `into` (an AND being built); false when the job stops (not available, cycle).
  bool walk(const Expr& e, std::vector<Expr>& into) {
    switch (e.op) {
      case Expr::Op::And:
        for (const Expr& k : e.kids)
          if (!walk(k, into)) return false;
        return true;
      case Expr::Op::Not: {
        std::vector<Expr> inner;
        if (!walk(e.kids[0], inner)) return false;
        Expr n;
        n.op = Expr::Op::Not;
        n.kids.push_back(and_of(std::move(inner)));
        into.push_back(std::move(n));
        return true;
      }
      case Expr::Op::Or: {
        if (count_ > kMaxDepthCount) {  // past the limit an OR keeps its first alternative
          out_.curtailed = true;
          return walk(e.kids[0], into);
        }
        Expr o;
        o.op = Expr::Op::Or;
        for (const Expr& k : e.kids) {
          std::vector<Expr> alt;
          const std::vector<Held> held = out_.held;  // (hold() may have raised a quantity held before)
          if (!walk(k, alt)) {
            if (out_.outcome == Expansion::Outcome::Cycle) return false;
            out_.outcome = Expansion::Outcome::Ok;  // an alternative not available now: the others may be
            out_.held = held;
            continue;
          }
          o.kids.push_back(and_of(std::move(alt)));
        }
        if (o.kids.empty()) {
          out_.outcome = Expansion::Outcome::NotAvailable;
          return false;
        }
        into.push_back(o.kids.size() == 1 ? std::move(o.kids[0]) : std::move(o));
        return true;
      }
      case Expr::Op::Token: return walk_token(e, into);
    }
    return true;
  }

  static Expr and_of(std::vector<Expr> kids) {
    if (kids.size() == 1) return std::move(kids[0]);
    Expr a;
    a.op = Expr::Op::And;
    a.kids = std::move(kids);
    return a;
  }

 private:
  // The seed's depth count goes up by one; the largest is remembered.
  void raise_count() { out_.max_depth_count = std::max(out_.max_depth_count, ++count_); }
  // One resource visited: the count, and the breadth bound's tally.
  void visit() {
    raise_count();
    ++visited_;
  }

  // A counted map held once per job, for the largest quantity asked of it.
  void hold(const std::string& name, double units) {
    for (Held& h : out_.held)
      if (h.map == name) {
        h.units = std::max(h.units, units);
        return;
      }
    out_.held.push_back({name, units});
  }

  bool walk_token(const Expr& e, std::vector<Expr>& into) {
    const std::string& name = e.token.name;
    if (!name.empty() && name[0] == '$') {  // a special resource: its definition, in place
      const auto d = dollars_.find(name.substr(1));
      if (d == dollars_.end()) throw ResourceError(fmt::format("no definition of the resource {}", name), 1);
      if (in_dollar_) throw ResourceError(fmt::format("{} inside a $ definition", name), 1);
      in_dollar_ = true;
      const Expr def = parse_resources(d->second);
      const bool ok = walk(def, into);
      in_dollar_ = false;
      return ok;
    }
    visit();
    const auto m = maps_.find(name);
    if (m == maps_.end()) {  // not in a map: for the taskers
      into.push_back(e);
      return true;
    }
    for (size_t i = 0; i < path_.size(); ++i)
      if (path_[i] == name) {
        std::string cycle;
        for (size_t k = i; k < path_.size(); ++k) cycle += path_[k] + " -> ";
        out_.outcome = Expansion::Outcome::Cycle;
        out_.detail = cycle + name;
        return false;
      }
    if (m->second.count) {  // "if the resource map is found and there is enough of it"
      const double units = e.token.kind == Token::Kind::Has ? 1.0 : e.token.amount;
      if (!available_(name, units)) {
        out_.outcome = Expansion::Outcome::NotAvailable;
        out_.detail = name;
        return false;
      }
      hold(name, units);
      if (mark_held_) {
        Expr h = e;
        h.token.kind = Token::Kind::Held;
        h.token.amount = units;
        into.push_back(std::move(h));
      }
    }
    if (!m->second.map) return true;  // a counter only: satisfied by the map, no tasker offers it
    if (count_ > kMaxDepthCount || visited_ > kMaxVisited) {  // curtailed: the name is left as it is
      out_.curtailed = true;
      into.push_back(e);
      return true;
    }
    const int saved = count_;
    raise_count();  // entering a map
    path_.push_back(name);
    const bool ok = walk(*m->second.map, into);
    path_.pop_back();
    count_ = saved;  // leaving it
    return ok;
  }

  const std::map<std::string, ResourceMap, std::less<>>& maps_;
  const std::function<bool(std::string_view, double)>& available_;
  const std::map<std::string, std::string, std::less<>>& dollars_;
  Expansion& out_;
  std::vector<std::string> path_;
  int count_ = 0;
  size_t visited_ = 0;
  bool in_dollar_ = false;
  bool mark_held_ = false;
};

// A part of a solution: the items it asks of the taskers and the counted maps it holds.
struct Part {
  std::vector<Expr> items;
  std::vector<Held> held;
};

void merge_held(std::vector<Held>& into, const std::vector<Held>& more) {
  for (const Held& h : more) {
    bool found = false;
    for (Held& x : into)
      if (x.map == h.map) {
        x.units = std::max(x.units, h.units);
        found = true;
      }
    if (!found) into.push_back(h);
  }
}

bool holds_any(const Expr& e) {
  if (e.op == Expr::Op::Token) return e.token.kind == Token::Kind::Held;
  for (const Expr& k : e.kids)
    if (holds_any(k)) return true;
  return false;
}

// `e` without its Held tokens, which go to `held` (under a NOT: a map the walk traversed is held).
Expr strip_held(const Expr& e, std::vector<Held>& held) {
  if (e.op == Expr::Op::Token) return e;
  Expr out;
  out.op = e.op;
  for (const Expr& k : e.kids) {
    if (k.op == Expr::Op::Token && k.token.kind == Token::Kind::Held) {
      merge_held(held, {{k.token.name, k.token.amount}});
      if (e.op == Expr::Op::Or) out.kids.emplace_back();  // an alternative that only holds: asks nothing
      continue;
    }
    out.kids.push_back(strip_held(k, held));
  }
  if (out.op == Expr::Op::Not && out.kids.empty()) out.kids.emplace_back();  // !(a held map alone): !()
  return out;
}

// The parts of `e` in lexicographic order, at most `limit`.
std::vector<Part> parts(const Expr& e, size_t limit, bool& curtailed) {
  if (e.op == Expr::Op::Token) {
    if (e.token.kind == Token::Kind::Held) return {Part{{}, {{e.token.name, e.token.amount}}}};
    return {Part{{e}, {}}};
  }
  if (!holds_any(e) || e.op == Expr::Op::Not) {
    Part p;
    p.items.push_back(strip_held(e, p.held));
    return {std::move(p)};
  }
  std::vector<Part> out;
  if (e.op == Expr::Op::Or) {
    for (const Expr& k : e.kids) {
      for (Part& p : parts(k, limit, curtailed)) {
        if (out.size() == limit) {
          curtailed = true;
          return out;
        }
        out.push_back(std::move(p));
      }
    }
    return out;
  }
  out.emplace_back();  // And: the product of its kids' parts
  for (const Expr& k : e.kids) {
    const std::vector<Part> more = parts(k, limit, curtailed);
    std::vector<Part> next;
    for (const Part& a : out)
      for (const Part& b : more) {
        if (next.size() == limit) {
          curtailed = true;
          break;
        }
        Part p = a;
        p.items.insert(p.items.end(), b.items.begin(), b.items.end());
        merge_held(p.held, b.held);
        next.push_back(std::move(p));
      }
    out = std::move(next);
  }
  return out;
}

}  // namespace

Expr parse_resources(std::string_view text, bool job_side) {
  Parser p(text, job_side);
  size_t i = 0;
  while (i < text.size() && blank(text[i])) ++i;
  if (i == text.size()) return Expr{};  // the empty list
  return p.parse();
}

std::string to_text(const Expr& e) {
  switch (e.op) {
    case Expr::Op::Token: return token_text(e.token);
    case Expr::Op::Not: {
      const Expr& k = e.kids[0];
      return "!" + (k.op == Expr::Op::Token || k.op == Expr::Op::Not ? to_text(k) : "(" + to_text(k) + ")");
    }
    case Expr::Op::And: {
      std::string out;
      for (const Expr& k : e.kids) {
        if (!out.empty()) out += ' ';
        out += k.op == Expr::Op::Or ? "(" + to_text(k) + ")" : to_text(k);
      }
      return out;
    }
    case Expr::Op::Or: {
      std::string out;
      for (size_t i = 0; i < e.kids.size(); ++i) {
        if (i > 0) out += " | ";
        const std::string k = to_text(e.kids[i]);
        out += k.empty() ? "()" : k;  // an alternative that asks nothing (without_held)
      }
      return out;
    }
  }
  return "";
}

const std::vector<std::string>& default_wrappers() {
  static const std::vector<std::string> w{"vov", "vw", "nc run", "time", "env"};
  return w;
}

Wrappers::Wrappers(const std::vector<std::string>& wrappers) {
  for (const std::string& w : wrappers) {
    Wrapper x;
    for (size_t pos = 0; pos <= w.size();) {  // split at each blank: "a  b" has an empty word between
      const size_t sp = std::min(w.find(' ', pos), w.size());
      x.words.push_back(w.substr(pos, sp - pos));
      pos = sp + 1;
    }
    x.env = w == "env";
    x.nc_run = w == "nc run";
    first_lengths_ |= uint64_t{1} << std::min<size_t>(x.words[0].size(), 63);
    list_.push_back(std::move(x));
  }
}

std::string_view tool_view(std::string_view command, const Wrappers& wrappers) {
  // The command's words, split only as far as the wrappers look (a job's command may be long), each
  // with its tail (past the last '/'), which is what wrappers and the tool are matched on.
  thread_local std::vector<std::pair<std::string_view, std::string_view>> args;  // (word, tail), reused
  args.clear();
  size_t i = 0;
  auto have = [&](size_t k) {  // words 0..k split; false when the command has fewer
    while (args.size() <= k && i < command.size()) {
      while (i < command.size() && blank(command[i])) ++i;
      const size_t start = i;
      while (i < command.size() && !blank(command[i])) ++i;
      if (i > start) {
        const std::string_view word = command.substr(start, i - start);
        args.emplace_back(word, tail(word));
      }
    }
    return args.size() > k;
  };
  size_t a = 0;
  while (have(a)) {
    if (!((wrappers.first_lengths_ >> std::min<size_t>(args[a].second.size(), 63)) & 1)) break;  // starts none
    bool wrapped = false;
    for (const Wrappers::Wrapper& w : wrappers.list_) {  // a wrapper of one or more words ("nc run")
      size_t n = 0;
      while (n < w.words.size() && have(a + n) && args[a + n].second == w.words[n]) ++n;
      if (n < w.words.size()) continue;
      a += n;
      // the wrapper's options (nc run's -r, -e, -J, -P, -C, -d, -l take a value), env's assignments;
      // "--" ends them
      while (have(a)) {
        const std::string_view x = args[a].first;
        if (x == "--") {
          ++a;
          break;
        }
        if (w.env && x.find('=') != std::string_view::npos) {
          ++a;
          continue;
        }
        if (x[0] != '-') break;
        static const std::string_view with_value[] = {"-r", "-e", "-J", "-P", "-C", "-d", "-l"};
        const bool value =
            w.nc_run && std::find(std::begin(with_value), std::end(with_value), x) != std::end(with_value);
        a += value ? 2 : 1;
      }
      wrapped = true;
      break;
    }
    if (!wrapped) break;
  }
  return have(a) ? args[a].second : std::string_view();
}

const Wrappers& Wrappers::standard() {
  static const Wrappers w(default_wrappers());
  return w;
}

std::string tool_of(std::string_view command, const Wrappers& wrappers) {
  return std::string(tool_view(command, wrappers));
}

Expansion expand(const JobResources& job, const std::map<std::string, ResourceMap, std::less<>>& maps,
                 const std::function<bool(std::string_view map, double units)>& available,
                 const std::map<std::string, std::string, std::less<>>& dollars, const Wrappers& wrappers,
                 bool mark_held) {
  Expansion out;
  Expr list = parse_resources(job.resources);
  std::vector<Expr> top;  // the job's list, then the appended resources, in the seed's order
  if (list.op == Expr::Op::And) top = std::move(list.kids);
  else top.push_back(std::move(list));
  out.appended.push_back("Priority:" + (job.priority.empty() ? std::string("normal") : job.priority));
  if (const std::string tool = tool_of(job.command, wrappers); !tool.empty()) out.appended.push_back("Tool:" + tool);
  out.appended.push_back("User:" + job.owner);
  out.appended.push_back("Group:" + job.group);
  Expander walker(maps, available, dollars, out, mark_held);
  std::vector<Expr> expanded;
  for (const Expr& e : top)
    if (!walker.walk(e, expanded)) return out;
  for (const std::string& name : out.appended)
    if (!walker.walk_appended(token_expr(name), expanded)) return out;
  Expr timeleft = token_expr("TIMELEFT");
  timeleft.token.kind = Token::Kind::AtLeast;
  timeleft.token.amount = std::max(0.0, std::ceil(job.expected_duration));
  expanded.push_back(std::move(timeleft));
  out.expanded.op = Expr::Op::And;
  out.expanded.kids = std::move(expanded);
  return out;
}

bool chooses(const Expr& e) {
  if (e.op == Expr::Op::Or) return holds_any(e);
  if (e.op != Expr::Op::And) return false;  // a token, or a NOT (whose ORs are not split)
  for (const Expr& k : e.kids)
    if (chooses(k)) return true;
  return false;
}

size_t size(const Expr& e) {
  size_t n = 1;
  for (const Expr& k : e.kids) n += size(k);
  return n;
}

Expr without_held(const Expr& e) {
  std::vector<Held> held;
  return strip_held(e, held);
}

std::vector<Solution> solutions(const Expr& expanded, size_t limit, bool& curtailed) {
  curtailed = false;
  std::vector<Solution> out;
  for (Part& p : parts(expanded, std::max<size_t>(limit, 1), curtailed)) {
    Solution s;
    s.list.op = Expr::Op::And;
    for (Expr& x : p.items) {  // flattened: an AND within an AND is one AND
      if (x.op == Expr::Op::And) {
        for (Expr& g : x.kids) s.list.kids.push_back(std::move(g));
      } else {
        s.list.kids.push_back(std::move(x));
      }
    }
    s.held = std::move(p.held);
    out.push_back(std::move(s));
  }
  return out;
}

GatedExpansion expand_gated(const JobResources& job, const std::map<std::string, ResourceMap, std::less<>>& maps,
                            const std::map<std::string, std::string, std::less<>>& dollars, const Wrappers& wrappers,
                            size_t max_gate) {
  GatedExpansion out;
  std::vector<Held> met;  // the counted maps one walk asked about
  size_t mask = 0;
  const auto available = [&](std::string_view name, double units) {
    for (size_t i = 0; i < out.gate.size(); ++i)
      if (out.gate[i].map == name && out.gate[i].units == units) return ((mask >> i) & 1) != 0;
    met.push_back({std::string(name), units});
    return true;
  };
  while (true) {
    out.by_mask.clear();
    bool grew = false;
    for (mask = 0; mask < (size_t{1} << out.gate.size()); ++mask) {
      met.clear();
      out.by_mask.push_back(expand(job, maps, available, dollars, wrappers, true));
      if (out.by_mask.back().outcome != Expansion::Outcome::Cycle) continue;
      for (const Held& h : met) {  // every map asked about before the cycle decides whether it is reached
        bool known = false;
        for (const Held& g : out.gate) known = known || (g.map == h.map && g.units == h.units);
        if (known) continue;
        out.gate.push_back(h);
        grew = true;
      }
      if (grew) break;
    }
    if (!grew) return out;
    if (out.gate.size() > max_gate) {
      out.gate.clear();
      out.by_mask.clear();
      out.too_wide = true;
      return out;
    }
  }
}

}  // namespace colmatch::vov
