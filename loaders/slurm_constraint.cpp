#include "loaders/slurm_constraint.hpp"

#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "engine/model/request.hpp"

namespace colmatch::loaders::slurm {
namespace {

constexpr std::string_view kInvalid = "Invalid feature specification";
constexpr uint32_t kMaxCount = 1000000;

// The most choices of one matching OR ranked by soft terms (the rest tie after them): the terms' text
// grows as the square of the choices.
constexpr size_t kMaxRankedChoices = 64;

// The most groups one sequence makes (each change between '&' and '|' nests the text read so far once
// more; the request parser takes 128 levels).
constexpr size_t kMaxGroups = 100;

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

  std::vector<std::string> preference;  // soft terms: the order of matching-OR choices
  std::vector<Constraint::Count> counts;
  size_t counts_in_brackets = 0;

 private:
  // operand (op operand)* [op], combined left to right. `close` is the bracket that ends it (0: the end);
  // `bracket`: the sequence is in brackets.
  std::string sequence(char close, bool bracket = false) {
    const size_t first_count = counts.size();
    std::string acc = operand();
    // Slurm's reading of a matching OR beside other terms at the top level (slurmctld 22.05.8
    // build_feature_list, valid_feature_counts, _valid_features; datasets/slurm/c100-or-brackets): the
    // bracket's choices are the only choices, and the other terms filter the nodes as a left-to-right fold
    // that skips the bracket: the operator before '[' is dropped, the one after ']' joins what came before
    // (all nodes when nothing did) to what follows. `rome|[icelake|eth]` is rome nodes of one choice,
    // `[icelake|eth]|rome` any node of one choice, `[a|b]&c` c nodes of one choice.
    const bool top = close == 0 && !bracket;
    std::string matching_or = top && last_matching_or_ ? acc : std::string();
    std::optional<std::string> filter;  // the fold of the other terms; nullopt: every node
    char filter_op = 0;
    if (matching_or.empty()) filter = acc;
    std::string neg = last_neg_;  // acc negated (De Morgan), for a choice that must stay one soft term
    bool any_or = false, any_and = false;
    std::vector<std::string> items{acc}, items_neg{neg};
    std::vector<uint32_t> item_count{last_count_};
    // Left to right, as Slurm reads it: `a|b&c` is `(a || b) && c`. A run of one operator is one flat
    // group (`(a && b && c)`, the same by associativity): 200 terms of `ib&ib&...` nested 200 deep and
    // were refused as "nested deeper than 128", and each step copied the whole text (quadratic).
    char acc_op = 0;  // the operator of acc's outer group (0: acc is one operand); acc then lacks its ')'
    size_t groups = 0;
    auto extend = [&](std::string& text, char& text_op, char o, const std::string& operand) {
      const char* sep = o == '|' ? " || " : " && ";
      if (text_op == o) {
        text += sep;
      } else {
        if (text_op) text += ')';
        text = "(" + text + sep;  // (a new outer group: at most kMaxGroups of them)
        text_op = o;
      }
      text += operand;
    };
    char neg_op = 0;
    while (pos_ < s_.size() && s_[pos_] != close) {
      const char op = s_[pos_++];
      if (op != '&' && op != '|' && op != ',') throw Refuse{std::string(kInvalid)};
      if (pos_ == s_.size() || s_[pos_] == close) {
        if (close != 0) throw Refuse{std::string(kInvalid)};  // `[a|]`, `(a&)`: Slurm finds no name
        break;                                                // a trailing operator at the end is ignored
      }
      const std::string next = operand();
      any_or = any_or || op == '|';
      any_and = any_and || op != '|';
      items.push_back(next);
      items_neg.push_back(last_neg_);
      item_count.push_back(last_count_);
      const char o = op == '|' ? '|' : '&';
      if (o != acc_op && ++groups > kMaxGroups)
        throw Refuse{fmt::format("more than {} changes between '&' and '|' in one sequence", kMaxGroups)};
      extend(acc, acc_op, o, next);
      if (top && last_matching_or_) {
        matching_or = next;
      } else if (top && !filter) {
        if (o == '&') filter = next;  // (every node | next: still every node)
      } else if (top) {
        extend(*filter, filter_op, o, next);
      }
      extend(neg, neg_op, o == '|' ? '&' : '|', last_neg_);  // De Morgan: the negation's operators swap
    }
    if (acc_op) acc += ')';
    if (neg_op) neg += ')';
    if (!matching_or.empty() && any_or) {  // (with '&' alone the fold with the bracket is the same)
      if (filter && filter_op) *filter += ')';
      acc = filter ? "(" + *filter + " && " + matching_or + ")" : matching_or;
    }
    seq_neg_ = neg;
    if (bracket) {
      // job_scheduler.c _valid_feature_list: `&` in brackets (XAND) needs a count on every name, `|` (XOR)
      // allows none; so the two never mix
      for (const uint32_t n : item_count)
        if ((any_and && n == 0) || (any_or && n > 0)) throw Refuse{std::string(kInvalid)};
      for (size_t i = first_count; i < counts.size(); ++i) counts[i].apart = any_and;
      counts_in_brackets += counts.size() - first_count;
      if (any_or) {
        alternatives_.insert(alternatives_.end(), items.begin(), items.end());
        alternatives_neg_.insert(alternatives_neg_.end(), items_neg.begin(), items_neg.end());
      }
    }
    seq_neg_ = neg;
    return acc;
  }

  std::string operand() {
    last_count_ = 0;
    last_matching_or_ = false;
    if (pos_ >= s_.size()) throw Refuse{std::string(kInvalid)};
    const char c = s_[pos_];
    if (c == '(' || c == '[') {
      // build_feature_list: parentheses one level deep, one set of brackets; so groups in brackets
      // (`[(a&b)|c]`, each group a choice of the matching OR) and brackets in parentheses (`([a|b])`) are
      // accepted (seen in slurmctld 22.05.8: datasets/slurm/c100-brackets-submit-slurm.tsv)
      if (c == '(' && parens_ > 0) throw Refuse{std::string(kInvalid)};
      if (c == '[' && ++brackets_ > 1) throw Refuse{std::string(kInvalid)};  // one set of brackets
      if (c == '(') ++parens_;
      ++pos_;
      const char end = c == '(' ? ')' : ']';
      if (pos_ < s_.size() && s_[pos_] == end) throw Refuse{std::string(kInvalid)};
      const size_t first_alternative = alternatives_.size();
      const std::string inner = sequence(end, c == '[');
      if (pos_ >= s_.size() || s_[pos_] != end) throw Refuse{std::string(kInvalid)};
      ++pos_;
      if (c == '(') --parens_;
      if (c == '[' && alternatives_.size() - first_alternative > 1) {
        // a matching OR: Slurm tries its choices in the order written; the node of the first choice that
        // has one wins. As soft terms: the first k choices, k = 1..n-1 (a node of choice i violates i of them)
        // (the first choice alone, when a group, written as the negation of its negation: `(a&b)` stays one
        // soft term, where `a && b` would be two, each a violation of its own)
        // The terms grow with the choices (k choices in the k-th): only the first kMaxRankedChoices distinct
        // choices are ranked, the later ones tie after them (2,000 jobs of 1,360 choices took > 300 s;
        // a choice written again was never the first a node has, so it adds no term).
        std::string prefix;
        std::set<std::string_view> seen;
        size_t ranked = 0;
        for (size_t i = first_alternative; i + 1 < alternatives_.size() && ranked < kMaxRankedChoices; ++i) {
          if (!seen.insert(alternatives_[i]).second) continue;
          ++ranked;
          prefix += (prefix.empty() ? "" : " || ") + alternatives_[i];
          const bool group = alternatives_[i].front() == '(';
          preference.push_back(i > first_alternative ? "(" + prefix + ")"
                               : group               ? "!" + alternatives_neg_[i]
                                                     : prefix);
        }
      }
      last_matching_or_ = c == '[' && alternatives_.size() - first_alternative > 1;
      alternatives_.resize(first_alternative);
      alternatives_neg_.resize(first_alternative);
      last_count_ = 0;
      last_neg_ = seq_neg_;
      return inner;
    }
    const size_t b = pos_;
    while (pos_ < s_.size() && name_char(s_[pos_])) ++pos_;
    if (pos_ == b) throw Refuse{std::string(kInvalid)};
    const std::string name(s_.substr(b, pos_ - b));
    if (!known_.count(name)) throw Refuse{std::string(kInvalid)};
    const std::string term = std::string(attr_) + "==" + quote_value(name);
    last_neg_ = "!(" + term + ")";
    if (pos_ < s_.size() && s_[pos_] == '*') {
      // a node count (build_feature_list: strtol after the `*`, above 0, not in parentheses; what follows
      // the number up to the next operator is skipped)
      if (parens_ > 0) throw Refuse{std::string(kInvalid)};
      ++pos_;
      if (pos_ < s_.size() && s_[pos_] == '+') ++pos_;
      uint64_t n = 0;
      const size_t digits = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        n = n * 10 + static_cast<uint64_t>(s_[pos_++] - '0');
        if (n > kMaxCount) throw Refuse{"a node count above 1000000 in a constraint"};
      }
      if (pos_ == digits || n == 0) throw Refuse{std::string(kInvalid)};
      while (pos_ < s_.size() && name_char(s_[pos_])) ++pos_;
      last_count_ = static_cast<uint32_t>(n);
      counts.push_back({term, last_count_, false});
    }
    return term;
  }

  std::string_view s_;
  const std::set<std::string>& known_;
  std::string_view attr_;
  size_t pos_ = 0;
  int brackets_ = 0, parens_ = 0;              // sets of brackets met; parentheses open
  uint32_t last_count_ = 0;                    // of the operand just read (0: none)
  bool last_matching_or_ = false;              // the operand just read is a matching OR ([a|b])
  std::vector<std::string> alternatives_;      // of the matching OR being read
  std::vector<std::string> alternatives_neg_;  // each negated
  std::string last_neg_, seq_neg_;             // the operand / sequence just read, negated (De Morgan)
};

}  // namespace

Constraint translate_constraint(std::string_view text, const std::set<std::string>& known, std::string_view attr) {
  if (text.size() > 4096) return {{}, "a constraint longer than 4096 bytes", {}, {}};
  if (text.empty() || text.find('!') != std::string_view::npos) return {{}, std::string(kInvalid), {}, {}};
  try {
    Parser p(text, known, attr);
    Constraint c;
    c.request = p.run();
    for (const std::string& term : p.preference) c.preference += (c.preference.empty() ? "" : " && ") + term;
    if (!p.counts.empty()) {
      // with counts the expression filters no node (node_scheduler.c valid_feature_counts: have_count)
      if (!c.preference.empty()) return {{}, "node counts beside a matching OR: not placed by colmatch yet", {}, {}};
      const size_t outside = p.counts.size() - p.counts_in_brackets;
      if (outside > 1 || (outside == 1 && p.counts_in_brackets > 0))
        return {{}, "several node counts not in one set of brackets: not placed by colmatch yet", {}, {}};
      c.request.clear();
      c.counts = std::move(p.counts);
    }
    return c;
  } catch (const Refuse& r) {
    return {{}, r.why, {}, {}};
  }
}

}  // namespace colmatch::loaders::slurm
