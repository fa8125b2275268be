#include "engine/wildcard.hpp"

namespace colmatch {
namespace {

// Matches one pattern element at p against character c; sets `len` to the element's length.
// Returns false if the element is not a single-character element (i.e. '*').
bool match_one(std::string_view p, size_t i, char c, size_t& len) noexcept {
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
      for (size_t k = i + 1; k < close; ++k) {
        if (k + 2 < close && p[k + 1] == '-') {
          if (c >= p[k] && c <= p[k + 2]) return true;
          k += 2;
        } else if (p[k] == c) {
          return true;
        }
      }
      return false;
    }
  }
  len = 1;
  return pc == c;
}

// Iterative glob with single backtrack point for '*': linear in practice, quadratic worst case.
bool glob(std::string_view p, std::string_view t) noexcept {
  size_t pi = 0, ti = 0, star_p = std::string_view::npos, star_t = 0;
  while (ti < t.size()) {
    size_t len = 1;
    if (pi < p.size() && p[pi] == '*') {
      star_p = ++pi;
      star_t = ti;
      continue;
    }
    if (pi < p.size() && match_one(p, pi, t[ti], len)) {
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

}  // namespace

WildcardPattern::WildcardPattern(std::string_view pattern) {
  size_t start = 0;
  for (size_t i = 0; i <= pattern.size(); ++i)
    if (i == pattern.size() || pattern[i] == '|') {
      alts_.emplace_back(pattern.substr(start, i - start));
      start = i + 1;
    }
}

bool WildcardPattern::matches(std::string_view text) const noexcept {
  for (const auto& a : alts_)
    if (glob(a, text)) return true;
  return false;
}

}  // namespace colmatch
