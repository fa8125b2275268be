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
  /// True when the whole of `text` matches one alternative. O(|text| x |alternative|) worst case.
  bool matches(std::string_view text) const noexcept;
  const std::vector<std::string>& alternatives() const noexcept { return alts_; }

 private:
  std::vector<std::string> alts_;
};

}  // namespace colmatch
