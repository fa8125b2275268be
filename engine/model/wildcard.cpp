#include "engine/model/wildcard.hpp"

#include <cstdint>
#include <utility>

namespace colmatch {
namespace {

// Matches one pattern element at p against character c; sets `len` to the element's length.
// Returns false if the element is not a single-character element (i.e. '*').
// With `caret`, "[^...]" is the complement of the set (Son of Grid Engine 8.1.9).
bool match_one(std::string_view p, size_t i, char c, size_t& len, bool caret) noexcept {
  const char pc = p[i];
  if (pc == '\\' && i + 1 < p.size()) {
    len = 2;
    return p[i + 1] == c;
  }
  if (pc == '?') {
    len = 1;
    return true;
  }
  if (pc == '[') {
    const size_t close = p.find(']', i + 1);
    if (close != std::string_view::npos && close > i + 1) {
      len = close - i + 1;
      size_t first = i + 1;
      const bool negate = caret && p[first] == '^' && close > first + 1;
      if (negate) ++first;
      for (size_t k = first; k < close; ++k) {
        if (k + 2 < close && p[k + 1] == '-') {
          if (c >= p[k] && c <= p[k + 2]) return !negate;
          k += 2;
        } else if (p[k] == c) {
          return !negate;
        }
      }
      return negate;
    }
  }
  len = 1;
  return pc == c;
}

// Iterative glob with single backtrack point for '*': linear in practice, quadratic worst case.
bool glob(std::string_view p, std::string_view t, bool caret) noexcept {
  size_t pi = 0, ti = 0, star_p = std::string_view::npos, star_t = 0;
  while (ti < t.size()) {
    size_t len = 1;
    if (pi < p.size() && p[pi] == '*') {
      star_p = ++pi;
      star_t = ti;
      continue;
    }
    if (pi < p.size() && match_one(p, pi, t[ti], len, caret)) {
      pi += len;
      ++ti;
      continue;
    }
    if (star_p == std::string_view::npos) return false;
    pi = star_p;
    ti = ++star_t;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

// The same match as glob() in O(|t| x elements / 64) word operations plus O(256 x elements) to build
// the table: a bit-parallel NFA (Shift-And with self-loops). State k = "the first k single-character
// elements matched"; a '*' after k elements is a self-loop on state k; bit k of advance[c] is set when
// element k accepts byte c (decided by match_one, so both matchers share every rule). Used when both
// the alternative and the text are long, where glob's single backtrack point costs |t| x |p|.
bool glob_bit_parallel(std::string_view p, std::string_view t, bool caret) {
  std::vector<std::pair<size_t, size_t>> elements;  // (position in p, length), '*' excluded
  std::vector<size_t> stars;                        // number of elements before each '*'
  for (size_t i = 0; i < p.size();) {
    if (p[i] == '*') {
      stars.push_back(elements.size());
      ++i;
      continue;
    }
    size_t len = 1;
    match_one(p, i, p[i], len, caret);  // its length does not depend on the character
    elements.emplace_back(i, len);
    i += len;
  }
  const size_t m = elements.size(), words = m / 64 + 1;  // bits 0..m
  std::vector<uint64_t> advance(256 * words, 0), loop(words, 0), state(words, 0), next(words, 0);
  for (size_t k = 0; k < m; ++k)
    for (int c = 0; c < 256; ++c) {
      size_t len = 1;
      if (match_one(p, elements[k].first, static_cast<char>(c), len, caret))
        advance[static_cast<size_t>(c) * words + k / 64] |= uint64_t{1} << (k % 64);
    }
  for (size_t k : stars) loop[k / 64] |= uint64_t{1} << (k % 64);
  state[0] = 1;
  for (const char ch : t) {
    const uint64_t* adv = advance.data() + static_cast<size_t>(static_cast<unsigned char>(ch)) * words;
    uint64_t carry = 0, any = 0;
    for (size_t w = 0; w < words; ++w) {
      const uint64_t moved = state[w] & adv[w];
      next[w] = (moved << 1) | carry | (state[w] & loop[w]);
      carry = moved >> 63;
      any |= next[w];
    }
    state.swap(next);
    if (!any) return false;
  }
  return (state[m / 64] >> (m % 64)) & 1;
}

// Above these sizes glob()'s worst case (text x alternative) is worth the bit-parallel matcher: its
// table costs 256 x elements, no more than glob's worst case once the text is that long.
constexpr size_t kLongAlternative = 64, kLongText = 256;

}  // namespace

WildcardPattern::WildcardPattern(std::string_view pattern, bool sge_operand) : caret_(sge_operand) {
  if (sge_operand) {  // a WildcardExpression operand: its '|' were split already, any left are literal
    alts_.emplace_back(pattern);
    return;
  }
  size_t start = 0;
  for (size_t i = 0; i <= pattern.size(); ++i)
    if (i == pattern.size() || pattern[i] == '|') {
      alts_.emplace_back(pattern.substr(start, i - start));
      start = i + 1;
    }
}

bool WildcardPattern::matches(std::string_view text) const {
  for (const auto& a : alts_) {
    const bool long_pair = a.size() > kLongAlternative && text.size() > kLongText;
    if (long_pair ? glob_bit_parallel(a, text, caret_) : glob(a, text, caret_)) return true;
  }
  return false;
}

bool WildcardPattern::matches_by_backtracking(std::string_view text) const noexcept {
  for (const auto& a : alts_)
    if (glob(a, text, caret_)) return true;
  return false;
}

bool WildcardPattern::matches_bit_parallel(std::string_view text) const {
  for (const auto& a : alts_)
    if (glob_bit_parallel(a, text, caret_)) return true;
  return false;
}

// ---- WildcardExpression ----

namespace {

constexpr size_t kMaxExpressionDepth = 128;

bool operator_char(char c) noexcept { return c == '&' || c == '|' || c == '!' || c == '(' || c == ')'; }

}  // namespace

class WildcardExpression::Parser {
 public:
  Parser(std::string_view text, WildcardExpression& e) : t_(text), e_(e) {}

  int32_t parse() {
    const int32_t root = parse_or(0);
    if (i_ < t_.size()) fail("unexpected ')'");
    return root;
  }

 private:
  [[noreturn]] void fail(const char* why) const {
    // SGE's own numbering: the offending character, 1-based; the end of the text when it ran out
    throw WildcardError(std::string("malformed wildcard expression: ") + why, std::min(i_ + 1, t_.size()));
  }
  int32_t add(Node n) {
    e_.nodes_.push_back(std::move(n));
    return static_cast<int32_t>(e_.nodes_.size() - 1);
  }
  // A chain of `|` (or `&`) is one node with every operand as a child: evaluation recurses per
  // nesting level (at most 128), never per operator.
  int32_t parse_or(size_t depth) {
    std::vector<int32_t> kids{parse_and(depth)};
    while (i_ < t_.size() && t_[i_] == '|') {
      ++i_;
      kids.push_back(parse_and(depth));
    }
    return kids.size() == 1 ? kids[0] : add({Node::Kind::Or, std::move(kids), WildcardPattern("")});
  }
  int32_t parse_and(size_t depth) {
    std::vector<int32_t> kids{parse_not(depth)};
    while (i_ < t_.size() && t_[i_] == '&') {
      ++i_;
      kids.push_back(parse_not(depth));
    }
    return kids.size() == 1 ? kids[0] : add({Node::Kind::And, std::move(kids), WildcardPattern("")});
  }
  int32_t parse_not(size_t depth) {
    if (depth >= kMaxExpressionDepth) fail("nested deeper than 128");
    if (i_ < t_.size() && t_[i_] == '!') {
      ++i_;
      const int32_t kid = parse_not(depth + 1);
      return add({Node::Kind::Not, {kid}, WildcardPattern("")});
    }
    if (i_ < t_.size() && t_[i_] == '(') {
      ++i_;
      const int32_t kid = parse_or(depth + 1);
      if (i_ >= t_.size() || t_[i_] != ')') fail("'(' without ')'");
      ++i_;
      return kid;
    }
    const size_t start = i_;
    while (i_ < t_.size() && !operator_char(t_[i_])) {
      if (t_[i_] == '\\' && i_ + 1 < t_.size()) {
        i_ += 2;
        continue;
      }
      if (t_[i_] == '[') {  // a set: up to its ']' (as match_one reads it); '!' cannot open it
        const size_t close = t_.find(']', i_ + 1);
        if (close != std::string_view::npos && close > i_ + 1) {
          if (t_[i_ + 1] == '!') {
            ++i_;
            fail("'!' inside '[...]' (use '[^...]')");
          }
          i_ = close + 1;
          continue;
        }
      }
      ++i_;
    }
    if (i_ == start) fail("a pattern is missing");
    return add({Node::Kind::Pattern, {}, WildcardPattern(t_.substr(start, i_ - start), true)});
  }

  std::string_view t_;
  WildcardExpression& e_;
  size_t i_ = 0;
};

WildcardExpression::WildcardExpression(std::string_view text) {
  root_ = Parser(text, *this).parse();
  literal_ = text.find_first_of("*?[\\()!&|") == std::string_view::npos;  // one plain pattern
}

bool WildcardExpression::eval(int32_t n, std::string_view value) const {
  const Node& x = nodes_[static_cast<size_t>(n)];
  switch (x.kind) {
    case Node::Kind::Pattern: return x.pattern.matches(value);
    case Node::Kind::Not: return !eval(x.kids[0], value);
    case Node::Kind::And:
      for (int32_t k : x.kids)
        if (!eval(k, value)) return false;
      return true;
    case Node::Kind::Or:
      for (int32_t k : x.kids)
        if (eval(k, value)) return true;
      return false;
  }
  return false;
}

bool WildcardExpression::matches(std::string_view value) const { return eval(root_, value); }

}  // namespace colmatch
