// One job's placement (Placer, placer.hpp): the categories' charge tables, try_place and plan (which
// place each allocation rule: $pe_slots and Altair Accelerator's choices here, $fill_up in fill_up.cpp,
// Slurm's node choices in slurm_node_choice.cpp), and how many slot instances a tasker takes. The batch
// walk over many jobs is dispatch.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "engine/placement/placer.hpp"

namespace colmatch {

DispatchCursors::DispatchCursors(const Categories& cats, const std::vector<CategoryEligibility>& eligible)
    : pos_(cats.size()), settled_(cats.size(), 0) {
  for (size_t c = 0; c < cats.size(); ++c) init(c, eligible[c]);
}

void DispatchCursors::sync(const Capacity& capacity) {
  if (capacity.epoch() == epoch_) return;
  for (auto& p : pos_) std::fill(p.begin(), p.end(), 0);
  std::fill(settled_.begin(), settled_.end(), 0);
  epoch_ = capacity.epoch();
}

void DispatchCursors::init(size_t c, const CategoryEligibility& e) {
  pos_[c].assign(std::max<size_t>(1, e.tiers.size()), 0);
  settled_[c] = 0;
}

std::shared_ptr<const Placer::Tables> Placer::tables_for(const Categories& cats, const Capacity& capacity) {
  auto t = std::make_shared<Tables>();
  t->charges.reserve(cats.size());
  for (size_t c = 0; c < cats.size(); ++c) {
    t->charges.push_back(capacity.charges(cats.unit_charge[c]));
    bool queue_only = true;
    std::vector<Tables::Term>& terms = t->terms.emplace_back();
    each_of_both(cats.unit_charge[c], cats.master_charge[c], [&](uint32_t k, double inst, double once) {
      if (inst > 0 || once > 0) {
        if (capacity.shared(k)) queue_only = false;
        terms.push_back({k, inst, once});
      }
      return true;
    });
    // a category that chooses may charge any of its solutions' pools (counted maps: global ones)
    if (cats.chooses(c)) queue_only = false;
    t->all_queue_only.push_back(queue_only);
    std::vector<uint32_t>& filter = t->room_filter.emplace_back();
    if (queue_only)
      for (const Tables::Term& x : terms)
        if (x.inst > 0 && x.once >= 0 && !capacity.queue_free(x.k).empty()) filter.push_back(x.k);
    const bool single = queue_only && terms.size() == 1 && terms[0].inst > 0 && terms[0].once == 0 &&
                        !capacity.queue_free(terms[0].k).empty();
    t->single.push_back(single ? terms[0] : Tables::Term{});
  }
  return t;
}

Placer::Placer(const TaskerTable& taskers, const JobTable& jobs, const Categories& cats,
               const std::vector<CategoryEligibility>& eligible, Capacity& capacity, DispatchCursors* cursors,
               Capacity::Ledger* ledger)
    : Placer(taskers, jobs, cats, eligible, capacity, cursors, ledger, tables_for(cats, capacity)) {}

Placer::Placer(const TaskerTable& taskers, const JobTable& jobs, const Categories& cats,
               const std::vector<CategoryEligibility>& eligible, Capacity& capacity, DispatchCursors* cursors,
               Capacity::Ledger* ledger, std::shared_ptr<const Tables> tables)
    : taskers_(taskers),
      jobs_(jobs),
      cats_(cats),
      eligible_(eligible),
      cap_(capacity),
      ledger_(ledger != nullptr ? *ledger : capacity.ledger()),
      cursors_(cursors),
      tables_(std::move(tables)),
      charges_(tables_->charges),
      all_queue_only_(tables_->all_queue_only),
      terms_(tables_->terms),
      room_filter_(tables_->room_filter),
      single_(tables_->single) {}

bool Placer::try_place(uint32_t j, AllocationPolicy policy, std::vector<Allocation>& out) {
  const uint32_t c = cats_.of_job[j];
  const size_t first = out.size();
  cap_.begin(ledger_);
  may_pass_ = false;
  never_ = false;
  bool ok = false;
  switch (method(c, policy)) {
    case PlacementMethod::NodePicks: ok = place_picks(j, c, out); break;
    case PlacementMethod::Consecutive: ok = place_consecutive(j, c, out); break;
    case PlacementMethod::TasksOnNodes: ok = place_tasks_on_nodes(j, c, out); break;
    case PlacementMethod::SlurmTasks: ok = place_tasks(j, c, out); break;
    case PlacementMethod::FillUp: ok = place_fill_up(j, c, out); break;
    case PlacementMethod::Choice: ok = place_choice(j, c, policy, out); break;
    case PlacementMethod::PeSlots: ok = place_pe_slots(j, c, policy, out); break;
    case PlacementMethod::GridEngineHosts: ok = place_hosts(j, c, out); break;
  }
  if (!ok) cap_.rollback(ledger_);
  else ++placements_;
  if (ok && correction_ != nullptr)  // debit_job_from_hosts: each granted slot corrects its host
    for (size_t a = first; a < out.size(); ++a)
      if (const uint32_t h = taskers_.host_of.empty() ? kNone : taskers_.host_of[out[a].tasker]; h != kNone) {
        corrected_slots_[h] += out[a].slots;
        corrected_load_[h] = correction_->host_load(h, corrected_slots_[h]);
        check_alarms(h);
      }
  return ok;
}

// sge_split_queue_load after a dispatch: an instance of host h whose corrected load crosses one of its load
// thresholds is out of the run (down in the Capacity: nothing fits on it).
void Placer::check_alarms(uint32_t h) {
  if (h >= thresholded_.size()) return;
  for (const uint32_t x : thresholded_[h])
    if (!cap_.down(x) && correction_->alarm(x, h, corrected_slots_[h])) cap_.set_down(x, true);
}

void Placer::correct_loads(const LoadCorrection* lc) {
  correction_ = lc;
  corrected_slots_.clear();
  corrected_load_.clear();
  thresholded_.clear();
  if (lc == nullptr) return;
  const size_t hosts = taskers_.host_names.size();
  corrected_slots_.assign(hosts, 0.0);  // the running jobs' correction (correct_load), else none
  if (lc->initial.size() == hosts) corrected_slots_ = lc->initial;
  corrected_load_.resize(hosts);
  for (uint32_t h = 0; h < hosts; ++h) corrected_load_[h] = lc->host_load(h, corrected_slots_[h]);
  if (!lc->threshold_first.empty() && !taskers_.host_of.empty()) {
    thresholded_.resize(hosts);
    for (uint32_t x = 0; x < taskers_.size(); ++x)
      if (lc->threshold_first[x + 1] > lc->threshold_first[x] && taskers_.host_of[x] != kNone)
        thresholded_[taskers_.host_of[x]].push_back(x);
    for (uint32_t h = 0; h < hosts; ++h) check_alarms(h);  // the run starts with the running jobs' correction
  }
}

Placer::SortKey Placer::sort_key(size_t tier, uint32_t x) const noexcept {
  const double load = corrected_load(x), seq = correction_->seq_no[x];
  return correction_->load_first ? SortKey{tier, load, seq, x} : SortKey{tier, seq, load, x};
}

size_t Placer::pick_corrected(uint32_t c, const std::vector<Charge>& ch) const {
  const PreferenceTiers tiers(elig(c));
  const size_t universe = tiers[0].universe(), end = std::min(universe, taskers_.size());
  for (size_t v = 0; v < tiers.size(); ++v) {
    size_t best = universe;
    SortKey best_key{};
    for (size_t x = tiers[v].next(0); x < end; x = tiers[v].next(x + 1)) {
      if (!cap_.fits(ch, static_cast<uint32_t>(x))) continue;
      const SortKey k = sort_key(v, static_cast<uint32_t>(x));
      if (best == universe || k < best_key) best = x, best_key = k;
    }
    if (best != universe) return best;
  }
  return universe;
}

PlacementMethod Placer::method(uint32_t c, AllocationPolicy policy) {
  if (policy != methods_policy_) {
    methods_.assign(methods_.size(), 0);
    methods_policy_ = policy;
  }
  if (methods_.size() <= c) methods_.resize(cats_.size(), 0);
  if (methods_[c] == 0) {
    const PlacementMethod m =
        !cats_.node_picks_of(c).empty()  ? PlacementMethod::NodePicks
        : cats_.fit_unit_of(c).total > 0 ? PlacementMethod::TasksOnNodes  // (whatever the policy: its charges)
        : cats_.rule[c] == AllocationRule::OnePerTasker && policy == AllocationPolicy::ConsecutiveBestFit
            ? PlacementMethod::Consecutive
        : slurm_tasks(c, policy) ? PlacementMethod::SlurmTasks
        : by_host(cats_.rule[c]) ? PlacementMethod::GridEngineHosts
        : spreads(cats_.rule[c]) ? PlacementMethod::FillUp
        : cats_.chooses(c)       ? PlacementMethod::Choice
                                 : PlacementMethod::PeSlots;
    methods_[c] = static_cast<uint8_t>(static_cast<uint8_t>(m) + 1);
  }
  return static_cast<PlacementMethod>(methods_[c] - 1);
}

bool Placer::can_place(uint32_t j, AllocationPolicy policy) {
  const uint32_t c = cats_.of_job[j];
  if (method(c, policy) != PlacementMethod::PeSlots || correction_ != nullptr) {
    probe_.clear();
    if (!try_place(j, policy, probe_)) return false;
    cap_.rollback(ledger_);
    return true;
  }
  // find_pe_slots finds a tasker in some tier iff one fits, whatever the policy (each picks among those that
  // fit): greatest power's walk stops at the first
  double key = 0;
  return find_pe_slots(c, AllocationPolicy::GreatestPower, key) < elig(c).eligible.universe();
}

bool Placer::plan(uint32_t j, AllocationPolicy policy, std::vector<Allocation>& out) {
  const uint32_t c = cats_.of_job[j];
  if (method(c, policy) != PlacementMethod::FillUp || !all_queue_only_[c]) {
    if (!try_place(j, policy, out)) return false;
    cap_.rollback(ledger_);
    return true;
  }
  planning_ = true;
  const bool ok = place_fill_up(j, c, out);
  planning_ = false;
  return ok;
}

// $pe_slots: all slots on one tasker with room for the whole charge, chosen by `policy` within the
// first soft tier that has one. GreatestPower walks the tier in rank order from the category's cursor,
// which moves to the tasker found (or past the end); the others look at every eligible tasker.
bool Placer::place_pe_slots(uint32_t j, uint32_t c, AllocationPolicy policy, std::vector<Allocation>& out) {
  double key = 0;
  size_t t = elig(c).eligible.universe();
  // ConsecutiveBestFit, the batch's walk: when the last placement of all was this category's on tasker
  // x and x still has room, x is the answer again (its run's sum and its own free only went down; no
  // other tasker changed)
  const bool again = policy == AllocationPolicy::ConsecutiveBestFit && committed_walk_ && last_.category == c &&
                     last_.placements == placements_ && cap_.fits(charges_[c], last_.tasker);
  if (again) t = last_.tasker;
  else if (correction_ != nullptr && !cap_.global_full(charges_[c])) t = pick_corrected(c, charges_[c]);
  else if (correction_ == nullptr) t = find_pe_slots(c, policy, key);
  if (t >= elig(c).eligible.universe()) return false;
  cap_.take(ledger_, charges_[c], static_cast<uint32_t>(t));
  out.push_back({static_cast<uint32_t>(t), jobs_.slots[j]});
  last_ = {c, static_cast<uint32_t>(t), placements_ + 1};  // try_place counts this placement
  return true;
}

const JobTable::Choice::Outcome* Placer::gate_outcome(uint32_t j) const noexcept {
  const JobTable::Choice* ch = gate_of(cats_, jobs_, cats_.of_job[j]);
  return ch == nullptr ? nullptr : &ch->outcome[cap_.room_mask(ch->gate)];
}

// Each solution's tasker by the policy, the best of them; ties go to the solution first in order, which
// is then the first that takes that tasker (for GreatestPower and FirstAvailable exactly: a solution
// before it that took the tasker would have found it, or one before it, first).
bool Placer::place_choice(uint32_t j, uint32_t c, AllocationPolicy policy, std::vector<Allocation>& out) {
  const size_t universe = elig(c).eligible.universe();
  size_t best_t = universe;
  uint32_t best_s = kNone;
  double best_key = 0;
  const std::vector<uint32_t>* allowed = nullptr;  // indices into the solutions (a gate's outcome)
  if (const JobTable::Choice::Outcome* o = gate_outcome(j)) {
    if (o->kind == JobTable::Choice::Outcome::Kind::Wait) return false;
    if (o->kind == JobTable::Choice::Outcome::Kind::Remove) {
      if (chosen_ != nullptr) (*chosen_)[j] = kNone;
      return true;
    }
    allowed = &o->solutions;
  }
  const size_t n = allowed != nullptr ? allowed->size() : cats_.solutions[c].size();
  for (size_t i = 0; i < n; ++i) {
    const uint32_t s = cats_.solutions[c][allowed != nullptr ? (*allowed)[i] : i];
    if (eligible_[s].eligible.count() == 0) continue;
    double key = 0;
    const size_t t = find_pe_slots(s, policy, key);
    if (t >= universe) continue;
    if (best_s == kNone || key < best_key) {
      best_t = t;
      best_s = s;
      best_key = key;
    }
  }
  if (best_s == kNone) return false;
  cap_.take(ledger_, charges_[best_s], static_cast<uint32_t>(best_t));
  out.push_back({static_cast<uint32_t>(best_t), jobs_.slots[j]});
  if (chosen_ != nullptr) (*chosen_)[j] = best_s;
  return true;
}

size_t Placer::find_pe_slots(uint32_t c, AllocationPolicy policy, double& key_out) {
  const PreferenceTiers tiers(elig(c));
  const auto& ch = charges_[c];
  const size_t universe = tiers[0].universe();
  if (cap_.global_full(ch)) {  // no tasker fits (a farm-wide licence or limit is used up): the walk
    if (policy == AllocationPolicy::GreatestPower)  // would end past the last tasker of every tier
      for (size_t v = 0; v < tiers.size(); ++v) cursor(c, v) = universe;
    return universe;
  }
  size_t t = universe;
  for (size_t v = 0; v < tiers.size() && t >= universe; ++v) {
    const kernels::TaskerSet& tier = tiers[v];
    if (policy == AllocationPolicy::GreatestPower) {
      t = pick_in_rank_order(c, v, tier, ch);
      key_out = static_cast<double>(t);
    } else if (policy == AllocationPolicy::ConsecutiveBestFit) {
      t = consecutive_best_fit(c, tier, ch);
      key_out = static_cast<double>(t);
    } else {
      t = pick_scored(tier, ch, policy, key_out);
    }
  }
  return t;
}

uint32_t Placer::instances_of_terms(uint32_t c, uint32_t t, bool master, uint32_t want) const {
  if (cap_.down(t)) return 0;
  uint32_t n = cats_.rule[c] == AllocationRule::OnePerTasker ? std::min(want, 1u) : want;
  const bool own = all_queue_only_[c] != 0;
  for (const Tables::Term& x : terms_[c]) {  // the hot loop of $fill_up: no merge, no call per consumable
    const double once = master ? x.once : 0.0, inst = x.inst;
    if (once <= 0 && inst <= 0) continue;
    // a tasker's own pool only: its free amount, 0 where it has none (which takes nothing, as NaN would)
    const double free = own ? cap_.queue_free(x.k)[t] : cap_.available(x.k, t);
    if (!std::isfinite(free)) {  // no pool defines it here (NaN; unbounded for an SGE 8.1.9 default)
      const auto& kinds = cats_.charge_kind[c];
      // a default takes nothing; a requested amount (a master's per-job one) needs the pool
      if (kinds.empty() || kinds[x.k] != ChargeKind::WhereDefined) return 0;
      continue;
    }
    const double a = free - once;
    if (!(a >= 0) || (inst > 0 && !(a >= inst))) return 0;
    if (inst <= 0) continue;
    n = static_cast<uint32_t>(std::min<double>(n, whole(a, inst)));
  }
  return n;
}

}  // namespace colmatch
