// Slurm's main scheduling pass over time (slurmctld's job_scheduler.c, _schedule, 22.05), for the cycles
// without backfill when the farm has partitions (SimConfig::partitions): pending jobs in priority order
// (PriorityTier first); a job that finds no room fails its partition: every later job of that partition
// waits (Reason Priority, SimReason::Blocked) and the partition's nodes leave the pass for every later job
// of any partition, so no lower-priority job takes what the failed one waits for. Jobs of other
// partitions go on. A job of several partitions is tried in each in the order written, each failure
// failing that partition; one that names its nodes (-w, BlockingQueues::holds_own) holds them instead,
// blocking nothing; one whose eligible nodes are all held blocks nothing (ReqNodeNotAvail); one below
// bf_min_prio_reserve blocks nothing ("fail_by_part = false"). A pass not on sched_interval's clock tests at
// most default_queue_depth job records and one more (SimConfig::main_pass_depth); every pass at most
// partition_job_depth records of each partition (main_pass_partition_depth), and stops before the next
// record once it has started sched_max_job_start jobs (main_pass_max_starts). The batch dispatch's pass
// is the same partition rule over one snapshot (engine/batch/main_pass.cpp).
#include <bit>
#include <cmath>
#include <span>

#include "engine/batch/queue_blocking.hpp"
#include "engine/schedule/moab.hpp"

namespace colmatch {

bool MoabScheduler::slurm_main_pass(double t) {
  const BlockingQueues& parts = *w_.policy.partitions;
  SimResult& res = w_.res;
  std::vector<Allocation>& trial = w_.trial;
  part_failed_.assign(parts.names.size(), 0);
  held_words_.assign((w_.taskers.size() + 63) / 64, 0);
  any_held_ = false;
  auto hold = [&](const kernels::TaskerSet& s) {
    s.each_word([&](size_t w, uint64_t bits) { held_words_[w] |= bits; });
    any_held_ = true;
  };
  // members of s (and of the partition whose words `within` holds, when given) not held
  auto unheld = [&](const kernels::TaskerSet& s, const std::vector<uint64_t>* within) {
    uint64_t n = 0;
    s.each_word([&](size_t w, uint64_t bits) {
      n += static_cast<uint64_t>(std::popcount(bits & ~held_words_[w] & (within ? (*within)[w] : ~uint64_t{0})));
    });
    return n;
  };
  auto fail = [&](uint32_t q) {
    part_failed_[q] = 1;
    hold(parts.taskers[q]);
  };
  const double low = w_.policy.backfill_min_priority_reserve, young = w_.policy.backfill_min_age_reserve;
  // default_queue_depth: a pass not on sched_interval's clock tests at most that many records and one more
  const uint64_t depth = full_pass_ ? 0 : w_.policy.main_pass_depth;
  uint64_t records = 0;
  depth_cut_ = false;
  auto over_depth = [&] {  // one more record tested: "already tested N jobs, breaking out"
    if (depth > 0 && records++ > depth) depth_cut_ = true;
    return depth_cut_;
  };
  // partition_job_depth: each record of a partition past that many is skipped before the depth counts it
  const uint64_t per_partition = w_.policy.main_pass_partition_depth;
  part_records_.assign(per_partition > 0 ? parts.names.size() : 0, 0);
  part_skipped_ = false;  // (a record skipped waits for the next pass, or the periodic one: a wake then)
  auto past_partition_depth = [&](uint32_t q) {
    const bool past = per_partition > 0 && q != kNone && part_records_[q]++ >= per_partition;
    part_skipped_ = part_skipped_ || past;
    return past;
  };
  // sched_max_job_start: a pass that started that many stops before its next record
  const uint64_t max_starts = w_.policy.main_pass_max_starts;
  uint64_t starts = 0;
  for (const auto& [prio, j] : ready_) {
    if (depth_cut_) {  // untried
      res.reason[j] = SimReason::Blocked;
      continue;
    }
    const uint32_t c = w_.cats.of_job[j];
    const uint32_t need = w_.cats.fewest_taskers(c);
    // bf_min_prio_reserve: a job of a lower priority (above its tier) fails no partition; bf_min_age_reserve:
    // nor one waiting less than that
    const bool blocks = !(low > 0 && prio - std::floor(prio / kPriorityTierScale) * kPriorityTierScale < low) &&
                        !(young > 0 && t - w_.jobs.submit[j] < young);
    const std::span<const uint32_t> several = parts.queues_of(j);
    const uint32_t own = j < parts.queue_of_job.size() ? parts.queue_of_job[j] : kNone;
    const std::span<const uint32_t> queues = several.empty() ? std::span<const uint32_t>(&own, 1) : several;
    const bool holds_own = j < parts.holds_own.size() && parts.holds_own[j] != 0;
    bool placed = false, behind = true, counted = false, limited = false;
    for (size_t i = 0; i < queues.size(); ++i) {
      const uint32_t q = queues[i];
      if (max_starts > 0 && starts >= max_starts) {  // "sched_max_job_start reached, breaking out"
        depth_cut_ = true;
        break;
      }
      if (past_partition_depth(q)) continue;  // "reached partition %s job limit" (Priority)
      if (over_depth()) break;                // (each record of a job of several)
      if (!counted) {                         // its first record tested: now its credentials' limits
        counted = true;
        if (throttled(j)) {
          limited = true;
          break;
        }
      }
      if (q != kNone && part_failed_[q]) continue;  // behind a higher-priority job of q (Priority)
      behind = false;
      // (a job of several partitions: this one's taskers, as words)
      const std::vector<uint64_t>* within = nullptr;
      if (!several.empty() && q != kNone) {
        within_words_.assign(held_words_.size(), 0);
        parts.taskers[q].or_into(within_words_);
        within = &within_words_;
      }
      if (q != kNone && any_held_ && unheld(parts.taskers[q], nullptr) < need) {  // its nodes are held: Resources
        if (blocks) fail(q);
        continue;
      }
      trial.clear();
      if (main_pass_try(j, c, within, trial)) {
        placed = true;
        break;
      }
      if (holds_own) hold(w_.eligible[c].eligible);  // its named nodes, blocking nothing
      else if (q != kNone && blocks && unheld(w_.eligible[c].eligible, within) > 0) fail(q);
    }
    if (limited) continue;
    if (placed) {
      w_.cap.commit();
      start(j, t, trial, false);
      ++starts;
    } else {
      res.reason[j] = behind || depth_cut_ ? SimReason::Blocked : SimReason::NoFreeCapacity;
    }
  }
  // a full pass that started nothing would skip the same records at the next one: no wake for them
  if (full_pass_ && starts == 0) part_skipped_ = false;
  return starts > 0;
}

// Job j of category c placed now on its eligible taskers within the words `within` (null: all of them) that no
// failed partition holds; the Capacity transaction left open on success (MoabScheduler::pass's contract).
bool MoabScheduler::main_pass_try(uint32_t j, uint32_t c, const std::vector<uint64_t>* within,
                                  std::vector<Allocation>& trial) {
  Placer& placer = w_.placer(c);
  // (a category that chooses among solutions places by each solution's own taskers: not cut)
  if ((!any_held_ && within == nullptr) || w_.cats.chooses(c)) return placer.try_place(j, w_.policy.allocation, trial);
  auto cut = [&](const kernels::TaskerSet& s) {
    std::vector<uint64_t> words(held_words_.size(), 0);
    uint64_t count = 0;
    s.each_word([&](size_t w, uint64_t bits) {
      words[w] = bits & ~held_words_[w] & (within ? (*within)[w] : ~uint64_t{0});
      count += static_cast<uint64_t>(std::popcount(words[w]));
    });
    return kernels::TaskerSet::from_words(std::move(words), s.universe(), count);
  };
  const CategoryEligibility& e = w_.eligible[c];
  cut_.eligible = cut(e.eligible);
  if (cut_.eligible.count() == 0) return false;
  cut_.tiers.clear();
  for (const kernels::TaskerSet& tier : e.tiers) cut_.tiers.push_back(cut(tier));
  placer.restrict_to(&cut_);
  const bool placed = placer.try_place(j, w_.policy.allocation, trial);
  placer.restrict_to(nullptr);
  return placed;
}

}  // namespace colmatch
