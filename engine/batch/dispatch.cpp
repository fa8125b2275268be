#include "engine/batch/dispatch.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <unordered_map>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>

#include "engine/batch/dispatch_parts.hpp"
#include "engine/batch/walk.hpp"
#include "engine/model/counting_sort.hpp"

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
    case PendingReason::BehindHigherPriority:
      return "behind a higher-priority job of its queue that cannot start (Slurm: Priority)";
    case PendingReason::EligibleHeld:
      return "every eligible tasker is held for higher-priority jobs of other queues (Slurm: ReqNodeNotAvail)";
    case PendingReason::TaskersHeld:
      return "every tasker of its queue is held for higher-priority jobs (Slurm: Nodes required for job are DOWN, "
             "DRAINED or reserved for jobs in higher priority partitions)";
  }
  return "";
}

namespace {

DispatchResult empty_result(size_t nj) {
  DispatchResult res;  // (five columns of a million jobs: filled side by side, their pages faulted so)
  tbb::parallel_invoke([&] { res.status.assign(nj, JobStatus::Pending); }, [&] { res.tasker.assign(nj, kNone); },
                       [&] { res.reason.assign(nj, PendingReason::None); }, [&] { res.alloc_first.assign(nj, 0); },
                       [&] { res.alloc_count.assign(nj, 0); });
  return res;
}

// Rejected jobs marked; cursors synced to the capacity's epoch; per category the reason its jobs pend
// without a placement from the start (Walk's `settled`).
std::vector<PendingReason> start_batch(const JobTable& jobs, const Categories& cats,
                                       const std::vector<CategoryEligibility>& eligible, const Capacity& capacity,
                                       DispatchCursors& cursors, DispatchResult& res) {
  for (uint32_t j = 0; j < jobs.size(); ++j)
    if (jobs.rejected(j)) {
      res.status[j] = JobStatus::Rejected;
      ++res.rejected;
    }
  cursors.sync(capacity);
  // Capacity only shrinks in a batch and a category's jobs are alike (request, slots, rule, charges):
  // once one of them finds no room, the category is settled for the epoch and the jobs after it are
  // pending at once, without a tentative placement and its rollback (which copy the farm-wide pools:
  // an Accelerator farm has a pool per counted map, and most of a million jobs wait). Whether a
  // category's jobs are settled is one byte per category (`settled`: the reason they wait, or None),
  // read once per job instead of its category's eligibility and cursors.
  std::vector<PendingReason> settled(cats.size(), PendingReason::None);
  for (size_t c = 0; c < settled.size(); ++c)
    if (gate_of(cats, jobs, c) != nullptr) continue;  // what its jobs do depends on the pools when each is dispatched
    else if (eligible[c].eligible.count() == 0) settled[c] = PendingReason::NoEligibleTasker;
    else if (cursors.settled(c)) settled[c] = PendingReason::NoFreeCapacity;
  return settled;
}

// How many categories are live (not settled, with jobs to walk: what Walk::run counts down) in each of
// `groups` groups: category c's is part_of[c] (kNone: in none), or group 0 for every one when part_of is
// empty.
std::vector<size_t> live_categories(const Categories& cats, const std::vector<PendingReason>& settled,
                                    std::span<const uint32_t> part_of, size_t groups) {
  std::vector<size_t> live(groups, 0);
  for (size_t c = 0; c < cats.size(); ++c) {
    const uint32_t g = part_of.empty() ? 0 : part_of[c];
    if (g != kNone) live[g] += settled[c] == PendingReason::None && cats.job_count[c] > 0;
  }
  return live;
}

// The jobs of `jobs` pend for their category's settled reason, in parallel; returns how many.
uint64_t pend_settled(std::span<const uint32_t> jobs, const Categories& cats, const std::vector<PendingReason>& settled,
                      DispatchResult& res) {
  tbb::parallel_for(tbb::blocked_range<size_t>(0, jobs.size(), 8192), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i < r.end(); ++i) res.reason[jobs[i]] = settled[cats.of_job[jobs[i]]];
  });
  return jobs.size();
}

void add_counts(const WalkOut& out, DispatchResult& res) {
  res.assigned += out.assigned;
  res.pending += out.pending;
  res.rejected += out.rejected;
}

// The jobs of `order` grouped by their part (a stable counting sort in parallel: in dispatch order within
// a part), and the category of each in `of`; bucket parts.count holds the jobs of categories in no part.
// Bucket b is [start[b], start[b + 1]).
std::vector<uint32_t> jobs_by_part(const std::vector<uint32_t>& order, const Categories& cats,
                                   const DispatchParts& parts, std::vector<size_t>& start, std::vector<uint32_t>& of) {
  const size_t buckets = parts.count + 1;
  auto bucket_of = [&](uint32_t c) {
    const uint32_t part = parts.part_of[c];
    return part == kNone ? parts.count : part;
  };
  // pieces of at least 64 Ki jobs, and at most 4 Mi counters in all
  const size_t pieces =
      std::max<size_t>(1, std::min((order.size() + (1 << 16) - 1) >> 16, (size_t{1} << 22) / buckets));
  const size_t per = (order.size() + pieces - 1) / pieces;
  std::vector<std::vector<size_t>> at(pieces, std::vector<size_t>(buckets, 0));
  tbb::parallel_for(size_t{0}, pieces, [&](size_t q) {
    for (size_t p = q * per; p < std::min(order.size(), (q + 1) * per); ++p) ++at[q][bucket_of(cats.of_job[order[p]])];
  });
  start = bucket_starts(at, buckets);
  std::vector<uint32_t> out(order.size());
  of.resize(order.size());
  tbb::parallel_for(size_t{0}, pieces, [&](size_t q) {
    for (size_t p = q * per; p < std::min(order.size(), (q + 1) * per); ++p) {
      const uint32_t j = order[p], c = cats.of_job[j];
      const size_t i = at[q][bucket_of(c)]++;
      out[i] = j;
      of[i] = c;
    }
  });
  return out;
}

// The parts' allocations as one list in dispatch order (each job's in a row, as one walk appends them),
// alloc_first made global: two parallel passes over the order (count, then copy at the scanned offsets).
void merge_allocations(const std::vector<uint32_t>& order, const Categories& cats, const DispatchParts& parts,
                       const std::vector<WalkOut>& outs, DispatchResult& res) {
  constexpr size_t kBlock = 1 << 16;
  const size_t blocks = (order.size() + kBlock - 1) / kBlock;
  std::vector<size_t> offset(blocks + 1, 0);
  tbb::parallel_for(size_t{0}, blocks, [&](size_t b) {
    size_t n = 0;
    for (size_t p = b * kBlock; p < std::min(order.size(), (b + 1) * kBlock); ++p)
      if (res.status[order[p]] == JobStatus::Assigned) n += res.alloc_count[order[p]];
    offset[b + 1] = n;
  });
  for (size_t b = 0; b < blocks; ++b) offset[b + 1] += offset[b];
  res.allocations.resize(offset[blocks]);
  tbb::parallel_for(size_t{0}, blocks, [&](size_t b) {
    size_t at = offset[b];
    for (size_t p = b * kBlock; p < std::min(order.size(), (b + 1) * kBlock); ++p) {
      const uint32_t j = order[p];
      if (res.status[j] != JobStatus::Assigned) continue;
      const std::vector<Allocation>& from = outs[parts.part_of[cats.of_job[j]]].allocations;
      std::copy_n(from.begin() + res.alloc_first[j], res.alloc_count[j],
                  res.allocations.begin() + static_cast<std::ptrdiff_t>(at));
      res.alloc_first[j] = static_cast<uint32_t>(at);
      at += res.alloc_count[j];
    }
  });
}

// The parts' removed jobs in dispatch order (rare: Accelerator jobs whose walk meets a cycle): their
// positions found by one pass over the order when there are any.
void merge_removed(const std::vector<uint32_t>& order, std::vector<WalkOut>& outs, DispatchResult& res) {
  std::unordered_map<uint32_t, std::string> why;
  for (WalkOut& out : outs)
    for (auto& [j, text] : out.removed) why.emplace(j, std::move(text));
  for (size_t p = 0; p < order.size() && res.removed.size() < why.size(); ++p)
    if (const auto it = why.find(order[p]); it != why.end()) res.removed.emplace_back(it->first, std::move(it->second));
}

}  // namespace

DispatchResult dispatch(const TaskerTable& taskers, const JobTable& jobs, const Categories& cats,
                        const std::vector<CategoryEligibility>& eligible, Capacity& capacity, DispatchCursors& cursors,
                        const DispatchOptions& options) {
  DispatchResult res = empty_result(jobs.size());
  std::vector<PendingReason> settled = start_batch(jobs, cats, eligible, capacity, cursors, res);
  const std::vector<uint32_t> order = dispatch_order(jobs);
  std::vector<uint32_t> remaining = cats.job_count;  // per category: its jobs not walked yet
  WalkOut out;
  std::optional<QueueBlocks> blocks;
  if (options.queues) {
    if (options.queues->queue_of_job.size() != jobs.size() ||
        (!options.queues->several_first.empty() && options.queues->several_first.size() != jobs.size() + 1) ||
        (!options.queues->several_priority.empty() &&
         options.queues->several_priority.size() != options.queues->several.size()))
      throw std::invalid_argument("dispatch: blocking queues name a queue for another number of jobs");
    blocks.emplace(*options.queues, capacity);
  }
  // Blocking queues: every job is walked (a settled category's later jobs may be behind a blocked queue)
  const size_t live = blocks ? order.size() + 1 : live_categories(cats, settled, {}, 1)[0];
  const size_t walked =
      Walk(taskers, jobs, cats, eligible, capacity, cursors, nullptr, Placer::tables_for(cats, capacity), settled,
           remaining, res, options, blocks ? &*blocks : nullptr)
          .run(order, {}, live, out);
  if (blocks) blocks->release();
  out.pending += pend_settled(std::span<const uint32_t>(order).subspan(walked), cats, settled, res);
  res.allocations = std::move(out.allocations);
  res.removed = std::move(out.removed);
  add_counts(out, res);
  return res;
}

DispatchResult dispatch(const Catalog& catalog, const TaskerTable& taskers, const JobTable& jobs,
                        const Categories& cats, const std::vector<CategoryEligibility>& eligible,
                        const kernels::KernelTable& k, const InUse* in_use, const DispatchOptions& options) {
  Capacity capacity = Capacity::configured(catalog, taskers);
  if (in_use && !in_use->empty()) capacity.take(*in_use);
  DispatchCursors cursors(cats, eligible);
  const bool threads =
      std::min<size_t>(tbb::this_task_arena::max_concurrency(),
                       tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)) > 1;
  const DispatchParts parts =
      options.parts == DispatchOptions::Parts::Never || options.queues || options.load_correction ||
              (options.parts == DispatchOptions::Parts::Auto && !threads)
          ? DispatchParts{}
          : dispatch_parts(cats, jobs, eligible, capacity, std::max<uint64_t>(uint64_t{1} << 22, 8 * jobs.size()));
  bool apart = parts.count > 1;
  if (apart && options.parts == DispatchOptions::Parts::Auto) {  // one part with most of the jobs: one walk
    std::vector<uint64_t> jobs_of(parts.count, 0);
    uint64_t all = 0;
    for (size_t c = 0; c < cats.size(); ++c)
      if (parts.part_of[c] != kNone) {
        jobs_of[parts.part_of[c]] += cats.job_count[c];
        all += cats.job_count[c];
      }
    apart = *std::max_element(jobs_of.begin(), jobs_of.end()) * 8 < all * 7;
  }
  if (!apart || options.queues) {  // one walk: the sequential dispatch (blocking queues tie every part)
    DispatchOptions with = options;
    if (options.queues && options.queues->busy_consumable != kNone && !options.requested) {
      auto requested = std::make_shared<std::vector<kernels::TaskerSet>>(cats.size());
      tbb::parallel_for(size_t{0}, cats.size(), [&](size_t c) {
        (*requested)[c] =
            evaluate_category(catalog, taskers, jobs.requests[cats.request[c]], nullptr, ChargeVector{}, k).eligible;
      });
      with.requested = std::move(requested);
    }
    DispatchResult res = dispatch(taskers, jobs, cats, eligible, capacity, cursors, with);
    res.capacity = std::move(capacity);
    return res;
  }
  DispatchResult res = empty_result(jobs.size());
  std::vector<PendingReason> settled = start_batch(jobs, cats, eligible, capacity, cursors, res);
  const std::vector<uint32_t> order = dispatch_order(jobs);
  std::vector<size_t> start;
  std::vector<uint32_t> of;
  const std::vector<uint32_t> by_part = jobs_by_part(order, cats, parts, start, of);
  auto jobs_of_part = [&](size_t part, size_t from = 0) {
    return std::span<const uint32_t>(by_part).subspan(start[part] + from, start[part + 1] - start[part] - from);
  };
  std::vector<WalkOut> outs(parts.count + 1);
  // Jobs of categories in no part take nothing: pending, no eligible tasker (start_batch settled them).
  outs[parts.count].pending = pend_settled(jobs_of_part(parts.count), cats, settled, res);
  // The largest parts first (they bound the wall time); each range of parts is one Walk, with its lane.
  std::vector<uint32_t> largest(parts.count);
  std::iota(largest.begin(), largest.end(), uint32_t{0});
  std::stable_sort(largest.begin(), largest.end(),
                   [&](uint32_t a, uint32_t b) { return start[a + 1] - start[a] > start[b + 1] - start[b]; });
  std::vector<uint32_t> remaining = cats.job_count;  // per category: its jobs not walked yet
  const std::vector<size_t> live = live_categories(cats, settled, parts.part_of, parts.count);
  std::vector<size_t> walked(parts.count, 0);
  const std::shared_ptr<const Placer::Tables> tables = Placer::tables_for(cats, capacity);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, largest.size(), 1), [&](const tbb::blocked_range<size_t>& r) {
    Capacity::Ledger lane = capacity.lane();
    Walk walk(taskers, jobs, cats, eligible, capacity, cursors, &lane, tables, settled, remaining, res, options);
    for (size_t i = r.begin(); i < r.end(); ++i) {
      const uint32_t part = largest[i];
      walked[part] = walk.run(jobs_of_part(part),
                              std::span<const uint32_t>(of).subspan(start[part], start[part + 1] - start[part]),
                              live[part], outs[part]);
    }
  });
  for (size_t part = 0; part < parts.count; ++part)  // what the walks left: jobs of settled categories
    outs[part].pending += pend_settled(jobs_of_part(part, walked[part]), cats, settled, res);
  capacity.settle();
  merge_allocations(order, cats, parts, outs, res);
  for (const WalkOut& out : outs) add_counts(out, res);
  merge_removed(order, outs, res);
  res.capacity = std::move(capacity);
  return res;
}

}  // namespace colmatch
