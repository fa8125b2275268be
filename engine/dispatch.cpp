#include "engine/dispatch.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/parallel_sort.h>

#include "engine/counting_sort.hpp"

namespace colmatch {

std::vector<Room> room_on_eligible(const Capacity& capacity, const kernels::TaskerSet& eligible,
                                   const ChargeVector& need) {
  std::vector<Room> out;
  for (const ChargeVector::Entry& e : need.nonzero())
    if (e.amount > 0) out.push_back({e.k, e.amount, 0, 0});
  for (size_t t = eligible.next(0); t < eligible.universe(); t = eligible.next(t + 1))
    for (Room& r : out) {
      const double free = capacity.available(r.consumable, static_cast<uint32_t>(t));
      if (!(free >= 0)) continue;  // NaN: no pool defines it
      r.largest_free = std::max(r.largest_free, free);
      r.with_room += free >= r.charge;
    }
  return out;
}

const char* reason_text(PendingReason r) noexcept {
  switch (r) {
    case PendingReason::None: return "";
    case PendingReason::NoEligibleTasker: return "no eligible tasker";
    case PendingReason::NoFreeCapacity: return "eligible but no free capacity";
  }
  return "";
}

namespace {

// The distinct priorities of `order`'s jobs, highest first (-0.0 equal to 0.0), or nullopt past `most`:
// each piece of jobs collects its own, then they are merged.
std::optional<std::vector<double>> few_priorities(const JobTable& jobs, const std::vector<uint32_t>& order,
                                                  size_t most) {
  constexpr size_t kPiece = 1 << 16;
  const size_t pieces = (order.size() + kPiece - 1) / kPiece;
  std::vector<std::vector<double>> seen(pieces);
  std::atomic<bool> many{false};
  tbb::parallel_for(size_t{0}, pieces, [&](size_t p) {
    std::vector<double>& mine = seen[p];
    double last = std::numeric_limits<double>::quiet_NaN();
    for (size_t i = p * kPiece; i < std::min(order.size(), (p + 1) * kPiece) && !many.load(std::memory_order_relaxed);
         ++i) {
      const double v = jobs.priority[order[i]];
      if (v == last) continue;
      last = v;
      const auto it = std::lower_bound(mine.begin(), mine.end(), v, std::greater<>());
      if (it != mine.end() && *it == v) continue;
      if (mine.size() == most) {
        many = true;
        return;
      }
      mine.insert(it, v);
    }
  });
  if (many) return std::nullopt;
  std::vector<double> all;
  for (const auto& mine : seen) all.insert(all.end(), mine.begin(), mine.end());
  std::sort(all.begin(), all.end(), std::greater<>());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  if (all.size() > most) return std::nullopt;
  return all;
}

}  // namespace

std::vector<uint32_t> dispatch_order(const JobTable& jobs) {
  std::vector<uint32_t> order;
  order.reserve(jobs.size());
  for (uint32_t j = 0; j < jobs.size(); ++j)
    if (!jobs.rejected(j)) order.push_back(j);
  auto before = [&](uint32_t a, uint32_t b) {
    if (jobs.priority[a] != jobs.priority[b]) return jobs.priority[a] > jobs.priority[b];
    return jobs.submit[a] < jobs.submit[b];
  };
  // Already in order (a batch of equal priority submitted in order: an Accelerator farm's jobs): O(n).
  if (std::is_sorted(order.begin(), order.end(), before)) return order;
  struct Key {
    double submit;
    uint32_t job;
  };
  auto by_submit = [](const Key& a, const Key& b) {
    return a.submit != b.submit ? a.submit < b.submit : a.job < b.job;
  };
  // A few priorities (the common case: levels, not a value per job): the jobs are put in their priority's
  // bucket in input order (a counting sort, in parallel over pieces), and each bucket is sorted by submit
  // time only where it is not in that order already. O(n) for a batch submitted in order.
  if (const auto levels = few_priorities(jobs, order, 256)) {
    const size_t nb = levels->size();
    auto bucket_of = [&](uint32_t j) {
      return static_cast<size_t>(std::lower_bound(levels->begin(), levels->end(), jobs.priority[j], std::greater<>()) -
                                 levels->begin());
    };
    constexpr size_t kPiece = 1 << 16;
    const size_t pieces = (order.size() + kPiece - 1) / kPiece;
    std::vector<std::vector<size_t>> at(pieces, std::vector<size_t>(nb, 0));  // per piece: where its part of a
    tbb::parallel_for(size_t{0}, pieces, [&](size_t p) {                      // bucket starts
      for (size_t i = p * kPiece; i < std::min(order.size(), (p + 1) * kPiece); ++i) ++at[p][bucket_of(order[i])];
    });
    const std::vector<size_t> start = bucket_starts(at, nb);
    std::vector<Key> keys(order.size());
    tbb::parallel_for(size_t{0}, pieces, [&](size_t p) {
      for (size_t i = p * kPiece; i < std::min(order.size(), (p + 1) * kPiece); ++i) {
        const uint32_t j = order[i];
        keys[at[p][bucket_of(j)]++] = {jobs.submit[j], j};
      }
    });
    for (size_t b = 0; b < nb; ++b) {
      const auto first = keys.begin() + static_cast<std::ptrdiff_t>(start[b]);
      const auto last = keys.begin() + static_cast<std::ptrdiff_t>(start[b + 1]);
      if (!std::is_sorted(first, last, by_submit)) tbb::parallel_sort(first, last, by_submit);
    }
    tbb::parallel_for(tbb::blocked_range<size_t>(0, keys.size(), 8192), [&](const tbb::blocked_range<size_t>& r) {
      for (size_t i = r.begin(); i < r.end(); ++i) order[i] = keys[i].job;
    });
    return order;
  }
  // Else sorted by value with the index as the last key, which is the stable order, in parallel.
  struct FullKey {
    double priority, submit;
    uint32_t job;
  };
  std::vector<FullKey> keys(order.size());
  tbb::parallel_for(tbb::blocked_range<size_t>(0, order.size(), 8192), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i < r.end(); ++i) keys[i] = {jobs.priority[order[i]], jobs.submit[order[i]], order[i]};
  });
  tbb::parallel_sort(keys.begin(), keys.end(), [](const FullKey& a, const FullKey& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.submit != b.submit) return a.submit < b.submit;
    return a.job < b.job;
  });
  for (size_t i = 0; i < keys.size(); ++i) order[i] = keys[i].job;
  return order;
}

DispatchCursors::DispatchCursors(const Categories& cats, const std::vector<CategoryEligibility>& eligible)
    : pos_(cats.size()), exhausted_(cats.size(), 0) {
  for (size_t c = 0; c < cats.size(); ++c) init(c, eligible[c]);
}

void DispatchCursors::sync(const Capacity& capacity) {
  if (capacity.epoch() == epoch_) return;
  for (auto& p : pos_) std::fill(p.begin(), p.end(), 0);
  std::fill(exhausted_.begin(), exhausted_.end(), 0);
  epoch_ = capacity.epoch();
}

void DispatchCursors::init(size_t c, const CategoryEligibility& e) {
  pos_[c].assign(std::max<size_t>(1, e.tiers.size()), 0);
  exhausted_[c] = 0;
}

namespace {

// A category's taskers in preference order: its soft tiers (fewest violations first), or the whole
// eligible set as one tier. Within a tier, rank order (effective power).
class PreferenceTiers {
 public:
  explicit PreferenceTiers(const CategoryEligibility& e) : e_(e) {}
  size_t size() const noexcept { return e_.tiers.empty() ? 1 : e_.tiers.size(); }
  const kernels::TaskerSet& operator[](size_t v) const noexcept { return e_.tiers.empty() ? e_.eligible : e_.tiers[v]; }

 private:
  const CategoryEligibility& e_;
};

}  // namespace

Placer::Placer(const TaskerTable& taskers, const JobTable& jobs, const Categories& cats,
               const std::vector<CategoryEligibility>& eligible, Capacity& capacity, DispatchCursors* cursors)
    : taskers_(taskers), jobs_(jobs), cats_(cats), eligible_(eligible), cap_(capacity), cursors_(cursors) {
  charges_.reserve(cats.size());
  for (size_t c = 0; c < cats.size(); ++c) {
    charges_.push_back(capacity.charges(cats.unit_charge[c]));
    bool queue_only = true;
    each_of_both(cats.unit_charge[c], cats.master_charge[c], [&](uint32_t k, double inst, double once) {
      if ((inst > 0 || once > 0) && capacity.shared(k)) queue_only = false;
      return true;
    });
    // a category that chooses may charge any of its solutions' pools (counted maps: global ones)
    if (cats.chooses(c)) queue_only = false;
    all_queue_only_.push_back(queue_only);
  }
}

bool Placer::try_place(uint32_t j, AllocationPolicy policy, std::vector<Allocation>& out) {
  const uint32_t c = cats_.of_job[j];
  cap_.begin();
  const bool ok = cats_.rule[c] == AllocationRule::FillUp ? place_fill_up(j, c, out)
                  : cats_.chooses(c)                      ? place_choice(j, c, policy, out)
                                                          : place_pe_slots(j, c, policy, out);
  if (!ok) cap_.rollback();
  return ok;
}

bool Placer::plan(uint32_t j, AllocationPolicy policy, std::vector<Allocation>& out) {
  const uint32_t c = cats_.of_job[j];
  if (cats_.rule[c] != AllocationRule::FillUp || !all_queue_only_[c]) {
    if (!try_place(j, policy, out)) return false;
    cap_.rollback();
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
  const size_t t = find_pe_slots(c, policy, key);
  if (t >= eligible_[c].eligible.universe()) return false;
  cap_.take(charges_[c], static_cast<uint32_t>(t));
  out.push_back({static_cast<uint32_t>(t), jobs_.slots[j]});
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
  const size_t universe = eligible_[c].eligible.universe();
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
  cap_.take(charges_[best_s], static_cast<uint32_t>(best_t));
  out.push_back({static_cast<uint32_t>(best_t), jobs_.slots[j]});
  if (chosen_ != nullptr) (*chosen_)[j] = best_s;
  return true;
}

size_t Placer::find_pe_slots(uint32_t c, AllocationPolicy policy, double& key_out) {
  const PreferenceTiers tiers(eligible_[c]);
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
      size_t x = tier.next(cursor(c, v));
      while (x < universe) {
        if (cap_.block_full(ch, x >> 6)) {
          x = tier.next(((x >> 6) + 1) << 6);
          continue;
        }
        if (cap_.fits(ch, static_cast<uint32_t>(x))) break;
        x = tier.next(x + 1);
      }
      cursor(c, v) = x;
      t = x;
      key_out = static_cast<double>(x);
      continue;
    }
    double best = 0;
    for (size_t x = tier.next(0); x < universe; x = tier.next(x + 1)) {
      if (cap_.block_full(ch, x >> 6)) {
        x = (((x >> 6) + 1) << 6) - 1;
        continue;
      }
      const auto tx = static_cast<uint32_t>(x);
      if (!cap_.fits(ch, tx)) continue;
      double key = 0;
      if (policy == AllocationPolicy::FirstAvailable) {
        key = taskers_.input_index[x];
      } else {
        for (const Charge& q : ch) key += (cap_.available(q.k, tx) - q.amount) / q.amount;
        if (policy == AllocationPolicy::WorstFit) key = -key;
      }
      if (t >= universe || key < best) {
        t = x;
        best = key;
      }
    }
    key_out = best;
  }
  return t;
}

uint32_t Placer::instances(uint32_t c, uint32_t t, bool master, uint32_t want) const {
  if (cap_.down(t)) return 0;
  uint32_t n = want;
  const bool own = all_queue_only_[c] != 0;
  const bool fit =
      each_of_both(cats_.unit_charge[c], master ? cats_.master_charge[c] : ChargeVector{},
                   [&](uint32_t k, double inst, double once) {
                     if (once <= 0 && inst <= 0) return true;
                     // a tasker's own pool only: its free amount, 0 where it has none (which takes nothing, as NaN
                     // would)
                     const double free = own ? cap_.queue_free(k)[t] : cap_.available(k, t);
                     if (!std::isfinite(free)) {  // no pool defines it here (NaN; unbounded for an SGE 8.1.9 default)
                       const auto& kinds = cats_.charge_kind[c];
                       return !kinds.empty() &&
                              kinds[k] == ChargeKind::WhereDefined;  // a default takes nothing; a requested
                                                                     // amount (a master's per-job one) needs the pool
                     }
                     const double a = free - once;
                     if (!(a >= 0) || (inst > 0 && !(a >= inst))) return false;
                     if (inst <= 0) return true;
                     double q = std::floor(a / inst);
                     if (q * inst > a) q -= 1;  // guard against rounding up in the division
                     n = static_cast<uint32_t>(std::min<double>(n, q));
                     return true;
                   });
  if (!fit) return 0;
  return n;
}

size_t Placer::fill_up_master(uint32_t j) {
  const uint32_t c = cats_.of_job[j];
  const PreferenceTiers tiers(eligible_[c]);
  const size_t universe = tiers[0].universe();
  if (cursors_ && cursors_->exhausted(c)) return universe;
  const bool skip_blocks = all_queue_only_[c] && !charges_[c].empty();
  for (size_t v = 0; v < tiers.size(); ++v) {
    const kernels::TaskerSet& tier = tiers[v];
    for (size_t x = tier.next(cursor(c, v)); x < universe; x = tier.next(x + 1)) {
      if (skip_blocks && cap_.block_full(charges_[c], x >> 6)) {
        x = (((x >> 6) + 1) << 6) - 1;
        continue;
      }
      if (instances(c, static_cast<uint32_t>(x), true, jobs_.slots[j]) > 0) return x;
    }
  }
  return universe;
}

// $fill_up (seed 002, example E2): the master is the first tasker in preference order that takes
// at least one slot and the per-job charges; the other slots fill the remaining taskers in the same
// order, each with as many as fit. If not all slots fit, the caller rolls the tentative charges back.
bool Placer::place_fill_up(uint32_t j, uint32_t c, std::vector<Allocation>& out) {
  const PreferenceTiers tiers(eligible_[c]);
  const size_t universe = tiers[0].universe();
  if (cursors_ && cursors_->exhausted(c)) return false;
  if (eligible_[c].eligible.count() == universe && all_queue_only_[c]) {
    // Every tasker is eligible and every pool is the tasker's own: the job cannot fit when all the
    // queue-level free capacity together is short of its whole charge (checked in O(its charges)).
    const bool short_of = !cats_.each_allocation_charge(c, jobs_.slots[j], true, [&](uint32_t k, double whole) {
      return !(whole > 0 && cap_.queue_total(k) + cap_.queue_total_slack(k) < whole);
    });
    if (short_of) {
      if (cursors_) cursors_->exhaust(c);
      return false;
    }
  }
  uint32_t remaining = jobs_.slots[j];
  const size_t first = out.size();
  std::vector<std::pair<size_t, size_t>> advance;  // (tier, new cursor), kept only on success
  auto place = [&](size_t x, uint32_t n, bool master) {
    if (!planning_)
      cats_.each_allocation_charge(c, n, master, [&](uint32_t k, double amount) {
        if (amount > 0) cap_.take(k, static_cast<uint32_t>(x), amount);
        return true;
      });
    out.push_back({static_cast<uint32_t>(x), n});
    remaining -= n;
  };
  // With only the taskers' own pools charged, a block of 64 taskers whose largest free amount cannot
  // take one slot instance is skipped whole (exact, as for $pe_slots).
  const bool skip_blocks = all_queue_only_[c] && !charges_[c].empty();
  auto block_end_if_full = [&](size_t x) -> size_t {
    return skip_blocks && cap_.block_full(charges_[c], x >> 6) ? (((x >> 6) + 1) << 6) : 0;
  };
  const size_t master = fill_up_master(j);
  if (master < universe) place(master, instances(c, static_cast<uint32_t>(master), true, remaining), true);
  for (size_t v = 0; v < tiers.size() && remaining > 0 && master != universe; ++v) {
    const kernels::TaskerSet& tier = tiers[v];
    bool prefix = true;
    for (size_t x = tier.next(cursor(c, v)); x < universe && remaining > 0; x = tier.next(x + 1)) {
      if (x == master) {
        prefix = false;
        continue;
      }
      if (const size_t end = block_end_if_full(x); end != 0 && (master >> 6) != (x >> 6)) {
        if (prefix) advance.emplace_back(v, end);  // no room for one instance there, in this epoch
        x = end - 1;
        continue;
      }
      const uint32_t n = instances(c, static_cast<uint32_t>(x), false, remaining);
      if (n == 0) {
        if (prefix) advance.emplace_back(v, x + 1);  // no room for one instance now, nor in this epoch
        continue;
      }
      prefix = false;
      place(x, n, false);
    }
  }
  if (remaining > 0) {
    out.resize(first);
    // capacity only shrinks in this epoch and the category's jobs are alike: later ones cannot fit
    if (cursors_) cursors_->exhaust(c);
    return false;
  }
  if (cursors_)
    for (const auto& [v, cur] : advance) cursors_->at(c, v) = std::max(cursors_->at(c, v), cur);
  return true;
}

namespace {

// The batch dispatch: every job once, in dispatch_order, each placement committed at once.
class Dispatcher {
 public:
  Dispatcher(const TaskerTable& taskers, const JobTable& jobs, const Categories& cats,
             const std::vector<CategoryEligibility>& eligible, Capacity& capacity, DispatchCursors& cursors,
             DispatchResult& res)
      : jobs_(jobs),
        cats_(cats),
        eligible_(eligible),
        cap_(capacity),
        cursors_(cursors),
        res_(res),
        placer_(taskers, jobs, cats, eligible, capacity, &cursors) {}

  void run() {
    const size_t nj = jobs_.size();
    for (uint32_t j = 0; j < nj; ++j)
      if (jobs_.rejected(j)) {
        res_.status[j] = JobStatus::Rejected;
        ++res_.rejected;
      }
    cursors_.sync(cap_);
    // Capacity only shrinks in a batch and a category's jobs are alike (request, slots, rule, charges):
    // once one of them finds no room, the category is exhausted for the epoch and the jobs after it are
    // pending at once, without a tentative placement and its rollback (which copy the farm-wide pools:
    // an Accelerator farm has a pool per counted map, and most of a million jobs wait). Whether a
    // category's jobs are settled is one byte per category (`settled`: the reason they wait, or None),
    // read once per job instead of its category's eligibility and cursors.
    std::vector<PendingReason> settled(cats_.size(), PendingReason::None);
    for (size_t c = 0; c < settled.size(); ++c)
      if (gated(c)) continue;  // what its jobs do depends on the pools when each is dispatched
      else if (eligible_[c].eligible.count() == 0) settled[c] = PendingReason::NoEligibleTasker;
      else if (cursors_.exhausted(c)) settled[c] = PendingReason::NoFreeCapacity;
    for (const uint32_t j : dispatch_order(jobs_)) {
      const uint32_t c = cats_.of_job[j];
      if (settled[c] != PendingReason::None) {
        pend(j, settled[c]);
        continue;
      }
      const size_t first = res_.allocations.size();
      if (gated(c)) {  // removed, or waiting for a pool, as the gate's pools say now
        const JobTable::Choice::Outcome* o = placer_.gate_outcome(j);
        if (o->kind == JobTable::Choice::Outcome::Kind::Remove) {
          res_.status[j] = JobStatus::Rejected;
          res_.removed.emplace_back(j, o->why);
          ++res_.rejected;
          continue;
        }
        if (o->kind == JobTable::Choice::Outcome::Kind::Wait || o->solutions.empty()) {
          pend(j, o->solutions.empty() && o->kind == JobTable::Choice::Outcome::Kind::Place
                      ? PendingReason::NoEligibleTasker
                      : PendingReason::NoFreeCapacity);
          continue;  // (capacity only shrinks: its later jobs find the same or less, never a removal)
        }
      }
      if (cursors_.exhausted(c) || !placer_.try_place(j, AllocationPolicy::GreatestPower, res_.allocations)) {
        cursors_.exhaust(c);
        if (!gated(c)) settled[c] = PendingReason::NoFreeCapacity;
        pend(j, eligible_[c].eligible.count() == 0 ? PendingReason::NoEligibleTasker : PendingReason::NoFreeCapacity);
        continue;
      }
      cap_.commit();
      res_.alloc_first[j] = static_cast<uint32_t>(first);
      res_.alloc_count[j] = static_cast<uint32_t>(res_.allocations.size() - first);
      res_.tasker[j] = res_.allocations[first].tasker;
      res_.status[j] = JobStatus::Assigned;
      ++res_.assigned;
    }
  }

 private:
  void pend(uint32_t j, PendingReason r) {
    res_.reason[j] = r;
    ++res_.pending;
  }
  bool gated(size_t c) const noexcept { return gate_of(cats_, jobs_, c) != nullptr; }

  const JobTable& jobs_;
  const Categories& cats_;
  const std::vector<CategoryEligibility>& eligible_;
  Capacity& cap_;
  DispatchCursors& cursors_;
  DispatchResult& res_;
  Placer placer_;
};

DispatchResult empty_result(size_t nj) {
  DispatchResult res;  // (five columns of a million jobs: filled side by side, their pages faulted so)
  tbb::parallel_invoke([&] { res.status.assign(nj, JobStatus::Pending); }, [&] { res.tasker.assign(nj, kNone); },
                       [&] { res.reason.assign(nj, PendingReason::None); }, [&] { res.alloc_first.assign(nj, 0); },
                       [&] { res.alloc_count.assign(nj, 0); });
  return res;
}

}  // namespace

DispatchResult dispatch(const TaskerTable& taskers, const JobTable& jobs, const Categories& cats,
                        const std::vector<CategoryEligibility>& eligible, Capacity& capacity,
                        DispatchCursors& cursors) {
  DispatchResult res = empty_result(jobs.size());
  Dispatcher(taskers, jobs, cats, eligible, capacity, cursors, res).run();
  return res;
}

DispatchResult dispatch(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                        const Categories& cats, const std::vector<CategoryEligibility>& eligible, const InUse* in_use) {
  Capacity capacity = Capacity::configured(catalog, taskers);
  if (in_use && !in_use->empty()) capacity.take(*in_use);
  DispatchCursors cursors(cats, eligible);
  DispatchResult res = dispatch(taskers, jobs, cats, eligible, capacity, cursors);
  res.capacity = std::move(capacity);
  return res;
}

}  // namespace colmatch
