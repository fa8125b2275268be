// The attribute catalog: Grid Engine 6 complex attributes (seed 002, "Complex Attribute
// Specification", sections 1-2): name, shortcut, type, relop, consumable, requestable, default.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kernels/kernels.hpp"

namespace colmatch {

using Relop = kernels::CmpOp;

/// Complex attribute types (Grid Engine). Numeric types are stored as double: int values are exact
/// up to 2^53, memory in bytes, time in seconds, boolean as 0/1.
enum class AttrType : uint8_t { String, CString, ReString, Host, Int, Double, Boolean, Memory, Time };

/// Whether a job may, must not, or must request the attribute (Grid Engine "requestable").
enum class Requestable : uint8_t { Yes, No, Forced };

/// How a consumable's request is charged for a job of n slots: PerSlot charges n x amount (Grid Engine's
/// default for consumables, example E2), PerJob charges the amount once (licences).
enum class ConsumeScope : uint8_t { PerSlot, PerJob };

bool is_numeric(AttrType t) noexcept;
/// string, cstring, restring, host: dictionary-encoded columns.
inline bool is_string_like(AttrType t) noexcept { return !is_numeric(t); }
/// cstring and host compare caselessly: values are folded to lower case when stored and requested.
inline bool is_caseless(AttrType t) noexcept { return t == AttrType::CString || t == AttrType::Host; }

std::string_view type_name(AttrType t) noexcept;
std::optional<AttrType> parse_type(std::string_view s) noexcept;
std::string_view relop_name(Relop r) noexcept;
/// Parses ==, !=, <, <=, >, >= (also "=<" and "=>" as spelled in the Grid Engine spec).
std::optional<Relop> parse_relop(std::string_view s) noexcept;
/// The relop that holds for (b OP' a) exactly when (a OP b) holds: <= becomes >=, == stays.
Relop flip(Relop r) noexcept;
/// (a r b) for two numbers, by the kernels' relop table (kernels/relop.hpp: NaN != x is true).
bool apply(Relop r, double a, double b) noexcept;

/// Error in a value or definition; `what()` names the field and the rule broken.
class ValueError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses a textual value of a numeric type into a double:
///   int: decimal integer; double: decimal number; boolean: true/false/1/0 (caseless);
///   memory: number with optional suffix, k/m/g/t = 10^3.. and K/M/G/T = 2^10.. (Grid Engine), in bytes;
///   time: seconds, or [[h:]m:]s, in seconds.
/// Throws ValueError naming the type when the text is not a value of that type.
double parse_number(AttrType t, std::string_view text);

/// Which Grid Engine a farm's requests follow (farm.toml: `[policy] grid_engine`).
///  * SoGE819, "8.1.9" (the native format's default): Son of Grid Engine 8.1.9 as Debian 12 ships it,
///    what administrators have: every string-like request value (string, cstring, host, restring) is
///    a wildcard expression (WildcardExpression: `* ? [..] [^..]`, `! & |`, parentheses); a blank
///    ends a value (trailing blanks dropped, text after one refused); request numbers as SGE reads
///    them (parse_request_number).
///  * Design60, "6.0-design" (seed 002, the Grid Engine 6.0 design document; also every format that is
///    not Grid Engine's: DIRAC values are literals): only restring values are patterns (`* ? [..]`,
///    top-level `|`), other strings compare exactly, quoted values keep their blanks, numbers as
///    parse_number reads them.
enum class GridEngineReading : uint8_t { SoGE819, Design60 };

/// A number in a request under `reading`. Design60: parse_number. SoGE819, as SGE 8.1.9's qsub and
/// qselect read it (answers recorded in tests/engine/match/test_sge_semantics.cpp): hexadecimal `0x..` for
/// every numeric type; int also octal (a leading 0: `010` is 8), fractions (`16.5`) and the memory
/// multipliers (`1k` = 1000); time is seconds or exactly three fields `h:m:s`, a field may be empty
/// (`1::1` = 3601, `::60` = 60); two fields (`60:00`) are "not a time value". Throws ValueError.
double parse_request_number(AttrType t, std::string_view text, GridEngineReading reading);

/// The longest string-like value (bytes) a tasker may offer or a request may name: longer ones are
/// refused with a clear error rather than matched (a pattern of this size against a value of this size
/// costs at most 2^26 / 64 word steps in the bit-parallel wildcard matcher).
inline constexpr size_t kMaxStringValue = 65536;

/// Folds the text of a string-like value as the type compares it (lower case for cstring and host).
/// Throws ValueError for a value longer than kMaxStringValue bytes.
std::string normalize_string(AttrType t, std::string_view text);

/// One complex attribute definition.
struct AttributeDef {
  std::string name;
  std::string shortcut;  ///< may be empty
  /// What reasons call it when that differs from its name (an Accelerator counted map's pool,
  /// `map:License:spice`, is the map `License:spice`); may be empty.
  std::string label;
  AttrType type = AttrType::String;
  Relop relop = Relop::EQ;  ///< used for `name=value` requests: matches when (request relop tasker value)
  bool consumable = false;
  ConsumeScope scope = ConsumeScope::PerSlot;
  Requestable requestable = Requestable::Yes;
  std::optional<double> default_amount;  ///< consumables only: charged to jobs that do not request it
  /// String-like attributes only: a tasker may offer a set of values (DIRAC resource parameters given as
  /// lists, e.g. SoftwareTag). A clause `==` matches when one of the tasker's values matches one of the
  /// request's; `!=` when none does.
  bool multi_valued = false;
};

/// The one check of a numeric value, whatever it was written as (text, JSON or TOML number): finite;
/// int values whole and within 2^53; boolean 0 or 1; memory and time not negative; a consumable's value
/// (capacity, request, default) not negative. Returns `v`; throws ValueError naming the rule broken.
double check_number(const AttributeDef& def, double v);

/// check_number as if `def` had type `as` (Son of Grid Engine 8.1.9 takes a fractional request of an
/// int consumable: checked as a double).
double check_number(const AttributeDef& def, AttrType as, double v);

/// A consumable of the given type (relop <=, Grid Engine's rule for consumables), charged per slot or
/// per job: the `slots` consumable of the trace importers, licences, memory.
AttributeDef consumable_attribute(std::string name, AttrType type, ConsumeScope scope = ConsumeScope::PerSlot);

/// Separator of the values of a set-valued attribute inside one dictionary entry.
inline constexpr char kSetSeparator = '\x1f';

/// The catalog: attributes by index, found by name or shortcut.
class Catalog {
 public:
  /// Adds an attribute after checking the Grid Engine 6 restrictions (seed 002, section 2):
  /// unique name and shortcut; consumables only of int, double, memory, time with relop <=;
  /// string/host/cstring/restring only == or !=; boolean only ==; defaults only for consumables;
  /// a non-requestable consumable needs a default, a forced one must not have one.
  /// Returns the attribute's index. Throws ValueError naming the attribute and the rule.
  uint32_t add(AttributeDef def);
  /// Index of the attribute with this name or shortcut (case-sensitive), if any.
  std::optional<uint32_t> find(std::string_view name_or_shortcut) const;
  const AttributeDef& at(uint32_t i) const { return defs_.at(i); }
  size_t size() const noexcept { return defs_.size(); }
  /// Attribute indices of the consumables, in catalog order.
  const std::vector<uint32_t>& consumables() const noexcept { return consumables_; }
  /// Position of attribute `attr` among consumables(), or -1. O(1).
  int consumable_slot(uint32_t attr) const noexcept;
  /// The request semantics of this farm. Design60 unless a loader says otherwise: the native format
  /// sets SoGE819 (farm.toml `[policy] grid_engine`, default "8.1.9").
  GridEngineReading reading = GridEngineReading::Design60;

 private:
  std::vector<AttributeDef> defs_;
  std::vector<uint32_t> consumables_;
  std::vector<int> slot_;  ///< per attribute: its position among consumables_, or -1
  std::unordered_map<std::string, uint32_t> by_name_;
};

}  // namespace colmatch
