// Blocking queues: Slurm's main scheduling pass (src/slurmctld/job_scheduler.c, _schedule, 22.05).
//
// Slurm walks its pending jobs by partition PriorityTier, then priority, then job id. A job that finds
// no room (select_nodes: ESLURM_NODES_BUSY) fails its partition: every later job of that partition pends
// with Reason `Priority`, and the partition's nodes leave the pass's available nodes for every later job
// of any partition (so that no lower-priority job takes what the blocked one waits for). A job whose
// partition has no available node left pends with Reason `Resources`, "Nodes required for job are DOWN,
// DRAINED or reserved for jobs in higher priority partitions", and fails its partition too. A job whose
// partition has nodes left but none of them eligible for it (every eligible node held) pends with
// Reason `ReqNodeNotAvail` and blocks nothing, unless one of its unheld nodes by partition and features
// is busy, not to be shared (an --exclusive job runs there): then it is `Resources` and blocks
// (node_scheduler.c _pick_best_nodes: ESLURM_NODE_NOT_AVAIL for `!runable_avail && !nodes_busy`); nor does
// a job that can never run (BadConstraints: no eligible tasker) block. The batch dispatch does the same
// over queues (a farm's partitions), holding a blocked queue's taskers as down in its Capacity until
// the pass ends.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/model/capacity.hpp"
#include "kernels/tasker_set.hpp"

namespace colmatch {

/// The queues whose jobs block each other (Slurm's partitions): per queue its name and taskers, per job
/// its queue. A job of no queue (kNone; colmatch gives a Slurm job of several partitions none) never
/// blocks and is never blocked.
struct BlockingQueues {
  std::vector<std::string> names;           ///< per queue
  std::vector<kernels::TaskerSet> taskers;  ///< per queue: its taskers (tasker indices, rank order)
  std::vector<uint32_t> queue_of_job;       ///< per job: its queue, or kNone
  /// A consumable (index in catalog.consumables()) a tasker with none of free is busy, not to be shared
  /// (Slurm: the consumable `jobs` an --exclusive job takes whole); kNone: no tasker is ever busy.
  uint32_t busy_consumable = kNone;
  /// Per job (empty: no job): 1 for a job that names its taskers (Slurm: -w covering its node count):
  /// whatever keeps it from running, it holds its eligible taskers for the rest of the pass and blocks
  /// no queue (job_scheduler.c: "Do not schedule more jobs on nodes required by this job, but don't block
  /// the entire queue/partition").
  std::vector<uint8_t> holds_own;
  /// Jobs of several queues (Slurm: a job of several partitions, one queue record each, tried in the
  /// order written, each failure failing that partition): job j's queues are
  /// several[several_first[j] .. several_first[j + 1]) and its queue_of_job is kNone. several_first is
  /// empty when no job has several, else one entry per job and one more.
  std::vector<uint32_t> several_first, several;
  std::span<const uint32_t> queues_of(uint32_t j) const noexcept {
    if (several_first.empty()) return {};
    return std::span<const uint32_t>(several).subspan(several_first[j], several_first[j + 1] - several_first[j]);
  }
  /// Beside `several` (empty when every record of a job comes at its place): the priority of each queue
  /// record, not above the job's, in the order of its queues (descending). Slurm: a job of partitions of
  /// different PriorityTier has a record at each tier's place in the queue (sort_job_queue2: tier, then
  /// priority, submit time, id); the dispatch tries a job's queues of its own priority at its place and each
  /// lower one where a job of that priority, submit time and input index would come.
  std::vector<double> several_priority;
  std::span<const double> priorities_of(uint32_t j) const noexcept {
    if (several_priority.empty()) return {};
    return std::span<const double>(several_priority).subspan(several_first[j], several_first[j + 1] - several_first[j]);
  }
};

/// What blocking queues say of a job before it is tried.
enum class QueueBlock : uint8_t {
  Open,    ///< try it
  Behind,  ///< its queue is blocked by an earlier job (Slurm: Priority)
  Held,    ///< every tasker of its queue is held (Slurm: Resources, "Nodes required ... partitions")
};

/// The state of the blocking queues during one pass, on the pass's Capacity. O(taskers of a queue) over
/// the whole pass per queue (a cursor per queue only moves forward), O(1) per job otherwise.
class QueueBlocks {
 public:
  /// `queues` must cover every job of the pass (queue_of_job sized to the jobs) and outlive this.
  QueueBlocks(const BlockingQueues& queues, Capacity& capacity);
  /// Whether job j, which needs `need` taskers (a OnePerTasker job of K slots: K; any other: 1), may be
  /// tried now: Held when fewer than `need` taskers of its queue are up (Slurm's _schedule: a partition
  /// with fewer available nodes than the job's min_nodes, "Nodes required for job are DOWN, DRAINED or
  /// reserved for jobs in higher priority partitions"). Held also blocks j's queue. O(1) (amortized over
  /// the pass); the first job needing more than one counts every queue's taskers up once, and each held
  /// tasker then costs O(queues).
  QueueBlock before(uint32_t j, uint32_t need = 1);
  /// The queues these blocks are of.
  const BlockingQueues& queues() const noexcept { return queues_; }
  /// What queue q says of a job that needs `need` taskers (before(), for one queue of a job of several).
  QueueBlock state_of(uint32_t q, uint32_t need);
  /// Blocks queue q and holds its taskers (a job of several queues found no room in it).
  void fail_queue(uint32_t q) {
    if (!blocked_[q]) block(q);
  }
  /// Job j found no room though some tasker is eligible and not held: its queue blocks and its taskers
  /// are held (down in the Capacity) for the rest of the pass. Nothing for a job of no queue or a
  /// blocked one.
  void failed(uint32_t j);
  /// Whether job j holds its own taskers when it cannot run (BlockingQueues::holds_own).
  bool holds_own(uint32_t j) const noexcept { return j < queues_.holds_own.size() && queues_.holds_own[j] != 0; }
  /// Holds every tasker of `set` (down in the Capacity) for the rest of the pass, blocking no queue.
  /// O(members of set).
  void hold(const kernels::TaskerSet& set);
  /// Whether fewer than `need` taskers of `eligible` (category c's) are up (held, or down in the farm): a
  /// job that needs `need` taskers (a OnePerTasker job of K slots: K; any other: 1) and finds no room then
  /// pends without blocking its queue (Slurm: ReqNodeNotAvail, select_nodes' ESLURM_NODE_NOT_AVAIL when
  /// the job could not run on the available nodes even if they were idle, `!runable_avail`, which does not
  /// fail the partition). Held taskers only grow in a pass: for need 1 a cursor per category only moves
  /// forward, O(eligible taskers) per category over the pass; for more, a count of those up, kept per
  /// category until a tasker is held again.
  bool all_held(size_t c, const kernels::TaskerSet& eligible, uint32_t need = 1);
  /// The same for a job that must take all its `need` taskers from one of `choices` (Slurm: one choice of
  /// a matching OR, each tried in turn): whether no choice has `need` taskers up. Kept per category (one
  /// category asks one way) until a tasker is held again; O(taskers of the choices) when counted.
  bool all_held(size_t c, std::span<const kernels::TaskerSet> choices, uint32_t need);
  /// Whether some tasker of `requested` (a category's taskers by its request alone, before capacity) is up
  /// and busy (BlockingQueues::busy_consumable: a pool of it there, with nothing free): then a job of it
  /// whose eligible taskers are all held is Slurm's `Resources`, not `ReqNodeNotAvail`. False without a
  /// busy consumable. O(taskers / 64) over a dense `requested`'s words, O(its members) when sparse; the
  /// first call scans every tasker once (the busy ones before the pass).
  bool any_busy(const kernels::TaskerSet& requested);
  /// A job was placed on tasker t: it may have become busy (busy only grows in a pass: capacity only
  /// shrinks). O(1); when the busy consumable has host or farm-wide pools (others may have become busy
  /// too), the next any_busy scans every tasker again.
  void placed_on(uint32_t t);
  /// Gives the held taskers back (up again in the Capacity): the end of the pass; the blocks are then as
  /// new (no queue blocked).
  void release();

 private:
  void block(uint32_t q);
  // Holds tasker x (down in the Capacity) unless it is down already. O(queues) once counts are kept.
  void hold_one(uint32_t x);
  // Whether some tasker of `set` from `cursor` on is up; moves `cursor` to the first that is (down
  // taskers only grow in a pass, so no tasker before it is up).
  bool any_up(const kernels::TaskerSet& set, size_t& cursor) const;
  const BlockingQueues& queues_;
  Capacity& capacity_;
  std::vector<uint8_t> blocked_;      // per queue
  std::vector<size_t> first_up_;      // per queue: no tasker of it before this one is up
  std::vector<uint32_t> held_;        // taskers this pass set down
  std::vector<size_t> first_unheld_;  // per category: no eligible tasker before it is up
  struct UpCount {
    size_t held = SIZE_MAX;  // held_.size() when counted (SIZE_MAX: never)
    bool short_of = false;   // fewer up than the need then
  };
  std::vector<UpCount> up_count_;  // per category, for a need above 1
  // per queue: its taskers up (empty until a job needs more than one; then kept by hold_one)
  std::vector<size_t> queue_up_;
  // Whether tasker t is busy now (a pool of the busy consumable there, with nothing free).
  bool busy(uint32_t t) const noexcept;
  std::vector<uint64_t> busy_;  // a bit per busy tasker: every tasker scanned once, then placed_on()
};

}  // namespace colmatch
