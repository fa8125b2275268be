// Slurm's --constraint language (sbatch(1), Slurm 22.05, checked against slurmctld: bench/peers) turned
// into a colmatch request over a node's set of features.
//
//   a          the node has feature a (names are case-sensitive)
//   a&b  a,b   and;   a|b  or;  evaluated strictly left to right: a|b&c is (a|b)&c; a trailing & or | is
//              ignored (`a&` is a)
//   (a|b)&c    parentheses, one level, without brackets inside
//   [a|b]      matching OR: every node of the job has the same one of the choices, tried in the order
//              written (for one node: or, nodes of an earlier choice first); [a&b] is and; no
//              parentheses inside, one level
// Refused as Slurm refuses them ("Invalid feature specification"): `!`, a feature no node has, a leading
// or doubled operator (`|a`, `a||b`), empty or nested parentheses or brackets. Node counts (`a*2`,
// `[a*1&b*2]`) need multi-node jobs and are refused by colmatch with its own reason until those exist.
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace colmatch::loaders::slurm {

/// A constraint as a colmatch request, or why not.
struct Constraint {
  std::string request;  ///< request text over `attr` (`feature=="a" && ...`); empty when refused
  std::string refusal;  ///< Slurm's message (or colmatch's, for node counts); empty when accepted
  /// Soft terms (`t1 && t2 ...`) that order the nodes as Slurm tries a matching OR's choices, in the
  /// order written (checked with salloc: `[intel|amd]&gpu` takes an intel node when one fits): for
  /// `[a|b|c]` the terms `a` and `(a || b)`. Empty when the constraint has no matching OR.
  std::string preference;
};

/// Translates `text` over the set-valued attribute `attr`; `known` holds every feature of the cluster.
/// At most 4096 bytes (longer: refused). Never throws.
Constraint translate_constraint(std::string_view text, const std::set<std::string>& known,
                                std::string_view attr = "feature");

}  // namespace colmatch::loaders::slurm
