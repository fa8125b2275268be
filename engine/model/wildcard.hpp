// Grid Engine RESTRING patterns (seed 002, "String matching"), and Son of Grid Engine 8.1.9's wildcard
// expressions over them (WildcardExpression, below):
//   *  any run of characters (also empty)      ?   exactly one character
//   .  a literal dot                            \   escape: \\ \* \? \[ are literals
//   [xy], [a-z]  one character from a set or range (an unclosed '[' is a literal)
//   |  alternatives, at the top level only and not escapable: "linux|solaris" is linux OR solaris,
//      "[linux|solaris]" is the two literals "[linux" OR "solaris]".
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace colmatch {

class WildcardPattern {
 public:
  /// Compiles `pattern`; never throws (every string is a pattern). With `sge_operand` (an operand of a
  /// Son of Grid Engine 8.1.9 WildcardExpression), "[^...]" is the complement of the set and the
  /// pattern is one alternative (the expression has taken its '|'); without it '^' is one of a set's
  /// characters and a top-level '|' separates alternatives (seed 002).
  explicit WildcardPattern(std::string_view pattern, bool sge_operand = false);
  /// True when the whole of `text` matches one alternative. Short alternatives or texts: a glob with
  /// one backtrack point, O(|text| x |alternative|) worst case, at most 64 x |text| or 256 x
  /// |alternative|; both long: a bit-parallel automaton, O(|text| x |alternative| / 64 + 256 x
  /// |alternative|) (a 10,000-character pattern against a 200,000-character value: milliseconds, not
  /// seconds). May throw std::bad_alloc (the automaton's table).
  bool matches(std::string_view text) const;
  /// Each matcher alone, for tests: they must agree on every pattern and text.
  bool matches_by_backtracking(std::string_view text) const noexcept;
  bool matches_bit_parallel(std::string_view text) const;
  const std::vector<std::string>& alternatives() const noexcept { return alts_; }

 private:
  std::vector<std::string> alts_;
  bool caret_ = false;
};

/// A malformed wildcard expression; `position` is 1-based as Grid Engine reports it (the offending
/// character, or the text's length when it ended too early).
class WildcardError : public std::invalid_argument {
 public:
  WildcardError(const std::string& msg, size_t at) : std::invalid_argument(msg), position(at) {}
  size_t position;
};

/// A Grid Engine wildcard expression (sge_types(5), Son of Grid Engine 8.1.9), the value of a request
/// on any string-like attribute (string, cstring, host, restring): patterns as WildcardPattern with
/// "[^...]" negating a set, joined by `!` (not), `&` (and), `|` (or) and parentheses, `!` binding
/// tightest and `|` loosest: "rhel*&!rhel7", "(x86*|aarch*)&!*_64". Malformed (an operator without a
/// pattern, unbalanced parentheses, "[!...]"): WildcardError, as SGE's "Parse error on position N".
/// Nesting is bounded at 128 (the parser recurses per level).
class WildcardExpression {
 public:
  /// Parses `text`. Throws WildcardError.
  explicit WildcardExpression(std::string_view text);
  /// True when `value` satisfies the expression. Each pattern costs as WildcardPattern::matches.
  bool matches(std::string_view value) const;
  /// One plain value, no operator and no wildcard: matching is equality with the text.
  bool literal() const noexcept { return literal_; }

 private:
  class Parser;
  struct Node {
    enum class Kind : uint8_t { Pattern, Not, And, Or };
    Kind kind;
    std::vector<int32_t> kids;  // node indices; a chain of one operator is one node
    WildcardPattern pattern;
  };
  bool eval(int32_t n, std::string_view value) const;
  std::vector<Node> nodes_;
  int32_t root_ = 0;
  bool literal_ = false;
};

}  // namespace colmatch
