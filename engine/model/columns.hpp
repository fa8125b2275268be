// Column-wise storage of taskers and jobs. A tasker is an index into typed arrays; so is a job.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/model/catalog.hpp"
#include "engine/model/per_job.hpp"
#include "engine/model/request.hpp"

namespace colmatch {

inline constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

/// The values of one dictionary entry of a set-valued column.
std::vector<std::string_view> set_elements(std::string_view entry);

/// Soft requests per job at most: violation counts are kept in 4 bit planes.
inline constexpr size_t kMaxSoftRequests = 15;

/// The soft requests of a canonical soft expression: the children of a top-level AND, or the
/// expression itself (none for the empty request).
std::vector<const Request*> soft_terms(const Request& soft);

/// String dictionary: distinct values get dense ids 0, 1, 2... in first-seen order.
class Dictionary {
 public:
  uint32_t intern(std::string_view v);
  std::optional<uint32_t> find(std::string_view v) const;
  const std::string& value(uint32_t id) const { return values_.at(id); }
  size_t size() const noexcept { return values_.size(); }

  /// For a set-valued column's dictionary: from now on also index each entry's elements
  /// (set_elements), the entries there are and every later one, so that a clause naming an element
  /// finds the entries holding it without scanning them all (an Accelerator farm's resource names,
  /// thousands of distinct sets). O(total elements) memory.
  void index_elements();
  bool elements_indexed() const noexcept { return elements_indexed_; }
  /// The ids of the entries holding `element`, ascending; empty when none (or not indexed).
  std::span<const uint32_t> entries_with(std::string_view element) const;

 private:
  void index_entry(uint32_t id);

  // looked up by string_view without building a string (C++20 heterogeneous lookup)
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> values_;
  std::unordered_map<std::string, uint32_t, TextHash, std::equal_to<>> index_;
  bool elements_indexed_ = false;
  std::unordered_map<std::string, std::vector<uint32_t>> elements_;
};

/// Grid Engine's levels, outermost first (seed 002, section 3). A queue instance (a tasker) sees its
/// queue values over its host's over the global ones; matching is strictly hierarchical.
enum class Level : uint8_t { Global = 0, Host = 1, Queue = 2 };

/// Fixed (custom) values versus load values reported by sensors (global and host levels only).
enum class ValueKind : uint8_t { Fixed, Load };

/// One attribute's values on one level over `rows` rows (taskers or hosts): a number (numeric types)
/// or a dictionary id (string-like types) per row, and the complementary bitmasks `present` and
/// `absent` (kernels layout: words_for(rows) words, tail clear). Absent rows hold 0. The setters keep
/// the values, both masks and the count of present rows consistent; there is no other way to write.
class LevelValues {
 public:
  LevelValues() = default;
  /// `rows` rows, all absent. `numeric` chooses which of nums() / ids() holds the values. `lazy`: the
  /// values array is allocated by the first set(), so a level nobody gives a value costs its two
  /// masks only (the host levels of a farm without hosts: most formats, and every resource name of
  /// an Accelerator farm); until then nums() and ids() are empty.
  LevelValues(size_t rows, bool numeric, bool lazy = false);
  size_t rows() const noexcept { return rows_; }
  bool numeric() const noexcept { return numeric_; }
  bool has(uint32_t r) const noexcept { return (present_[r >> 6] >> (r & 63)) & 1; }
  /// Some row has a value.
  bool any() const noexcept { return count_ > 0; }
  /// Row r's number (0 for string-like levels, and where absent).
  double num(uint32_t r) const noexcept { return nums_.empty() ? 0.0 : nums_[r]; }
  /// Row r's dictionary id (0 for numeric levels, and where absent).
  uint32_t id(uint32_t r) const noexcept { return ids_.empty() ? 0u : ids_[r]; }
  /// Every row's number: rows() values, or empty for a string-like level or a lazy one with no value yet.
  const std::vector<double>& nums() const noexcept { return nums_; }
  /// Every row's dictionary id: rows() ids, or empty for a numeric level or a lazy one with no value yet.
  const std::vector<uint32_t>& ids() const noexcept { return ids_; }
  const std::vector<uint64_t>& present() const noexcept { return present_; }
  const std::vector<uint64_t>& absent() const noexcept { return absent_; }
  /// Gives row r the value `num` (numeric) or dictionary id `id` (string-like); the first set() of a
  /// lazy level allocates its values (std::bad_alloc).
  void set(uint32_t r, double num, uint32_t id);
  /// Makes row r absent (its value becomes 0).
  void clear(uint32_t r) noexcept;

 private:
  void allocate();

  size_t rows_ = 0, count_ = 0;
  bool numeric_ = true;
  std::vector<double> nums_;
  std::vector<uint32_t> ids_;
  std::vector<uint64_t> present_, absent_;
};

/// The global level's value of one attribute (one value for the whole farm, or none).
struct GlobalValue {
  bool present = false;
  double num = 0;
  uint32_t id = 0;
};

/// An upper level's value as the override rule sees it: a fixed value (compared) and/or a load value
/// (present only; load values move).
struct UpperValue {
  bool fixed = false;
  double fixed_num = 0;
  bool load = false;
};

/// Grid Engine 6.0's override rule (seed 002, section 3), the one place it is written: may a lower level
/// set `lower` for a non-consumable attribute with relop `relop` under `upper`? `==`/`!=` attributes
/// may not be set below a level that has them at all (even as a load value); ordering relops only
/// with a value at least as restrictive as the upper fixed value (`<`, `<=`: not larger; `>`, `>=`:
/// not smaller). Consumables are pools on each level and are not subject to it.
bool may_override(Relop relop, double lower, const UpperValue& upper) noexcept;

/// The message for a broken override: names the attribute, its relop, both levels and both values.
std::string override_message(const AttributeDef& def, std::string_view lower_who, std::string_view lower_value,
                             std::string_view upper_who, std::string_view upper_value);

/// One attribute over all taskers, at every level of the Grid Engine hierarchy:
///  * queue(): one row per tasker (the tasker's own values);
///  * host(): one row per tasker, its host's value (expanded for the kernels), and by_host(): one row
///    per host (consumable pools, writers);
///  * global(): one value.
/// Where fixed and load values meet on one level the stored value is already combined (see
/// TaskerBuilder::build). defined() marks the taskers with a value on some level. Mutators keep all of
/// these consistent.
class Column {
 public:
  Column() = default;
  /// An attribute of type `type` over `taskers` taskers on `hosts` hosts, absent everywhere; no level's
  /// values are allocated until one is set (a farm-wide pool, an Accelerator map, costs its masks only).
  Column(AttrType type, bool multi, size_t taskers, size_t hosts);

  AttrType type = AttrType::String;
  bool multi = false;  ///< set-valued: each dictionary entry is a sorted set joined by kSetSeparator
  Dictionary dict;     ///< ids of every level's string values

  const LevelValues& queue() const noexcept { return queue_; }
  const LevelValues& host() const noexcept { return host_; }
  const LevelValues& by_host() const noexcept { return by_host_; }
  const GlobalValue& global() const noexcept { return global_; }
  const std::vector<uint64_t>& defined() const noexcept { return defined_; }
  /// Tasker t has a value on some level (global, host or queue).
  bool is_defined(uint32_t t) const noexcept { return global_.present || ((defined_[t >> 6] >> (t & 63)) & 1); }
  /// Numeric host levels with at most 32 distinct values (core counts, memory sizes): the sorted
  /// distinct values and each tasker's index into them (0 where absent), so a clause is decided once
  /// per distinct value and expanded with the bits32 kernel. Empty otherwise.
  const std::vector<double>& host_distinct() const noexcept { return host_distinct_; }
  const std::vector<uint32_t>& host_rank() const noexcept { return host_rank_; }

  /// Tasker t has a queue-level value.
  bool has(uint32_t t) const noexcept { return queue_.has(t); }
  /// True when some value comes from the host or global level (else only the queue level matters).
  bool multi_level() const noexcept { return host_.any() || global_.present; }

  /// Strict hierarchical matching (seed 002, section 5), the one place it is written for one row:
  /// every level that defines the attribute for tasker t must satisfy `holds(num, id)`; a level without
  /// it defers; a tasker with no level defining it fails. The mask path (eligibility.cpp) computes
  /// the same with kernels over whole levels.
  template <class Holds>
  bool holds_at_every_level(uint32_t t, Holds&& holds) const {
    bool seen = false;
    if (global_.present && !(seen = true, holds(global_.num, global_.id))) return false;
    if (host_.has(t) && !(seen = true, holds(host_.num(t), host_.id(t)))) return false;
    if (queue_.has(t) && !(seen = true, holds(queue_.num(t), queue_.id(t)))) return false;
    return seen;
  }

  /// Sets tasker t's queue-level value.
  void set_queue(uint32_t t, double num, uint32_t id);
  /// Removes tasker t's queue-level value.
  void clear_queue(uint32_t t) noexcept;
  /// Sets the host-level values: `by_host` (one row per host) expanded to taskers through `host_of`
  /// (kNone: no host). Recomputes defined() and the distinct host values.
  void set_hosts(LevelValues by_host, const std::vector<uint32_t>& host_of);
  /// Sets or removes the global value. Recomputes defined().
  void set_global(GlobalValue g);

 private:
  void refresh_defined(uint32_t t) noexcept;
  void refresh_all_defined();
  LevelValues queue_, host_, by_host_;
  GlobalValue global_;
  std::vector<uint64_t> defined_;
  std::vector<double> host_distinct_;
  std::vector<uint32_t> host_rank_;
};

/// Taskers, column-wise, stored in rank order: effective power descending, then input order.
/// Tasker index t (0-based) is that rank, so "the eligible tasker with the greatest effective power,
/// ties to the lowest input index" (Altair Accelerator) is the lowest set bit of an eligibility set.
struct TaskerTable {
  std::vector<std::string> names;
  std::vector<double> power;          ///< effective power (higher is preferred)
  std::vector<uint32_t> input_index;  ///< position in the input file(s)
  std::vector<uint32_t> host_of;      ///< host index per tasker, or kNone
  std::vector<std::string> host_names;
  std::vector<Column> columns;  ///< one per catalog attribute, in catalog order
  /// What the builder accepted but an administrator should hear about (GridEngineReading::SoGE819:
  /// a lower level's value the seed's override rule forbids), one line per attribute.
  std::vector<std::string> warnings;

  size_t size() const noexcept { return names.size(); }
};

/// A lower level's value that Grid Engine 6.0's override rule forbids (GridEngineReading::Design60).
/// `host_level`: the lower value is a host's (a hosts file), else a tasker's (queue level).
class OverrideError : public ValueError {
 public:
  OverrideError(const std::string& msg, bool host) : ValueError(msg), host_level(host) {}
  bool host_level;
};

/// Builds a TaskerTable row by row (input order), then sorts it into rank order.
class TaskerBuilder {
 public:
  explicit TaskerBuilder(const Catalog& catalog);
  /// Declares a host; returns its index. Names must be unique (throws ValueError otherwise).
  uint32_t add_host(std::string name);
  /// Index of a declared host, if any.
  std::optional<uint32_t> find_host(std::string_view name) const;
  /// Starts a tasker (a queue instance) on `host` (kNone: none); returns its input index.
  /// Names must be unique (throws ValueError otherwise).
  uint32_t add(std::string name, double power = 1.0, uint32_t host = kNone);
  /// Sets attribute `attr` of the last added tasker (queue level) from text, parsed by the
  /// attribute's type. Throws ValueError when the text is not a value of that type.
  void set(uint32_t attr, std::string_view text);
  /// Sets a numeric attribute of the last added tasker. Throws ValueError when check_number refuses it.
  void set_number(uint32_t attr, double v);
  /// Sets a set-valued attribute of the last added tasker (normalized, sorted, deduplicated).
  /// Throws ValueError if the attribute is not multi-valued.
  void set_list(uint32_t attr, const std::vector<std::string>& values);
  void set_power(double p);
  /// Sets a host-level value (fixed or load). Throws ValueError on a value of the wrong type.
  void set_host(uint32_t host, uint32_t attr, std::string_view text, ValueKind kind = ValueKind::Fixed);
  /// Sets a global-level value (fixed or load). Throws ValueError on a value of the wrong type.
  void set_global(uint32_t attr, std::string_view text, ValueKind kind = ValueKind::Fixed);
  size_t size() const noexcept { return names_.size(); }
  /// Consumes the builder; the returned table is in rank order (see TaskerTable).
  /// On each of the global and host levels a fixed value and a load value of one attribute combine
  /// as Grid Engine does (seed 002, section 3, mem_free example): for ordering relops the more
  /// restrictive one (<, <=: the smaller; >, >=: the larger), for == and != the fixed one.
  /// Throws ValueError, naming the attribute, the levels and the values, when a fixed value overrides
  /// another level against the spec: == and != attributes only on one level; ordering relops only
  /// with a more restrictive value on the lower level. Consumables are pools on each level that
  /// defines them and are not subject to the override rule.
  TaskerTable build() &&;

 private:
  struct LevelInput {
    double num = 0;
    uint32_t id = 0;
    bool fixed = false, load = false;
    double load_num = 0;
    uint32_t load_id = 0;
  };
  struct Raw {  // one attribute's queue-level values in input order
    AttrType type = AttrType::String;
    bool multi = false;
    Dictionary dict;
    std::vector<double> num;
    std::vector<uint32_t> ids;
    std::vector<uint8_t> has;
  };
  void mark(uint32_t attr);
  Raw& last_row(uint32_t attr);           // attr's column, with a row for the last tasker (throws without one)
  static void grow(Raw& c, size_t rows);  // rows absent (0, not set) up to `rows`
  double parse(uint32_t attr, std::string_view text, uint32_t& id);
  const Catalog& catalog_;
  std::vector<std::string> names_;
  std::vector<double> power_;
  std::vector<uint32_t> host_of_;
  std::vector<Raw> columns_;
  std::unordered_map<std::string, uint32_t> seen_;
  std::vector<std::string> host_names_;
  std::unordered_map<std::string, uint32_t> host_index_;
  std::vector<std::vector<LevelInput>> host_values_;  // [host][attr]
  std::vector<LevelInput> global_values_;             // [attr]
};

/// Grid Engine parallel-environment allocation rule (seed 002, example E2): PeSlots puts all of a
/// job's slots on one tasker; FillUp spreads them over taskers in preference order, each filled as far
/// as its free capacity takes; OnePerTasker puts each slot on a tasker of its own (Grid Engine's
/// `allocation_rule 1`; a Slurm job of `-N K` nodes is K slots, each the per-node request), taskers in
/// preference order. FillUp and OnePerTasker charge per slot instance, plus the per-job charges on the
/// first (master) tasker.
enum class AllocationRule : uint8_t { PeSlots = 0, FillUp = 1, OnePerTasker = 2 };

/// Whether a rule spreads a job's slots over several taskers (every rule but PeSlots).
constexpr bool spreads(AllocationRule r) noexcept { return r != AllocationRule::PeSlots; }

/// Jobs, column-wise, in input order.
/// The consumables each job requested, as (consumable, amount) pairs in rows of CSR form, each job
/// pointing at its row: jobs name few of a farm's consumables (an Accelerator farm has one per counted
/// resource map, a job holds one or two), so a job costs what it requested, not a slot per consumable
/// of the farm; and jobs copied from one prototype (add_jobs_like) share its row, 4 bytes a job.
class JobAmounts {
 public:
  /// One requested amount: `consumable` indexes catalog.consumables(); `amount` >= 0 in base units.
  struct Entry {
    uint32_t consumable;
    double amount;
  };
  /// The amount job `j` requested of consumable `k`; NaN where it requested none. O(its entries).
  double at(size_t k, uint32_t j) const noexcept {
    for (const Entry& e : of(j))
      if (e.consumable == k) return e.amount;
    return std::numeric_limits<double>::quiet_NaN();
  }
  /// Job `j`'s requested amounts, consumables ascending.
  std::span<const Entry> of(uint32_t j) const noexcept { return row_entries(row_[j]); }
  size_t jobs() const noexcept { return row_.size(); }
  /// The row of job j's amounts: jobs in one row requested alike (the copies of one prototype share
  /// theirs); jobs in different rows may have requested alike too.
  uint32_t row(uint32_t j) const noexcept { return row_[j]; }
  /// The number of rows (at most jobs()).
  size_t rows() const noexcept { return first_.size() - 1; }
  /// Row r's amounts, consumables ascending.
  std::span<const Entry> row_entries(uint32_t r) const noexcept {
    return {entries_.data() + first_[r], entries_.data() + first_[r + 1]};
  }
  /// Builder side: starts the next job (with no amounts, in a row of its own).
  void add_job() {
    row_.push_back(static_cast<uint32_t>(first_.size() - 1));
    first_.push_back(first_.back());
    last_shared_ = false;
  }
  /// Builder side: sets (or replaces) the last job's amount of consumable `k` (a row it shares with
  /// other jobs is copied first: theirs do not change).
  void set_last(uint32_t k, double amount);
  /// Builder side: starts `like.size()` jobs, job i with job like[i]'s amounts in `src` (another table's,
  /// over the same catalog): src's rows are copied once, the jobs point at them (filled in parallel).
  void add_jobs_like(const JobAmounts& src, std::span<const uint32_t> like);

 private:
  std::vector<uint32_t> row_;       ///< job j's amounts are row row_[j]
  std::vector<uint32_t> first_{0};  ///< row r's entries are [first_[r], first_[r + 1])
  std::vector<Entry> entries_;
  bool last_shared_ = false;  ///< the last job's row may be another job's too (add_jobs_like)
};

/// Each job's dependencies (afterok: indices of the jobs that must have ended before it starts), in CSR
/// form over the jobs up to the last one that has any: a table where no job depends on another (most
/// farms) costs nothing per job.
class JobDepends {
 public:
  /// Job `j`'s dependencies (empty for a job past the last one given any).
  std::span<const uint32_t> operator[](size_t j) const noexcept {
    if (j + 1 >= first_.size()) return {};
    return {ids_.data() + first_[j], ids_.data() + first_[j + 1]};
  }
  /// Adds dependency `d` to job `j`. Jobs are given theirs in job order: throws std::invalid_argument for
  /// a `j` below the last job given one.
  void add(uint32_t j, uint32_t d);

 private:
  std::vector<uint32_t> first_;  ///< job j's are ids_[first_[j], first_[j + 1]) for j + 1 < first_.size()
  std::vector<uint32_t> ids_;
};

/// A column of texts in Arrow's layout: the texts one after another in one buffer, text i ending where
/// ends[i] says (8 bytes a text and its bytes, not a std::string each: a million job ids).
class TextColumn {
 public:
  /// Text `i` (a view valid until the column changes).
  std::string_view operator[](size_t i) const noexcept {
    const uint64_t from = i == 0 ? 0 : ends_[i - 1];
    return {chars_.data() + from, static_cast<size_t>(ends_[i] - from)};
  }
  size_t size() const noexcept { return ends_.size(); }
  bool empty() const noexcept { return ends_.empty(); }
  void push_back(std::string_view text) {
    chars_.append(text);
    ends_.push_back(chars_.size());
  }
  /// Appends the texts of `parts` in order, part p's texts being texts[p] cut at ends[p] (Arrow's layout
  /// again: text i of the part is texts[p][ends[p][i - 1], ends[p][i]), from 0 for i = 0). The caller
  /// checks that each part's ends go up and stay within its text. Parts are copied in parallel (oneTBB).
  void append_parts(std::span<const std::string_view> texts, std::span<const std::span<const uint32_t>> ends);
  /// The texts as strings (for callers that want them so: the Python module).
  std::vector<std::string> strings() const;
  bool operator==(const TextColumn&) const = default;

 private:
  std::string chars_;
  std::vector<uint64_t> ends_;
};

struct JobTable {
  TextColumn id;
  std::vector<uint32_t> owner;  ///< ids into owners
  std::vector<uint32_t> group;  ///< ids into groups
  Dictionary owners, groups;
  std::vector<double> priority;      ///< higher runs first
  PerJob<double> submit;             ///< submit time in seconds (earlier runs first among equals)
  std::vector<uint32_t> slots;       ///< >= 1
  std::vector<AllocationRule> rule;  ///< parallel-environment allocation rule per job
  std::vector<uint32_t> request;     ///< index into `requests`, shared by jobs with equal canonical requests
  /// Soft requests (Grid Engine -soft): index into `requests` (0 = none). Each child of a top-level AND
  /// is one soft request; a tasker that fails it has one violation.
  PerJob<uint32_t> soft;
  std::vector<Request> requests;          ///< distinct canonical requests
  std::vector<std::string> request_text;  ///< canonical text of each of `requests`
  /// Requested amount per consumable (catalog.consumables() order) per job, per slot or per job as the
  /// attribute's scope says; amount.at(k, j) is NaN where job j did not request consumable k.
  JobAmounts amount;
  /// Per job, per consumable: the fraction in [0, 1] of what it holds that it really uses while it
  /// runs (its load, Moab's R.Utilized; a native job's "utilization"; the SWF logs at hand carry no CPU
  /// time: -1 in RICC, KTH and NASA, 1 for every job in wagap); a consumable it names none for counts as wholly used.
  /// Read by `simulate` under resource_availability "utilized" or "combined" only.
  JobAmounts utilization;
  PerJob<uint32_t> reject;  ///< kNone, or an index into reject_reason
  std::vector<std::string> reject_reason;
  /// A remark on how the job was read that does not stop it (an Accelerator expansion curtailed past
  /// the depth limit): kNone, or an index into `notes`. Written beside the job's outcome and counted.
  PerJob<uint32_t> note;
  Dictionary notes;
  /// Altair Accelerator's scheduling solutions (seed 000: OR alternatives are "scheduling solutions", a
  /// job takes one; issue 27): a job whose OR alternatives hold counted resource maps chooses among them
  /// when it is dispatched. Each solution is a request (index into `requests`) and the amounts it
  /// charges (consumables ascending, in `amount`'s units: its counted maps' units among them). The job's
  /// own request is what the solutions ask together (their OR), its own amounts what they all charge.
  struct Choice {
    std::vector<uint32_t> request;
    std::vector<std::vector<JobAmounts::Entry>> amounts;
    /// A gate (empty for most choices): farm-wide pools (consumable, amount) whose room when the job is
    /// dispatched decides what it does, `outcome[mask]` with bit i set when pool gate[i] has
    /// gate[i].amount free. Altair Accelerator: a job whose walk through the resource maps meets a cycle
    /// is removed only if the counted maps before it let the walk get there (seed 000's order of stops).
    std::vector<JobAmounts::Entry> gate;
    struct Outcome {
      enum class Kind : uint8_t { Place, Wait, Remove };
      Kind kind = Kind::Place;
      std::vector<uint32_t> solutions;  ///< Place: the solutions it may take (indices into `request`)
      std::string why;                  ///< Remove: why it is removed
      uint32_t wait_on = 0;             ///< Wait: the gate's pool it waits for (index into `gate`)
    };
    std::vector<Outcome> outcome;  ///< 1 << gate.size() entries when gated, else empty
  };
  std::vector<Choice> choices;
  /// Per job: an index into `choices`, or kNone; empty when no job has a choice (most farms: nothing per job).
  std::vector<uint32_t> choice;
  uint32_t choice_of(uint32_t j) const noexcept { return choice.empty() ? kNone : choice[j]; }
  /// How Slurm's best fit counts what a node offers a job (cons_tres job_test.c, 22.05): in whole tasks of
  /// `fit` units of the fit consumable (CPUs per task), no more than the fit limit's free amount buys at
  /// `limit` a task (--mem-per-cpu: memory per task; 0: no limit) and no more than `tasks` (0: no cap; a
  /// job with GRES may use only the CPUs of the tasks it runs on a node: gres_select_filter_sock_core caps
  /// avail_cpus at max_tasks_this_node x cpus_per_task). All 0: the free units of the fit consumable.
  struct FitUnit {
    double fit = 0, limit = 0, tasks = 0;
    friend bool operator==(const FitUnit&, const FitUnit&) = default;
  };
  /// Per job, up to the last job that has one (empty on most farms).
  std::vector<FitUnit> fit_unit;
  FitUnit fit_unit_of(uint32_t j) const noexcept { return j < fit_unit.size() ? fit_unit[j] : FitUnit{}; }
  /// Slurm's required nodes of a OnePerTasker job (slurmctld 22.05.8, node_scheduler.c _get_req_features; issue
  /// 26): a constraint with node counts (`ssd*2`: two of the job's nodes have ssd; `[a*1&b*2]`: one with a and two
  /// others with b) or -w naming fewer nodes than -N. Before its own placement the job picks `count` taskers of
  /// each pick's `request` in order (by the same node choice, among those with room), each pick `apart` from the
  /// taskers earlier picks took once an apart pick was made (Slurm's XAND: the counts in brackets); then the
  /// rest of its slots from its eligible set, the picked taskers required. Its own request does not name the
  /// counted features (Slurm: with counts the feature expression filters no node).
  struct NodePick {
    /// indices into `requests`, tried in order until one yields `count` taskers: the job's hard request and
    /// the pick's term, first narrowed to each feature of a bracket before it (Slurm's feature positions:
    /// `[gpu*1&bigmem*1]` picks its bigmem node among the gpu nodes first), the last the term alone (the
    /// taskers the pick may have at all)
    std::vector<uint32_t> requests;
    uint32_t count = 1;  ///< taskers to pick, >= 1
    bool apart = false;  ///< later picks skip the taskers picked so far (Slurm: XAND, inside brackets)
    friend bool operator==(const NodePick&, const NodePick&) = default;
  };
  /// Slurm's --prefer (issue 26): the hard request, and soft request (0: none), a job is tried with in the same
  /// pass when its own request left it with its taskers all held (slurmctld 22.05.8 tries a job's --prefer
  /// record first, then, when that ended ReqNodeNotAvail, which fails no partition, its --constraint
  /// record). `request` kNone: none.
  struct Fallback {
    uint32_t request = kNone, soft = 0;
    friend bool operator==(const Fallback&, const Fallback&) = default;
  };
  /// Per job, up to the last job that has one (empty on most farms).
  std::vector<Fallback> fallback;
  Fallback fallback_of(uint32_t j) const noexcept { return j < fallback.size() ? fallback[j] : Fallback{}; }
  std::vector<std::vector<NodePick>> node_picks;  ///< distinct lists of picks, each in order
  /// Per job, up to the last job that has one (empty on most farms): an index into node_picks, or kNone.
  std::vector<uint32_t> node_pick;
  uint32_t node_pick_of(uint32_t j) const noexcept { return j < node_pick.size() ? node_pick[j] : kNone; }

  // Time, for `colmatch simulate` (seconds). Moab credentials: class (queue), account and QoS.
  PerJob<double> runtime;   ///< seconds the job actually runs once started (NaN: unknown, 0 s)
  PerJob<double> walltime;  ///< the user's estimate (NaN: none; backfill then takes the runtime)
  /// Held until this time (Moab job hold; +inf: never released; -inf: not held).
  PerJob<double> hold_until;
  /// Jobs (indices) that must have ended before this one may start (afterok).
  JobDepends depends;
  PerJob<uint32_t> queue;    ///< ids into queues (the Moab class); "" when none
  PerJob<uint32_t> account;  ///< ids into accounts
  PerJob<uint32_t> qos;      ///< ids into qos_names (Moab quality of service); "" when none
  Dictionary queues, accounts, qos_names;

  size_t size() const noexcept { return id.size(); }
  bool rejected(uint32_t j) const noexcept { return reject[j] != kNone; }
};

/// Builds a JobTable; parses each distinct request text once.
class JobBuilder {
 public:
  explicit JobBuilder(const Catalog& catalog);
  /// Starts a job; returns its index. slots must be >= 1 (throws ValueError).
  uint32_t add(std::string_view id, std::string_view owner, std::string_view group, double priority, double submit,
               uint32_t slots = 1);
  /// Jobs for add_copies, as columns: job i is a copy of prototype like[i] but for its id, submit time,
  /// runtime and walltime (seconds; NaN: unknown). The ids are one string column, Arrow's layout: job i's
  /// id is id_text[id_end[i - 1], id_end[i]) (from 0 for i = 0). Every span has like.size() entries, but
  /// a time span may be empty: every job's is then the default (submit 0, runtime and walltime NaN).
  struct CopiedJobs {
    std::span<const uint32_t> like;
    std::string_view id_text;
    std::span<const uint32_t> id_end;
    std::span<const double> submit, runtime, walltime;
    /// Optional, per job (empty: the prototype's): the priority, and the owner and group as indices into
    /// the piece's own names (owner_names, group_names: each text once, in the order the piece meets
    /// them). Owners (groups) are per job in every piece with jobs or in none.
    std::span<const double> priority = {};
    std::span<const uint32_t> owner = {}, group = {};
    std::span<const std::string> owner_names = {}, group_names = {};
  };
  /// Adds the jobs of `pieces` in order (piece 0's, then piece 1's, ...), each a copy of a prototype of
  /// `protos` (a table built over the same catalog, one job per kind of job a loader met: an Accelerator
  /// job's list, owner, group, tool, level and duration) in all but its id, submit time, runtime and
  /// walltime (and owner, group and priority where the pieces give them): owner, group, priority, slots,
  /// rule, hard and soft request, amounts, utilization,
  /// credentials, hold and note; not a rejection (the loader rejects per job, naming it) nor
  /// dependencies. Dictionaries and requests are mapped once per prototype; the columns are filled in
  /// parallel (oneTBB), with no lookup per job. Throws ValueError, before adding any: for a piece whose
  /// columns differ in length or whose id ends go down, else naming the first job whose `like` is not
  /// a prototype or whose time (submit, runtime, walltime) is negative or infinite.
  void add_copies(const JobTable& protos, std::span<const CopiedJobs> pieces);
  /// Sets the hard request of the last job from text (see request.hpp). Throws RequestError.
  void set_request(std::string_view text);
  /// Sets the hard request of the last job from a built expression (canonicalized here).
  void set_request(Request r);
  /// Canonicalizes and interns a built expression; returns its index for set_request_index (jobs that
  /// share one expression pay for its canonical form once).
  uint32_t intern(Request r);
  /// intern() for many expressions at once: canonical forms computed in parallel (oneTBB), interned in
  /// order, so the indices are those intern() one by one would return.
  std::vector<uint32_t> intern_all(std::vector<Request> rs);
  /// Parses and interns a request's text (see request.hpp) without setting any job's; returns its index
  /// for set_request_index or add_choice. Throws RequestError.
  uint32_t intern_text(std::string_view text) { return parse_cached(text); }
  /// Sets the hard request of the last job to an expression intern() returned. Throws ValueError for
  /// an index intern() did not return.
  void set_request_index(uint32_t request);
  /// Sets the soft requests of the last job from text: each term of a top-level && is one soft
  /// request, counted when violated (at most kMaxSoftRequests). Throws RequestError.
  void set_soft(std::string_view text);
  /// Sets the amount of consumable `attr` of the last job. Throws ValueError if `attr` is not a
  /// consumable, not requestable, or the amount is negative.
  void set_amount(uint32_t attr, double amount);
  /// Sets the last job's utilization of consumable `attr` (JobTable::utilization). Throws ValueError if
  /// `attr` is not a consumable or the fraction is not in [0, 1].
  void set_utilization(uint32_t attr, double fraction);
  /// Sets the allocation rule of the last job (default PeSlots).
  void set_rule(AllocationRule rule);
  /// Marks job j rejected with a reason (kept in results.csv).
  void reject(uint32_t j, std::string reason);
  /// Notes job j (JobTable::note): a short label such as "depth limit"; the last note stands.
  void set_note(uint32_t j, std::string_view note);
  /// Adds a choice of solutions (JobTable::Choice: requests intern() returned, each solution's amounts
  /// by attribute index). Returns its index for set_choice. Throws ValueError for fewer than two
  /// solutions, an index intern() did not return or an amount set_amount would refuse.
  uint32_t add_choice(const std::vector<uint32_t>& requests,
                      const std::vector<std::vector<std::pair<uint32_t, double>>>& amounts);
  /// Gives choice `c` a gate (JobTable::Choice::gate, by attribute index: farm-wide pools) and an outcome
  /// per mask (1 << gate.size() of them, at most 2^kMaxGate). Throws ValueError for a pool that is not a
  /// consumable, a count of outcomes that does not match, or a Place outcome naming no solution of c.
  void set_gate(uint32_t c, const std::vector<std::pair<uint32_t, double>>& gate,
                std::vector<JobTable::Choice::Outcome> outcome);
  /// The most pools a gate may have (its outcomes double with each).
  static constexpr size_t kMaxGate = 8;
  /// The last job chooses among choice `c`'s solutions when dispatched (add_copies copies a prototype's).
  void set_choice(uint32_t c);
  /// The last job's JobTable::FitUnit: `fit` > 0, `limit` and `tasks` >= 0 (0: none), all finite. Throws
  /// ValueError otherwise.
  void set_fit_unit(double fit, double limit, double tasks = 0);
  /// The last job's JobTable::NodePick list (kept once per distinct list; add_copies copies none, as it copies
  /// no fit unit). Throws ValueError for an empty list, a count of 0, a pick of no request or of one intern() did not
  /// return, or a job that is not OnePerTasker (set_rule first) or has fewer slots than an apart list's counts together
  /// or than any count (Slurm: min_nodes grows to the picked nodes; the loader sets the slots).
  void set_node_picks(std::vector<JobTable::NodePick> picks);
  /// The last job's JobTable::Fallback: its hard request and soft request (empty: none) as text (see
  /// request.hpp; add_copies copies none). Throws RequestError as set_request and set_soft do.
  void set_fallback(std::string_view request, std::string_view soft);
  /// Sets the last job's actual runtime and walltime estimate in seconds (NaN: unknown). Throws
  /// ValueError for a negative or infinite value.
  void set_times(double runtime, double walltime);
  /// Holds the last job until time `until` (+inf: until the end of the run).
  void set_hold(double until);
  /// The last job may start only after the jobs with these ids have ended; ids are resolved in
  /// build(), where an unknown id rejects the job.
  void set_depends(std::vector<std::string> ids);
  /// set_depends for job j (add_copies copies no dependencies: a loader sets them per job).
  void set_depends(uint32_t j, std::vector<std::string> ids);
  /// Sets job j's submit time in seconds, any finite number (add_copies takes times >= 0 only; the native
  /// format allows a submit time before 0).
  void set_submit(uint32_t j, double submit);
  /// Sets the last job's class (queue), account and QoS credentials ("" for none).
  void set_credentials(std::string_view queue, std::string_view account, std::string_view qos = "");
  size_t size() const noexcept { return table_.size(); }
  /// Checks forced attributes (Grid Engine: a job must request them) and rejects jobs that do not,
  /// then returns the table. Every rejection's reason is in JobTable::reject_reason (the one store).
  JobTable build() &&;

 private:
  uint32_t intern_request(Request r);
  uint32_t intern_canonical(Request r, std::string text);  // r canonical, text its canonical_text
  uint32_t parse_cached(std::string_view text);
  const Catalog& catalog_;
  JobTable table_;
  std::unordered_map<std::string, uint32_t> by_text_;                   // raw text -> request index
  std::unordered_map<std::string, std::string> bad_text_;               // raw text -> parse error
  std::unordered_map<std::string, uint32_t> by_canonical_;              // canonical text -> request index
  std::unordered_map<std::string, uint32_t> by_picks_;                  // node picks (bytes) -> node_picks index
  std::vector<std::pair<uint32_t, std::vector<std::string>>> depends_;  // (job, ids) to resolve
  uint32_t no_queue_ = kNone, no_account_ = kNone, no_qos_ = kNone;     // the ids of "" (interned once)
};

}  // namespace colmatch
