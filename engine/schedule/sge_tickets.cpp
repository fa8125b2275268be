#include "engine/schedule/sge_tickets.hpp"

#include <algorithm>
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
  for (const auto& [policy, dependent] : order) {
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
