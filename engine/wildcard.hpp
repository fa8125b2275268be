// Grid Engine RESTRING patterns (seed 002, "String matching"):
//   *  any run of characters (also empty)      ?   exactly one character
//   .  a literal dot                            \   escape: \\ \* \? \[ are literals
//   [xy], [a-z]  one character from a set or range (an unclosed '[' is a literal)
//   |  alternatives, at the top level only and not escapable: "linux|solaris" is linux OR solaris,
//      "[linux|solaris]" is the two literals "[linux" OR "solaris]".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace colmatch {

class WildcardPattern {
 public:
  /// Compiles `pattern`; never throws (every string is a pattern).
  explicit WildcardPattern(std::string_view pattern);
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
};

}  // namespace colmatch
