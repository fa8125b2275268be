// Grid Engine's load correction within one scheduling run (sched_conf(5): job_load_adjustments,
// load_adjustment_decay_time, queue_sort_method, load_formula): every slot a job takes on a host raises
// that host's corrected load values, so the hosts' order by the load formula changes from job to job
// (Son of Grid Engine 8.1.9: debit.c debit_job_from_hosts, sge_complex_schedd.c fillComplexFromHost,
// sort_hosts.c scaled_mixed_load, sge_select_queue.c sequential_update_host_order). The loader fills it
// from a dump (loaders/sge.cpp); the Placer orders a Grid Engine farm's taskers by it (placer.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/catalog.hpp"

namespace colmatch {

/// A farm's load formula over its hosts' values, each value moved by the load correction, and the queue
/// sort built on it. Hosts are TaskerTable::host_of's indices.
struct LoadCorrection {
  /// One number of the formula: a constant, or the host's value `value` (an index into the per-host
  /// arrays below).
  struct Operand {
    double constant = 0;
    uint32_t value = UINT32_MAX;  ///< UINT32_MAX: the constant
  };
  /// One term between + and -: `a`, or `a op b` with op one of * / & | ^ (0: none). `minus`: subtracted
  /// (the first term: negated by a leading -).
  struct Term {
    bool minus = false;
    Operand a;
    char op = 0;
    Operand b;
  };
  std::vector<Term> terms;
  /// The formula's distinct value names: each host has a value of each.
  std::vector<std::string> names;
  /// Per host h and value v, at [h * names.size() + v]: the value as dumped (NaN: the host lacks it, which
  /// makes its load 9999, ERROR_LOAD_VAL) and what one slot of load correction adds to it (the
  /// job_load_adjustments amount, divided by the host's num_proc for an np_* value, negative for a
  /// value whose complex relop is not >= or >; 0 for a value no adjustment names or that is not a load
  /// value). Units: the value's own (a memory in bytes).
  std::vector<double> base, per_slot;
  /// queue_sort_method load: taskers by (host load, seq_no); seqno: by (seq_no, host load).
  bool load_first = true;
  /// Per host: the slots of correction it starts the run with, from the jobs running on it (Son of Grid
  /// Engine 8.1.9's load_correction.c correct_load: each running job's slots times 1 - running time /
  /// load_adjustment_decay_time, none past it, summed in hundredths truncated as EH_load_correction_factor
  /// is). Empty: none.
  std::vector<double> initial;
  /// Per tasker (TaskerTable rank order): its queue instance's seq_no.
  std::vector<double> seq_no;
  /// A queue instance's load threshold on a value the correction moves (queue_conf(5) load_thresholds;
  /// Son of Grid Engine 8.1.9's sge_select_queue.c sge_load_alarm, sge_split_queue_load): once
  /// `corrected value relop limit` holds (relop the complex's: np_load_avg >= 1.75), the instance is in
  /// alarm and takes no job for the rest of the run. `value`: an index into `names`.
  struct Threshold {
    uint32_t value;
    Relop relop;
    double limit;
  };
  /// Tasker r's thresholds: thresholds[threshold_first[r], threshold_first[r + 1]). Empty: none.
  std::vector<uint32_t> threshold_first;
  std::vector<Threshold> thresholds;

  /// Host h's load by the formula with `slots` slots of load correction (scaled_mixed_load): 9999 when a
  /// value it reads is missing. O(terms).
  double host_load(uint32_t h, double slots) const noexcept;
  /// Whether tasker r, on host h with `slots` slots of load correction, is in load alarm. O(its thresholds).
  bool alarm(uint32_t r, uint32_t h, double slots) const noexcept;
};

}  // namespace colmatch
