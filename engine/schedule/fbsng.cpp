#include "engine/schedule/fbsng.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "engine/model/jobs.hpp"
#include "engine/model/request.hpp"
#include "engine/schedule/result.hpp"
#include "engine/schedule/wait_queue.hpp"
#include "engine/schedule/world.hpp"

namespace colmatch {

namespace {

// The grouped form's sums stay whole doubles: queue priorities lie in [QPmin, QPmax] (at most 2^52 in
// size), a group's shift is rebased past 2^51 (a start moves it by at most QPI + QPD <= 2e9).
constexpr double kGroupedMax = 4503599627370496.0;   // 2^52
constexpr double kShiftRebase = 2251799813685248.0;  // 2^51

bool whole(double x) noexcept { return std::isfinite(x) && std::trunc(x) == x; }

}  // namespace

FbsngQueuePriorities::FbsngQueuePriorities(std::vector<FbsngQueue> params) : params_(std::move(params)) {
  grouped_ = true;
  for (FbsngQueue& q : params_) {
    if (std::isnan(q.qp_max)) q.qp_max = q.qp_min + 100;
    const std::string at = fmt::format("FBSNG queue '{}': ", q.name);
    if (!std::isfinite(q.qp_min) || !(q.qp_max >= q.qp_min))
      throw PolicyError(at + "QPmin must be finite and QPmax >= QPmin");
    for (const double v : {q.qpi, q.qpd, q.qpg, q.spg})
      if (!(v >= 0)) throw PolicyError(at + "QPI, QPD, QPG and SPG must be >= 0");
    // finite steps and floor keep every priority finite (QPmax, QPG, SPG may be infinite)
    if (!(q.qpi <= kFbsngMaxValue && q.qpd <= kFbsngMaxValue && std::abs(q.qp_min) <= kFbsngMaxValue))
      throw PolicyError(at + fmt::format("QPmin, QPI and QPD must be at most {} in size", kFbsngMaxValue));
    q.qp_min += 0.0;  // -0 is 0: a priority is never printed "-0"
    q.qp_max += 0.0;
    grouped_ =
        grouped_ && whole(q.qp_min) && whole(q.qp_max) && q.qp_max <= kGroupedMax && whole(q.qpi) && whole(q.qpd);
  }
  if (!grouped_) {
    for (const FbsngQueue& q : params_) {
      p_.push_back(q.qp_min);  // Q1
      max_.push_back(q.qp_max);
      min_.push_back(q.qp_min);
      inc_.push_back(q.qpi);
    }
    return;
  }
  std::map<double, uint32_t> by_qpi;
  group_of_.resize(params_.size());
  base_.resize(params_.size());
  for (uint32_t q = 0; q < params_.size(); ++q) {
    const FbsngQueue& p = params_[q];
    const auto [it, added] = by_qpi.emplace(p.qpi, static_cast<uint32_t>(groups_.size()));
    if (added) {
      groups_.emplace_back();
      groups_.back().qpi = p.qpi;
      groups_.back().floor_gap = std::numeric_limits<double>::infinity();
    }
    Group& g = groups_[it->second];
    group_of_[q] = it->second;
    base_[q] = p.qp_min;  // Q1
    g.floor_gap = std::min(g.floor_gap, p.qp_max - p.qp_min);
    g.above.emplace(0.0, q);
    g.queues.push_back(q);
  }
}

void FbsngQueuePriorities::on_start(uint32_t q) {
  if (!grouped_) return on_start_each(q);
  // Q2, the tick: every group's function takes its QPI (min(QPmax, p + QPI) of min(QPmax + cap, base +
  // shift) is min(QPmax + min(0, cap + QPI), base + shift + QPI))
  for (Group& g : groups_) {
    g.cap = std::min(0.0, g.cap + g.qpi);
    g.shift += g.qpi;
  }
  // q drops by its QPD: its own base moves (its value stays below its group's cap)
  Group& own = groups_[group_of_[q]];
  const double dropped = priority(q) - params_[q].qpd;
  own.above.erase({base_[q] - params_[q].qp_min, q});
  base_[q] = dropped - own.shift;
  own.above.emplace(base_[q] - params_[q].qp_min, q);
  // all move together so that the queue nearest its QPmin sits at it: each group's least distance
  double above = std::numeric_limits<double>::infinity();
  for (const Group& g : groups_) above = std::min({above, g.floor_gap + g.cap, g.above.begin()->first + g.shift});
  for (Group& g : groups_) {
    g.cap = std::min(0.0, g.cap - above);
    g.shift -= above;
    if (std::abs(g.shift) > kShiftRebase) rebase(g);
  }
  writes_ += 2 * groups_.size() + 1;
}

// Group g's queues take their priorities as bases, with no cap and no shift (the same values).
void FbsngQueuePriorities::rebase(Group& g) {
  for (const uint32_t q : g.queues) base_[q] = priority(q);
  g.cap = 0;
  g.shift = 0;
  g.above.clear();
  for (const uint32_t q : g.queues) g.above.emplace(base_[q] - params_[q].qp_min, q);
  writes_ += g.queues.size();
}

void FbsngQueuePriorities::on_start_each(uint32_t q) {
  // Q2: one tick for every queue, then the starting queue drops by its QPD
  // (over the dense columns max_, min_, inc_: the compiler's SIMD loops; the same operations in the same
  // order as over params_, so the same priorities)
  const size_t n = p_.size();
  writes_ += n;
  double* __restrict p = p_.data();
  const double* __restrict top = max_.data();
  const double* __restrict floor = min_.data();
  const double* __restrict inc = inc_.data();
  // Priorities are relative: all queues move together so that the one nearest its QPmin sits at it. The
  // nearest is found in the same pass as the tick: queue q's drop by QPD only lowers its distance, so
  // the minimum over the ticked values with q's dropped one is the minimum after the drop. (A minimum is
  // exact in any order: four running minima let the pass run at the loads' speed, not one min's latency.)
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double lane[4] = {kInf, kInf, kInf, kInf};
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (size_t k = 0; k < 4; ++k) {
      p[i + k] = std::min(top[i + k], p[i + k] + inc[i + k]);
      lane[k] = std::min(lane[k], p[i + k] - floor[i + k]);
    }
  for (; i < n; ++i) {
    p[i] = std::min(top[i], p[i] + inc[i]);
    lane[0] = std::min(lane[0], p[i] - floor[i]);
  }
  p[q] -= params_[q].qpd;
  const double above = std::min({lane[0], lane[1], lane[2], lane[3], p[q] - floor[q]});
  for (i = 0; i < n; ++i) p[i] = std::min(top[i], p[i] - above);
}

std::vector<FbsngQueue> fbsng_queue_params(const FbsngConfig& policy, const JobTable& jobs) {
  std::vector<FbsngQueue> out;
  out.reserve(jobs.queues.size());
  for (uint32_t q = 0; q < jobs.queues.size(); ++q) {
    const std::string& name = jobs.queues.value(q);
    auto it =
        std::find_if(policy.queues.begin(), policy.queues.end(), [&](const FbsngQueue& x) { return x.name == name; });
    FbsngQueue p = it != policy.queues.end() ? *it : policy.defaults;
    p.name = name;
    out.push_back(std::move(p));
  }
  return out;
}

std::optional<JobTable> fbsng_apply_requirements(const FbsngConfig& policy, CredentialKind kind, const Catalog& catalog,
                                                 const JobTable& jobs) {
  const Dictionary& names = credential_names(jobs, kind);
  // per credential id: the top-level AND terms of its type's default requirements
  std::vector<std::vector<Request>> terms(names.size());
  bool any = false;
  for (const FbsngProcessType& pt : policy.process_types) {
    if (pt.requirements.empty()) continue;
    Request r;
    try {
      r = parse_request(pt.requirements, catalog);
    } catch (const RequestError& e) {
      throw PolicyError(
          fmt::format("FBSNG process type '{}': requirements: {} (at character {})", pt.name, e.what(), e.column));
    }
    for (uint32_t a : mentioned_attributes(r))
      if (catalog.at(a).consumable)
        throw PolicyError(fmt::format("FBSNG process type '{}': requirements name consumable '{}' (use a quota)",
                                      pt.name, catalog.at(a).name));
    const auto id = names.find(pt.name);
    if (!id) continue;  // no section of that type
    if (r.kind == Request::Kind::And) terms[*id] = std::move(r.kids);
    else terms[*id].push_back(std::move(r));
    any = any || !terms[*id].empty();
  }
  if (!any) return std::nullopt;
  JobTable out = jobs;
  std::map<std::string, uint32_t> by_text;
  for (uint32_t i = 0; i < out.requests.size(); ++i) by_text.emplace(out.request_text[i], i);
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> merged;  // (request, type) -> request
  for (uint32_t j = 0; j < out.size(); ++j) {
    const uint32_t type = credential_id(jobs, kind, j);
    if (terms[type].empty() || out.rejected(j)) continue;
    const auto key = std::make_pair(out.request[j], type);
    auto it = merged.find(key);
    if (it == merged.end()) {
      const Request& own = out.requests[out.request[j]];
      const std::vector<uint32_t> named = mentioned_attributes(own);
      Request r;
      r.kind = Request::Kind::And;
      r.kids.push_back(own);
      for (const Request& t : terms[type]) {
        bool overlaps = false;
        for (uint32_t a : mentioned_attributes(t))
          overlaps = overlaps || std::binary_search(named.begin(), named.end(), a);
        if (!overlaps) r.kids.push_back(t);
      }
      canonicalize(r, catalog);
      std::string text = canonical_text(r, catalog);
      auto [at, added] = by_text.emplace(text, static_cast<uint32_t>(out.requests.size()));
      if (added) {
        out.requests.push_back(std::move(r));
        out.request_text.push_back(std::move(text));
      }
      it = merged.emplace(key, at->second).first;
    }
    out.request[j] = it->second;
  }
  return out;
}

// ---- The scheduler: rules Q3, S1, S2 and P1 over the shared world (engine/schedule/world.hpp) ----

namespace {

constexpr uint32_t kNoJob = WaitQueue::kNoJob;

class FbsngScheduler final : public Scheduler {
 public:
  explicit FbsngScheduler(SimWorld& w);
  void submitted(uint32_t j, double t) override {
    ++waiting_;
    classify(j, t);
  }
  void woke(uint32_t j, double t) override {
    if (parked_[j] == Parked::Held) classify(j, t);
  }
  void ended(uint32_t j, double t) override;
  void tasker_changed(uint32_t) override {}
  void cycle(double t, bool last) override;
  uint64_t queued() const override { return waiting_; }

 private:
  enum class Parked : uint8_t { No, Held, Dependency };
  enum class QueueTry : uint8_t { Started, Stuck, Idle };
  struct Quota {
    uint64_t max_sections = std::numeric_limits<uint64_t>::max();
    double max_slots = std::numeric_limits<double>::infinity();
    std::vector<double> max_amount;  // per consumable
    std::string name;
  };
  struct QuotaUse {
    uint64_t sections = 0;
    double slots = 0;
    std::vector<double> amount;  // per consumable
  };
  // A ready section in its queue's order (S1): section priority descending, then submit time, then index.
  struct SectionKey {
    double neg_priority, submit;
    uint32_t job;
    bool operator<(const SectionKey& o) const noexcept {
      if (neg_priority != o.neg_priority) return neg_priority < o.neg_priority;
      if (submit != o.submit) return submit < o.submit;
      return job < o.job;
    }
  };
  // Queue q's ready sections merged from its categories: a cursor per category on its first section not
  // yet passed over in this run, the earliest (in S1's order) on top. A category whose placement failed
  // in this run is dropped once the queue has a head: none of its sections can start before the next
  // run (capacity only shrinks within one), so the walk jumps over them instead of visiting each.
  struct Cursor {
    SectionKey key;
    uint32_t category;
    std::set<SectionKey>::iterator it;
  };
  static bool later(const Cursor& a, const Cursor& b) noexcept { return b.key < a.key; }

  uint32_t process_type(uint32_t j) const { return w_.creds.cred(static_cast<size_t>(w_.policy.process_type), j); }
  SectionKey key_of(uint32_t j) const { return {-section_priority_[j], w_.jobs.submit[j], j}; }
  void use(uint32_t j, int sign);
  std::string quota_broken(uint32_t j) const;
  void classify(uint32_t j, double t);
  void start(uint32_t j, double t);
  void build_heap(uint32_t q);
  QueueTry try_queue(uint32_t q, double t);
  void reasons(const std::vector<std::pair<uint32_t, uint32_t>>& held);

  SimWorld& w_;
  FbsngQueuePriorities queues_;
  std::vector<Quota> quota_;                       // per process type (credential id)
  std::vector<QuotaUse> quota_use_;                // per process type
  std::vector<double> section_priority_;           // per job (SP)
  std::vector<Parked> parked_;                     // per job
  std::vector<std::vector<uint32_t>> dependents_;  // per job: sections waiting for it
  std::vector<std::set<SectionKey>> set_;          // per queue: its ready sections, in SP order (S1)
  std::vector<std::unordered_map<uint32_t, std::set<SectionKey>>> by_cat_;  // per queue, per category
  std::vector<std::vector<Cursor>> heap_;  // per queue: its categories' cursors in this run (a heap)
  uint64_t waiting_ = 0;                   // submitted sections not started
  std::vector<uint32_t> head_;             // per queue: its head (first section waiting for capacity)
  // the queues with ready sections, by priority as the last cycle left them; queues whose first section
  // came since are at the end, those left without one are taken out when the next cycle starts
  std::vector<uint32_t> order_;
  std::vector<uint8_t> listed_;  // per queue: in order_
  std::vector<std::pair<uint32_t, uint32_t>> held_;
};

FbsngScheduler::FbsngScheduler(SimWorld& w)
    : w_(w),
      queues_(fbsng_queue_params(w.policy.fbsng, w.jobs)),
      section_priority_(w.jobs.size(), 0.0),
      parked_(w.jobs.size(), Parked::No),
      dependents_(w.jobs.size()) {
  const auto& cons = w.catalog.consumables();
  const size_t types = w.creds.count(static_cast<size_t>(w.policy.process_type));
  quota_.assign(types, Quota{});
  quota_use_.assign(types, QuotaUse{});
  for (uint32_t id = 0; id < types; ++id) {
    quota_[id].max_amount.assign(cons.size(), std::numeric_limits<double>::infinity());
    quota_use_[id].amount.assign(cons.size(), 0.0);
  }
  const Dictionary& names = credential_names(w.jobs, w.policy.process_type);
  for (const FbsngProcessType& pt : w.policy.fbsng.process_types) {
    std::vector<double> amounts(cons.size(), std::numeric_limits<double>::infinity());
    for (const auto& [name, amount] : pt.max_amount) {
      size_t k = 0;
      while (k < cons.size() && w.catalog.at(cons[k]).name != name) ++k;
      if (k == cons.size())
        throw PolicyError(
            fmt::format("FBSNG process type '{}': quota on '{}', which is not a consumable", pt.name, name));
      if (!(amount >= 0)) throw PolicyError(fmt::format("FBSNG process type '{}': quota < 0", pt.name));
      amounts[k] = amount;
    }
    const auto id = names.find(pt.name);
    if (!id) continue;  // no section of that type
    quota_[*id] = Quota{pt.max_sections, pt.max_slots, std::move(amounts), pt.name};
  }
  set_.assign(queues_.size(), {});
  by_cat_.assign(queues_.size(), {});
  heap_.assign(queues_.size(), {});
  head_.assign(queues_.size(), kNoJob);
  listed_.assign(queues_.size(), 0);
}

void FbsngScheduler::use(uint32_t j, int sign) {
  QuotaUse& u = quota_use_[process_type(j)];
  u.sections = static_cast<uint64_t>(static_cast<int64_t>(u.sections) + sign);
  u.slots += sign * static_cast<double>(w_.jobs.slots[j]);
  w_.for_each_charge(j, [&](size_t k, uint32_t, double amount) { u.amount[k] += sign * amount; });
}

void FbsngScheduler::start(uint32_t j, double t) {
  w_.start(j, t, w_.trial, false);
  use(j, +1);
  --waiting_;
}

void FbsngScheduler::ended(uint32_t j, double t) {
  use(j, -1);
  for (uint32_t x : dependents_[j])
    if (parked_[x] == Parked::Dependency) classify(x, t);
  std::vector<uint32_t>().swap(dependents_[j]);
}

// P1: the quota job j's start would break ("" if none). What a start charges in all does not depend on
// where it is placed ($pe_slots: the category's charge on one tasker; $fill_up: slots x the per-slot
// charge plus the master's), so the quota is decided before a placement, and within a run a section it
// stops stays stopped (usage only grows until the next run).
std::string FbsngScheduler::quota_broken(uint32_t j) const {
  const uint32_t type = process_type(j);
  const Quota& q = quota_[type];
  const QuotaUse& u = quota_use_[type];
  const JobTable& jobs = w_.jobs;
  if (u.sections + 1 > q.max_sections) return fmt::format("process type {} max_sections {}", q.name, q.max_sections);
  if (u.slots + jobs.slots[j] > q.max_slots) return fmt::format("process type {} max_slots {}", q.name, q.max_slots);
  const uint32_t c = w_.cats.of_job[j];
  const auto& cons = w_.catalog.consumables();
  std::string broken;
  w_.cats.each_allocation_charge(c, jobs.slots[j], true, [&](uint32_t k, double charge) {
    if (charge > 0 && u.amount[k] + charge > q.max_amount[k])
      broken = fmt::format("process type {} max {} {}", q.name, w_.catalog.at(cons[k]).name, q.max_amount[k]);
    return broken.empty();
  });
  return broken;
}

// A waiting section goes where its state says: held, waiting for a dependency, never able to run (its
// reason set once), or ready (its queue's ordered set). A hold's end is an event (SimWorld::wakes).
void FbsngScheduler::classify(uint32_t j, double t) {
  const JobTable& jobs = w_.jobs;
  SimResult& res = w_.res;
  if (jobs.hold_until[j] > t) {
    parked_[j] = Parked::Held;
    res.reason[j] = SimReason::Held;
    res.was_held[j] = 1;
    if (std::isfinite(jobs.hold_until[j])) w_.wakes.emplace(jobs.hold_until[j], j);
    return;
  }
  parked_[j] = Parked::No;
  const uint32_t c = w_.cats.of_job[j];
  if (!w_.fits_idle[c]) {
    res.reason[j] = w_.eligible[c].eligible.count() == 0 ? SimReason::NoEligibleTasker : SimReason::TooLarge;
    return;
  }
  for (uint32_t d : jobs.depends[j])
    if (!w_.ended[d]) {
      parked_[j] = Parked::Dependency;
      res.reason[j] = SimReason::Dependency;
      dependents_[d].push_back(j);
      return;
    }
  res.reason[j] = SimReason::NoFreeCapacity;
  set_[jobs.queue[j]].insert(key_of(j));
  if (!listed_[jobs.queue[j]]) {
    listed_[jobs.queue[j]] = 1;
    order_.push_back(jobs.queue[j]);
  }
  by_cat_[jobs.queue[j]][c].insert(key_of(j));
}

void FbsngScheduler::build_heap(uint32_t q) {
  std::vector<Cursor>& h = heap_[q];
  h.clear();
  for (auto& [c, set] : by_cat_[q])
    if (!set.empty()) h.push_back({*set.begin(), c, set.begin()});
  std::make_heap(h.begin(), h.end(), later);
}

// S1, S2, P1: the walk of queue q's ready sections in S1's order, resumed where it stopped in this run.
// Started: a section started; Stuck: the queue has a head (a section waiting for capacity) and started
// nothing; Idle: nothing started and nothing waits for capacity. Reasons: cycle()'s last pass.
FbsngScheduler::QueueTry FbsngScheduler::try_queue(uint32_t q, double t) {
  const JobTable& jobs = w_.jobs;
  std::vector<Cursor>& h = heap_[q];
  uint32_t& head = head_[q];
  const double spg = queues_.params(q).spg;
  // A start elsewhere in this run may have put the head over a credential limit or its quota: it no
  // longer waits for capacity, and the queue is walked again from the start (rare: limits that bind)
  if (head != kNoJob && (w_.creds.violation(head) || !quota_broken(head).empty())) {
    head = kNoJob;
    build_heap(q);
  }
  auto drop = [&] {  // the top category, for the rest of this run
    std::pop_heap(h.begin(), h.end(), later);
    h.pop_back();
  };
  auto advance = [&] {  // the top category's next section
    std::pop_heap(h.begin(), h.end(), later);
    Cursor& cur = h.back();
    if (++cur.it == by_cat_[q][cur.category].end()) {
      h.pop_back();
      return;
    }
    cur.key = *cur.it;
    std::push_heap(h.begin(), h.end(), later);
  };
  while (!h.empty()) {
    const uint32_t x = h.front().key.job, c = h.front().category;
    // S2: x and every section after it (SP descending) wait for the head
    if (head != kNoJob && fbsng_gap_blocks(section_priority_[head], section_priority_[x], spg)) return QueueTry::Stuck;
    if (head != kNoJob && w_.settled(c)) {
      drop();
      continue;
    }
    if (w_.creds.violation(x) || !quota_broken(x).empty()) {
      w_.res.was_throttled[x] = 1;
      advance();
      continue;
    }
    w_.trial.clear();
    if (w_.settled(c) || !w_.placer(c).try_place(x, w_.policy.allocation, w_.trial)) {
      w_.settle(c);
      if (head == kNoJob) head = x;
      drop();
      continue;
    }
    w_.cap.commit();
    const auto at = h.front().it;
    advance();
    std::set<SectionKey>& of_cat = by_cat_[q][c];
    of_cat.erase(at);
    if (of_cat.empty()) by_cat_[q].erase(c);
    set_[q].erase(key_of(x));
    start(x, t);
    // S1: a start passes the head if submitted after it. The head's category left the merge when it
    // became the head, so its new place in the order moves no cursor.
    if (head != kNoJob && (jobs.submit[head] < jobs.submit[x] || (jobs.submit[head] == jobs.submit[x] && head < x))) {
      std::set<SectionKey>& hs = by_cat_[q][w_.cats.of_job[head]];
      hs.erase(key_of(head));
      set_[q].erase(key_of(head));
      section_priority_[head] += 1;
      hs.insert(key_of(head));
      set_[q].insert(key_of(head));
    }
    return QueueTry::Started;
  }
  return head != kNoJob ? QueueTry::Stuck : QueueTry::Idle;
}

// One run of the FBSNG scheduler: steps 1 (choose the queue, Q3) and 2 (choose the section, S1) until no
// section can start. `last` (the run's last cycle, or full_cycles): then every waiting section is given
// its reason, which costs a visit of each.
void FbsngScheduler::cycle(double t, bool last) {
  const auto t0 = std::chrono::steady_clock::now();
  ++w_.res.cycles;
  if (last) ++w_.res.full_cycles;
  w_.cursors.sync(w_.cap);
  size_t kept = 0;
  for (const uint32_t q : order_) {
    if (set_[q].empty()) {
      listed_[q] = 0;
      continue;
    }
    order_[kept++] = q;
    head_[q] = kNoJob;
    build_heap(q);
  }
  order_.resize(kept);
  std::vector<std::pair<uint32_t, uint32_t>>& held = held_;  // (queue, the stuck queue holding it)
  while (true) {
    // Q3: queues by priority (ties: the queue whose first section in line was submitted first, then its
    // name); a stuck queue holds those below its priority minus its QPG
    auto next_submit = [&](uint32_t q) {
      return set_[q].empty() ? std::numeric_limits<double>::infinity() : set_[q].begin()->submit;
    };
    auto before = [&](uint32_t a, uint32_t b) {
      if (queues_.priority(a) != queues_.priority(b)) return queues_.priority(a) > queues_.priority(b);
      const double sa = next_submit(a), sb = next_submit(b);
      if (sa != sb) return sa < sb;
      return w_.jobs.queues.value(a) < w_.jobs.queues.value(b);
    };
    // The order is the last one but for a few queues (the one that started, those that reached their
    // QPmax, those whose first section came since): an insertion sort costs the queues plus the moves.
    // Moves beyond a few per queue: a full sort (the order is total, so either gives the same).
    size_t moves = 0;
    const size_t budget = 8 * order_.size() + 64;
    for (size_t i = 1; i < order_.size() && moves <= budget; ++i) {
      const uint32_t x = order_[i];
      size_t k = i;
      for (; k > 0 && before(x, order_[k - 1]); --k) order_[k] = order_[k - 1];
      order_[k] = x;
      moves += i - k;
    }
    if (moves > budget) std::sort(order_.begin(), order_.end(), before);
    double holds_below = -std::numeric_limits<double>::infinity();
    uint32_t holder = kNone;
    bool any = false;
    held.clear();
    for (const uint32_t q : order_) {
      if (queues_.priority(q) < holds_below) {
        held.emplace_back(q, holder);
        continue;
      }
      const QueueTry r = try_queue(q, t);
      if (r == QueueTry::Started) {
        queues_.on_start(q);  // Q2
        any = true;
        break;
      }
      if (r == QueueTry::Stuck && queues_.holds_below(q) > holds_below) {
        holds_below = queues_.holds_below(q);
        holder = q;
      }
    }
    if (!any) break;
  }
  if (last) reasons(held);
  w_.end_cycle(t, t0, waiting_);
}

// Every ready section's reason as the run left it: its queue held by a stuck queue (Q3), behind its
// queue's head by the section gap (S2), over a credential limit or its process type's quota (P1), or
// waiting for capacity.
void FbsngScheduler::reasons(const std::vector<std::pair<uint32_t, uint32_t>>& held) {
  const JobTable& jobs = w_.jobs;
  SimResult& res = w_.res;
  std::vector<uint32_t> held_by(set_.size(), kNone);
  for (const auto& [q, by] : held) held_by[q] = by;
  for (const uint32_t q : order_) {
    const uint32_t head = head_[q], by = held_by[q];
    for (const SectionKey& key : set_[q]) {
      const uint32_t x = key.job;
      std::string detail;
      if (by != kNone) {
        res.reason[x] = SimReason::PriorityGap;
        detail = fmt::format("queue {} (priority {}) is stuck", jobs.queues.value(by), queues_.priority(by));
      } else if (head != kNoJob && x != head &&
                 fbsng_gap_blocks(section_priority_[head], section_priority_[x], queues_.params(q).spg)) {
        res.reason[x] = SimReason::PriorityGap;
        detail = fmt::format("section {} (priority {}) waits first", jobs.id[head], section_priority_[head]);
      } else if (const auto v = w_.creds.violation(x)) {
        res.reason[x] = SimReason::Throttled;
        detail = w_.creds.describe(v);
      } else if (std::string why = quota_broken(x); !why.empty()) {
        res.reason[x] = SimReason::Throttled;
        detail = std::move(why);
      } else {
        res.reason[x] = SimReason::NoFreeCapacity;
      }
      res.detail.set(x, detail);
    }
  }
}

}  // namespace

std::unique_ptr<Scheduler> make_fbsng_scheduler(SimWorld& w) { return std::make_unique<FbsngScheduler>(w); }

}  // namespace colmatch
