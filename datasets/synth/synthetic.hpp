// Seeded synthetic farms: a Grid-Engine-like catalog (string, cstring, restring, host, int, double,
// boolean, memory, time; consumables slots, mem, licences), taskers with some attributes missing, and
// jobs drawn from request templates with Zipf-skewed popularity (a few large job categories and a
// long tail), mixing relops, value lists, OR and NOT. Same spec and seed, same farm, on any machine.
#pragma once

#include <cstdint>

#include "loaders/dataset.hpp"

namespace colmatch::synth {

struct SynthSpec {
  size_t taskers = 10000;
  size_t jobs = 20000;
  size_t categories = 1000;  ///< request templates; the categories found may be fewer (duplicates)
  uint64_t seed = 42;
  double zipf_s = 1.1;     ///< skew of template popularity (0 = uniform)
  double missing = 0.05;   ///< chance a tasker lacks a non-consumable attribute
  int max_depth = 2;       ///< nesting depth of OR / NOT groups in requests
  bool with_slots = true;  ///< jobs of 1-8 slots, taskers with a slots consumable
  /// Grid Engine levels: taskers grouped 4 to a host; each attribute placed on the queue, host or global
  /// level, or (ordering relops) on several with more restrictive values below; host load values;
  /// host slot pools and a global licence pool.
  bool levels = false;
  double soft = 0.0;     ///< chance a request template carries 1-3 soft requests
  double fill_up = 0.0;  ///< chance a request template uses the $fill_up allocation rule
  /// chance a $fill_up template is OnePerTasker instead (Grid Engine's allocation_rule 1, Slurm's -N);
  /// 0 draws nothing: the farm is the same as without it
  double one_per_tasker = 0.0;
  /// Son of Grid Engine 8.1.9 requests (GridEngineReading::SoGE819): half the string-like values are
  /// wildcard expressions (`! & |`, parentheses, `* ? [..] [^..]`), and a FORCED attribute `frc` that
  /// a quarter of the taskers define and some templates request; the licence consumable `lic` gets a
  /// default of 1 (charged only where defined), is missing on some taskers and is sometimes requested
  /// as 0. Off: the farm is the same as before.
  bool sge_819 = false;
};

/// Generates the farm. Request texts go through the parser, so they exercise it too.
loaders::Dataset generate(const SynthSpec& spec);

}  // namespace colmatch::synth
