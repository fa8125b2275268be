// Placement: where one job goes on the taskers its category may use, taking its charges from a Capacity.
// The one placement code of the batch dispatch (engine/batch/) and of the simulator (engine/schedule/).
// A Placer tries a job under an allocation rule (Grid Engine's $pe_slots and $fill_up, seed 002; one slot
// per tasker) and an allocation policy (Moab's, seed 001; Slurm's node selection): $pe_slots and
// Accelerator's choices in placer.cpp, $fill_up in fill_up.cpp, Slurm's node choices in
// slurm_node_choice.cpp. DispatchCursors keep, per category, where no tasker has room while capacity only
// shrinks, so that a batch visits each tasker once per category.
#pragma once

#include <algorithm>
#include <cmath>
#include <compare>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "engine/match/categories.hpp"
#include "engine/match/eligibility.hpp"
#include "engine/model/capacity.hpp"
#include "engine/model/jobs.hpp"
#include "engine/model/taskers.hpp"
#include "engine/placement/load_correction.hpp"
#include "kernels/tasker_set.hpp"

namespace colmatch {

/// Slots of one job placed on one tasker.
struct Allocation {
  uint32_t tasker;
  uint32_t slots;
};

/// Per (category, soft tier): the position before which no tasker can take the category's charge in
/// the current Capacity epoch. sync() forgets the positions when the epoch changes (capacity came
/// back); a caller that knows where capacity grew may instead pull a cursor back to there (the
/// simulator does).
class DispatchCursors {
 public:
  /// Cursors for `cats` / `eligible` (one per tier where a category has soft tiers), all at 0.
  DispatchCursors(const Categories& cats, const std::vector<CategoryEligibility>& eligible);
  /// Cursors for `categories` categories, each to be sized by init() before use.
  explicit DispatchCursors(size_t categories) : pos_(categories), settled_(categories, 0) {}
  /// Sizes category c's cursors for its match result (one per soft tier, at least one), all at 0.
  void init(size_t c, const CategoryEligibility& e);
  /// Starts every cursor again at 0 if `capacity` is in another epoch than when they were last synced.
  void sync(const Capacity& capacity);
  size_t& at(size_t c, size_t tier) noexcept { return pos_[c][tier]; }
  size_t tiers(size_t c) const noexcept { return pos_[c].size(); }
  /// Category c settles: it cannot place another job until capacity grows ($fill_up: its slots do not all fit; the
  /// batch dispatch: one of its jobs found no room): placements fail at once. Its cursors keep their
  /// positions. sync() and init() clear it.
  void settle(size_t c) noexcept { settled_[c] = 1; }
  bool settled(size_t c) const noexcept { return settled_[c] != 0; }
  /// Every cursor of category c back at 0, not settled (capacity may have grown anywhere).
  void restart(size_t c) noexcept { pull_back(c, 0); }
  /// Capacity grew on taskers from `to` on: category c's cursors go back to at most `to`, and it is
  /// no longer settled.
  void pull_back(size_t c, size_t to) noexcept {
    for (size_t& p : pos_[c]) p = std::min(p, to);
    settled_[c] = 0;
  }

 private:
  std::vector<std::vector<size_t>> pos_;
  std::vector<uint8_t> settled_;
  uint64_t epoch_ = 0;
};

/// Moab's node allocation policies (seed 001) for a job whose slots go on one tasker: the eligible
/// tasker with room that has the greatest effective power (Altair Accelerator, seed 000: rank order),
/// the lowest input index, the least or the most capacity left over (sum over the charged consumables
/// of (available - charge) / charge). Soft tiers come first in every case; ties go to rank order.
/// $fill_up jobs always fill taskers in rank order.
///
/// ConsecutiveBestFit is Slurm's select/cons_tres node selection for a job of one node
/// (src/plugins/select/cons_tres/job_test.c, _eval_nodes, 22.05): of the taskers with room, only those
/// of the greatest effective power count (Slurm: the lowest node Weight; a Slurm farm's power is
/// -Weight); among them, runs of taskers adjacent in input order (Slurm's node table: by name), a run
/// ending at any tasker without room or of another power; the run with the fewest free units of the
/// fit consumable in sum wins (the first of equal runs), and in it the tasker with the fewest free (the
/// first of equals): a best fit that packs partly used nodes first. The fit consumable is
/// DispatchOptions::fit_consumable (Slurm: the CPUs). Checked job by job against slurmctld 22.05.8
/// (datasets/slurm/c100-batch-slurm.tsv).
/// A OnePerTasker job of K slots (Slurm: -N K) takes K taskers as _eval_nodes does: runs of adjacent
/// taskers with room (of any power); repeatedly the best run: the greatest power; among equals the
/// first run with at least the slots still wanted (sufficient), a later sufficient one with fewer free
/// units, or one with more free units that is not sufficient (Slurm's rule, word for word); from it the
/// first taskers in order (the best fit one when one slot is left), until K are taken. Soft tiers are
/// tried one at a time; the master (per-job charges) is the first taken in input order.
enum class AllocationPolicy : uint8_t { GreatestPower, FirstAvailable, BestFit, WorstFit, ConsecutiveBestFit };

/// A category's taskers in preference order: its soft tiers (fewest violations first, Grid Engine's soft
/// requests), or the whole eligible set as one tier. Within a tier, rank order (effective power). A view:
/// `e` must outlive it.
class PreferenceTiers {
 public:
  explicit PreferenceTiers(const CategoryEligibility& e) : e_(e) {}
  /// The number of tiers (at least 1).
  size_t size() const noexcept { return e_.tiers.empty() ? 1 : e_.tiers.size(); }
  /// Tier v (v < size()).
  const kernels::TaskerSet& operator[](size_t v) const noexcept { return e_.tiers.empty() ? e_.eligible : e_.tiers[v]; }

 private:
  const CategoryEligibility& e_;
};

/// How the jobs of a category are placed, chosen once per category and allocation policy (Placer::try_place):
/// Slurm's node picks (a count of nodes with a feature, or named nodes, first), Slurm's K nodes of a job
/// (consecutive best fit, one soft tier), Slurm's N tasks over K nodes (JobTable::FitUnit::total), Slurm's
/// tasks spread over nodes, $fill_up (Grid Engine), a choice
/// among solutions (Altair Accelerator), all slots on one tasker ($pe_slots) by the policy's node choice, or
/// Grid Engine's host rules (AllocationRule::HostPeSlots ..., grid_engine_hosts.cpp).
enum class PlacementMethod : uint8_t {
  NodePicks,
  Consecutive,
  TasksOnNodes,
  SlurmTasks,
  FillUp,
  Choice,
  PeSlots,
  GridEngineHosts
};

/// Places one job at a time on taskers, taking its charges from a Capacity: the one placement code of
/// the batch dispatch and of the simulator.
class Placer {
 public:
  /// `cursors` may be null (every search starts at the first tasker); with cursors, `capacity` must
  /// only shrink between syncs (see DispatchCursors). `ledger`: the writer's own (Capacity::lane(), for
  /// one of several placers at once on disjoint pools), or null for the Capacity's. try_place leaves
  /// its transaction open in that ledger. All references must outlive the Placer.
  Placer(const TaskerTable& taskers, const JobTable& jobs, const Categories& cats,
         const std::vector<CategoryEligibility>& eligible, Capacity& capacity, DispatchCursors* cursors,
         Capacity::Ledger* ledger = nullptr);
  /// What a Placer computes once from the categories and may share with others: per category its
  /// charges per unit (Capacity::charges) and whether every pool it charges is a tasker's own.
  struct Tables {
    /// A consumable a category charges per slot instance (`inst`) or, on a $fill_up master, per job
    /// (`once`), one of the two > 0: instances() reads these instead of merging two ChargeVectors.
    struct Term {
      uint32_t k = 0;
      double inst = 0, once = 0;
    };
    std::vector<std::vector<Charge>> charges;
    std::vector<uint8_t> all_queue_only;
    std::vector<std::vector<Term>> terms;  // per category, by increasing k
    /// Per category charging only taskers' own pools: the consumables it takes per slot instance (and
    /// no negative amount once): a tasker with nothing free of one of them takes no instance.
    std::vector<std::vector<uint32_t>> room_filter;
    /// Per category: its one term when it charges one consumable, per instance only, on taskers' own
    /// pools (instances() then reads one number); inst = 0 otherwise.
    std::vector<Term> single;
  };
  static std::shared_ptr<const Tables> tables_for(const Categories& cats, const Capacity& capacity);
  /// The same with `tables` (tables_for(cats, capacity), shared: the parallel dispatch's walks).
  Placer(const TaskerTable& taskers, const JobTable& jobs, const Categories& cats,
         const std::vector<CategoryEligibility>& eligible, Capacity& capacity, DispatchCursors* cursors,
         Capacity::Ledger* ledger, std::shared_ptr<const Tables> tables);
  /// Tries job j (its category must have some eligible tasker). Opens a Capacity transaction; on success
  /// appends the job's allocations to `out`, takes its charges and returns true, leaving the transaction
  /// open for the caller to commit() or rollback(); on failure rolls back itself and returns false.
  /// Cursors only move past taskers that had no room before the job's own charges, so they stay valid
  /// when the caller rolls a successful placement back.
  bool try_place(uint32_t j, AllocationPolicy policy, std::vector<Allocation>& out);
  /// The allocations try_place would append for job j now, without taking any charge (the capacity
  /// is left as it was). A $fill_up job charging only taskers' own pools is planned tasker by tasker
  /// (each tasker's instances do not depend on the others'); any other job is placed and rolled back.
  bool plan(uint32_t j, AllocationPolicy policy, std::vector<Allocation>& out);
  /// Whether job j has a placement now under `policy`: what try_place would answer, without taking a
  /// charge or choosing among placements. A job of one tasker (its slots together, no load correction)
  /// stops at the first tasker of its preference tiers that fits, where try_place looks for the best
  /// (consecutive_best_fit scans a whole power group), moving the greatest-power cursors as a try_place
  /// under GreatestPower would; any other job is placed and rolled back. Submit's "could it ever run"
  /// (never_runnable) asks it once per job category.
  bool can_place(uint32_t j, AllocationPolicy policy);
  /// What ConsecutiveBestFit counts: free units of consumable k (index in catalog.consumables(); 0 unless
  /// set), for a category with a JobTable::FitUnit also limited by consumable `limit` (Slurm: memory for
  /// --mem-per-cpu; SIZE_MAX, the default: none).
  void fit_by(size_t k, size_t limit = SIZE_MAX) noexcept {
    fit_ = k;
    fit_limit_ = limit;
  }
  /// Every successful try_place is committed before the next call (the batch dispatch's walk; not the
  /// simulator, which plans and rolls back): lets a job follow its category's last placement when
  /// nothing else changed since (ConsecutiveBestFit's answer then stays the same tasker).
  void committed_walk() noexcept { committed_walk_ = true; }
  /// Grid Engine's load correction within the run (load_correction.hpp; null, the default: none): a
  /// category placed on one tasker (sequential jobs) or host by host (AllocationRule's Host rules) tries
  /// the taskers in the queue sort as corrected now (soft tiers first; then host load and seq_no in the
  /// order of LoadCorrection::load_first; then rank order) instead of rank order, and every placement
  /// adds its slots to its hosts' correction. Only in a committed walk (committed_walk(): a placement
  /// rolled back would keep its correction); O(the category's taskers) a placement. `lc` must outlive the
  /// Placer, with an entry per host of TaskerTable::host_names and per tasker.
  void correct_loads(const LoadCorrection* lc);
  /// Capacity changed other than by a placement (taskers held by a blocked queue): the next job
  /// searches afresh.
  void forget_last() noexcept { last_.category = kNone; }
  /// Until called again with nullptr, places every job as if `e` were its category's eligibility (a
  /// subset of it: Slurm's job of several partitions tried in one of them); cursors are neither read nor
  /// moved meanwhile, and the last placement is forgotten both ways. `e` must outlive the restriction.
  void restrict_to(const CategoryEligibility* e) noexcept {
    restricted_ = e;
    last_.category = kNone;
  }
  /// The charges category c takes from each tasker per slot instance (fill_up) or per job (pe_slots).
  const std::vector<Charge>& charges(uint32_t c) const { return charges_[c]; }
  /// A job of a category that chooses (Categories::solutions, Altair Accelerator's scheduling
  /// solutions) is placed by one of its solutions: the tasker is the best by `policy` over every
  /// solution's (GreatestPower, FirstAvailable: the first in rank or input order; BestFit, WorstFit: the
  /// least or most left over), and its charges are those of the first solution, in the choice's order,
  /// that takes that tasker. With `chosen` set (one entry per job), a successful try_place or plan of
  /// such a job writes that solution's category at chosen[j]; several placers may share one.
  void record_choices(std::vector<uint32_t>* chosen) noexcept { chosen_ = chosen; }
  /// A choice with a gate (JobTable::Choice::gate) first takes the outcome of the gate's pools as they
  /// are now: Place limits the solutions, Wait places nothing, Remove "places" the job with no
  /// allocation and no charge (try_place returns true, appends nothing; chosen[j] = kNone): the caller
  /// removes it (removal()). The outcome for job j now, or nullptr when its category has no gate.
  const JobTable::Choice::Outcome* gate_outcome(uint32_t j) const noexcept;
  /// For a $fill_up job: the tasker try_place would make its master (the first in preference order that
  /// takes one slot instance and the per-job charges), or universe if none. Takes no charge.
  size_t fill_up_master(uint32_t j);
  /// Category c charges only pools of single taskers (no host or global pool).
  bool queue_only(uint32_t c) const { return all_queue_only_[c] != 0; }
  /// Whether a job of category c cannot fit now whatever its placement, by one test of the whole farm's
  /// free capacity: true only when c is placed $fill_up under `policy` on every tasker, charges only the
  /// taskers' own pools, and the queue-level free amount of some consumable, summed over the farm, is
  /// short of one job's whole charge (its slots' and the master's). O(its charges + taskers / 64).
  bool short_of_farm(uint32_t c, AllocationPolicy policy);
  /// Whether the last failed try_place may succeed for a job of the same category with less capacity
  /// (a OnePerTasker job under ConsecutiveBestFit whose chosen taskers fell short of a per-job or shared
  /// charge: other taskers may be chosen later). False for every other failure: capacity only shrinks in
  /// a batch, so the category's later jobs fail too.
  bool failure_may_pass() const noexcept { return may_pass_; }
  /// Whether the last failed try_place was of a job that can never run as it was tried: one of its node picks
  /// (Categories::node_picks) has fewer taskers than it counts, room or not, apart from those picked before it
  /// (Slurm: BadConstraints).
  bool failure_never() const noexcept { return never_; }
  /// How many taskers of node pick p (Categories::NodePick::all: every tasker it may pick) `keep(t)` admits,
  /// counting no further than p.count. O(the pick's taskers).
  template <class Keep>
  uint32_t pick_taskers(const Categories::NodePick& p, Keep&& keep) const {
    const kernels::TaskerSet& set = eligible_[p.all()].eligible;
    const size_t end = std::min(set.universe(), taskers_.size());
    uint32_t n = 0;
    for (size_t x = set.next(0); x < end && n < p.count; x = set.next(x + 1))
      n += keep(static_cast<uint32_t>(x)) ? 1 : 0;
    return n;
  }
  /// How many slot instances of category c tasker t takes now (at most `want`); a master also pays the
  /// per-job charges. 0 where a charged pool is missing or short, or t is down.
  /// Inline for the common case (one per-instance charge on the taskers' own pools, nothing per job):
  /// dispatch and the simulator's reservations call it once per tasker they look at.
  uint32_t instances(uint32_t c, uint32_t t, bool master, uint32_t want) const {
    const Tables::Term& x = single_[c];
    if (x.inst > 0 && !cap_.down(t)) {
      const double free = cap_.queue_free(x.k)[t];
      if (std::isfinite(free)) {
        if (!(free >= x.inst)) return 0;
        const uint32_t n = cats_.rule[c] == AllocationRule::OnePerTasker ? std::min(want, 1u) : want;
        return static_cast<uint32_t>(std::min<double>(n, whole(free, x.inst)));
      }
    }
    return instances_of_terms(c, t, master, want);
  }

 private:
  // How many whole `inst` fit in `a` (a >= inst > 0), safe against the division rounding up.
  static double whole(double a, double inst) noexcept {
    double q = inst == 1 ? std::floor(a) : std::floor(a / inst);
    if (q * inst > a) q -= 1;
    return q;
  }
  // instances() for any category: every term, each pool level, a master's per-job charges.
  uint32_t instances_of_terms(uint32_t c, uint32_t t, bool master, uint32_t want) const;
  // Category c's placement method under `policy`, kept per category (for the last policy asked).
  PlacementMethod method(uint32_t c, AllocationPolicy policy);
  bool place_pe_slots(uint32_t j, uint32_t c, AllocationPolicy policy, std::vector<Allocation>& out);
  bool place_choice(uint32_t j, uint32_t c, AllocationPolicy policy, std::vector<Allocation>& out);
  // The tasker a $pe_slots job of category c would get (universe if none), moving its cursors; `key`:
  // its preference key (lower is better) among those of other categories under the same policy.
  size_t find_pe_slots(uint32_t c, AllocationPolicy policy, double& key);
  // The node choices find_pe_slots makes within one tier, one file each: the first tasker with room in rank
  // order from the category's cursor v (greatest_power.cpp: Accelerator's greatest power, Moab's
  // PRIORITY); the lowest key over every tasker with room (scored_fit.cpp: FirstAvailable by input order,
  // BestFit / WorstFit by the room left, Moab's FIRSTAVAILABLE, MINRESOURCE, MAXBALANCE-like); Slurm's
  // consecutive best fit (slurm_node_choice.cpp, below). Each returns universe when no tasker of the tier has room.
  size_t pick_in_rank_order(uint32_t c, size_t v, const kernels::TaskerSet& tier, const std::vector<Charge>& ch);
  size_t pick_scored(const kernels::TaskerSet& tier, const std::vector<Charge>& ch, AllocationPolicy policy,
                     double& key) const;
  // Rows prev < x are adjacent in Slurm's node table: adjacent rows and input indices, one power.
  bool adjacent(size_t prev, size_t x) const noexcept;
  // What tasker t offers a job of category c in units of the fit consumable: its free amount, or with a
  // FitUnit (Slurm's --mem-per-cpu) the fewer of its free units and what the limit's free amount buys.
  double fit_free(uint32_t c, uint32_t t) const noexcept;
  // ConsecutiveBestFit within one tier (universe if no tasker of it has room).
  size_t consecutive_best_fit(uint32_t c, const kernels::TaskerSet& tier, const std::vector<Charge>& ch) const;
  bool place_fill_up(uint32_t j, uint32_t c, std::vector<Allocation>& out);
  bool farm_short(uint32_t c, uint32_t slots) const;  // short_of_farm's test, whatever the method
  // Grid Engine's host rules (grid_engine_hosts.cpp): category c's eligible taskers by host, and the placement.
  struct HostGroup {  // a host's eligible taskers, their places in the preference order and soft tiers
    std::vector<uint32_t> taskers, pos, tier;
  };
  const std::vector<HostGroup>& host_groups(uint32_t c);
  struct HostQueue {  // a category's hosts with a free slot by key (a lazy min-heap), within one epoch
    bool built = false;
    uint64_t epoch = 0;
    std::vector<uint32_t> first;                      // per host group: its first tasker maybe with room
    std::vector<std::pair<uint64_t, uint32_t>> heap;  // (key, group)
  };
  static constexpr uint64_t kNoHostKey = UINT64_MAX;
  HostQueue& host_queue(uint32_t c, bool fresh);
  uint64_t host_key(uint32_t c, const HostGroup& g, uint32_t& first) const;
  bool place_hosts(uint32_t j, uint32_t c, std::vector<Allocation>& out);
  // Calls fn(x) for the members x >= from of `tier`, in increasing order while fn returns true, except
  // taskers that cannot take a slot instance of category c by Capacity::room_words() and, with
  // `skip_blocks`, blocks of 64 that Capacity::block_full() says are full (not `keep`'s block).
  template <class Fn>
  void each_with_room(uint32_t c, const kernels::TaskerSet& tier, size_t from, bool skip_blocks, size_t keep,
                      Fn&& fn) const;
  // A OnePerTasker job under ConsecutiveBestFit: Slurm's _eval_nodes for a job of K nodes.
  bool place_consecutive(uint32_t j, uint32_t c, std::vector<Allocation>& out);
  // A OnePerTasker job of K slots running FitUnit::total tasks under ConsecutiveBestFit: Slurm's -n N -N K
  // (cons_tres _eval_nodes counting CPUs, _cpus_to_use): K taskers, each with as many tasks as Slurm gives it.
  bool place_tasks_on_nodes(uint32_t j, uint32_t c, std::vector<Allocation>& out);
  // Undoes a tier's partial placement: out back to `first` allocations, the charges rolled back, may_pass_.
  void undo_tier(std::vector<Allocation>& out, size_t first);
  // A $fill_up job with a fit unit under ConsecutiveBestFit: Slurm's -n N without -N (cons_tres _eval_nodes
  // with one node at least and N tasks), spread over as few taskers as its best runs give.
  bool place_tasks(uint32_t j, uint32_t c, std::vector<Allocation>& out);
  bool slurm_tasks(uint32_t c, AllocationPolicy policy) const noexcept {
    return cats_.rule[c] == AllocationRule::FillUp && policy == AllocationPolicy::ConsecutiveBestFit &&
           cats_.fit_unit_of(c).fit > 0;
  }
  // A job of category c with node picks (Categories::node_picks, any policy): Slurm's _get_req_features, each
  // pick by eval_required, then the job's own taskers with the picked ones required.
  bool place_picks(uint32_t j, uint32_t c, std::vector<Allocation>& out);
  // Slurm's _eval_nodes with required nodes (cons_tres job_test.c, 22.05.8, word for word but for the CPU
  // counts, which the fit units stand for): `nodes` are taskers with room for category c, in input order (Slurm's
  // node table), those with `required` set must be taken; `want` taskers in all into `chosen`. False when
  // the nodes fall short.
  bool eval_required(uint32_t c, const std::vector<uint32_t>& nodes, const std::vector<uint8_t>& required,
                     uint32_t want, std::vector<uint32_t>& chosen) const;
  // One slot instance of category c on each of `chosen` (the first is the master), charged; false (the
  // charges taken so far stay in the transaction) when one falls short of a host or global pool.
  bool take_each(uint32_t c, const std::vector<uint32_t>& chosen, std::vector<Allocation>& out);
  size_t& cursor(uint32_t c, size_t v) { return cursors_ && !restricted_ ? cursors_->at(c, v) : scratch_cursor_ = 0; }
  // Category c's eligibility, or the one restrict_to() set.
  const CategoryEligibility& elig(uint32_t c) const noexcept { return restricted_ ? *restricted_ : eligible_[c]; }

  const TaskerTable& taskers_;
  const JobTable& jobs_;
  const Categories& cats_;
  const std::vector<CategoryEligibility>& eligible_;
  Capacity& cap_;
  Capacity::Ledger& ledger_;
  DispatchCursors* cursors_;
  std::shared_ptr<const Tables> tables_;
  const std::vector<std::vector<Charge>>& charges_;
  const std::vector<uint8_t>& all_queue_only_;  // per category: every pool it charges is a tasker's own
  const std::vector<std::vector<Tables::Term>>& terms_;
  const std::vector<std::vector<uint32_t>>& room_filter_;
  const std::vector<Tables::Term>& single_;
  size_t scratch_cursor_ = 0;
  std::vector<uint8_t> methods_;  // per category: PlacementMethod + 1 (0: not chosen yet) for methods_policy_
  AllocationPolicy methods_policy_ = AllocationPolicy::GreatestPower;
  size_t fit_ = 0, fit_limit_ = SIZE_MAX;
  bool may_pass_ = false;                            // see failure_may_pass()
  bool never_ = false;                               // see failure_never()
  const CategoryEligibility* restricted_ = nullptr;  // restrict_to()
  struct ConsecutiveScratch {  // place_consecutive's taskers with room, the chosen, free units, runs
    struct Run {
      size_t first, count;  // into `taskers`
      double free, power;
    };
    std::vector<uint32_t> taskers, chosen;
    std::vector<double> free;
    std::vector<Run> runs;
    std::vector<uint32_t> by_count, by_free;  // RunChoice's orders of one power's runs
  } scratch_;
  std::vector<Allocation> probe_;                   // can_place's placement, rolled back
  std::vector<std::pair<size_t, size_t>> advance_;  // place_fill_up: (tier, new cursor), kept only on success
  struct HostTake {  // place_hosts: slot instances taken on a tasker, the master's with the per-job charges
    uint32_t tasker, n;
    bool master;
  };
  std::vector<HostTake> host_takes_;
  std::unordered_map<uint32_t, std::vector<HostGroup>> host_groups_;  // per category
  std::vector<HostGroup> scratch_groups_;                             // under restrict_to()
  std::vector<std::pair<uint64_t, uint32_t>> host_visited_;           // place_hosts: the hosts visited
  std::unordered_map<uint32_t, HostQueue> host_queues_;               // per category
  HostQueue scratch_queue_;                                           // under restrict_to()
  std::vector<const std::vector<uint32_t>*> host_round_;              // place_hosts: $round_robin's hosts
  // The batch walk commits every successful try_place (committed_walk()): the last placement's category
  // and tasker, and how many placements there were then, let the next job of that category skip its
  // ConsecutiveBestFit search (place_pe_slots).
  bool committed_walk_ = false;
  uint64_t placements_ = 0;  // successful try_place calls
  struct Last {
    uint32_t category = kNone, tasker = 0;
    uint64_t placements = 0;
  } last_;
  std::vector<uint32_t>* chosen_ = nullptr;
  // correct_loads(): the correction, and per host the slots of correction so far and its load by them
  const LoadCorrection* correction_ = nullptr;
  std::vector<double> corrected_slots_, corrected_load_;
  // per host, its taskers with load thresholds; a tasker found in alarm goes down in the Capacity
  std::vector<std::vector<uint32_t>> thresholded_;
  void check_alarms(uint32_t h);
  // Tasker x of soft tier v in the corrected queue sort (lower first).
  struct SortKey {
    size_t tier;
    double first, second;
    uint32_t rank;
    auto operator<=>(const SortKey&) const = default;
  };
  SortKey sort_key(size_t tier, uint32_t x) const noexcept;
  // The corrected load of the host of tasker x (0 for a tasker of no host).
  double corrected_load(uint32_t x) const noexcept {
    const uint32_t h = taskers_.host_of.empty() ? kNone : taskers_.host_of[x];
    return h == kNone ? 0.0 : corrected_load_[h];
  }
  // A $pe_slots job's tasker in the corrected queue sort: the first with room for `ch` (universe if none).
  size_t pick_corrected(uint32_t c, const std::vector<Charge>& ch) const;
  // Category c's host groups with a free slot in the corrected order, into q.heap as (place, group) by
  // increasing place (place_hosts takes them in that order without checking them again).
  void order_corrected(uint32_t c, HostQueue& q);
  bool planning_ = false;  // place_fill_up computes allocations without taking charges (plan())
};

}  // namespace colmatch
