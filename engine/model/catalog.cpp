#include "engine/model/catalog.hpp"

#include "kernels/relop.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace colmatch {

bool is_numeric(AttrType t) noexcept {
  switch (t) {
    case AttrType::Int:
    case AttrType::Double:
    case AttrType::Boolean:
    case AttrType::Memory:
    case AttrType::Time: return true;
    default: return false;
  }
}

namespace {
// Names indexed by the enumerators' values (AttrType and Relop are dense from 0).
constexpr std::array<std::string_view, 9> kTypeNames{"string", "cstring", "restring", "host", "int",
                                                     "double", "boolean", "memory",   "time"};
constexpr std::array<std::string_view, 6> kRelopNames{"==", "!=", "<", "<=", ">", ">="};
}  // namespace

std::string_view type_name(AttrType t) noexcept {
  const auto i = static_cast<size_t>(t);
  return i < kTypeNames.size() ? kTypeNames[i] : "?";
}

std::optional<AttrType> parse_type(std::string_view s) noexcept {
  for (size_t i = 0; i < kTypeNames.size(); ++i)
    if (kTypeNames[i] == s) return static_cast<AttrType>(i);
  if (s == "bool") return AttrType::Boolean;
  return std::nullopt;
}

std::string_view relop_name(Relop r) noexcept {
  const auto i = static_cast<size_t>(r);
  return i < kRelopNames.size() ? kRelopNames[i] : "?";
}

std::optional<Relop> parse_relop(std::string_view s) noexcept {
  if (s == "=<") return Relop::LE;  // as spelled in the Grid Engine spec
  if (s == "=>") return Relop::GE;
  for (size_t i = 0; i < kRelopNames.size(); ++i)
    if (kRelopNames[i] == s) return static_cast<Relop>(i);
  return std::nullopt;
}

Relop flip(Relop r) noexcept {
  switch (r) {
    case Relop::LT: return Relop::GT;
    case Relop::LE: return Relop::GE;
    case Relop::GT: return Relop::LT;
    case Relop::GE: return Relop::LE;
    default: return r;
  }
}

bool apply(Relop r, double a, double b) noexcept { return kernels::relop_holds(r, a, b); }

namespace {
bool parse_double(std::string_view s, double& out) {
  if (s.empty()) return false;
  if (s.front() == '+') s.remove_prefix(1);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && std::isfinite(out);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

[[noreturn]] void bad_value(AttrType t, std::string_view text, std::string_view why = {}) {
  const std::string_view name = type_name(t);
  const bool vowel = !name.empty() && std::string_view("aeiou").find(name[0]) != std::string_view::npos;
  throw ValueError(
      fmt::format("'{}' is not {} {} value{}{}", text, vowel ? "an" : "a", name, why.empty() ? "" : ": ", why));
}
}  // namespace

double parse_number(AttrType t, std::string_view raw) {
  const std::string_view text = trim(raw);
  double v = 0;
  switch (t) {
    case AttrType::Int: {
      if (!parse_double(text, v) || v != std::floor(v)) bad_value(t, raw);
      if (std::fabs(v) > 9007199254740992.0) bad_value(t, raw, "beyond 2^53, not exact");
      return v;
    }
    case AttrType::Double:
      if (!parse_double(text, v)) bad_value(t, raw);
      return v;
    case AttrType::Boolean: {
      std::string l(text);
      std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
      if (l == "true" || l == "1") return 1;
      if (l == "false" || l == "0") return 0;
      bad_value(t, raw, "expected true, false, 1 or 0");
    }
    case AttrType::Memory: {
      if (text.empty()) bad_value(t, raw);
      double mult = 1;
      std::string_view num = text;
      switch (text.back()) {
        case 'k': mult = 1e3; break;
        case 'm': mult = 1e6; break;
        case 'g': mult = 1e9; break;
        case 't': mult = 1e12; break;
        case 'K': mult = 1024.0; break;
        case 'M': mult = 1024.0 * 1024; break;
        case 'G': mult = 1024.0 * 1024 * 1024; break;
        case 'T': mult = 1024.0 * 1024 * 1024 * 1024; break;
        default: break;
      }
      if (mult != 1) num.remove_suffix(1);
      if (!parse_double(num, v) || v < 0) bad_value(t, raw, "expected a number with optional k/m/g/t or K/M/G/T");
      if (!std::isfinite(v * mult)) bad_value(t, raw, "too large");
      return v * mult;
    }
    case AttrType::Time: {
      // [[h:]m:]s ; each part a non-negative number
      double parts[3] = {0, 0, 0};
      int n = 0;
      std::string_view rest = text;
      while (true) {
        const size_t colon = rest.find(':');
        const std::string_view part = rest.substr(0, colon);
        if (n == 3 || !parse_double(part, parts[n]) || parts[n] < 0) bad_value(t, raw, "expected [[h:]m:]s");
        ++n;
        if (colon == std::string_view::npos) break;
        rest.remove_prefix(colon + 1);
      }
      const double seconds = n == 1   ? parts[0]
                             : n == 2 ? parts[0] * 60 + parts[1]
                                      : parts[0] * 3600 + parts[1] * 60 + parts[2];
      if (!std::isfinite(seconds)) bad_value(t, raw, "too large");
      return seconds;
    }
    default: bad_value(t, raw, "not a numeric type");
  }
}

namespace {

// An unsigned integer in C's notation (strtoul base 0): 0x.. hexadecimal, 0.. octal, else decimal.
bool parse_c_integer(std::string_view s, double& out) {
  if (s.empty()) return false;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8;
    s.remove_prefix(1);
  }
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size()) return false;
  out = static_cast<double>(v);
  return true;
}

}  // namespace

double parse_request_number(AttrType t, std::string_view raw, GridEngineReading reading) {
  if (reading == GridEngineReading::Design60 || t == AttrType::Boolean) return parse_number(t, raw);
  const std::string_view text = trim(raw);
  double v = 0;
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  if (hex) {
    if (!parse_c_integer(text, v)) bad_value(t, raw, "not a hexadecimal number");
    return v;
  }
  switch (t) {
    case AttrType::Int: {
      if (!text.empty() && text[0] == '-') return parse_number(AttrType::Double, text);
      const bool octal =
          text.size() > 1 && text[0] == '0' && text.find_first_not_of("01234567") == std::string_view::npos;
      if (octal && parse_c_integer(text, v)) return v;
      try {
        return parse_number(AttrType::Memory, text);  // fractions and k/m/g/K/M/G as SGE reads an int
      } catch (const ValueError&) {                   // (said of the int it is: "not a memory value" misled)
        bad_value(t, raw, "expected a whole number, with optional k/m/g or K/M/G, 0x hexadecimal or 0 octal");
      }
    }
    case AttrType::Time: {
      if (text.find(':') == std::string_view::npos) return parse_number(t, text);
      double parts[3] = {0, 0, 0};
      size_t n = 0, at = 0;
      while (true) {
        const size_t colon = text.find(':', at);
        const std::string_view part = text.substr(at, colon == std::string_view::npos ? colon : colon - at);
        if (n == 3 || (!part.empty() && (!parse_double(part, parts[n]) || parts[n] < 0)))
          bad_value(t, raw, "expected h:m:s or seconds");
        ++n;
        if (colon == std::string_view::npos) break;
        at = colon + 1;
      }
      if (n != 3) bad_value(t, raw, "expected h:m:s or seconds (Grid Engine reads two fields as no time)");
      const double seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
      if (!std::isfinite(seconds)) bad_value(t, raw, "too large");
      return seconds;
    }
    default: return parse_number(t, text);
  }
}

double check_number(const AttributeDef& def, double v) { return check_number(def, def.type, v); }

double check_number(const AttributeDef& def, AttrType as, double v) {
  const auto fail = [&](std::string_view why) {
    throw ValueError(fmt::format("'{}' is not a {} value: {}", v, type_name(as), why));
  };
  if (!std::isfinite(v)) fail("not a finite number");
  switch (as) {
    case AttrType::Int:
      if (v != std::floor(v)) fail("not a whole number");
      if (std::fabs(v) > 9007199254740992.0) fail("beyond 2^53, not exact");
      break;
    case AttrType::Boolean:
      if (v != 0 && v != 1) fail("expected 0 or 1");
      break;
    case AttrType::Memory:
    case AttrType::Time:
      if (v < 0) fail("must not be negative");
      break;
    default: break;
  }
  if (def.consumable && v < 0) fail("a consumable's amount must not be negative");
  return v;
}

std::string normalize_string(AttrType t, std::string_view text) {
  if (text.size() > kMaxStringValue)
    throw ValueError(fmt::format("a value of {} bytes: at most {} are accepted", text.size(), kMaxStringValue));
  std::string s(text);
  if (is_caseless(t)) std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

AttributeDef consumable_attribute(std::string name, AttrType type, ConsumeScope scope) {
  AttributeDef d;
  d.name = std::move(name);
  d.type = type;
  d.relop = Relop::LE;
  d.consumable = true;
  d.scope = scope;
  return d;
}

uint32_t Catalog::add(AttributeDef def) {
  const auto fail = [&](std::string_view rule) { throw ValueError(fmt::format("attribute '{}': {}", def.name, rule)); };
  if (def.name.empty()) fail("a name is required");
  if (find(def.name)) fail("name is not unique");
  if (!def.shortcut.empty() && find(def.shortcut)) fail(fmt::format("shortcut '{}' is not unique", def.shortcut));
  const AttrType t = def.type;
  if (def.consumable) {
    if (!(t == AttrType::Int || t == AttrType::Double || t == AttrType::Memory || t == AttrType::Time))
      fail(fmt::format("a consumable must be of type int, double, memory or time, not {}", type_name(t)));
    if (def.relop != Relop::LE) fail("a consumable's relop must be <=");
    if (def.requestable == Requestable::No && !def.default_amount)
      fail("a consumable that is not requestable must have a default");
    if (def.requestable == Requestable::Forced && def.default_amount)
      fail("a forced consumable must not have a default");
    if (def.default_amount && *def.default_amount < 0) fail("a consumable's default must not be negative");
  } else {
    if (def.default_amount) fail("only consumables may have a default value");
    if (is_string_like(t) && def.relop != Relop::EQ && def.relop != Relop::NE)
      fail(fmt::format("type {} allows only the relops == and !=", type_name(t)));
    if (t == AttrType::Boolean && def.relop != Relop::EQ) fail("type boolean allows only the relop ==");
  }
  if (def.multi_valued && !is_string_like(t)) fail("only string-like attributes may be multi-valued");
  const uint32_t idx = static_cast<uint32_t>(defs_.size());
  by_name_.emplace(def.name, idx);
  if (!def.shortcut.empty()) by_name_.emplace(def.shortcut, idx);
  slot_.push_back(def.consumable ? static_cast<int>(consumables_.size()) : -1);
  if (def.consumable) consumables_.push_back(idx);
  defs_.push_back(std::move(def));
  return idx;
}

std::optional<uint32_t> Catalog::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

int Catalog::consumable_slot(uint32_t attr) const noexcept { return attr < slot_.size() ? slot_[attr] : -1; }

}  // namespace colmatch
