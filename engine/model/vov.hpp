// Altair Accelerator (VOV) resources (seed 000 "Resource Mapping"; the notation in
// ../shared/references/accelerator-resources.md), issue 10, first part: resource lists, the tool of a
// command, and a job's expansion in the seed's order (appended resources, `$` resources, resource maps
// with counts and cycle detection, the depth count, TIMELEFT). Matching the expanded list against the
// taskers' columns, the Tcl loader and counted maps as farm-wide pools in dispatch come next.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace colmatch::vov {

/// One resource token: `name` (has it: quantity 1), `name#N` (offers at least N), `name/N` (consumes
/// N), `!name` (job only: must not run where it is offered). Names may be typed, `Type:value`
/// (`License:spice`, `User:john`).
struct Token {
  /// Held: units of a counted resource map the job holds while it runs, left in place by
  /// expand(..., mark_held) so that solutions() can tell which OR alternative holds them (never parsed).
  enum class Kind : uint8_t { Has, AtLeast, Consumes, Held };
  std::string name;
  Kind kind = Kind::Has;
  double amount = 1;
};

/// A resource list: tokens under AND, OR and NOT (an AND with no children is the empty list).
struct Expr {
  enum class Op : uint8_t { Token, And, Or, Not };
  Op op = Op::And;
  Token token;
  std::vector<Expr> kids;
};

/// A resource list that does not parse: `position` is the 1-based character where it went wrong.
class ResourceError : public std::invalid_argument {
 public:
  ResourceError(const std::string& msg, size_t at) : std::invalid_argument(msg), position(at) {}
  size_t position;
};

/// Parses a resource list: tokens joined by blanks, `&` or `AND` (and), `|` or `OR` (or), `!` or `NOT`
/// (not), parentheses; AND binds tighter than OR. `job_side`: `!` is allowed (a tasker cannot offer a
/// negation). Counts are non-negative finite numbers. Nesting is bounded at 64. Throws ResourceError.
Expr parse_resources(std::string_view text, bool job_side = true);

/// The list as text, in the notation it was parsed from (AND as blanks, OR as `|`, parentheses where
/// needed): parse_resources(to_text(e)) gives `e` again (a Held token, which no list can name, is
/// written `{name/units}`, and an empty alternative, which none can either, `()`).
std::string to_text(const Expr& e);

/// The wrappers a tool is found after by default: `vov`, `vw`, `nc run`, `time`, `env`.
const std::vector<std::string>& default_wrappers();

/// Wrappers made ready for tool_view once (each split into its words at single blanks, as tool_of
/// matches them), so that finding the tools of a million commands does not split them a million times.
class Wrappers {
 public:
  explicit Wrappers(const std::vector<std::string>& wrappers);
  /// default_wrappers(), made ready once.
  static const Wrappers& standard();

 private:
  friend std::string_view tool_view(std::string_view command, const Wrappers& wrappers);
  struct Wrapper {
    std::vector<std::string> words;  // "nc run" -> {"nc", "run"}
    bool env = false;                // `env`: NAME=value words are its options
    bool nc_run = false;             // `nc run`: -r -e -J -P -C -d -l take a value
  };
  std::vector<Wrapper> list_;
  // Bit n set: some wrapper's first word has n bytes (n < 64; bit 63 for longer ones). A word of no
  // such length starts no wrapper: most commands' tools are told apart so, without a look at each.
  uint64_t first_lengths_ = 0;
};

/// The tool of a command (seed 000): the tail (basename) of the first argument after the wrappers,
/// skipping a wrapper's own options (`-x`; `nc run`'s -r -e -J -P -C -d -l with their values; `--`
/// ends them) and `env`'s `NAME=value`; "" for an empty command.
/// `vov /usr/bin/time /tools/bin/spice -b x.sp` -> `spice`. The view is into `command`.
std::string_view tool_view(std::string_view command, const Wrappers& wrappers);

/// tool_view as a string.
std::string tool_of(std::string_view command, const Wrappers& wrappers = Wrappers::standard());

/// A resource map (resources.tcl `vtk_resourcemap_set NAME COUNT [-map EXPR]`): a farm-wide count of
/// units (each running job that maps through it holds one) and/or the expression it maps to.
struct ResourceMap {
  std::optional<uint64_t> count;
  std::optional<Expr> map;
};

/// What a job brings to its expansion.
struct JobResources {
  std::string resources;         ///< its resource list
  std::string command;           ///< for the tool
  std::string owner, group;      ///< User:, Group:
  std::string priority;          ///< level: Priority:<level> ("normal" when empty)
  double expected_duration = 0;  ///< seconds: TIMELEFT#<it>
};

/// The seed's depth limit: past this count, traversal into a map is curtailed (silently in VOV).
inline constexpr int kMaxDepthCount = 30;

/// Units of a counted map that a job holds while it runs (seed 000: `License:quad` holds 1, `License:quad#3`
/// and `License:quad/3` hold 3).
struct Held {
  std::string map;
  double units = 1;
  bool operator==(const Held&) const = default;
};

/// The outcome of a job's expansion.
struct Expansion {
  enum class Outcome : uint8_t {
    Ok,            ///< `expanded` is the list to match against the taskers
    NotAvailable,  ///< a counted map has no unit left: the job stays queued (`detail` names the map)
    Cycle,         ///< the maps form a cycle: the job is removed (`detail` is the path, a -> b -> a)
  };
  Outcome outcome = Outcome::Ok;
  Expr expanded;                      ///< names no map (each mapped name replaced, recursively)
  std::vector<std::string> appended;  ///< Priority:, Tool:, User:, Group: as appended (before mapping)
  std::vector<Held> held;             ///< the counted maps traversed, each once (the larger quantity)
  std::string detail;
  bool curtailed = false;   ///< the depth count passed kMaxDepthCount somewhere
  int max_depth_count = 0;  ///< the largest depth count reached
};

/// Expands a job's resources in the seed's order: its list, then Priority:<level>, Tool:<tool> (when
/// the command has one), User:<owner>, Group:<group> (an appended resource without a map is dropped
/// after it is counted: every job has User:<owner>, which no tasker offers, so it can only be a hook
/// for maps and limits; the seed's literal reading would leave every job ineligible); `$name` tokens replaced by
/// `dollars[name]`; each name found in `maps` replaced by its map (repeatedly) after checking
/// `available(map, units)` for a counted one, whatever quantity the name carries (`name`: 1 unit, `name#N`
/// and `name/N`: N units; the quantity is the count's, a map without a count is entered all the same); finally
/// TIMELEFT#<expected duration>. Depth count (seed 000): the three automatic resources and each resource visited add 1,
/// entering a map adds 1 and leaving restores the count; while it is past kMaxDepthCount a map is not entered and an OR
/// keeps its first alternative
/// (`curtailed`); so is every map entry after 65,536 resources visited (maps that fan out would
/// otherwise grow the list geometrically). O(size of the expanded list), bounded as said. Throws ResourceError for a
/// `$` name with no definition or a list that does not parse (the job's own, or a `$` definition).
/// `mark_held`: each counted map held is also left in `expanded`, where the walk met it, as a Held token
/// (for solutions()); without it `expanded` names only what the taskers must offer.
Expansion expand(const JobResources& job, const std::map<std::string, ResourceMap, std::less<>>& maps,
                 const std::function<bool(std::string_view map, double units)>& available,
                 const std::map<std::string, std::string, std::less<>>& dollars = {},
                 const Wrappers& wrappers = Wrappers::standard(), bool mark_held = false);

/// The seed's order of stops for a list whose walk meets a cycle: a map "not available" leaves the job
/// in the queue before the walk gets further, so whether it is removed depends on the counted maps met on
/// the way (an alternative dropped for its map may even spare it: `(License:a loopa | x)` runs on x while
/// no `License:a` is free). `gate`: the counted maps (each with the quantity asked) the walks met before
/// their cycle; `by_mask[m]`: expand() with gate[i] available when bit i of m is set and every other map
/// available (expanded with mark_held; a map outside the gate is decided by the pools when the job is
/// placed, as for any job). Found by growing the gate until no walk meets a new map before a cycle;
/// `too_wide` (and nothing else set) when it would pass `max_gate` maps. Throws what expand() throws.
struct GatedExpansion {
  std::vector<Held> gate;
  std::vector<Expansion> by_mask;
  bool too_wide = false;
};
GatedExpansion expand_gated(const JobResources& job, const std::map<std::string, ResourceMap, std::less<>>& maps,
                            const std::map<std::string, std::string, std::less<>>& dollars, const Wrappers& wrappers,
                            size_t max_gate);

/// One scheduling solution of an expanded list (seed 000: OR alternatives are "scheduling solutions";
/// a job takes one): what the taskers must offer, with one alternative chosen at each OR that holds a
/// counted map (ORs that hold none stay ORs), and the counted maps it holds (each once, the larger
/// quantity; those under a NOT too).
struct Solution {
  Expr list;
  std::vector<Held> held;
};

/// The most scheduling solutions colmatch keeps for one job (the first ones, in order): a list whose
/// ORs over counted maps multiply past it keeps these and is noted "solutions limit" (VOV bounds the ORs
/// of a list by a policy setting, seed 000).
inline constexpr size_t kMaxSolutions = 64;

/// The list has more than one solution: an OR (not under a NOT) holds a counted map. O(list size).
bool chooses(const Expr& expanded);

/// The number of nodes of `e` (tokens, ANDs, ORs, NOTs): what holding it costs. O(size).
size_t size(const Expr& e);

/// `e` without its Held tokens: what the taskers must offer for some solution (the ORs of all of them).
Expr without_held(const Expr& e);

/// The solutions of a list expanded with `mark_held`, in order: the first alternative of the first OR
/// first (lexicographic), so the first solution a tasker satisfies is the one whose alternatives come
/// first. A list whose ORs hold no counted map has one solution. At most `limit` (>= 1) are given, the
/// first ones; `curtailed` says whether more existed. O(limit x list size).
std::vector<Solution> solutions(const Expr& expanded, size_t limit, bool& curtailed);

}  // namespace colmatch::vov
