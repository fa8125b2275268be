// Slurm's --constraint language (sbatch(1), Slurm 22.05, checked against slurmctld: bench/peers) turned
// into a colmatch request over a node's set of features.
//
//   a          the node has feature a (names are case-sensitive)
//   a&b  a,b   and;   a|b  or;  evaluated strictly left to right: a|b&c is (a|b)&c; a trailing & or | at
//              the end is ignored (`a&` is a)
//   (a|b)&c    parentheses, one level
//   [a|b]      matching OR: every node of the job has the same one of the choices, tried in the order
//              written (for one node: or, nodes of an earlier choice first); one set of brackets. A choice
//              may be a group in parentheses: `[(a&b)|(c&d)|e]`; brackets may stand in parentheses: `([a|b])`
//   a*N        node counts (job_scheduler.c build_feature_list, node_scheduler.c _get_req_features): N of the
//              job's nodes have a, picked first (the job has at least N nodes); with counts the expression
//              filters no node, so every feature without a count is ignored (`ib&ssd*2` may run on eth
//              nodes: seen in slurmctld 22.05.8). `[a*1&b*2]`: one node with a and two others with b, each
//              count in brackets picked apart from the nodes picked before it
// Refused as Slurm refuses them ("Invalid feature specification"): `!`, a feature no node has, a leading
// or doubled operator (`|a`, `a||b`), an operator before a closing bracket (`[a|]`), empty parentheses or
// brackets, parentheses in parentheses, two sets of brackets, `&` in brackets without a count on every name (`[a&b]`),
// `|` in brackets with a count (`[a*2|b]`), a count in parentheses, a count not above 0. Refused by colmatch
// with its own reason until placed: counts beside a matching OR, and several counts not in one bracket
// (`a*1&b*1`, which Slurm picks with the first count's nodes required in the second).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace colmatch::loaders::slurm {

/// A constraint as a colmatch request, or why not.
struct Constraint {
  std::string request;  ///< request text over `attr` (`feature=="a" && ...`); empty when refused or counted
  std::string refusal;  ///< Slurm's message (or colmatch's, for what it does not place); empty when accepted
  /// Soft terms (`t1 && t2 ...`) that order the nodes as Slurm tries a matching OR's choices, in the
  /// order written (checked with salloc: `[intel|amd]&gpu` takes an intel node when one fits): for
  /// `[a|b|c]` the terms `a` and `(a || b)`. Empty when the constraint has no matching OR.
  std::string preference;
  /// A node count `feature*count`: `term` is the request text of a node with the feature; `apart`: picked
  /// apart from the nodes earlier counts picked (Slurm's XAND, in brackets).
  struct Count {
    std::string term;
    uint32_t count = 0;
    bool apart = false;
  };
  /// The node counts in the order written; when there are any, `request` is empty (nothing filtered).
  std::vector<Count> counts;
};

/// Translates `text` over the set-valued attribute `attr`; `known` holds every feature of the cluster.
/// At most 4096 bytes (longer: refused); a count above 1,000,000 is refused. Never throws.
Constraint translate_constraint(std::string_view text, const std::set<std::string>& known,
                                std::string_view attr = "feature");

}  // namespace colmatch::loaders::slurm
