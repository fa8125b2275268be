// Capacity: the free amount of every consumable pool on every level, and the only code that changes
// it. Grid Engine (seed 002, section 3): a consumable defined on several levels (global, host, queue)
// is a pool on each, and a job takes its charge from every pool above its tasker; it fits only where
// all of them have room. Moab (seed 001): R.Available = R.Configured - MAX(R.Dedicated, R.Utilized);
// here the free amount is Configured minus what placed jobs took (Dedicated), and release() gives a
// job's charge back when it ends.
//
// Units are the consumable's base units (bytes, seconds, slots). Consumables are indexed k in
// catalog.consumables() order; taskers t in rank order (TaskerTable); hosts h as TaskerTable::host_names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "engine/model/charges.hpp"
#include "engine/model/jobs.hpp"
#include "engine/model/taskers.hpp"

namespace colmatch {

/// A charge of `amount` > 0 on consumable k. `queue_only` is set when the consumable has no host or
/// global pool anywhere, so a fit is one comparison on the tasker's own pool.
struct Charge {
  uint32_t k = 0;
  double amount = 0;
  bool queue_only = true;
};

/// What holds capacity before a match starts: the charges of jobs the farm is running now (Grid Engine's
/// qstat lists them with their queue instances). Per consumable (catalog.consumables() order), per
/// tasker row (TaskerTable rank order): the amount taken from every pool above that tasker (queue, host,
/// global; Capacity::take). Empty, or an empty vector for a consumable: nothing in use.
struct InUse {
  std::vector<std::vector<double>> amount;
  bool empty() const noexcept { return amount.empty(); }
};

class Capacity {
 public:
  /// What one writer of a Capacity keeps to itself: its tentative charges (begin/rollback/commit) and
  /// its running queue totals. A Capacity has its own; the parallel batch dispatch gives each of its
  /// walks a lane (lane()), each writing only pools no other walk reads or writes (dispatch_parts.hpp).
  /// A lane leaves the block maxima as they were (upper bounds: block_full() is then false more often,
  /// never wrong) and counts queue totals from the pools' values when it began; settle() makes both
  /// exact again once the lanes are done.
  class Ledger {
   public:
    Ledger() = default;

   private:
    friend class Capacity;
    bool lane = false;  // shares the Capacity with other writers
    bool recording = false;
    std::vector<std::pair<double*, double>> undo;
    std::vector<std::pair<size_t, size_t>> touched;  // (consumable, tasker) changed while recording
    std::vector<double> total, saved_total;          // per consumable: sum of queue_; at begin()
  };

  Capacity() = default;
  /// Every pool full: the configured values of each consumable on each level. `taskers` must outlive
  /// the Capacity (it tells which levels define a pool for which tasker).
  static Capacity configured(const Catalog& catalog, const TaskerTable& taskers);

  size_t consumables() const noexcept { return queue_.size(); }
  /// Free amounts of consumable k per tasker (queue-level pools; 0 where the tasker has none); empty for
  /// a consumable that no tasker has a queue-level pool of and that has a host or global one.
  const std::vector<double>& queue_free(size_t k) const noexcept { return queue_[k]; }
  /// Free amounts of consumable k per host (0 where the host has no pool).
  const std::vector<double>& host_free(size_t k) const noexcept { return host_[k]; }
  /// Free amount of consumable k's global pool; NaN when there is none.
  double global_free(size_t k) const noexcept { return global_[k]; }
  /// For farm-wide pools (consumable, amount; at most 64 of them, a JobTable::Choice's gate): bit i set when
  /// consumable pools[i].consumable's global pool has pools[i].amount free now. O(pools).
  uint64_t room_mask(std::span<const JobAmounts::Entry> pools) const noexcept {
    uint64_t mask = 0;
    for (size_t i = 0; i < pools.size(); ++i)
      if (global_[pools[i].consumable] >= pools[i].amount) mask |= uint64_t{1} << i;
    return mask;
  }
  /// Configured amount of consumable k's global pool; NaN when there is none.
  double global_configured(size_t k) const noexcept {
    return columns_[k]->global().present ? columns_[k]->global().num : std::numeric_limits<double>::quiet_NaN();
  }
  /// The sum of queue_free(k) over all taskers, kept as charges come and go (floating-point: use it as
  /// a bound with slack, see queue_total_slack). O(1).
  double queue_total(size_t k) const noexcept { return own_.total[k]; }
  /// The same as one writer sees it (its lane's own count, see Ledger).
  double queue_total(size_t k, const Ledger& ledger) const noexcept { return ledger.total[k]; }
  /// A margin that covers the rounding of queue_total(k): 1e-9 of the configured total, at least 1e-9.
  double queue_total_slack(size_t k) const noexcept { return slack_[k]; }

  /// Consumable k has a host or global pool somewhere (a charge may then limit other taskers).
  bool shared(size_t k) const noexcept { return columns_[k]->multi_level(); }
  /// The charges of a category: one per consumable with need[k] > 0 (need in consumables() order). O(nonzero).
  std::vector<Charge> charges(const ChargeVector& need) const;
  /// Free amount of consumable k for tasker t: the smallest of the pools that define it for t, or NaN
  /// when none does.
  double available(size_t k, uint32_t t) const noexcept;
  /// Every pool above tasker t has room for every charge (each pool >= the amount). Inline: dispatch
  /// calls it once per candidate tasker.
  bool fits(std::span<const Charge> charges, uint32_t t) const noexcept {
    if (!down_.empty() && down_[t]) return false;
    for (const Charge& x : charges) {
      if (x.queue_only) {
        if (!(queue_[x.k][t] >= x.amount)) return false;
        continue;
      }
      const Column& col = *columns_[x.k];
      if (col.has(t) && !(queue_[x.k][t] >= x.amount)) return false;
      const uint32_t h = taskers_->host_of[t];
      if (h != kNone && col.by_host().has(h) && !(host_[x.k][h] >= x.amount)) return false;
      if (col.global().present && !(global_[x.k] >= x.amount)) return false;
    }
    return true;
  }
  /// True when a global pool lacks room for its charge: then fits() is false for every tasker (the
  /// global level is one pool above them all). O(charges).
  bool global_full(std::span<const Charge> charges) const noexcept {
    for (const Charge& x : charges)
      if (!x.queue_only && columns_[x.k]->global().present && !(global_[x.k] >= x.amount)) return true;
    return false;
  }
  /// True when no tasker of block b (taskers [64b, 64b + 64)) can take one of the queue-only charges:
  /// the largest free amount there is too small. Exact (the maximum is one of the values).
  bool block_full(std::span<const Charge> charges, size_t b) const noexcept {
    for (const Charge& x : charges)
      if (x.queue_only && !(block_max_[x.k][b] >= x.amount)) return true;
    return false;
  }

  /// The taskers whose own pool of consumable k may have something free, 64 a word (bit t of word t / 64):
  /// set unless queue_free(k)[t] <= 0. Exact after settle(); a lane's takes leave bits set (a superset,
  /// like block_full()'s maxima). For a consumable with a tasker-level pool (queue_free(k) not empty).
  /// A $fill_up walk ANDs it with the eligible taskers to skip full ones 64 at a time.
  const uint64_t* room_words(size_t k) const noexcept { return room_[k].data(); }

  /// Takes `amount` of consumable k from every pool above tasker t.
  void take(size_t k, uint32_t t, double amount);
  /// Takes every amount of `in_use` (a pool may go below 0 when the farm is overcommitted: nothing then
  /// fits there until enough is released). Throws std::invalid_argument when its shape is not
  /// consumables() x taskers.
  void take(const InUse& in_use);
  void take(std::span<const Charge> charges, uint32_t t);
  /// The same for a writer with its own ledger (lane() or ledger()).
  void take(Ledger& ledger, size_t k, uint32_t t, double amount) { add(ledger, k, t, -amount); }
  void take(Ledger& ledger, std::span<const Charge> charges, uint32_t t) {
    for (const Charge& x : charges) add(ledger, x.k, t, -x.amount);
  }
  /// Gives `amount` of consumable k back to every pool above tasker t (a job ended), and starts a new
  /// epoch: capacity may have grown, so cursors positioned before must start again. A debt left by
  /// set_configured() is paid first.
  void release(size_t k, uint32_t t, double amount);
  void release(std::span<const Charge> charges, uint32_t t);

  /// Tasker t is down (a machine REMOVEd from the farm): nothing fits on it, whatever its pools hold;
  /// jobs placed before keep their charges until released. Bringing it up starts a new epoch.
  void set_down(uint32_t t, bool down);
  bool down(uint32_t t) const noexcept { return !down_.empty() && down_[t] != 0; }
  /// The configured amount of consumable k on tasker t's own pool becomes `amount` (a machine UPDATE;
  /// it was the column's value until a first call). Moab (seed 001): R.Available = R.Configured -
  /// R.Dedicated, and never below 0: when the running jobs hold more than the new amount, the excess
  /// is a debt that their releases pay before the pool grows again. Returns true when the amount
  /// grew (a new epoch starts). Only for a consumable with no host or global pool (throws
  /// std::invalid_argument otherwise). Not while recording (begin()).
  bool set_configured(size_t k, uint32_t t, double amount);
  /// The configured amount of consumable k on tasker t's own pool (the column's value until a
  /// set_configured()); 0 where the tasker has none.
  double configured_amount(size_t k, uint32_t t) const noexcept {
    return !configured_.empty() && !configured_[k].empty() ? configured_[k][t] : columns_[k]->queue().num(t);
  }
  /// Sets the free amount of consumable k on tasker t's own pool to exactly `amount` (>= 0), for a
  /// caller that computes it from an occupancy of its own (Moab's utilized availability, see
  /// ResourceAvailability). Starts a new epoch and returns true when the amount grew. Only for a
  /// consumable with no host or global pool (throws std::invalid_argument otherwise); not while
  /// recording (begin()).
  bool set_queue_free(size_t k, uint32_t t, double amount);

  /// Counts release() calls. Within one epoch capacity only shrinks, so a tasker that cannot fit a
  /// charge now never will until the epoch changes: the rule that lets dispatch cursors move forward.
  uint64_t epoch() const noexcept { return epoch_; }

  /// Tentative charges ($fill_up places a job's slots one tasker at a time and may have to undo them):
  /// begin() starts recording, rollback() restores every pool changed since to its exact former value,
  /// commit() keeps the changes. Not nested.
  void begin() { begin(own_); }
  void rollback() { rollback(own_); }
  void commit() { commit(own_); }
  void begin(Ledger& ledger);
  void rollback(Ledger& ledger);
  void commit(Ledger& ledger);

  /// The Capacity's own ledger (what the calls without one use).
  Ledger& ledger() noexcept { return own_; }
  /// A ledger for one of several writers at once (see Ledger); its queue totals start from this
  /// Capacity's. Not while recording.
  Ledger lane() const;
  /// After lanes: the block maxima and the queue totals computed again from the pools (the totals as
  /// configured() sums them, so the same pools give the same totals whatever the lanes did). O(pools).
  void settle();

 private:
  void refresh_block(size_t k, size_t b);
  void refresh_room(size_t k, size_t t) noexcept {
    const uint64_t bit = uint64_t{1} << (t & 63);
    if (queue_[k][t] <= 0) room_[k][t >> 6] &= ~bit;
    else room_[k][t >> 6] |= bit;
  }
  void add(size_t k, uint32_t t, double delta) { add(own_, k, t, delta); }
  void add(Ledger& ledger, size_t k, uint32_t t, double delta);
  double repay(size_t k, uint32_t t, double amount);  // pays tasker t's debt on k first; returns the rest

  const TaskerTable* taskers_ = nullptr;
  std::vector<const Column*> columns_;             // per consumable
  std::vector<std::vector<double>> queue_, host_;  // queue_[k] empty: no tasker-level pool (a farm-wide one)
  std::vector<double> global_;
  std::vector<std::vector<double>> block_max_;  // per consumable with queue_[k], per block of 64 taskers
  std::vector<std::vector<uint64_t>> room_;     // per consumable with queue_[k]: see room_words()
  std::vector<double> slack_;                   // per consumable: the margin of the sum of queue_ (own_.total)
  uint64_t epoch_ = 0;
  std::vector<uint8_t> down_;              // per tasker once one went down; empty while every tasker is up
  std::vector<std::vector<double>> debt_;  // per consumable, per tasker (sized on the first debt): see set_configured
  std::vector<std::vector<double>> configured_;  // per consumable, per tasker (sized on the first set_configured)
  Ledger own_;
};

}  // namespace colmatch
