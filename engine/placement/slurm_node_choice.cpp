// Slurm's node selection for the Placer (AllocationPolicy::ConsecutiveBestFit): slurmctld 22.05.8's
// cons_tres _eval_nodes, as read in its source and checked job by job against the daemon (issue 26,
// datasets/slurm): of the nodes with room, the lowest weight (greatest power here: a Slurm node's power
// is -Weight); among them runs of nodes adjacent in Slurm's node table (name order); the run with the
// fewest free CPUs in sum, its node with the fewest. A job of -N K takes K nodes from the best runs.
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/placement/placer.hpp"

namespace colmatch {

namespace {
// Slurm's choice of the next run (cons_tres _eval_nodes): one of a lower weight (a greater power) wins; among
// equal weights a sufficient one over an insufficient best, a sufficient one with fewer free, or, as the code
// has it, an insufficient one with more free. `run` and `best` are (power, sufficient, free).
struct RunView {
  double power;
  bool sufficient;
  double free;
};
bool beats(const RunView& run, const RunView& best) noexcept {
  if (run.power != best.power) return run.power > best.power;
  return (run.sufficient && !best.sufficient) || (run.sufficient && run.free < best.free) ||
         (!run.sufficient && run.free > best.free);
}

// The run Slurm's scan picks next: the scan of beats() over every run with nodes left (count > 0), the first
// winning ties, as _eval_nodes scans its consecutive sets, at each pick of a -N K job. Only runs of the
// greatest power with nodes left can win, so when `runs` is in power-descending order (the Placer's rows are
// in rank order) the scan is over that group alone; and while no run of the group is sufficient (count <
// needed) an insufficient run beats another only with more free, so the scan's winner is the group's first
// run with the most free: after the group's first pick, its runs are sorted once by count and by (free
// descending, index) and each later pick reads the orders instead of scanning (K picks over R runs cost
// R log R, not K x R; c10k's jobs of 500-3,000 nodes over short runs). Same picks as the full scan.
template <class Run>
class RunChoice {
 public:
  RunChoice(std::vector<Run>& runs, std::vector<uint32_t>& by_count, std::vector<uint32_t>& by_free)
      : runs_(runs), by_count_(by_count), by_free_(by_free) {
    for (size_t i = 1; i < runs_.size() && by_power_; ++i) by_power_ = runs_[i].power <= runs_[i - 1].power;
  }

  /// The run to take from with `needed` nodes still wanted (Slurm's _enough_nodes), and whether it is
  /// sufficient; nullptr when no run has nodes left.
  Run* next(int64_t needed, bool& sufficient) {
    if (!by_power_) return scan(0, runs_.size(), needed, sufficient);
    while (live_ == 0) {
      if (end_ >= runs_.size()) return nullptr;
      begin_ = end_;
      end_ = begin_ + 1;
      while (end_ < runs_.size() && runs_[end_].power == runs_[begin_].power) ++end_;
      live_ = 0;
      for (size_t i = begin_; i < end_; ++i) live_ += runs_[i].count > 0;
      picks_ = 0;
    }
    if (picks_++ == 0) return scan(begin_, end_, needed, sufficient);
    if (!ordered_at_(begin_)) order();
    while (runs_[by_count_[count_at_]].count == 0) ++count_at_;  // live_ > 0: one is left
    if (static_cast<int64_t>(runs_[by_count_[count_at_]].count) >= needed)
      return scan(begin_, end_, needed, sufficient);
    while (runs_[by_free_[free_at_]].count == 0) ++free_at_;
    sufficient = false;
    return &runs_[by_free_[free_at_]];
  }

  /// Marks `r` (from next()) as taken: it has no nodes left.
  void take(Run* r) {
    r->count = 0;
    if (by_power_) --live_;
  }

 private:
  Run* scan(size_t from, size_t to, int64_t needed, bool& sufficient) const {
    Run* best = nullptr;
    for (size_t i = from; i < to; ++i) {
      Run& r = runs_[i];
      if (r.count == 0) continue;
      const bool s = static_cast<int64_t>(r.count) >= needed;
      if (best == nullptr || beats({r.power, s, r.free}, {best->power, sufficient, best->free})) {
        best = &r;
        sufficient = s;
      }
    }
    return best;
  }
  bool ordered_at_(size_t begin) const { return ordered_for_ == begin; }
  void order() {
    by_count_.clear();
    for (size_t i = begin_; i < end_; ++i) by_count_.push_back(static_cast<uint32_t>(i));
    by_free_ = by_count_;
    std::stable_sort(by_count_.begin(), by_count_.end(),
                     [&](uint32_t a, uint32_t b) { return runs_[a].count > runs_[b].count; });
    std::stable_sort(by_free_.begin(), by_free_.end(),
                     [&](uint32_t a, uint32_t b) { return runs_[a].free > runs_[b].free; });
    count_at_ = free_at_ = 0;
    ordered_for_ = begin_;
  }

  std::vector<Run>& runs_;
  std::vector<uint32_t>& by_count_;
  std::vector<uint32_t>& by_free_;
  bool by_power_ = true;
  size_t begin_ = 0, end_ = 0, live_ = 0, picks_ = 0;  // the group of the greatest power with nodes left
  size_t ordered_for_ = SIZE_MAX, count_at_ = 0, free_at_ = 0;
};

// Sorts `nodes` (each with its tasker `t`) into Slurm's node table order (input order) and walks them: open(i)
// at each node that begins a run (not adjacent in the table to the one before it, or of another power:
// cons_tres _eval_nodes' consecutive sets), then add(i) for every node.
template <class Node, class Open, class Add>
void walk_runs(const TaskerTable& taskers, std::vector<Node>& nodes, Open&& open, Add&& add) {
  std::sort(nodes.begin(), nodes.end(),
            [&](const Node& a, const Node& b) { return taskers.input_index[a.t] < taskers.input_index[b.t]; });
  for (size_t i = 0; i < nodes.size(); ++i) {
    const uint32_t t = nodes[i].t;
    if (i == 0 || taskers.input_index[t] != taskers.input_index[nodes[i - 1].t] + 1 ||
        taskers.power[t] != taskers.power[nodes[i - 1].t])
      open(i);
    add(i);
  }
}
}  // namespace

// Rows are in rank order (power descending, then input order), so taskers of one power are one stretch
// of rows, in input order: two are adjacent in Slurm's node table when they are adjacent rows with
// adjacent input indices and the same power (a row between them, eligible or not, breaks the run).
bool Placer::adjacent(size_t prev, size_t x) const noexcept {
  return x == prev + 1 && taskers_.input_index[x] == taskers_.input_index[prev] + 1 &&
         taskers_.power[x] == taskers_.power[prev];
}

double Placer::fit_free(uint32_t c, uint32_t t) const noexcept {
  double a = cap_.available(fit_, t);
  if (!(a >= 0)) a = 0;  // NaN: no pool of it here
  const JobTable::FitUnit u = cats_.fit_unit_of(c);
  if (u.fit <= 0) return a;
  // whole tasks of u.fit CPUs, as many as the free CPUs, the free memory (--mem-per-cpu) and the cap allow
  double tasks = std::floor(a / u.fit);
  if (u.limit > 0 && fit_limit_ != SIZE_MAX) {
    const double limit = cap_.available(fit_limit_, t);
    tasks = std::min(tasks, limit >= 0 ? std::floor(limit / u.limit) : 0.0);
  }
  return u.tasks > 0 ? std::min(tasks, u.tasks) : tasks;
}

size_t Placer::consecutive_best_fit(uint32_t c, const kernels::TaskerSet& tier, const std::vector<Charge>& ch) const {
  const size_t universe = tier.universe();
  size_t best = universe, run_best = universe, prev = universe;
  double best_sum = 0, run_sum = 0, run_best_free = 0;
  auto close_run = [&] {
    if (run_best < universe && (best == universe || run_sum < best_sum)) {
      best = run_best;
      best_sum = run_sum;
    }
    run_best = universe;
    run_sum = 0;
  };
  kernels::TaskerSet::Walk walk(tier);
  for (size_t x = walk.next(0); x < universe; x = walk.next(x + 1)) {
    if (prev < universe && taskers_.power[x] != taskers_.power[prev]) break;  // past the greatest power with room
    if (cap_.block_full(ch, x >> 6)) {
      x = (((x >> 6) + 1) << 6) - 1;
      continue;
    }
    const auto tx = static_cast<uint32_t>(x);
    if (!cap_.fits(ch, tx)) continue;
    if (prev == universe || !adjacent(prev, x)) close_run();
    const double free = fit_free(c, tx);
    run_sum += free;
    if (run_best == universe || free < run_best_free) {
      run_best = x;
      run_best_free = free;
    }
    prev = x;
  }
  close_run();
  return best;
}

bool Placer::place_consecutive(uint32_t j, uint32_t c, std::vector<Allocation>& out) {
  const PreferenceTiers tiers(elig(c));
  const size_t universe = tiers[0].universe();
  const uint32_t want = jobs_.slots[j];
  const uint32_t fewest = cats_.fewest_taskers(c);  // want, or a node count range's MIN
  // kept across calls: no allocation per job
  std::vector<uint32_t>& taskers = scratch_.taskers;
  std::vector<uint32_t>& chosen = scratch_.chosen;
  std::vector<double>& free = scratch_.free;
  std::vector<ConsecutiveScratch::Run>& runs = scratch_.runs;
  for (size_t v = 0; v < tiers.size(); ++v) {
    taskers.clear();
    free.clear();
    runs.clear();
    const kernels::TaskerSet& tier = tiers[v];
    kernels::TaskerSet::Walk walk(tier);
    for (size_t x = walk.next(0); x < universe; x = walk.next(x + 1)) {
      const auto tx = static_cast<uint32_t>(x);
      if (instances(c, tx, false, 1) == 0) continue;
      if (taskers.empty() || !adjacent(taskers.back(), x)) runs.push_back({taskers.size(), 0, 0, taskers_.power[x]});
      taskers.push_back(tx);
      free.push_back(fit_free(c, tx));
      runs.back().count += 1;
      runs.back().free += free.back();
    }
    if (taskers.size() < fewest) continue;
    // a node count range takes up to MAX from the runs of every weight (seen in slurmctld 22.05.8: `-N 2-6 -c
    // 8` took the 3 lightest nodes with room and 3 heavier ones, though the lightest were 33 and up;
    // datasets/slurm/c100-range-sets), and runs at least MIN (_enough_nodes)
    chosen.clear();
    uint32_t rem = want;
    RunChoice<ConsecutiveScratch::Run> choice(runs, scratch_.by_count, scratch_.by_free);
    while (rem > 0) {
      bool sufficient = false;
      // Slurm's _enough_nodes: a run is sufficient with the nodes still wanted, less what a range may go without
      ConsecutiveScratch::Run* best = choice.next(int64_t{rem} + fewest - want, sufficient);
      if (best == nullptr) break;
      if (rem == 1) {  // the best fit tasker of the run
        size_t pick = best->first;
        for (size_t i = best->first; i < best->first + best->count; ++i)
          if (free[i] < free[pick]) pick = i;
        chosen.push_back(taskers[pick]);
        rem = 0;
      } else {
        const size_t take = std::min<size_t>(rem, best->count);
        for (size_t i = best->first; i < best->first + take; ++i) chosen.push_back(taskers[i]);
        rem -= static_cast<uint32_t>(take);
      }
      choice.take(best);
    }
    if (want - rem < fewest) continue;
    std::sort(chosen.begin(), chosen.end(),
              [&](uint32_t a, uint32_t b) { return taskers_.input_index[a] < taskers_.input_index[b]; });
    // each its slot in turn (a host or global pool may run short after some): all of them, or this tier
    // fails and its charges are undone (try_place's transaction holds nothing else yet)
    const size_t first = out.size();
    if (take_each(c, chosen, out)) return true;
    undo_tier(out, first);
  }
  return false;
}

// Slurm's -n N -N K with N > K (JobTable::FitUnit::total), as slurmctld 22.05.8 placed such jobs
// (datasets/slurm/c100-uneven, c100-tasks-over-nodes; scontrol show job -d gave the CPUs of each node): cons_tres
// _eval_nodes with min_nodes K and N x c CPUs, counted in CPUs as Slurm counts them (a node's free CPUs, no more
// than its free memory pays for under --mem-per-cpu). Over the taskers with room for one task, the runs of the
// node selection; repeatedly the best run (lowest weight; among equals the first sufficient for the nodes and
// CPUs left, a sufficient one with fewer free, an insufficient one with more); from it, when one node is left,
// its best fit node holding every CPU left, else its nodes in order, each taking what _cpus_to_use lets it:
// its free CPUs, but no more than leaves one for each node still to come, and at least a task's (`-n 5 -N 2`:
// the node picked first 4 tasks, the other 1; the last node must hold all that is left). The tasks then go a
// round at a time over the nodes in node order, each up to the whole tasks of what it took (dist_tasks' cyclic
// distribution). For each soft tier in turn.
// Long (about 125 lines): cons_tres's node choice and dist_tasks' cyclic distribution in the order slurmctld
// runs them, per soft tier, over the CPUs and tasks still to place that both share.
bool Placer::place_tasks_on_nodes(uint32_t j, uint32_t c, std::vector<Allocation>& out) {
  const PreferenceTiers tiers(elig(c));
  const uint32_t want = jobs_.slots[j];
  const JobTable::FitUnit u = cats_.fit_unit_of(c);
  const auto per_task = static_cast<int64_t>(std::ceil(u.fit));
  const int64_t total = static_cast<int64_t>(u.total) * per_task;  // the job's CPUs
  // Slurm's avail_cpus of tasker t: its free CPUs, under --mem-per-cpu no more than its free memory pays for and
  // then a whole number of tasks' (cons_tres _can_job_run_on_node: `cpus -= cpus % cpus_per_task`; with 14 CPUs
  // free, -c 10 --mem-per-cpu counts 10, which ties with a node of 10 free and the first in node order is the best
  // fit: datasets/slurm/c100-uneven job 21), with GRES no more than its tasks' (FitUnit::tasks)
  auto cpus_free = [&](uint32_t t) {
    double a = cap_.available(fit_, t);
    if (!(a >= 0)) a = 0;
    if (u.limit > 0 && fit_limit_ != SIZE_MAX) {
      const double m = cap_.available(fit_limit_, t);
      a = std::min(a, m >= 0 ? std::floor(m / (u.limit / u.fit)) : 0.0);
      if (per_task > 1) a = std::floor(a / static_cast<double>(per_task)) * static_cast<double>(per_task);
    }
    if (u.tasks > 0) a = std::min(a, u.tasks * u.fit);
    return static_cast<int64_t>(std::min(std::floor(a), 1e15));
  };
  struct Node {
    uint32_t t;
    int64_t avail;  // CPUs it offers now
  };
  struct Run {
    size_t first = 0, count = 0;
    int64_t cpus = 0;
    double power = 0;
  };
  std::vector<Node> nodes;
  std::vector<Run> runs;
  std::vector<std::pair<uint32_t, int64_t>> chosen;  // (tasker, the CPUs _cpus_to_use lets it take)
  for (size_t v = 0; v < tiers.size(); ++v) {
    const kernels::TaskerSet& tier = tiers[v];
    const size_t universe = tier.universe();
    nodes.clear();
    for (size_t x = tier.next(0); x < universe; x = tier.next(x + 1)) {
      const auto t = static_cast<uint32_t>(x);
      if (instances(c, t, false, 1) == 0) continue;
      nodes.push_back({t, std::max(per_task, cpus_free(t))});
    }
    if (nodes.size() < want) continue;
    runs.clear();
    walk_runs(
        taskers_, nodes,
        [&](size_t i) {
          runs.push_back({i, 0, 0, taskers_.power[nodes[i].t]});
        },
        [&](size_t i) {
          runs.back().count += 1;
          runs.back().cpus += nodes[i].avail;
        });
    chosen.clear();
    int64_t rem_nodes = want, rem_cpus = total, rem_max = total, max_nodes = want;
    bool done = false;
    while (max_nodes > 0 && !done) {
      Run* best = nullptr;
      bool best_sufficient = false;
      for (Run& r : runs) {
        if (r.count == 0) continue;
        const bool sufficient = r.cpus >= rem_cpus && static_cast<int64_t>(r.count) >= rem_nodes;
        if (best == nullptr || beats({r.power, sufficient, static_cast<double>(r.cpus)},
                                     {best->power, best_sufficient, static_cast<double>(best->cpus)})) {
          best = &r;
          best_sufficient = sufficient;
        }
      }
      if (best == nullptr) break;
      const size_t first = best->first, last = best->first + best->count;
      size_t only = last;  // one node left: the best fit holding every CPU left, alone
      if (rem_nodes <= 1)
        for (size_t i = first; i < last; ++i)
          if (nodes[i].avail >= rem_cpus && (only == last || nodes[i].avail < nodes[only].avail)) {
            only = i;
            if (nodes[i].avail == rem_cpus) break;
          }
      for (size_t i = first; i < last; ++i) {
        if (max_nodes == 0 || (rem_nodes <= 0 && rem_cpus <= 0)) break;
        if (only != last && i != only) continue;
        const int64_t a = nodes[i].avail;
        if (max_nodes == 1 && a < rem_cpus) continue;  // the last node must hold what is left
        // _cpus_to_use: a CPU left for each node still to come, a task's at least
        const int64_t take = std::min(a, std::max(rem_max - std::max<int64_t>(rem_nodes - 1, 0), per_task));
        chosen.emplace_back(nodes[i].t, take);
        rem_cpus -= take;
        rem_max -= take;
        --rem_nodes;
        --max_nodes;
      }
      done = rem_nodes <= 0 && rem_cpus <= 0;
      best->count = 0;
    }
    if (!done) continue;
    std::sort(chosen.begin(), chosen.end(), [&](const auto& a, const auto& b) {
      return taskers_.input_index[a.first] < taskers_.input_index[b.first];
    });
    // dist_tasks: a task to each in turn while it has CPUs for one more, until all N are given
    std::vector<uint32_t>& given = scratch_.chosen;
    given.assign(chosen.size(), 0);
    int64_t left = static_cast<int64_t>(u.total);
    for (bool any = true; left > 0 && any;) {
      any = false;
      for (size_t i = 0; i < chosen.size() && left > 0; ++i)
        if ((given[i] + 1) * per_task <= chosen[i].second) ++given[i], --left, any = true;
    }
    if (left > 0) continue;  // (not when the CPUs were counted in whole tasks)
    const size_t before = out.size();
    bool ok = true;
    for (size_t i = 0; i < chosen.size() && ok; ++i) {
      const uint32_t t = chosen[i].first;
      if (given[i] == 0 || instances(c, t, i == 0, 1) == 0) {
        ok = false;
        break;
      }
      cats_.each_allocation_charge(c, 1, i == 0, [&](uint32_t k, double amount) {
        if (amount > 0) cap_.take(ledger_, k, t, amount);
        return true;
      });
      u.each_extra_task_charge(given[i], fit_, fit_limit_, [&](size_t k, double amount) {
        if (!(cap_.available(k, t) >= amount)) ok = false;
        cap_.take(ledger_, k, t, amount);
      });
      out.push_back({t, given[i]});
    }
    if (ok) return true;
    undo_tier(out, before);
  }
  return false;
}

// Slurm's -n N without -N, as slurmctld 22.05.8 placed such jobs (datasets/slurm/c100-tasks): cons_tres
// _eval_nodes with min_nodes 1 and min_cpus N x c, counted here in whole tasks (fit_free). Over the taskers
// with room for a task, in node order, the runs of the node selection; repeatedly the best run (lowest
// weight; among equals the first sufficient for the tasks left, a sufficient one with fewer free, an
// insufficient one with more); its best fit tasker that holds every task left (the fewest free, the first
// of equals), else its taskers in node order, each taking what it can of the tasks left. For each soft tier in turn (a
// matching OR: one choice for every node).
bool Placer::place_tasks(uint32_t j, uint32_t c, std::vector<Allocation>& out) {
  const PreferenceTiers tiers(elig(c));
  const uint32_t want = jobs_.slots[j];
  struct Node {
    uint32_t t;
    uint32_t avail;  // whole tasks it can take now
  };
  struct Run {
    size_t first = 0, count = 0;
    double free = 0, power = 0;
    bool used = false;
  };
  std::vector<Node> nodes;
  std::vector<Run> runs;
  std::vector<std::pair<uint32_t, uint32_t>> chosen;  // (tasker, tasks)
  for (size_t v = 0; v < tiers.size(); ++v) {
    const kernels::TaskerSet& tier = tiers[v];
    const size_t universe = tier.universe();
    nodes.clear();
    for (size_t x = tier.next(0); x < universe; x = tier.next(x + 1)) {
      const auto t = static_cast<uint32_t>(x);
      const uint32_t n = instances(c, t, false, 1u << 30);  // (all it offers: Slurm compares them whole)
      const double f = fit_free(c, t);
      const auto avail = static_cast<uint32_t>(std::min<double>(n, f >= 0 ? std::floor(f) : 0.0));
      if (avail > 0) nodes.push_back({t, avail});
    }
    runs.clear();
    walk_runs(
        taskers_, nodes,
        [&](size_t i) {
          runs.push_back({i, 0, 0, taskers_.power[nodes[i].t], false});
        },
        [&](size_t i) {
          runs.back().count += 1;
          runs.back().free += nodes[i].avail;
        });
    chosen.clear();
    uint32_t rem = want;
    while (rem > 0) {
      Run* best = nullptr;
      bool best_sufficient = false;
      for (Run& r : runs) {
        if (r.used) continue;
        const bool sufficient = r.free >= rem;
        if (best == nullptr || beats({r.power, sufficient, r.free}, {best->power, best_sufficient, best->free}))
          best = &r, best_sufficient = sufficient;
      }
      if (best == nullptr) break;
      best->used = true;
      size_t fit = nodes.size();  // (Slurm's rem_nodes <= 1 holds throughout: min_nodes is 1)
      for (size_t i = best->first; i < best->first + best->count; ++i)
        if (nodes[i].avail >= rem && (fit == nodes.size() || nodes[i].avail < nodes[fit].avail)) fit = i;
      if (fit < nodes.size()) {
        chosen.emplace_back(nodes[fit].t, rem);
        rem = 0;
        break;
      }
      for (size_t i = best->first; i < best->first + best->count && rem > 0; ++i) {
        const uint32_t k = std::min(nodes[i].avail, rem);
        chosen.emplace_back(nodes[i].t, k);
        rem -= k;
      }
    }
    if (rem > 0) continue;
    std::sort(chosen.begin(), chosen.end(), [&](const auto& a, const auto& b) {
      return taskers_.input_index[a.first] < taskers_.input_index[b.first];
    });
    // each its tasks in turn, the first the master (a host or global pool may run short after some): all of
    // them, or this tier fails and its charges are undone (try_place's transaction holds nothing else yet)
    const size_t first = out.size();
    bool all = true;
    for (size_t i = 0; i < chosen.size() && all; ++i) {
      const uint32_t t = chosen[i].first, k = chosen[i].second;  // (a lambda below captures t)
      if (instances(c, t, i == 0, k) < k) {
        all = false;
        break;
      }
      cats_.each_allocation_charge(c, k, i == 0, [&](uint32_t key, double amount) {
        if (amount > 0) cap_.take(ledger_, key, t, amount);
        return true;
      });
      out.push_back({t, k});
    }
    if (all) return true;
    undo_tier(out, first);
  }
  return false;
}

// A tier's placement fell short after taking some charges: its allocations and charges undone (try_place's
// transaction holds nothing else yet), and another tier, or a later job of the category, may still pass.
void Placer::undo_tier(std::vector<Allocation>& out, size_t first) {
  may_pass_ = true;
  out.resize(first);
  cap_.rollback(ledger_);
  cap_.begin(ledger_);
}

bool Placer::take_each(uint32_t c, const std::vector<uint32_t>& chosen, std::vector<Allocation>& out) {
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (instances(c, chosen[i], i == 0, 1) == 0) return false;
    cats_.each_allocation_charge(c, 1, i == 0, [&](uint32_t k, double amount) {
      if (amount > 0) cap_.take(ledger_, k, chosen[i], amount);
      return true;
    });
    out.push_back({chosen[i], 1});
  }
  return true;
}

bool Placer::eval_required(uint32_t c, const std::vector<uint32_t>& nodes, const std::vector<uint8_t>& required,
                           uint32_t want, std::vector<uint32_t>& chosen) const {
  const size_t n = nodes.size();
  chosen.clear();
  std::vector<uint8_t> taken(required.begin(), required.end());  // Slurm's node_map: the selected
  int64_t rem = want;
  for (size_t i = 0; i < n; ++i)
    if (required[i]) chosen.push_back(nodes[i]), --rem;
  if (rem <= 0) return true;
  if (n < want) return false;
  // Runs of nodes adjacent in the node table (a node not among `nodes` ends one) of one weight, the weight
  // that of the last node that is not required; a run of required nodes only is not kept. A new run after a
  // change of weight starts with weight 0 (Slurm's xcalloc), which equals no node's.
  struct Run {
    size_t start = 0, end = 0;
    uint32_t count = 0;
    double free = 0;
    enum class W : uint8_t { NoVal, Zero, Set } w = W::NoVal;
    double power = 0;
    ptrdiff_t req = -1;  // the first required node in the run
  };
  std::vector<Run> runs;
  Run cur;
  auto end_run = [&](size_t last, Run::W next) {
    if (cur.count == 0) {
      cur.req = -1;  // only required nodes: the record is reused
      if (next == Run::W::NoVal) cur.w = next;
      return;
    }
    cur.end = last;
    runs.push_back(cur);
    cur = Run{};
    cur.w = next;
  };
  for (size_t i = 0; i < n; ++i) {
    const uint32_t t = nodes[i];
    if (i > 0 && taskers_.input_index[t] != taskers_.input_index[nodes[i - 1]] + 1) end_run(i - 1, Run::W::NoVal);
    const double power = taskers_.power[t];
    if (cur.w == Run::W::Zero || (cur.w == Run::W::Set && power != cur.power)) end_run(i - 1, Run::W::Zero);
    if (cur.count == 0) cur.start = i;
    if (required[i]) {
      if (cur.req == -1) cur.req = static_cast<ptrdiff_t>(i);
      continue;
    }
    ++cur.count;
    cur.free += fit_free(c, t);
    cur.w = Run::W::Set;
    cur.power = power;
  }
  if (cur.count != 0) {
    cur.end = n - 1;
    runs.push_back(cur);
  }
  auto take = [&](size_t i) {
    taken[i] = 1;
    chosen.push_back(nodes[i]);
    --rem;
  };
  while (rem > 0) {
    Run* best = nullptr;
    bool best_sufficient = false;
    for (Run& r : runs) {
      if (r.count == 0) continue;
      const bool sufficient = r.count >= rem;
      // first; or holding required nodes where the best holds none; or as beats() says (Slurm tests the
      // required nodes before the weight: a run holding them wins over a lower-weight one found earlier)
      if (best == nullptr || (best->req == -1 && r.req != -1) ||
          beats({r.power, sufficient, r.free}, {best->power, best_sufficient, best->free})) {
        best = &r;
        best_sufficient = sufficient;
      }
    }
    if (best == nullptr) return false;
    if (best->req != -1) {  // from its first required node up, then down from it
      for (size_t i = static_cast<size_t>(best->req); i <= best->end && rem > 0; ++i)
        if (!taken[i]) take(i);
      for (size_t i = static_cast<size_t>(best->req); i-- > best->start && rem > 0;)
        if (!taken[i]) take(i);
    } else if (rem == 1) {  // the best fit node of the run
      size_t pick = n;
      double pick_free = 0;
      for (size_t i = best->start; i <= best->end; ++i) {
        if (taken[i]) continue;
        const double f = fit_free(c, nodes[i]);
        if (pick == n || f < pick_free) pick = i, pick_free = f;
      }
      if (pick < n) take(pick);
    } else {
      for (size_t i = best->start; i <= best->end && rem > 0; ++i)
        if (!taken[i]) take(i);
    }
    best->count = 0;
  }
  return true;
}

bool Placer::place_picks(uint32_t j, uint32_t c, std::vector<Allocation>& out) {
  const kernels::TaskerSet& eligible = elig(c).eligible;
  const size_t universe = eligible.universe();
  // Slurm's accumulate_bitmap and req_node_bitmap, as lists and as a mark per tasker (bit 1: in acc, bit 2:
  // in req): O(taskers) a placement, whatever the counts
  std::vector<uint32_t> acc, req, chosen;
  std::vector<uint8_t> mark(universe, 0);
  constexpr uint8_t kAcc = 1, kReq = 2;
  // The taskers of `set` with room for one slot of c (and in c's eligibility), less those marked `skip`, in
  // input order.
  std::vector<uint32_t> nodes;
  auto with_room = [&](const kernels::TaskerSet& set, uint8_t skip) {
    nodes.clear();
    for (size_t x = set.next(0); x < std::min(universe, set.universe()); x = set.next(x + 1)) {
      const auto t = static_cast<uint32_t>(x);
      if (!eligible.contains(t) || (mark[t] & skip) != 0 || instances(c, t, false, 1) == 0) continue;
      nodes.push_back(t);
    }
    std::sort(nodes.begin(), nodes.end(),
              [&](uint32_t a, uint32_t b) { return taskers_.input_index[a] < taskers_.input_index[b]; });
  };
  // Required flags for the taskers marked `bit` among `nodes`; false when one of the `n` is missing (no room).
  std::vector<uint8_t> required;
  auto require = [&](uint8_t bit, size_t n) {
    required.assign(nodes.size(), 0);
    size_t found = 0;
    for (size_t i = 0; i < nodes.size(); ++i)
      if ((mark[nodes[i]] & bit) != 0) required[i] = 1, ++found;
    return found == n;
  };
  // How many of the pick's taskers are eligible, less those marked `skip` (room or not), up to its count.
  auto ever = [&](const Categories::NodePick& p, uint8_t skip) {
    return pick_taskers(p, [&](uint32_t t) { return eligible.contains(t) && (mark[t] & skip) == 0; });
  };
  // A failure: the picks depend on which taskers have room, not only on how many, so a later job of the
  // category may be placed though this one was not, unless a pick has too few eligible taskers at all.
  auto fail = [&] {
    may_pass_ = !never_;
    for (const Categories::NodePick& p : cats_.node_picks_of(c))
      if (ever(p, 0) < p.count) may_pass_ = false;
    return false;
  };
  bool apart = false;  // Slurm's has_xand
  for (const Categories::NodePick& p : cats_.node_picks_of(c)) {
    // each tier in turn (Slurm's feature positions in _pick_best_nodes), the first that yields the count
    bool found = false;
    for (size_t v = 0; v < p.tiers.size() && !found; ++v) {
      with_room(eligible_[p.tiers[v]].eligible, apart ? kAcc : 0);
      found = require(apart ? 0 : kReq, apart ? 0 : req.size()) && eval_required(c, nodes, required, p.count, chosen);
    }
    if (!found) {
      // never, as tried: fewer of its taskers than its count, room or not, apart from those picked before
      // (Slurm: the pick's _pick_best_nodes finds it never runnable: BadConstraints)
      never_ = ever(p, apart ? kAcc : 0) < p.count;
      return fail();
    }
    apart = apart || p.apart;
    for (const uint32_t t : chosen) {
      if (!apart && (mark[t] & kReq) == 0) req.push_back(t), mark[t] |= kReq;
      if ((mark[t] & kAcc) == 0) acc.push_back(t), mark[t] |= kAcc;
    }
  }
  with_room(eligible, 0);
  if (!require(kAcc, acc.size()) ||
      !eval_required(c, nodes, required, std::max(jobs_.slots[j], static_cast<uint32_t>(acc.size())), chosen))
    return fail();
  std::sort(chosen.begin(), chosen.end(),
            [&](uint32_t a, uint32_t b) { return taskers_.input_index[a] < taskers_.input_index[b]; });
  const size_t first = out.size();
  if (take_each(c, chosen, out)) return true;
  out.resize(first);  // (try_place rolls the charges back)
  may_pass_ = true;
  return false;
}

}  // namespace colmatch
