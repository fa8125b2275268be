// Jobs, column-wise, in input order: each column a job's id, owner, credentials, priority, times, slots,
// allocation rule, request (an id into the distinct requests), consumable amounts and dependencies; the
// builders (JobBuilder, jobs.cpp) are the one way a loader fills a JobTable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/model/columns.hpp"
#include "engine/model/job_columns.hpp"
#include "engine/model/per_job.hpp"
#include "engine/model/request.hpp"

namespace colmatch {

/// Grid Engine parallel-environment allocation rule (seed 002, example E2): PeSlots puts all of a
/// job's slots on one tasker; FillUp spreads them over taskers in preference order, each filled as far
/// as its free capacity takes; OnePerTasker puts each slot on a tasker of its own (Grid Engine's
/// `allocation_rule 1`; a Slurm job of `-N K` nodes is K slots, each the per-node request), taskers in
/// preference order. FillUp and OnePerTasker charge per slot instance, plus the per-job charges on the
/// first (master) tasker.
///
/// The Host rules are Son of Grid Engine 8.1.9's as a real qmaster places a parallel job where a host
/// has several queue instances (taskers of one TaskerTable::host_of; engine/placement/grid_engine_hosts.cpp):
/// hosts in the order of their first tasker in preference order, each host's taskers in preference
/// order. HostPeSlots: every slot on one host ($pe_slots), over its taskers; HostFillUp: host after host,
/// each filled ($fill_up); HostRoundRobin: a slot a host in turn ($round_robin); HostBlocks: exactly
/// JobTable::PeShape::per_host slots on each host used (`allocation_rule N`). With a slot range
/// (PeShape::min_slots) a job takes the most slots that fit, at least the minimum. They charge per slot
/// instance, the per-job charges on the master (the first tasker taken). The batch dispatch places them;
/// the simulator does not take them (the Grid Engine loader gives it PeSlots and FillUp).
enum class AllocationRule : uint8_t {
  PeSlots = 0,
  FillUp = 1,
  OnePerTasker = 2,
  HostPeSlots = 3,
  HostFillUp = 4,
  HostRoundRobin = 5,
  HostBlocks = 6
};

/// Whether a rule is one of Grid Engine's host rules (placed host by host).
constexpr bool by_host(AllocationRule r) noexcept { return r >= AllocationRule::HostPeSlots; }

/// Whether a rule spreads a job's slots over several taskers (every rule but PeSlots).
constexpr bool spreads(AllocationRule r) noexcept { return r != AllocationRule::PeSlots; }

/// Slurm's PriorityTier in JobTable::priority: a job's tier times this, plus its 32-bit priority (Slurm
/// orders by tier first: job_scheduler.c sort_job_queue2). The Slurm loader writes it; the simulator's
/// priority/multifactor keeps the tier and replaces the rest.
inline constexpr double kPriorityTierScale = 4294967296.0;

/// Jobs, column-wise, in input order.
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
  /// `total` > 0: Slurm's `-n N -N K` with N > K (no --ntasks-per-node), a OnePerTasker job of K slots running
  /// N tasks over its taskers, at least one on each: its unit charge is one task with the per-node charges,
  /// and each further task on a tasker takes `fit` of the fit consumable and `limit` of the fit limit
  /// (each_extra_task_charge); Slurm's node selection decides how many go where
  /// (engine/placement/slurm_node_choice.cpp, place_tasks_on_nodes).
  struct FitUnit {
    double fit = 0, limit = 0, tasks = 0, total = 0;
    friend bool operator==(const FitUnit&, const FitUnit&) = default;
    /// What the tasks beyond the first of a `total` job take on a tasker running `tasks_here` of them:
    /// f(fit_k, (tasks_here - 1) x fit), and f(limit_k, (tasks_here - 1) x limit) when limit > 0 and limit_k
    /// is not SIZE_MAX. Nothing for any other job.
    template <class F>
    void each_extra_task_charge(uint32_t tasks_here, size_t fit_k, size_t limit_k, F&& f) const {
      if (!(total > 0) || tasks_here <= 1) return;
      const double more = tasks_here - 1.0;
      f(fit_k, more * fit);
      if (limit > 0 && limit_k != SIZE_MAX) f(limit_k, more * limit);
    }
  };
  /// Per job, up to the last job that has one (empty on most farms).
  std::vector<FitUnit> fit_unit;
  FitUnit fit_unit_of(uint32_t j) const noexcept { return j < fit_unit.size() ? fit_unit[j] : FitUnit{}; }
  /// A Grid Engine parallel job's shape beyond its rule (AllocationRule's Host rules): the fewest slots of its
  /// range (`-pe mpi 2-8`: 2; `slots` is the most; 0: no range), for HostBlocks the slots on each host, and
  /// (min_slots only) Slurm's node count range of a OnePerTasker job (`-N 2-4`: 2; slots 4), and
  /// its master queue request (qsub -masterq: an index into `requests`, the job's hard request and the
  /// queue list; kNone: any of its taskers may hold the master task), and its master-only request (qsub
  /// -masterq beside -q: the master queue request's taskers that -q does not name; kNone: none). Son of Grid
  /// Engine 8.1.9 (sge_select_queue.c) lets an instance of the -masterq list in whether -q names it or not,
  /// and one that -q does not name gives one slot at most, the master's, until a host has given the master;
  /// after that it gives slave slots as any other (checked: datasets/sge/masterq-q).
  struct PeShape {
    uint32_t min_slots = 0, per_host = 0;
    uint32_t master = UINT32_MAX;
    uint32_t master_only = UINT32_MAX;
    friend bool operator==(const PeShape&, const PeShape&) = default;
  };
  /// Per job, up to the last job that has one (empty on most farms).
  std::vector<PeShape> pe_shape;
  PeShape pe_shape_of(uint32_t j) const noexcept { return j < pe_shape.size() ? pe_shape[j] : PeShape{}; }
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
  /// Room for n jobs whose ids take `id_bytes` bytes in all: a loader that knows how many jobs it will add
  /// says so, and the columns fill without growth copies (a hint: more may still be added).
  void reserve(size_t n, size_t id_bytes);
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
  /// The last job's JobTable::FitUnit: `fit` > 0, `limit` and `tasks` >= 0 (0: none), all finite; `total` 0,
  /// or for a OnePerTasker job (set_rule first) a whole number of tasks above its slots. Throws ValueError
  /// otherwise.
  void set_fit_unit(double fit, double limit, double tasks = 0, double total = 0);
  /// The last job's JobTable::PeShape (set_rule a Host rule first): a range's fewest slots (0: none; else
  /// 1 .. its slots) and HostBlocks' slots a host (> 0 for HostBlocks only, dividing the job's slots and its
  /// range's minimum). Throws ValueError otherwise.
  void set_pe_shape(uint32_t min_slots, uint32_t per_host);
  /// The last job's fewest taskers (set_rule OnePerTasker first): Slurm's `-N MIN-MAX`, MIN here, MAX its
  /// slots; it takes as many as its node selection gives up to MAX (engine/placement/slurm_node_choice.cpp).
  /// Kept as JobTable::PeShape::min_slots. Throws ValueError unless 1 <= min_nodes < slots.
  void set_node_range(uint32_t min_nodes);
  /// The last job's master queue request (qsub -masterq; set_pe_shape's rule first): the request text whose
  /// taskers may hold its master task (Grid Engine: the job's hard request and the -masterq list). Throws
  /// RequestError for a text that does not parse, ValueError for a job of no Host rule.
  void set_master_request(std::string_view text);
  /// The last job's master-only request (JobTable::PeShape::master_only; set_master_request first): the request
  /// text of the master queue request's taskers that -q does not name. Throws RequestError for a text that
  /// does not parse, ValueError for a job of no master queue request.
  void set_master_only_request(std::string_view text);
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
