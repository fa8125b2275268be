// Grid Engine's ticket policies (sge_priority(5), sched_conf(5), share_tree(5); Son of Grid Engine 8.1.9,
// libs/sched/sgeee.c sge_calc_tickets): the tickets behind the ntckts term of a job's priority.
//
// Functional: weight_tickets_functional tickets split among the user, project and department objects
// (fshare of qconf -suser/-sprj/-su) and the jobs' own shares (qsub -js), each kind weighted by
// weight_user / weight_project / weight_department / weight_job. Running jobs share them first; the
// pending jobs are then ranked one by one: the job that would get the most functional tickets if it ran
// next is taken as running and the next one is found again, so a user's second pending job gets fewer
// tickets than its first (share_functional_shares: an object's shares are split among its jobs; without
// it each job counts the object's shares whole). Jobs of equal shares form one category, whose jobs go
// in their order (tickets of the policies above, then submission, then number); only
// max_functional_jobs_to_schedule jobs are ranked so, the others of a category get its last value.
// Override: the objects' oticket plus the job's own (qalter -ot), split among an object's jobs in the
// same one-by-one way with share_override_tickets, whole without.
// policy_hierarchy (e.g. OFS): a policy named there orders each category's jobs by the tickets of the
// policies before it and adds them to its comparisons. A job's tickets are the sum of its override,
// functional and share-tree tickets; ntckts normalises them over every running and pending job's.
// Share tree (share_tree(5), qconf -sstree; Son of Grid Engine 8.1.9, whose pending share tree tickets
// differ from the older sgeee.c's): a job counts under the node of its project and user
// (search_userprj_node: a project's subtree only for its jobs, else the user's node, else a copy of the
// nearest `default` node made for the user); each active node's target is its shares over its active
// siblings' (divided by its usage, at least SGE_MIN_USAGE 1 x its long-term target, and corrected by
// compensation_factor). A running job gets its node's overall target, counting running jobs only, x
// weight_tickets_share (split by -js, else evenly). The pending ones: level by level up from the
// leaves, a node's jobs go running first, then by their value from the level below (-js at a leaf; with a
// dependent hierarchy the tickets before + 0.01 x -js), and each gets the node's target among its siblings
// over 1 + the least PE slot counts of the jobs ahead of it; a job's tickets are its value at the level
// of the root's children (the root, while it has one child with jobs and none of its own, handed down to
// that child: sge_sort_job_nodes). The usage of every node is
// the user's, project's or user-in-project's combined usage (sge_calc_node_usage; a project's usage its
// users below do not account for goes to its first `default`), as `sge_share_mon` prints it.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace colmatch {

/// sched_conf(5)'s ticket settings; the defaults are the manual's.
struct SgeTicketConfig {
  double weight_tickets_functional = 0;
  double weight_tickets_share = 0;
  double compensation_factor = 5;  ///< caps a node's short-term target at this x its long-term one
  double weight_user = 0.25, weight_project = 0.25, weight_department = 0.25, weight_job = 0.25;
  bool share_functional_shares = true;
  bool share_override_tickets = true;
  /// Letters O, F, S in order, or "NONE"; throws std::invalid_argument in sge_tickets for another.
  std::string policy_hierarchy = "OFS";
  uint32_t max_functional_jobs_to_schedule = 200;
  /// An array's pending tasks given tickets (loaders count the rest out: SgeTicketJob::counted).
  uint32_t max_pending_tasks_per_job = 50;
};

/// A user, project or department (sge_user(5), sge_project(5), access_list(5) of type DEPT).
struct SgeShareHolder {
  double fshare = 0;   ///< functional shares
  double oticket = 0;  ///< override tickets
  std::string name;    ///< the share tree's names for users and projects
  double usage = 0;    ///< the share tree's combined usage of a user (all projects) or a project
};

/// One node of the share tree (share_tree(5): `qconf -sstree`'s records, by id).
struct SgeShareTreeNode {
  std::string name;                ///< a user, a project, `default`, or a group's own name
  double shares = 0;               ///< whole, >= 0
  std::vector<uint32_t> children;  ///< indexes of this tree's nodes
};

/// The most levels of a share tree below its root (sge_tickets throws past it; loaders refuse it).
inline constexpr size_t kMaxShareTreeDepth = 256;

/// Every ticket holder of the farm, indexed by SgeTicketJob's fields; the share tree with its root
/// first (empty: none). The tree must be a tree (each node a child of at most one, no cycle).
struct SgeShareHolders {
  std::vector<SgeShareHolder> users, projects, departments;
  std::vector<SgeShareTreeNode> share_tree;
  /// (user, project) -> the user's combined usage in the project (a user node below a project node)
  std::map<std::pair<int32_t, int32_t>, double> user_project_usage;
};

/// One job (one array task) as the ticket policies see it.
struct SgeTicketJob {
  bool running = false;  ///< running (counts first) or pending
  bool counted = true;   ///< false: held or in error: the scheduler leaves it out (no tickets)
  /// Indexes into SgeShareHolders (-1: none: the user or project is not in the farm's lists).
  int32_t user = -1, project = -1, department = -1;
  double jobshare = 0;          ///< qsub -js
  double override_tickets = 0;  ///< qalter -ot
  uint32_t dilution = 1;        ///< the least slot count of its -pe range (1 without): its weight in a share tree node
  double submit = 0;            ///< submission time, seconds (ties)
  uint64_t number = 0, task = 0;
};

/// A job's tickets as qstat -ext prints them (otckt, ftckt, stckt, tckts).
struct SgeTickets {
  double oticket = 0, fticket = 0, sticket = 0, total = 0;
};

/// Every job's tickets. Running jobs come first in Grid Engine's reckoning whatever their place in
/// `jobs`; pending jobs are taken in (number, task) order, as the qmaster keeps its job list. O(jobs *
/// categories) for the one-by-one ranking, at most max_functional_jobs_to_schedule rounds; the share
/// tree O(jobs log jobs x depth). Throws std::invalid_argument for a policy_hierarchy letter that is not
/// O, F or S, or one twice, and for a share tree deeper than kMaxShareTreeDepth or whose children
/// name no node.
std::vector<SgeTickets> sge_tickets(const SgeTicketConfig& c, const SgeShareHolders& h,
                                    std::span<const SgeTicketJob> jobs);

}  // namespace colmatch
