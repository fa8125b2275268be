// Job requests: an expression tree of AND, OR, NOT over clauses `attribute relop value`.
//
// Text syntax (docs/requests.md):
//   expr   := or ;  or := and ('||' and)* ;  and := unary ('&&' unary)* ;
//   unary  := '!' unary | '(' expr ')' | clause
//   clause := NAME relop value ;  relop := == != < <= > >= =
//   value  := "quoted" | {v1, v2, ...} (any of; with != none of) | bare text up to a blank, ')' , '&&' or '||'
// A clause reads "the tasker's value OP value"; `name=value` uses the catalog relop of the attribute as
// Grid Engine does (the request matches when `value relop tasker_value`), so for a consumable `mem=4G`
// means the tasker offers at least 4G. A tasker without the attribute fails the clause (DIRAC: a missing
// parameter makes the resource ineligible); NOT then makes it pass.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/catalog.hpp"

namespace colmatch {

/// One comparison: the tasker's value of `attr` OP the value(s). With several values, EQ means any of,
/// NE none of. Numeric values are in base units (bytes, seconds); strings are normalized as the type
/// compares them; for a restring attribute they are wildcard patterns.
struct Clause {
  uint32_t attr = 0;
  Relop op = Relop::EQ;
  std::vector<double> nums;
  std::vector<std::string> strs;
  /// The strs are Grid Engine 8.1.9 wildcard expressions (WildcardExpression), set by the parser under
  /// GridEngineReading::SoGE819 when a value has an operator or a wildcard; else they compare as the
  /// type says (exactly, or as a restring pattern).
  bool expression = false;
};

/// A request expression node. An AND with no children is true (the empty request).
struct Request {
  enum class Kind : uint8_t { And, Or, Not, Clause };
  Kind kind = Kind::And;
  std::vector<Request> kids;
  Clause clause;
};

/// A request that could not be parsed or checked; `column` is the 1-based character position.
class RequestError : public std::runtime_error {
 public:
  RequestError(const std::string& msg, size_t at) : std::runtime_error(msg), column(at) {}
  size_t column;
};

/// Parses and type-checks `text` against `catalog`, returning the canonical form (see canonicalize).
/// Parentheses and `!` nest at most 128 levels (the parser recurses per level). Throws RequestError for
/// syntax errors, nesting past that bound, unknown attributes, values of the wrong type or unit,
/// relops the attribute's type does not allow (Grid Engine: string/host/cstring/restring == and !=,
/// boolean ==), and attributes that are not requestable. The words `true` and `false` (not followed by a
/// relop) are the constants canonical_text writes for an empty AND and an empty OR (an Accelerator
/// list whose OR alternative expanded to nothing), so every canonical text parses back.
Request parse_request(std::string_view text, const Catalog& catalog);

/// Canonical form: nested ANDs/ORs flattened, double negations removed, single-child AND/OR
/// replaced by the child, lists sorted and deduplicated, children sorted by their canonical text
/// (so by attribute name first, as DIRAC sorts requirements to name a submit pool) and deduplicated.
/// Two requests with equal canonical text select the same taskers.
void canonicalize(Request& r, const Catalog& catalog);

/// Canonical text of a (canonicalized) request, with attribute names from the catalog.
std::string canonical_text(const Request& r, const Catalog& catalog);

/// A string value written in request syntax: in double quotes, embedded quotes escaped.
std::string quote_value(std::string_view v);

/// Attribute indices the request mentions (sorted, unique).
std::vector<uint32_t> mentioned_attributes(const Request& r);

}  // namespace colmatch
