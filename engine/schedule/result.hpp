// What a run of `colmatch simulate` returns (engine/schedule/simulation.hpp): each job's start, end,
// placement and reason, the cycles' costs and the timeline; and a job's duration and the scheduler's
// estimate of it (walltime), which every part of the scheduler reads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/model/jobs.hpp"
#include "engine/placement/placer.hpp"

namespace colmatch {

/// Why a job did not start in the last cycle that considered it.
enum class SimReason : uint8_t {
  None,              ///< started
  NotSubmitted,      ///< submitted after `until`
  Held,              ///< job hold
  Dependency,        ///< a job it depends on has not ended
  NoEligibleTasker,  ///< no tasker can ever run it
  TooLarge,          ///< its eligible taskers together never have room for it (even on an idle farm)
  Throttled,         ///< a credential limit (detail names it)
  Blocked,           ///< strict priority order: a higher-priority job waits first
  Reservation,       ///< would delay the EASY reservation of a higher-priority job
  NoFreeCapacity,    ///< eligible taskers exist, none has room now
  PriorityGap,       ///< FBSNG: its queue is held by a queue priority gap, or a section priority gap (detail)
  Rejected,          ///< bad input (JobTable::reject_reason)
  Removed,           ///< removed when a cycle considered it (detail says when and why: JobTable::Choice::gate)
};
const char* sim_reason_text(SimReason r) noexcept;

/// A text per job, most of them empty (SimResult::detail): 4 bytes a job once a first one is set (a
/// std::string each took 32), each distinct text kept once while some job has it (a text replaced in
/// every cycle does not pile up).
class JobTexts {
 public:
  /// n jobs, every text empty.
  void assign(size_t n) {
    *this = JobTexts();
    n_ = n;
  }
  size_t size() const noexcept { return n_; }
  /// Job j's text ("" when none).
  const std::string& operator[](size_t j) const noexcept {
    return id_.empty() || id_[j] == 0 ? none() : *texts_[id_[j]];
  }
  /// Job j's text becomes `text` ("" clears it).
  void set(size_t j, std::string_view text) {
    uint32_t id = 0;
    if (!text.empty()) {
      if (id_.empty()) id_.assign(n_, 0);
      if (const auto it = index_.find(text); it != index_.end()) {
        id = it->second;
        if (id_[j] == id) return;
        ++uses_[id];
      } else {
        if (free_.empty()) {
          free_.push_back(static_cast<uint32_t>(texts_.size()));
          texts_.emplace_back();
          uses_.push_back(0);
        }
        id = free_.back();
        free_.pop_back();
        texts_[id] = std::make_unique<std::string>(text);
        uses_[id] = 1;
        index_.emplace(*texts_[id], id);
      }
    } else if (id_.empty()) {
      return;
    }
    if (const uint32_t old = id_[j]; old != 0 && --uses_[old] == 0) {
      index_.erase(*texts_[old]);
      texts_[old].reset();
      free_.push_back(old);
    }
    id_[j] = id;
  }
  void clear(size_t j) { set(j, {}); }
  /// The distinct texts kept now (those some job has).
  size_t stored() const noexcept { return index_.size(); }

 private:
  static const std::string& none() noexcept {
    static const std::string empty;
    return empty;
  }
  size_t n_ = 0;
  std::vector<uint32_t> id_;                            // per job, once a text is set: 0 none, else texts_[id]
  std::vector<std::unique_ptr<std::string>> texts_{1};  // [0] unused; a text's address stays (index_ views it)
  std::vector<uint32_t> uses_{0};
  std::vector<uint32_t> free_;
  std::unordered_map<std::string_view, uint32_t> index_;
};

/// The schedule and what happened on the way.
struct SimResult {
  std::vector<double> start, end;  ///< per job; NaN if it never started
  std::vector<Allocation> allocations;
  std::vector<uint32_t> alloc_first, alloc_count;  ///< per job, into allocations
  std::vector<SimReason> reason;                   ///< per job: None if started, else the last reason
  JobTexts detail;                                 ///< per job: throttle detail ("user alice max_jobs 2")
  std::vector<uint8_t> backfilled;                 ///< per job: started ahead of a reservation (greedy: of a
                                                   ///< higher-priority job that waits)
  /// Per job: the start time (seconds) of the first reservation it got (backfill easy or conservative),
  /// or NaN. Under EASY the fast cycle makes a reservation only when a backfill candidate needs it, so,
  /// like was_throttled, this depends on which cycles ran.
  PerJob<double> reserved_at;
  /// Per job: ever held; ever held back by a credential limit when a cycle looked at it. A fast cycle
  /// looks at fewer waiting jobs than a full one (only those that could start), so was_throttled, unlike
  /// the schedule, depends on which cycles ran: a lower bound of the jobs a limit concerned.
  std::vector<uint8_t> was_held, was_throttled;
  uint64_t cycles = 0;
  /// Cycles that visited every waiting job (the full cycle: time-dependent priorities, or a
  /// cycle that may be the run's last); the others visited only what could change the schedule.
  uint64_t full_cycles = 0;
  /// Wall-clock seconds of each cycle, as floats (4 bytes a cycle: a 10M-job run has ~19M cycles; they
  /// were two doubles, 300 MB), for the cycle-time quantiles of summary.json.
  std::vector<float> cycle_seconds;
  /// Per simulated minute with cycles (its cycles consecutive): the simulated time of its first cycle,
  /// its cycles, their wall-clock seconds in all and the longest (cycles.csv), gathered as they run.
  struct CycleMinute {
    double time = 0;
    uint64_t cycles = 0;
    double seconds = 0, max_seconds = 0;
  };
  std::vector<CycleMinute> cycle_minutes;
  double last_cycle_time = 0;  ///< simulated time of the last cycle (0: none ran)
  /// Timeline: one row per cycle (the last cycle of each simulated minute when there are many).
  struct Row {
    double time;
    uint64_t running, queued;
  };
  std::vector<Row> timeline;
  /// Per timeline row, per consumable the timeline tracks (timeline_consumables()): what the running jobs
  /// hold, row r's at [r * timeline_width, (r + 1) * timeline_width): one array, not a vector a row (a
  /// cycle's row replaced within its minute allocates nothing).
  std::vector<double> timeline_used;
  size_t timeline_width = 0;
  /// Row r's used amounts (timeline_width of them).
  std::span<const double> used_at(size_t r) const noexcept {
    return {timeline_used.data() + r * timeline_width, timeline_width};
  }
  /// Per consumable (catalog.consumables() order): the amount x seconds the started jobs hold, each
  /// from its start to its end (for utilisation: over what the taskers offer).
  std::vector<double> held_seconds;
  uint64_t categories_evaluated = 0;
  /// Fast cycles: jobs taken back into the ready queue after a credential limit parked them (each is
  /// taken back lazily, when the scan in priority order reaches it while its credential has room).
  uint64_t unparked = 0;
};

/// The consumables a simulation's timeline tracks (SimResult::Row::used, timeline.csv's used_ and offered_
/// columns): the first 64 in catalog.consumables() order (a format's built-in ones, slots, cores and
/// memory, come first), so a farm of 20,000 Accelerator maps writes 64 columns a simulated minute, not
/// 40,000 (issue 28: a day took 116 MB of timeline and a row per cycle copied every consumable).
/// utilisation_per_consumable in metrics.json still covers every consumable.
inline constexpr size_t kTimelineConsumables = 64;
inline size_t timeline_consumables(size_t consumables) noexcept { return std::min(consumables, kTimelineConsumables); }

/// The time job j occupies its taskers: min(runtime, walltime), NaN or negative counted as 0.
double sim_duration(const JobTable& jobs, uint32_t j) noexcept;
/// The time the scheduler expects job j to take (walltime, else its duration).
double sim_estimate(const JobTable& jobs, uint32_t j) noexcept;

}  // namespace colmatch
