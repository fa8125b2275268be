#include "loaders/slurm_constraint.hpp"

#include <vector>

#include "engine/request.hpp"

namespace colmatch::loaders::slurm {
namespace {

constexpr std::string_view kInvalid = "Invalid feature specification";

struct Refuse {
  std::string why;
};

bool name_char(char c) { return std::string_view("&|,[]()*!").find(c) == std::string_view::npos && c != ' '; }

class Parser {
 public:
  Parser(std::string_view s, const std::set<std::string>& known, std::string_view attr)
      : s_(s), known_(known), attr_(attr) {}

  std::string run() {
    std::string out = sequence(0);
    if (pos_ != s_.size()) throw Refuse{std::string(kInvalid)};
    return out;
  }

 private:
  // operand (op operand)* [op], combined left to right. `close` is the bracket that ends it (0: the end).
  std::string sequence(char close, bool bracket = false) {
    std::string acc = operand(close);
    bool any_or = false;
    std::vector<std::string> items{acc};
    while (pos_ < s_.size() && s_[pos_] != close) {
      const char op = s_[pos_++];
      if (op != '&' && op != '|' && op != ',') throw Refuse{std::string(kInvalid)};
      if (pos_ == s_.size() || s_[pos_] == close) break;  // a trailing operator is ignored
      const std::string next = operand(close);
      any_or = any_or || op == '|';
      items.push_back(next);
      acc = "(" + acc + (op == '|' ? " || " : " && ") + next + ")";
    }
    if (bracket && any_or) alternatives_.insert(alternatives_.end(), items.begin(), items.end());
    return acc;
  }

  std::string operand(char close) {
    if (pos_ >= s_.size()) throw Refuse{std::string(kInvalid)};
    const char c = s_[pos_];
    if (c == '(' || c == '[') {
      if (close != 0) throw Refuse{std::string(kInvalid)};  // one level, and no bracket in parentheses
      ++pos_;
      const char end = c == '(' ? ')' : ']';
      if (pos_ < s_.size() && s_[pos_] == end) throw Refuse{std::string(kInvalid)};
      const size_t first_alternative = alternatives_.size();
      const std::string inner = sequence(end, c == '[');
      if (pos_ >= s_.size() || s_[pos_] != end) throw Refuse{std::string(kInvalid)};
      ++pos_;
      if (c == '[' && alternatives_.size() - first_alternative > 1) {
        // a matching OR: Slurm tries its choices in the order written; the node of the first choice that
        // has one wins. As soft terms: the first k choices, k = 1..n-1 (a node of choice i violates i of them)
        std::string prefix;
        for (size_t i = first_alternative; i + 1 < alternatives_.size(); ++i) {
          prefix += (prefix.empty() ? "" : " || ") + alternatives_[i];
          preference.push_back(i == first_alternative ? prefix : "(" + prefix + ")");
        }
      }
      alternatives_.resize(first_alternative);
      return inner;
    }
    const size_t b = pos_;
    while (pos_ < s_.size() && name_char(s_[pos_])) ++pos_;
    if (pos_ == b) throw Refuse{std::string(kInvalid)};
    const std::string name(s_.substr(b, pos_ - b));
    if (pos_ < s_.size() && s_[pos_] == '*')
      throw Refuse{"node counts in a constraint (" + name +
                   "*N) need multi-node jobs, which colmatch does not place yet"};
    if (!known_.count(name)) throw Refuse{std::string(kInvalid)};
    return std::string(attr_) + "==" + quote_value(name);
  }

  std::string_view s_;
  const std::set<std::string>& known_;
  std::string_view attr_;
  size_t pos_ = 0;
  std::vector<std::string> alternatives_;  // of the matching OR being read

 public:
  std::vector<std::string> preference;  // soft terms: the order of matching-OR choices
};

}  // namespace

Constraint translate_constraint(std::string_view text, const std::set<std::string>& known, std::string_view attr) {
  if (text.size() > 4096) return {{}, "a constraint longer than 4096 bytes", {}};
  if (text.empty() || text.find('!') != std::string_view::npos) return {{}, std::string(kInvalid), {}};
  try {
    Parser p(text, known, attr);
    Constraint c;
    c.request = p.run();
    for (const std::string& term : p.preference) c.preference += (c.preference.empty() ? "" : " && ") + term;
    return c;
  } catch (const Refuse& r) {
    return {{}, r.why, {}};
  }
}

}  // namespace colmatch::loaders::slurm
