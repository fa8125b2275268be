#include "engine/batch/dispatch_parts.hpp"

#include <algorithm>
#include <bit>
#include <numeric>
#include <utility>

#include "kernels/kernels.hpp"

namespace colmatch {

namespace {

// Union-find over categories; the root of a set is its smallest category (so the parts' numbering does
// not depend on the order of unions).
class CategorySets {
 public:
  explicit CategorySets(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), uint32_t{0}); }
  uint32_t find(uint32_t c) noexcept {
    while (parent_[c] != c) {
      parent_[c] = parent_[parent_[c]];  // path halving
      c = parent_[c];
    }
    return c;
  }
  uint32_t unite(uint32_t a, uint32_t b) noexcept {
    a = find(a);
    b = find(b);
    if (a == b) return a;
    if (b < a) std::swap(a, b);
    parent_[b] = a;
    return a;
  }

 private:
  std::vector<uint32_t> parent_;
};

}  // namespace

DispatchParts dispatch_parts(const Categories& cats, const JobTable& jobs,
                             const std::vector<CategoryEligibility>& eligible, const Capacity& capacity,
                             uint64_t budget) {
  const size_t nc = cats.size();
  DispatchParts parts;
  parts.part_of.assign(nc, kNone);
  std::vector<uint8_t> active(nc, 0);
  for (size_t c = 0; c < nc; ++c) active[c] = eligible[c].eligible.count() > 0 || gate_of(cats, jobs, c) != nullptr;

  // The consumables with a host or global pool each active category charges, as (consumable, category)
  // pairs grouped by consumable; and the categories that charge some tasker-level pool.
  std::vector<std::pair<uint32_t, uint32_t>> charged;
  std::vector<uint32_t> on_taskers;
  uint64_t work = 0;
  for (uint32_t c = 0; c < nc; ++c) {
    if (!active[c]) continue;
    bool own = false;
    each_of_both(cats.unit_charge[c], cats.master_charge[c], [&](uint32_t k, double inst, double once) {
      if (inst > 0 || once > 0) {
        if (capacity.shared(k)) charged.emplace_back(k, c);
        else own = true;
      }
      return true;
    });
    if (!own) continue;
    on_taskers.push_back(c);
    const kernels::TaskerSet& e = eligible[c].eligible;
    work += e.count() + (e.sparse() ? 0 : kernels::words_for(e.universe()));
  }
  CategorySets sets(nc);
  if (work > budget) {  // too costly to tell apart: one part, the sequential walk
    uint32_t first = kNone;
    for (uint32_t c = 0; c < nc; ++c)
      if (active[c]) first = first == kNone ? c : sets.unite(first, c);
  } else {
    // Categories charging tasker-level pools on a common tasker are one part. (Whichever consumables: two
    // categories on one tasker charging different ones could be apart, but they are rare, and one rule
    // for the tasker keeps all its pools to one walk.)
    const size_t universe = eligible.empty() ? 0 : eligible[0].eligible.universe();
    std::vector<uint32_t> owner(universe, kNone);  // per tasker: a category charging its pools, if any yet
    for (const uint32_t c : on_taskers)
      eligible[c].eligible.each_word([&](size_t w, uint64_t bits) {
        for (; bits != 0; bits &= bits - 1) {
          uint32_t& o = owner[w * 64 + static_cast<size_t>(std::countr_zero(bits))];
          if (o == kNone) o = c;
          else if (o != c) o = sets.unite(o, c);
        }
      });
    std::sort(charged.begin(), charged.end());
    for (size_t i = 0; i < charged.size();) {  // a host or global pool somewhere: one farm-wide pool here
      size_t end = i + 1;
      while (end < charged.size() && charged[end].first == charged[i].first)
        sets.unite(charged[i].second, charged[end++].second);
      i = end;
    }
    // A chooser is one with its solutions (its job takes one of their charges) and its gate's pools.
    std::vector<uint32_t> gate_owner(capacity.consumables(), kNone);
    for (uint32_t c = 0; c < nc; ++c) {
      if (!active[c] || !cats.chooses(c)) continue;
      for (const uint32_t s : cats.solutions[c])
        if (eligible[s].eligible.count() > 0) sets.unite(c, s);
      if (const JobTable::Choice* ch = gate_of(cats, jobs, c))
        for (const JobAmounts::Entry& g : ch->gate) {
          uint32_t& gate = gate_owner[g.consumable];
          gate = gate == kNone ? c : sets.unite(gate, c);
        }
    }
    // A category with a fallback (JobTable::Fallback: Slurm's --constraint after --prefer) is one with the
    // fallback's category, whose taskers its jobs may take.
    for (uint32_t c = 0; c < nc; ++c)
      if (const uint32_t f = cats.fallback_of(c); active[c] && f != kNone && active[f]) sets.unite(c, f);
    // A gate's pool is also charged by the categories charging its consumable (already one part with
    // each other, as a farm-wide pool): join the gate's part to theirs.
    for (const auto& [k, c] : charged)
      if (gate_owner[k] != kNone) sets.unite(gate_owner[k], c);
  }
  std::vector<uint32_t> part_of_root(nc, kNone);
  for (uint32_t c = 0; c < nc; ++c) {
    if (!active[c]) continue;
    uint32_t& p = part_of_root[sets.find(c)];
    if (p == kNone) p = static_cast<uint32_t>(parts.count++);
    parts.part_of[c] = p;
  }
  return parts;
}

}  // namespace colmatch
