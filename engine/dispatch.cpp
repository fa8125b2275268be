#include "engine/dispatch.hpp"

#include <algorithm>
#include <cmath>

namespace colmatch {

const char* reason_text(PendingReason r) noexcept {
  switch (r) {
    case PendingReason::None: return "";
    case PendingReason::NoEligibleTasker: return "no eligible tasker";
    case PendingReason::NoFreeCapacity: return "eligible but no free capacity";
  }
  return "";
}

std::vector<uint32_t> dispatch_order(const JobTable& jobs) {
  std::vector<uint32_t> order;
  order.reserve(jobs.size());
  for (uint32_t j = 0; j < jobs.size(); ++j)
    if (!jobs.rejected(j)) order.push_back(j);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (jobs.priority[a] != jobs.priority[b]) return jobs.priority[a] > jobs.priority[b];
    return jobs.submit[a] < jobs.submit[b];
  });
  return order;
}

DispatchCursors::DispatchCursors(const Categories& cats, const std::vector<CategoryEligibility>& eligible)
    : pos_(cats.size()) {
  for (size_t c = 0; c < cats.size(); ++c) pos_[c].assign(std::max<size_t>(1, eligible[c].tiers.size()), 0);
}

void DispatchCursors::sync(const Capacity& capacity) {
  if (capacity.epoch() == epoch_) return;
  for (auto& p : pos_) std::fill(p.begin(), p.end(), 0);
  epoch_ = capacity.epoch();
}

void DispatchCursors::exhaust(size_t c, size_t universe) noexcept {
  for (auto& x : pos_[c]) x = universe;
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

class Dispatcher {
 public:
  Dispatcher(const JobTable& jobs, const Categories& cats, const std::vector<CategoryEligibility>& eligible,
             Capacity& capacity, DispatchCursors& cursors, DispatchResult& res)
      : jobs_(jobs), cats_(cats), eligible_(eligible), cap_(capacity), cursor_(cursors), res_(res) {
    charges_.reserve(cats.size());
    for (size_t c = 0; c < cats.size(); ++c) charges_.push_back(capacity.charges(cats.need[c]));
  }

  void run() {
    const size_t nj = jobs_.size();
    for (uint32_t j = 0; j < nj; ++j)
      if (jobs_.rejected(j)) {
        res_.status[j] = JobStatus::Rejected;
        ++res_.rejected;
      }
    cursor_.sync(cap_);
    for (const uint32_t j : dispatch_order(jobs_)) {
      const uint32_t c = cats_.of_job[j];
      if (eligible_[c].eligible.count() == 0) {
        pend(j, PendingReason::NoEligibleTasker);
        continue;
      }
      const bool placed = cats_.rule[c] == AllocationRule::FillUp ? place_fill_up(j, c) : place_pe_slots(j, c);
      if (!placed) {
        pend(j, PendingReason::NoFreeCapacity);
        continue;
      }
      res_.status[j] = JobStatus::Assigned;
      ++res_.assigned;
    }
  }

 private:
  void pend(uint32_t j, PendingReason r) {
    res_.reason[j] = r;
    ++res_.pending;
  }

  void record(uint32_t j, size_t first) {
    res_.alloc_first[j] = static_cast<uint32_t>(first);
    res_.alloc_count[j] = static_cast<uint32_t>(res_.allocations.size() - first);
    res_.tasker[j] = res_.allocations[first].tasker;
  }

  // $pe_slots: all slots on the first tasker in preference order that fits the whole charge. The
  // cursor of each tier visited moves to the tasker found (or past the end).
  bool place_pe_slots(uint32_t j, uint32_t c) {
    const PreferenceTiers tiers(eligible_[c]);
    const auto& ch = charges_[c];
    const size_t universe = tiers[0].universe();
    size_t t = universe;
    for (size_t v = 0; v < tiers.size() && t >= universe; ++v) {
      const kernels::TaskerSet& tier = tiers[v];
      size_t x = tier.next(cursor_.at(c, v));
      while (x < universe) {
        if (cap_.block_full(ch, x >> 6)) {
          x = tier.next(((x >> 6) + 1) << 6);
          continue;
        }
        if (cap_.fits(ch, static_cast<uint32_t>(x))) break;
        x = tier.next(x + 1);
      }
      cursor_.at(c, v) = x;
      t = x;
    }
    if (t >= universe) return false;
    cap_.take(ch, static_cast<uint32_t>(t));
    const size_t first = res_.allocations.size();
    res_.allocations.push_back({static_cast<uint32_t>(t), jobs_.slots[j]});
    record(j, first);
    return true;
  }

  // How many slot instances of category c tasker t takes now (at most `want`); the master also pays
  // the per-job charges.
  uint32_t instances(uint32_t c, uint32_t t, bool master, uint32_t want) const {
    uint32_t n = want;
    for (size_t k = 0; k < cap_.consumables(); ++k) {
      const double once = master ? cats_.master_need[c][k] : 0.0, inst = cats_.need[c][k];
      if (once <= 0 && inst <= 0) continue;
      const double a = cap_.available(k, t) - once;
      if (!(a >= 0) || (inst > 0 && !(a >= inst))) return 0;
      if (inst <= 0) continue;
      double q = std::floor(a / inst);
      if (q * inst > a) q -= 1;  // guard against rounding up in the division
      n = static_cast<uint32_t>(std::min<double>(n, q));
    }
    return n;
  }

  // $fill_up (seed 002, example E2): the master is the first tasker in preference order that takes
  // at least one slot and the per-job charges; the other slots fill the remaining taskers in the same
  // order, each with as many as fit. If not all slots fit, every tentative charge is rolled back.
  bool place_fill_up(uint32_t j, uint32_t c) {
    const PreferenceTiers tiers(eligible_[c]);
    const size_t universe = tiers[0].universe();
    uint32_t remaining = jobs_.slots[j];
    const size_t first = res_.allocations.size();
    std::vector<std::pair<size_t, size_t>> advance;  // (tier, new cursor), kept only on success
    cap_.begin();
    auto place = [&](size_t x, uint32_t n, bool master) {
      for (size_t k = 0; k < cap_.consumables(); ++k) {
        const double amount = n * cats_.need[c][k] + (master ? cats_.master_need[c][k] : 0.0);
        if (amount > 0) cap_.take(k, static_cast<uint32_t>(x), amount);
      }
      res_.allocations.push_back({static_cast<uint32_t>(x), n});
      remaining -= n;
    };
    size_t master = universe;
    for (size_t v = 0; v < tiers.size() && master == universe; ++v) {
      const kernels::TaskerSet& tier = tiers[v];
      for (size_t x = tier.next(cursor_.at(c, v)); x < universe; x = tier.next(x + 1))
        if (const uint32_t n = instances(c, static_cast<uint32_t>(x), true, remaining)) {
          place(x, n, true);
          master = x;
          break;
        }
    }
    for (size_t v = 0; v < tiers.size() && remaining > 0 && master != universe; ++v) {
      const kernels::TaskerSet& tier = tiers[v];
      bool prefix = true;
      for (size_t x = tier.next(cursor_.at(c, v)); x < universe && remaining > 0; x = tier.next(x + 1)) {
        if (x == master) {
          prefix = false;
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
      cap_.rollback();
      res_.allocations.resize(first);
      // capacity only shrinks in this epoch and the category's jobs are alike: later ones cannot fit
      cursor_.exhaust(c, universe);
      return false;
    }
    cap_.commit();
    for (const auto& [v, cur] : advance) cursor_.at(c, v) = std::max(cursor_.at(c, v), cur);
    record(j, first);
    return true;
  }

  const JobTable& jobs_;
  const Categories& cats_;
  const std::vector<CategoryEligibility>& eligible_;
  Capacity& cap_;
  DispatchCursors& cursor_;
  DispatchResult& res_;
  std::vector<std::vector<Charge>> charges_;
};

DispatchResult empty_result(size_t nj) {
  DispatchResult res;
  res.status.assign(nj, JobStatus::Pending);
  res.tasker.assign(nj, kNone);
  res.reason.assign(nj, PendingReason::None);
  res.alloc_first.assign(nj, 0);
  res.alloc_count.assign(nj, 0);
  return res;
}

}  // namespace

DispatchResult dispatch(const JobTable& jobs, const Categories& cats, const std::vector<CategoryEligibility>& eligible,
                        Capacity& capacity, DispatchCursors& cursors) {
  DispatchResult res = empty_result(jobs.size());
  Dispatcher(jobs, cats, eligible, capacity, cursors, res).run();
  return res;
}

DispatchResult dispatch(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                        const Categories& cats, const std::vector<CategoryEligibility>& eligible) {
  Capacity capacity = Capacity::configured(catalog, taskers);
  DispatchCursors cursors(cats, eligible);
  DispatchResult res = dispatch(jobs, cats, eligible, capacity, cursors);
  res.capacity = std::move(capacity);
  return res;
}

}  // namespace colmatch
