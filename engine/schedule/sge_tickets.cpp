#include "engine/schedule/sge_tickets.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

namespace colmatch {

namespace {

enum Kind : int { kUser = 0, kDepartment = 1, kProject = 2, kJob = 3 };

// The most candidate evaluations one ranking makes (categories x rounds); past it the ranking stops as
// it does at max_functional_jobs_to_schedule, so that no input makes it quadratic without bound.
constexpr uint64_t kMaxEvaluations = uint64_t{1} << 26;

struct Ref {
  const SgeTicketJob* job = nullptr;
  int32_t holder[3] = {-1, -1, -1};  // user, department, project
  double tickets = 0;                // the policies above in the hierarchy (jref->tickets)
  double share[4] = {0, 0, 0, 0};    // the shares pass 1 gave (user, department, project, job)
  int32_t share_node = -1;           // its share tree node (-1: none)
  SgeTickets out;
};

// One equal-shares category (build_functional_categories): its jobs in order, the first still to rank.
struct Category {
  double job_share = 0;
  int32_t holder[3] = {-1, -1, -1};  // only the holders whose shares (or tickets) are not 0
  double holder_share[3] = {0, 0, 0};
  std::vector<Ref*> jobs;
  size_t first = 0;
};

struct Ticketing {
  const SgeTicketConfig& c;
  const SgeShareHolders& h;
  std::vector<uint32_t> count[3];  // active jobs of each holder (UU_job_cnt, US_job_cnt, PR_job_cnt)

  const SgeShareHolder* holder(int kind, int32_t i) const {
    if (i < 0) return nullptr;
    const std::vector<SgeShareHolder>& v = kind == kUser ? h.users : kind == kDepartment ? h.departments : h.projects;
    return &v[static_cast<size_t>(i)];
  }
  void activate(const Ref& r, int step) {
    for (int k = 0; k < 3; ++k)
      if (r.holder[k] >= 0) count[k][static_cast<size_t>(r.holder[k])] += static_cast<uint32_t>(step);
  }

  // get_functional_weighting_parameters: the kinds with shares, normalised to sum 1.
  void weights(const double sums[4], double w[4]) const {
    const double configured[4] = {c.weight_user, c.weight_department, c.weight_project, c.weight_job};
    double sum = 0;
    for (int k = 0; k < 4; ++k) sum += w[k] = sums[k] > 0 ? configured[k] : 0;
    if (sum > 0)
      for (int k = 0; k < 4; ++k) w[k] /= sum;
  }

  // calc_job_functional_tickets_pass1: the job's shares, summed into `sums` (each object's shares once
  // when shared, unless sum_all).
  void pass1(Ref& r, double sums[4], bool sum_all) const {
    const bool shared = c.share_functional_shares;
    for (int k = 0; k < 3; ++k) {
      const SgeShareHolder* o = holder(k, r.holder[k]);
      if (!o) continue;
      const uint32_t n = count[k][static_cast<size_t>(r.holder[k])];
      r.share[k] = shared ? o->fshare / n : o->fshare;
      if (sum_all || n <= 1) sums[k] += r.share[k];
    }
    r.share[kJob] = r.job->jobshare;
    sums[kJob] += r.share[kJob];
  }

  // calc_job_functional_tickets_pass2: the job's functional tickets from its shares.
  void pass2(Ref& r, const double sums[4], const double w[4]) const {
    double f = 0;
    for (int k = 0; k < 3; ++k)
      if (r.holder[k] >= 0 && sums[k] != 0) f += w[k] * r.share[k] * c.weight_tickets_functional / sums[k];
    if (sums[kJob] != 0) f += w[kJob] * r.job->jobshare * c.weight_tickets_functional / sums[kJob];
    r.out.fticket = f;
  }

  // calc_job_override_tickets: a running job's (or, unshared, a pending job's) override tickets.
  double override_tickets(const Ref& r) const {
    double o = 0;
    for (int k = 0; k < 3; ++k) {
      const SgeShareHolder* x = holder(k, r.holder[k]);
      if (!x) continue;
      const uint32_t n = count[k][static_cast<size_t>(r.holder[k])];
      if (!c.share_override_tickets) o += x->oticket;
      else if (x->oticket != 0 && n != 0) o += x->oticket / n;
    }
    return o + r.job->override_tickets;
  }

  // calc_pjob_override_tickets_shared: a pending job's override tickets were it to run next (each object's
  // split among its active jobs and this one).
  double pending_override(const Ref& r) const {
    double o = r.job->override_tickets;
    for (int k = 0; k < 3; ++k) {
      const SgeShareHolder* x = holder(k, r.holder[k]);
      if (x && x->oticket > 0) o += x->oticket / (count[k][static_cast<size_t>(r.holder[k])] + 1);
    }
    return o;
  }
};

// Whether `a` goes before `b` in a category kept in ticket order (the dependent insertion of
// build_functional_categories: more tickets, then older, then smaller number and task).
bool category_before(const Ref& a, const Ref& b) {
  if (a.tickets != b.tickets) return a.tickets > b.tickets;
  if (a.job->submit != b.job->submit) return a.job->submit < b.job->submit;
  if (a.job->number != b.job->number) return a.job->number < b.job->number;
  return a.job->task < b.job->task;
}

// build_functional_categories over the pending jobs: `share` reads an object's shares (or tickets), `own`
// the job's. Jobs of no share at all are in none.
template <class Share, class Own>
std::vector<Category> categories(std::vector<Ref*>& pending, const Ticketing& t, bool dependent, Share share, Own own) {
  std::vector<Category> out;  // in the order their first jobs come
  std::map<std::tuple<double, int32_t, int32_t, int32_t>, size_t> index;
  for (Ref* r : pending) {
    Category key;
    key.job_share = own(*r->job);
    bool any = key.job_share != 0;
    for (int k = 0; k < 3; ++k) {
      const SgeShareHolder* o = t.holder(k, r->holder[k]);
      const double s = o ? share(*o) : 0;
      if (s == 0) continue;
      key.holder[k] = r->holder[k];
      key.holder_share[k] = s;
      any = true;
    }
    if (!any) continue;
    const auto [at, fresh] =
        index.try_emplace(std::make_tuple(key.job_share, key.holder[0], key.holder[1], key.holder[2]), out.size());
    if (fresh) out.push_back(key);
    out[at->second].jobs.push_back(r);
  }
  if (dependent)
    for (Category& cat : out)
      std::stable_sort(cat.jobs.begin(), cat.jobs.end(),
                       [](const Ref* a, const Ref* b) { return category_before(*a, *b); });
  return out;
}

// The pending override tickets, shared among an object's jobs one by one
// (calculate_pending_shared_override_tickets).
void shared_override(std::vector<Ref*>& pending, Ticketing& t, bool dependent) {
  std::vector<Category> cats = categories(
      pending, t, dependent, [](const SgeShareHolder& o) { return o.oticket; },
      [](const SgeTicketJob& j) { return j.override_tickets; });
  std::vector<Ref*> ranked;
  uint64_t evaluations = 0;
  while (!cats.empty() && evaluations < kMaxEvaluations) {
    size_t best = 0;
    double best_o = -1;
    for (size_t i = 0; i < cats.size(); ++i, ++evaluations) {
      Ref& r = *cats[i].jobs[cats[i].first];
      const double o = r.out.oticket = t.pending_override(r);
      const Ref& b = *cats[best].jobs[cats[best].first];
      if (i == 0 || best_o < o ||
          (best_o == o &&
           (b.job->number > r.job->number || (b.job->number == r.job->number && b.job->task > r.job->task)))) {
        best = i;
        best_o = o;
      }
    }
    Category& cat = cats[best];
    Ref* r = cat.jobs[cat.first++];
    t.activate(*r, 1);
    r->tickets += best_o;  // whatever the hierarchy says, as sgeee.c does
    ranked.push_back(r);
    if (cat.first == cat.jobs.size()) cats.erase(cats.begin() + static_cast<ptrdiff_t>(best));
  }
  for (Ref* r : ranked) t.activate(*r, -1);
  // past the bound: the rest each as if it ran next after the running jobs (no more ranking)
  for (const Category& cat : cats)
    for (size_t i = cat.first; i < cat.jobs.size(); ++i) cat.jobs[i]->out.oticket = t.pending_override(*cat.jobs[i]);
}

// The pending functional tickets, ranked one by one (the FUNCTIONAL_POLICY case of sge_calc_tickets).
void pending_functional(std::vector<Ref*>& pending, Ticketing& t, const double running_sums[4], bool dependent) {
  std::vector<Category> cats = categories(
      pending, t, dependent, [](const SgeShareHolder& o) { return o.fshare; },
      [](const SgeTicketJob& j) { return j.jobshare; });
  size_t in_categories = 0;
  for (const Category& cat : cats) in_categories += cat.jobs.size();
  const size_t rounds = std::min<size_t>(t.c.max_functional_jobs_to_schedule, in_categories);
  double sums[4];
  std::copy(running_sums, running_sums + 4, sums);
  double w[4];
  const double all[4] = {1, 1, 1, 1};
  t.weights(all, w);
  const bool shared = t.c.share_functional_shares;
  std::vector<Ref*> ranked;
  uint64_t evaluations = 0;
  for (size_t round = 0; round < rounds && !cats.empty() && evaluations < kMaxEvaluations; ++round) {
    size_t best = cats.size();
    double best_f = -1;
    for (size_t i = 0; i < cats.size(); ++i, ++evaluations) {
      const Category& cat = cats[i];
      Ref& r = *cat.jobs[cat.first];
      // calc_intern_pending_job_functional_tickets: as if it ran next
      double s[4];
      for (int k = 0; k < 4; ++k) s[k] = sums[k] + 0.001;
      for (int k = 0; k < 3; ++k) {
        if (r.holder[k] < 0) continue;
        r.share[k] = cat.holder_share[k];
        if (shared) r.share[k] /= t.count[k][static_cast<size_t>(r.holder[k])] + 1;
        else s[k] += r.share[k];
      }
      r.share[kJob] = cat.job_share;
      s[kJob] += cat.job_share;
      t.pass2(r, s, w);
      const double f = r.out.fticket + (dependent ? r.tickets : 0);
      if (f < best_f) continue;
      const Ref* b = best < cats.size() ? cats[best].jobs[cats[best].first] : nullptr;
      if (!b || f > best_f || r.job->submit < b->job->submit ||
          (r.job->submit == b->job->submit && r.job->number < b->job->number) ||
          (r.job->number == b->job->number && r.job->task < b->job->task)) {
        best = i;
        best_f = f;
      }
    }
    Category& cat = cats[best];
    Ref* r = cat.jobs[cat.first++];
    if (cat.first < cat.jobs.size()) cat.jobs[cat.first]->out.fticket = r->out.fticket;  // copy_ftickets
    t.activate(*r, 1);
    t.pass1(*r, sums, !shared);  // calc_pending_job_functional_tickets
    t.pass2(*r, sums, w);
    ranked.push_back(r);
    if (cat.first == cat.jobs.size()) cats.erase(cats.begin() + static_cast<ptrdiff_t>(best));
  }
  for (Ref* r : ranked) {
    t.activate(*r, -1);
    if (dependent) r->tickets += r->out.fticket;
  }
  // destribute_ftickets: the rest of a category gets its first job's value (the first keeps its own)
  for (const Category& cat : cats)
    for (size_t i = cat.first + 1; i < cat.jobs.size(); ++i) {
      cat.jobs[i]->out.fticket = cat.jobs[cat.first]->out.fticket;
      if (dependent) cat.jobs[i]->tickets += cat.jobs[i]->out.fticket;
    }
}

// The share tree as one scheduling run sees it (Son of Grid Engine 8.1.9's sgeee.c): the farm's nodes,
// with a copy of a `default` node added per user that maps to one, and the counts and targets of this run.
struct ShareTree {
  struct Node {
    const SgeShareTreeNode* node = nullptr;  // the farm's (a temporary copy of `default`: that node)
    std::string name;
    std::vector<uint32_t> children;
    int32_t user = -1, project = -1;             // the user and the project of its name (SgeShareHolders)
    bool copy = false, in_running_pass = false;  // a copy of `default` (made for a running job's user)
    double usage = 0;                            // STN_combined_usage
    uint32_t own_running = 0, own_all = 0;       // the jobs that count under this node itself
    uint32_t jobs = 0, active = 0;               // STN_job_ref_count, STN_active_job_ref_count
    double sum_priority = 0;                     // the running jobs' -js
    double ltt = 0, oltt = 0, stt = 0, ostt = 0, acp = 0, shr = 0;
    std::vector<Ref*> here;  // the jobs under it (its temporary job nodes)
  };
  std::vector<Node> nodes;
  std::map<std::pair<int32_t, int32_t>, int32_t> of_job;  // (user, project) -> node
  std::map<std::string_view, int32_t> users, projects;    // name -> SgeShareHolders index

  explicit ShareTree(const SgeShareHolders& h) {
    const std::vector<SgeShareTreeNode>& farm = h.share_tree;
    nodes.resize(farm.size());
    for (size_t i = 0; i < h.users.size(); ++i) users.try_emplace(h.users[i].name, static_cast<int32_t>(i));
    for (size_t i = 0; i < h.projects.size(); ++i) projects.try_emplace(h.projects[i].name, static_cast<int32_t>(i));
    for (size_t i = 0; i < farm.size(); ++i) {
      Node& n = nodes[i];
      n.node = &farm[i];
      n.name = farm[i].name;
      n.children = farm[i].children;
      for (const uint32_t c : n.children)
        if (c >= farm.size()) throw std::invalid_argument(fmt::format("share tree node {}: no child node {}", i, c));
      name_holders(n);
    }
    // the depth (and a node reached twice, or a cycle, which never ends) refused before any walk
    std::vector<std::pair<uint32_t, size_t>> stack;
    if (!nodes.empty()) stack.emplace_back(0, 0);
    for (size_t visits = 0; !stack.empty(); ++visits) {
      const auto [x, depth] = stack.back();
      stack.pop_back();
      if (depth > kMaxShareTreeDepth || visits >= nodes.size())
        throw std::invalid_argument(
            fmt::format("the share tree is deeper than {} levels or not a tree", kMaxShareTreeDepth));
      for (const uint32_t c : nodes[x].children) stack.emplace_back(c, depth + 1);
    }
  }

  // The user and the project a node's name is (a project node: set_share_tree_project_flags).
  void name_holders(Node& n) const {
    if (const auto u = users.find(n.name); u != users.end()) n.user = u->second;
    if (const auto p = projects.find(n.name); p != projects.end()) n.project = p->second;
  }

  // search_userprj_node_work (sge_support.c)
  int32_t search(int32_t ep, const std::string* user, const std::string* project, int32_t* parent, int32_t root) const {
    if (ep < 0 || (!user && !project)) return -1;
    const Node& n = nodes[static_cast<size_t>(ep)];
    if (n.project >= 0 && ep != root && (!project || n.name != *project)) return -1;
    if (project && n.name == *project) return n.children.empty() ? ep : search(ep, user, nullptr, parent, ep);
    if (!project && n.name == *user) return ep;
    for (const uint32_t c : n.children)
      if (const int32_t f = search(static_cast<int32_t>(c), user, project, parent, root); f >= 0) {
        if (parent && f == static_cast<int32_t>(c)) *parent = ep;
        return f;
      }
    static const std::string kDefault = "default";
    if (!project && ep == root && *user != kDefault) return search(ep, &kDefault, nullptr, parent, ep);
    return -1;
  }

  // sge_set_job_refs: the node a job of this user and project counts under (-1: none); a `default` node
  // found for a user is copied as the user's own, beside it.
  int32_t node_of(const SgeShareHolders& h, int32_t user, int32_t project) {
    if (nodes.empty() || (user < 0 && project < 0)) return -1;
    const auto [at, fresh] = of_job.try_emplace({user, project}, -1);
    if (!fresh) return at->second;
    const std::string* u = user >= 0 ? &h.users[static_cast<size_t>(user)].name : nullptr;
    const std::string* p = project >= 0 ? &h.projects[static_cast<size_t>(project)].name : nullptr;
    int32_t parent = -1;
    int32_t n = search(0, u, p, &parent, 0);
    if (u && n >= 0 && parent >= 0 && nodes[static_cast<size_t>(n)].name == "default") {
      // (a `default` node with children: Grid Engine's copy counts its children's jobs, none, so such a
      // user's jobs get no share tree tickets)
      if (!nodes[static_cast<size_t>(n)].children.empty()) return at->second = -1;
      Node copy;
      copy.node = nodes[static_cast<size_t>(n)].node;
      copy.name = *u;
      copy.copy = true;
      name_holders(copy);
      nodes.push_back(std::move(copy));
      n = static_cast<int32_t>(nodes.size() - 1);
      nodes[static_cast<size_t>(parent)].children.push_back(static_cast<uint32_t>(n));
    }
    return at->second = n;
  }

  // The nodes root first, each before its children (an explicit stack: the depth is bounded above).
  std::vector<uint32_t> preorder() const {
    std::vector<uint32_t> out, stack{0};
    while (!stack.empty()) {
      const uint32_t x = stack.back();
      stack.pop_back();
      out.push_back(x);
      const std::vector<uint32_t>& c = nodes[x].children;
      for (auto it = c.rbegin(); it != c.rend(); ++it) stack.push_back(*it);
    }
    return out;
  }

  // sge_calc_node_usage: a leaf's usage is its user's (in the project above it, if any) or its project's;
  // a project node's is the project's, and what its users' below do not account for, past 1, goes to the
  // nodes down to its first `default`; another node's is its children's. A copy of `default` made for a
  // pending job's user does not exist in the running jobs' pass. Recursion bounded by the tree's depth.
  double node_usage(const SgeShareHolders& h, uint32_t x, int32_t project, bool every_job) {
    Node& n = nodes[x];
    double u = 0;
    if (n.children.empty()) {
      if (project >= 0) {
        if (n.user >= 0)
          if (const auto up = h.user_project_usage.find({n.user, project}); up != h.user_project_usage.end())
            u = up->second;
      } else if (n.user >= 0) {
        u = h.users[static_cast<size_t>(n.user)].usage;
      } else if (n.project >= 0) {
        u = h.projects[static_cast<size_t>(n.project)].usage;
      }
      return n.usage = u;
    }
    const bool project_node = project < 0 && n.project >= 0;
    if (project_node) {
      project = n.project;
      u = h.projects[static_cast<size_t>(project)].usage;
    }
    double below = 0;
    for (const uint32_t c : n.children)
      if (every_job || !nodes[c].copy || nodes[c].in_running_pass) below += node_usage(h, c, project, every_job);
    if (!project_node) return n.usage = u + below;
    // search_ancestors(node, "default"): the path to the first `default` below, depth first
    std::vector<uint32_t> path;
    auto find_default = [&](auto&& self, uint32_t y) -> bool {
      path.push_back(y);
      if (nodes[y].name == "default") return true;
      for (const uint32_t c : nodes[y].children)
        if (self(self, c)) return true;
      path.pop_back();
      return false;
    };
    if (find_default(find_default, x) && u - below > 1.0)
      for (size_t i = 1; i < path.size(); ++i) nodes[path[i]].usage += u - below;
    return n.usage = u;
  }

  // update_job_ref_count and update_active_job_ref_count (a node with children counts theirs, whatever
  // counts under it itself), with the running jobs only or every job; sge_calc_node_usage; then
  // sge_calc_node_targets.
  void targets(const SgeShareHolders& h, bool every_job, double compensation_factor) {
    const std::vector<uint32_t> order = preorder();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Node& n = nodes[*it];
      n.jobs = every_job ? n.own_all : n.own_running;
      n.active = n.own_running;
      if (n.children.empty()) continue;
      n.jobs = n.active = 0;
      for (const uint32_t c : n.children) n.jobs += nodes[c].jobs, n.active += nodes[c].active;
    }
    node_usage(h, 0, -1, every_job);
    Node& root = nodes[0];
    root.stt = root.ltt = root.ostt = root.oltt = 1;
    constexpr double kMinUsage = 1.0;  // SGE_MIN_USAGE
    for (const uint32_t x : order) {
      const Node& n = nodes[x];
      double sum_shares = 0, sum = 0;
      for (const uint32_t c : n.children)
        if (nodes[c].jobs > 0) sum_shares += nodes[c].node->shares;
      for (const uint32_t c : n.children) {
        Node& k = nodes[c];
        if (k.jobs == 0) continue;
        const double shares = k.node->shares;
        k.ltt = sum_shares > 0 ? shares / sum_shares : 0;
        k.oltt = n.oltt * k.ltt;
        k.shr = k.oltt > 0 ? shares * shares / std::max(k.usage, kMinUsage * k.oltt) : 0;
        sum += k.shr;
      }
      auto short_term = [&] {  // each active child's share of `sum`, among its siblings and overall
        for (const uint32_t c : n.children) {
          Node& k = nodes[c];
          if (k.jobs == 0) continue;
          k.stt = sum > 0 ? k.shr / sum : 0;
          k.acp = k.ostt = n.ostt * k.stt;
        }
      };
      short_term();
      if (compensation_factor == 0) continue;
      bool compensated = false;
      sum = 0;
      for (const uint32_t c : n.children) {
        Node& k = nodes[c];
        if (k.jobs == 0) continue;
        if (k.ostt > compensation_factor * k.oltt) {
          const double shares = k.node->shares;
          k.shr = shares * shares / (std::max(k.usage, kMinUsage * k.oltt) * (k.ostt / (compensation_factor * k.oltt)));
          compensated = true;
        }
        sum += k.shr;
      }
      if (compensated) short_term();
    }
  }

  struct JobNode {
    Ref* r;
    double sort, tickets, shr;
  };
  // sge_sort_job_nodes: the jobs under node x (its own and its active children's), running first, then by
  // their sort value from the level below (at a leaf -js, or with a `dependent` hierarchy the tickets of the
  // policies before + 0.01 x -js); each gets x's target among its siblings
  // diluted by the jobs ahead of it (each by its PE's least slot count); the root's level leaves them,
  // and a root with one active child and no job of its own hands the question to that child.
  std::vector<JobNode> sort_job_nodes(uint32_t root, uint32_t x, double total, bool dependent) const {
    const Node& n = nodes[x];
    if (root == x && n.here.empty()) {
      int active = 0;
      uint32_t only = 0;
      for (const uint32_t c : n.children)
        if (nodes[c].jobs > 0 && ++active == 1) only = c;
      if (active == 1) return sort_job_nodes(only, only, total, dependent);
    }
    std::vector<JobNode> list;
    for (const uint32_t c : n.children)
      if (nodes[c].jobs > 0) {
        std::vector<JobNode> below = sort_job_nodes(root, c, total, dependent);
        list.insert(list.end(), below.begin(), below.end());
      }
    for (Ref* r : n.here)  // its temporary job nodes: STN_sort, STN_tickets
      list.push_back(
          {r, dependent ? r->tickets + 0.01 * r->job->jobshare : r->job->jobshare, dependent ? r->tickets : 0, 0});
    if (root != x || !n.here.empty()) {
      std::sort(list.begin(), list.end(), [](const JobNode& a, const JobNode& b) {
        if (a.r->job->running != b.r->job->running) return a.r->job->running;
        if (a.sort != b.sort) return a.sort > b.sort;
        if (a.r->job->number != b.r->job->number) return a.r->job->number < b.r->job->number;
        return a.r->job->task < b.r->job->task;
      });
      double dilute = 1;
      for (JobNode& p : list) {
        p.shr = n.stt / dilute;
        p.sort = p.tickets + p.shr * total;
        dilute += std::max<double>(1, p.r->job->dilution);
      }
    }
    return list;
  }
};

// The share tree policy (sge_calc_tickets, called twice a scheduling run): the running jobs' tickets
// come from the second call, which counts the running jobs only (passes 1 and 2: the node's overall target
// split by -js, else evenly); the pending jobs' from the first, which counts every job, when the
// hierarchy comes to S (`pending`).
struct ShareTreePolicy {
  const SgeTicketConfig& c;
  ShareTree tree;
  bool on;

  ShareTreePolicy(const SgeTicketConfig& config, const SgeShareHolders& h, std::vector<Ref>& refs)
      : c(config), tree(h), on(!tree.nodes.empty() && config.weight_tickets_share > 0) {
    if (!on) return;
    // sge_set_job_refs' order, which makes the copies of `default` (and so the order of the sums): the
    // running jobs, then the pending ones by number and task
    std::vector<Ref*> order;
    for (Ref& r : refs)
      if (r.job->counted) order.push_back(&r);
    std::stable_sort(order.begin(), order.end(), [](const Ref* a, const Ref* b) {
      if (a->job->running != b->job->running) return a->job->running;
      if (a->job->running) return false;
      return a->job->number != b->job->number ? a->job->number < b->job->number : a->job->task < b->job->task;
    });
    for (Ref* r : order) {
      r->share_node = tree.node_of(h, r->holder[kUser], r->holder[kProject]);
      if (r->share_node < 0) continue;
      ShareTree::Node& n = tree.nodes[static_cast<size_t>(r->share_node)];
      ++n.own_all;
      n.here.push_back(r);
      if (r->job->running) ++n.own_running, n.sum_priority += r->job->jobshare, n.in_running_pass = true;
    }
    tree.targets(h, false, c.compensation_factor);
    for (Ref& r : refs) {  // calc_job_share_tree_tickets_pass2
      if (!r.job->counted || !r.job->running || r.share_node < 0) continue;
      const ShareTree::Node& n = tree.nodes[static_cast<size_t>(r.share_node)];
      const double tickets = n.acp * c.weight_tickets_share;
      if (n.sum_priority != 0) r.out.sticket = std::trunc(r.job->jobshare * tickets / n.sum_priority);
      else if (n.jobs != 0) r.out.sticket = tickets / n.jobs;  // (0: a node with children counts theirs)
    }
    tree.targets(h, true, c.compensation_factor);
  }

  void pending(bool dependent) {
    if (!on) return;
    for (const ShareTree::JobNode& p : tree.sort_job_nodes(0, 0, c.weight_tickets_share, dependent)) {
      if (p.r->job->running) continue;
      p.r->out.sticket = p.shr * c.weight_tickets_share;
      if (dependent) p.r->tickets += p.r->out.sticket;
    }
  }
};

// sconf_ph_fill_array: the named policies in order (dependent), then the others (not).
std::vector<std::pair<char, bool>> hierarchy(const std::string& text) {
  std::vector<std::pair<char, bool>> out;
  if (text != "NONE" && text != "none" && !text.empty())
    for (const char ch : text) {
      const char p = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      if (p != 'O' && p != 'F' && p != 'S')
        throw std::invalid_argument(fmt::format("policy_hierarchy '{}': '{}' is not O, F or S", text, ch));
      for (const auto& [q, dependent] : out)
        if (q == p) throw std::invalid_argument(fmt::format("policy_hierarchy '{}': '{}' twice", text, ch));
      out.emplace_back(p, true);
    }
  for (const char p : {'O', 'F', 'S'})
    if (std::none_of(out.begin(), out.end(), [p](const auto& e) { return e.first == p; })) out.emplace_back(p, false);
  return out;
}

}  // namespace

std::vector<SgeTickets> sge_tickets(const SgeTicketConfig& c, const SgeShareHolders& h,
                                    std::span<const SgeTicketJob> jobs) {
  const std::vector<std::pair<char, bool>> order = hierarchy(c.policy_hierarchy);
  Ticketing t{c, h, {}};
  t.count[kUser].assign(h.users.size(), 0);
  t.count[kDepartment].assign(h.departments.size(), 0);
  t.count[kProject].assign(h.projects.size(), 0);
  std::vector<Ref> refs(jobs.size());
  std::vector<Ref*> running, pending;
  for (size_t j = 0; j < jobs.size(); ++j) {
    Ref& r = refs[j];
    r.job = &jobs[j];
    r.holder[kUser] = jobs[j].user;
    r.holder[kDepartment] = jobs[j].department;
    r.holder[kProject] = jobs[j].project;
    if (jobs[j].counted) (jobs[j].running ? running : pending).push_back(&r);
  }
  std::stable_sort(pending.begin(), pending.end(), [](const Ref* a, const Ref* b) {
    return a->job->number != b->job->number ? a->job->number < b->job->number : a->job->task < b->job->task;
  });
  // passes 0-2: the running jobs share the functional tickets and hold their override tickets
  for (const Ref* r : running) t.activate(*r, 1);
  double sums[4] = {0, 0, 0, 0};
  if (c.weight_tickets_functional > 0)
    for (Ref* r : running) t.pass1(*r, sums, true);
  double w[4];
  t.weights(sums, w);
  for (Ref* r : running) {
    if (c.weight_tickets_functional > 0) t.pass2(*r, sums, w);
    r->out.oticket = t.override_tickets(*r);
  }
  ShareTreePolicy share_tree(c, h, refs);
  for (const auto& [policy, dependent] : order) {
    if (policy == 'S' && !pending.empty()) share_tree.pending(dependent);
    if (policy == 'F' && c.weight_tickets_functional > 0 && !pending.empty())
      pending_functional(pending, t, sums, dependent);
    if (policy == 'O') {
      if (c.share_override_tickets) {
        shared_override(pending, t, dependent);
      } else {
        for (Ref* r : pending) {
          r->out.oticket = t.override_tickets(*r);
          if (dependent) r->tickets += r->out.oticket;
        }
      }
    }
  }
  std::vector<SgeTickets> out(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    SgeTickets& o = refs[j].out;
    o.total = o.sticket + o.fticket + o.oticket;
    out[j] = o;
  }
  return out;
}

}  // namespace colmatch
