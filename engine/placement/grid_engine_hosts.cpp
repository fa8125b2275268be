// Grid Engine's parallel placement host by host (AllocationRule's Host rules), as Son of Grid Engine
// 8.1.9's qmaster placed jobs on a farm whose hosts have several queue instances (datasets/sge/pe-hosts,
// recorded by bench/peers/sge_pe_hosts.sh; tests/loaders/test_sge_priority.cpp): the hosts in the order
// of their first eligible tasker with a free slot (soft tiers in turn, rank order within each: the queue sort,
// which holds the host sort, sge_select_queue.c parallel_tag_queues_suitable4job), each host's taskers in
// that order; $pe_slots fills one host over its queue instances (the first host where every slot fits, or
// with a range the host where the most fit), $fill_up host after host, $round_robin a slot a host in
// turn, `allocation_rule N` exactly N on each host used. A range takes the most slots that fit, at least
// its minimum. The master is the last tasker the first host gave slots from (the first in $round_robin),
// as the qmaster's, among the taskers of the job's master category when it has one (qsub -masterq); a
// category with per-job charges takes them on its first tasker that may be the master, which stays its master.
// With Grid Engine's load correction (load_correction.hpp) the hosts are ordered afresh for each placement.
#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_map>

#include "engine/placement/placer.hpp"

namespace colmatch {

// Category c's eligible taskers grouped by host (a tasker of no host is a host of its own), each tasker
// with its place in the category's preference order (soft tiers in turn, rank order within each). Kept
// per category while no restriction is set.
const std::vector<Placer::HostGroup>& Placer::host_groups(uint32_t c) {
  if (!restricted_) {
    if (const auto it = host_groups_.find(c); it != host_groups_.end()) return it->second;
  }
  std::vector<HostGroup>& groups = restricted_ ? scratch_groups_ : host_groups_[c];
  groups.clear();
  std::unordered_map<uint64_t, size_t> index;
  const PreferenceTiers tiers(elig(c));
  const size_t end = std::min(tiers[0].universe(), taskers_.size());
  uint32_t pos = 0;
  for (size_t v = 0; v < tiers.size(); ++v)
    for (size_t x = tiers[v].next(0); x < end; x = tiers[v].next(x + 1), ++pos) {
      const uint32_t h = taskers_.host_of.empty() ? kNone : taskers_.host_of[x];
      const uint64_t key = h != kNone ? h : (uint64_t{1} << 32) + x;
      const auto [it, fresh] = index.emplace(key, groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].taskers.push_back(static_cast<uint32_t>(x));
      groups[it->second].pos.push_back(pos);
      groups[it->second].tier.push_back(static_cast<uint32_t>(v));
    }
  return groups;
}

// The hosts of category c with a free slot, in the order Grid Engine tries them (as the qmaster did on
// datasets/sge/mixed-*): by the place of their first queue instance that has a free slot now (a host whose
// first instances are full comes where its first free one is), $pe_slots too (datasets/sge/load-adjust-seqno:
// under queue_sort_method seqno the host of lower seq_no, not the one of least load). Kept
// per category as a heap of keys that only grow while capacity only shrinks (one Capacity epoch, the batch
// dispatch): a host's key is checked when it comes to the top, and pushed back if it grew (a lazy heap), so
// that a placement costs the hosts it visits, not every host of the category.
// `fresh`: made again whatever it holds (the scratch queue, not kept).
Placer::HostQueue& Placer::host_queue(uint32_t c, bool fresh) {
  // (a placer without cursors plans on capacities that are copied and changed without a new epoch: never kept)
  fresh = fresh || cursors_ == nullptr;
  HostQueue& q = fresh || restricted_ ? scratch_queue_ : host_queues_[c];
  if (!fresh && !restricted_ && q.built && q.epoch == cap_.epoch()) return q;
  const std::vector<HostGroup>& all = host_groups(c);
  q.built = !fresh && !restricted_;
  q.epoch = cap_.epoch();
  q.first.assign(all.size(), 0);
  q.heap.clear();
  if (correction_ != nullptr) {
    order_corrected(c, q);
    return q;
  }
  for (uint32_t g = 0; g < all.size(); ++g)
    if (const uint64_t key = host_key(c, all[g], q.first[g]); key != kNoHostKey) q.heap.emplace_back(key, g);
  std::make_heap(q.heap.begin(), q.heap.end(), std::greater<>());
  return q;
}

// Host group g's key from its tasker `first` on (moved to its first with a free slot), kNoHostKey if none has one.
uint64_t Placer::host_key(uint32_t c, const HostGroup& g, uint32_t& first) const {
  while (first < g.taskers.size() && instances(c, g.taskers[first], false, 1) == 0) ++first;
  if (first == g.taskers.size()) return kNoHostKey;
  return g.pos[first];
}

// With the load correction the hosts' order changes with every placement: made afresh for each, by the
// corrected queue sort of each host's first tasker with a free slot. A heap of increasing places pops in
// that order.
void Placer::order_corrected(uint32_t c, HostQueue& q) {
  const std::vector<HostGroup>& all = host_groups(c);
  std::vector<std::pair<SortKey, uint32_t>> order;  // (keys differ: a tasker is in one group)
  for (uint32_t g = 0; g < all.size(); ++g) {
    if (host_key(c, all[g], q.first[g]) == kNoHostKey) continue;
    const uint32_t x = all[g].taskers[q.first[g]];
    order.emplace_back(sort_key(all[g].tier[q.first[g]], x), g);
  }
  std::sort(order.begin(), order.end());
  for (uint32_t i = 0; i < order.size(); ++i) q.heap.emplace_back(i, order[i].second);
  // (increasing places are a min-heap as they stand)
}

// Long (about 180 lines): one harvest over the hosts in queue order; its pieces (the master rule, a host's
// takes, the visited hosts given back to the heap) are lambdas over the same running state (slots taken, the
// master chosen so far, the hosts visited with their keys), which as functions would take all of it.
bool Placer::place_hosts(uint32_t j, uint32_t c, std::vector<Allocation>& out) {
  (void)j;
  if (cursors_ && !restricted_ && cursors_->settled(c)) return false;
  const AllocationRule rule = cats_.rule[c];
  const JobTable::PeShape shape = cats_.pe_shape_of(c);
  const uint32_t most = cats_.slots[c], fewest = shape.min_slots > 0 ? shape.min_slots : most;
  const std::vector<HostGroup>& all = host_groups(c);
  // A farm-wide (global) pool the category charges lets one host's takes change another's room within the
  // placement, which the caller may roll back: then every host is ordered before the first take, as the
  // definition says (a fresh queue, its keys not checked again: O(hosts) a placement). Otherwise the
  // category's lazy heap (host_queue).
  // The load correction orders the hosts afresh for each placement, as a cross placement does.
  bool cross = correction_ != nullptr;
  for (const Tables::Term& x : terms_[c]) cross = cross || !std::isnan(cap_.global_configured(x.k));
  HostQueue& q = host_queue(c, cross);
  // the hosts this placement visited, in order, with their keys (pushed back at the end: keys only grow)
  std::vector<std::pair<uint64_t, uint32_t>>& visited = host_visited_;
  visited.clear();
  auto next_host = [&]() -> const std::vector<uint32_t>* {
    while (!q.heap.empty()) {
      std::pop_heap(q.heap.begin(), q.heap.end(), std::greater<>());
      const auto [key, g] = q.heap.back();
      q.heap.pop_back();
      if (cross) return &all[g].taskers;  // the order made before any take
      const uint64_t now = host_key(c, all[g], q.first[g]);
      if (now == kNoHostKey) continue;  // full for the rest of the epoch
      if (now != key) {                 // it grew: back in its place
        q.heap.emplace_back(now, g);
        std::push_heap(q.heap.begin(), q.heap.end(), std::greater<>());
        continue;
      }
      visited.emplace_back(key, g);
      return &all[g].taskers;
    }
    return nullptr;
  };
  std::vector<HostTake>& taken = host_takes_;
  taken.clear();
  // The master task (sge_select_queue.c's slot harvesting): on a tasker of the job's master category
  // (qsub -masterq; any tasker without one). Grid Engine puts each such instance it takes slots from at the
  // head of the job's list until a host has given one, so the master is the last of them on the first host
  // that gives one; until then a tasker that could not hold it gives one slot less when it would complete
  // the job (the last slot is kept for the master).
  // With -masterq beside -q, a candidate -q does not name gives the master's one slot at most until then.
  const uint32_t mc = cats_.master_category(c), oc = cats_.master_only_category(c);
  const kernels::TaskerSet* candidates = mc == kNone ? nullptr : &elig(mc).eligible;
  const kernels::TaskerSet* master_only = oc == kNone ? nullptr : &elig(oc).eligible;
  auto candidate = [&](uint32_t x) { return candidates == nullptr || candidates->contains(x); };
  const bool per_job = cats_.master_charge[c].any_positive();  // taken on the first candidate's take
  bool have_master_host = false;
  size_t master_take = SIZE_MAX, charged_take = SIZE_MAX;  // the master's take; the one with the per-job charges
  auto take = [&](uint32_t x, uint32_t n, bool master) {
    cats_.each_allocation_charge(c, n, master, [&](uint32_t k, double amount) {
      if (amount > 0) cap_.take(ledger_, k, x, amount);
      return true;
    });
    if (master) charged_take = taken.size();
    taken.push_back({x, n, master});
  };
  auto give_back = [&](size_t from) {  // the takes from `from` on, returned
    for (size_t i = from; i < taken.size(); ++i)
      cats_.each_allocation_charge(c, taken[i].n, taken[i].master, [&](uint32_t k, double amount) {
        if (amount > 0) cap_.take(ledger_, k, taken[i].tasker, -amount);
        return true;
      });
    taken.resize(from);
    if (charged_take != SIZE_MAX && charged_take >= from) charged_take = SIZE_MAX;
  };
  // As many slots as host g's taskers take, at most `want`, in their order, `before` slots taken on earlier
  // hosts; `host_master`: the take that would be the master if this host is kept (SIZE_MAX: none).
  auto fill_host = [&](const std::vector<uint32_t>& g, uint32_t want, uint32_t before, size_t& host_master) {
    uint32_t got = 0;
    host_master = SIZE_MAX;
    for (const uint32_t x : g) {
      if (got == want) break;
      const bool may_master = !have_master_host && candidate(x);
      const bool master = may_master && charged_take == SIZE_MAX;  // (the per-job charges, on the first candidate)
      uint32_t n = instances(c, x, master, want - got);
      if (!have_master_host && host_master == SIZE_MAX && !candidate(x) && before + got + n == most) --n;
      if (!have_master_host && host_master == SIZE_MAX && master_only != nullptr && master_only->contains(x))
        n = std::min(n, 1u);
      if (n == 0) continue;
      take(x, n, master);
      if (may_master) host_master = taken.size() - 1;
      got += n;
    }
    return got;
  };
  auto keep_host = [&](size_t host_master) {
    if (host_master == SIZE_MAX || have_master_host) return;
    have_master_host = true;
    master_take = host_master;
  };
  uint32_t total = 0;
  size_t hm = SIZE_MAX;
  switch (rule) {
    case AllocationRule::HostPeSlots: {
      const std::vector<uint32_t>* best = nullptr;
      uint32_t best_got = 0;
      for (const std::vector<uint32_t>* g = next_host(); g != nullptr; g = next_host()) {
        const uint32_t got = fill_host(*g, most, 0, hm);
        if (got == most) {
          total = got;
          keep_host(hm);
          break;
        }
        if (got >= fewest && got > best_got && hm != SIZE_MAX) best = g, best_got = got;
        give_back(0);
      }
      if (total == 0 && best != nullptr) {
        total = fill_host(*best, best_got, 0, hm);
        keep_host(hm);
      }
      break;
    }
    case AllocationRule::HostFillUp:
      for (const std::vector<uint32_t>* g = total < most ? next_host() : nullptr; g != nullptr;
           g = total < most ? next_host() : nullptr) {
        total += fill_host(*g, most - total, total, hm);
        keep_host(hm);
      }
      break;
    case AllocationRule::HostRoundRobin: {
      // the first round visits the hosts in order; the next rounds the same hosts again
      std::vector<const std::vector<uint32_t>*>& round = host_round_;
      round.clear();
      for (const std::vector<uint32_t>* g = next_host(); g != nullptr && total < most;
           g = total < most ? next_host() : nullptr) {
        round.push_back(g);
        total += fill_host(*g, 1, total, hm);
        keep_host(hm);
      }
      for (bool more = true; more && total < most;) {
        more = false;
        for (size_t i = 0; i < round.size() && total < most; ++i)
          if (fill_host(*round[i], 1, total, hm) == 1) {
            ++total, more = true;
            keep_host(hm);
          }
      }
      break;
    }
    case AllocationRule::HostBlocks:
      for (const std::vector<uint32_t>* g = total < most ? next_host() : nullptr; g != nullptr;
           g = total < most ? next_host() : nullptr) {
        const size_t mark = taken.size();
        if (fill_host(*g, shape.per_host, total, hm) == shape.per_host) {
          total += shape.per_host;
          keep_host(hm);
        } else {
          give_back(mark);
        }
      }
      break;
    default: return false;
  }
  // the visited hosts back in the heap with the keys they had (their true keys are no smaller)
  if (!cross)
    for (const auto& v : visited) {
      q.heap.push_back(v);
      std::push_heap(q.heap.begin(), q.heap.end(), std::greater<>());
    }
  if (total < fewest || taken.empty() || !have_master_host) {
    // capacity only shrinks in this epoch and the category's jobs are alike: later ones cannot fit
    if (cursors_ && !restricted_) cursors_->settle(c);
    return false;
  }
  // one allocation a tasker (round robin comes back to one), the master first: the take with the per-job
  // charges, else the master the harvest chose
  const size_t master = per_job ? charged_take : master_take;
  const size_t first = out.size();
  out.push_back({taken[master].tasker, 0});
  for (const HostTake& t : taken) {
    auto it = std::find_if(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                           [&](const Allocation& a) { return a.tasker == t.tasker; });
    if (it != out.end()) it->slots += t.n;
    else out.push_back({t.tasker, t.n});
  }
  return true;
}

}  // namespace colmatch
