// The job table's builders and columns (jobs.hpp): JobAmounts, JobDepends, TextColumn and JobBuilder, the
// one way a loader fills a JobTable (jobs one by one, or copies of prototypes in parallel); the setters of a
// job's placement shape are in job_shapes.cpp.
#include "engine/model/jobs.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_group.h>

namespace colmatch {

namespace {

// Grows `col` to n jobs for add_copies, the new ones taking their prototype's value of `of_proto`
// (indexed by prototype): when every prototype has the same, that value with nothing stored per job
// (returns nullptr); else the column stored per job, for the caller to fill at the new jobs.
template <class T, class Values>
T* grow_like(PerJob<T>& col, size_t n, const Values& of_proto) {
  const size_t np = of_proto.size();
  bool one = np > 0;
  for (size_t p = 1; p < np && one; ++p) one = PerJob<T>::same(of_proto[p], of_proto[0]);
  col.resize(n, np > 0 ? of_proto[0] : T{});
  return one || np == 0 ? nullptr : col.per_job();
}

}  // namespace

JobBuilder::JobBuilder(const Catalog& catalog) : catalog_(catalog) {
  // The empty request (true) is request 0, shared by every job that asks for nothing.
  intern_request(Request{});
}

void JobBuilder::reserve(size_t n, size_t id_bytes) {
  JobTable& t = table_;
  t.id.reserve(n, id_bytes);
  for (auto* v : {&t.owner, &t.group, &t.slots, &t.request}) v->reserve(n);
  t.priority.reserve(n);
  t.rule.reserve(n);
  t.amount.reserve(n);
  t.utilization.reserve(n);
  for (auto* c : {&t.submit, &t.runtime, &t.walltime, &t.hold_until}) c->reserve(n);
  for (auto* c : {&t.soft, &t.reject, &t.note, &t.queue, &t.account, &t.qos}) c->reserve(n);
}

uint32_t JobBuilder::add(std::string_view id, std::string_view owner, std::string_view group, double priority,
                         double submit, uint32_t slots) {
  const uint32_t j = static_cast<uint32_t>(table_.id.size());
  table_.id.push_back(id);
  table_.owner.push_back(table_.owners.intern(owner));
  table_.group.push_back(table_.groups.intern(group));
  table_.priority.push_back(priority);
  table_.submit.push_back(submit);
  table_.slots.push_back(slots == 0 ? 1 : slots);
  table_.request.push_back(0);
  table_.soft.push_back(0);
  table_.rule.push_back(AllocationRule::PeSlots);
  table_.amount.add_job();
  table_.utilization.add_job();
  table_.reject.push_back(kNone);
  table_.note.push_back(kNone);
  if (!table_.choice.empty()) table_.choice.push_back(kNone);
  table_.runtime.push_back(std::numeric_limits<double>::quiet_NaN());
  table_.walltime.push_back(std::numeric_limits<double>::quiet_NaN());
  table_.hold_until.push_back(-std::numeric_limits<double>::infinity());
  if (no_queue_ == kNone) {
    no_queue_ = table_.queues.intern("");
    no_account_ = table_.accounts.intern("");
    no_qos_ = table_.qos_names.intern("");
  }
  table_.queue.push_back(no_queue_);
  table_.account.push_back(no_account_);
  table_.qos.push_back(no_qos_);
  if (slots == 0) throw ValueError("slots must be at least 1");
  return j;
}

// Long (about 190 lines) on purpose: every column of the table grown and filled from the prototypes in
// turn, in parallel over the pieces; a column forgotten here is a column copies lack.
void JobBuilder::add_copies(const JobTable& protos, std::span<const CopiedJobs> pieces) {
  JobTable& t = table_;
  // Where each piece's jobs go, then the first bad job of each piece (checked in parallel; the
  // earliest piece's is named).
  std::vector<size_t> first(pieces.size() + 1, 0);
  for (size_t p = 0; p < pieces.size(); ++p) {
    const CopiedJobs& c = pieces[p];
    const size_t n = c.like.size();
    auto per_job = [n](auto column) { return column.empty() || column.size() == n; };
    if (c.id_end.size() != n || !per_job(c.submit) || !per_job(c.runtime) || !per_job(c.walltime) ||
        !per_job(c.priority) || !per_job(c.owner) || !per_job(c.group) || (n > 0 && c.id_end[n - 1] > c.id_text.size()))
      throw ValueError(fmt::format("add_copies: piece {} has columns of different lengths", p));
    first[p + 1] = first[p] + n;
  }
  auto id_of = [](const CopiedJobs& c, size_t i) {  // ends checked to go up before any id is taken
    const size_t from = i == 0 ? 0 : c.id_end[i - 1];
    return c.id_text.substr(from, c.id_end[i] - from);
  };
  std::vector<std::string> bad(pieces.size());
  tbb::parallel_for(size_t{0}, pieces.size(), [&](size_t p) {
    const CopiedJobs& c = pieces[p];
    for (size_t i = 0; i < c.like.size(); ++i) {
      if (i > 0 && c.id_end[i] < c.id_end[i - 1]) {
        bad[p] = fmt::format("add_copies: piece {}: the ids' ends go down at job {}", p, i);
        return;
      }
      if (c.like[i] >= protos.size()) {
        bad[p] = fmt::format("job {}: no prototype {}", id_of(c, i), c.like[i]);
        return;
      }
      if ((!c.owner.empty() && c.owner[i] >= c.owner_names.size()) ||
          (!c.group.empty() && c.group[i] >= c.group_names.size())) {
        bad[p] = fmt::format("job {}: an owner or group index past the piece's names", id_of(c, i));
        return;
      }
      for (const std::span<const double> times : {c.submit, c.runtime, c.walltime})
        if (const double v = times.empty() ? 0.0 : times[i]; !std::isnan(v) && !(v >= 0 && std::isfinite(v))) {
          bad[p] = fmt::format("job {}: a time must be a finite number of seconds >= 0, not {}", id_of(c, i), v);
          return;
        }
    }
  });
  for (std::string& b : bad)
    if (!b.empty()) throw ValueError(std::move(b));
  // Owners and groups per job: in every piece with jobs or in none.
  auto per_job_in_all = [&](auto member) {
    bool some = false, all = true;
    for (const CopiedJobs& c : pieces) {
      if (c.like.empty()) continue;
      const bool has = !(c.*member).empty();
      some = some || has;
      all = all && has;
    }
    if (some && !all) throw ValueError("add_copies: owners or groups per job in some pieces only");
    return some;
  };
  const bool own_owner = per_job_in_all(&CopiedJobs::owner), own_group = per_job_in_all(&CopiedJobs::group);
  const size_t n0 = t.size(), n = first.back(), n1 = n0 + n;
  std::vector<uint32_t> like(n);
  tbb::parallel_for(size_t{0}, pieces.size(), [&](size_t p) {
    std::copy(pieces[p].like.begin(), pieces[p].like.end(), like.begin() + static_cast<std::ptrdiff_t>(first[p]));
  });
  // The prototypes' dictionary ids and requests in this table, once each.
  const size_t np = protos.size();
  std::vector<uint32_t> owner(np), group(np), note(np), queue(np), account(np), qos(np), request(np), soft(np);
  std::vector<uint32_t> request_here(protos.requests.size(), kNone);
  auto map_request = [&](uint32_t r) {
    if (request_here[r] == kNone) request_here[r] = intern_request(protos.requests[r]);  // canonical already
    return request_here[r];
  };
  // Each value of a prototypes' dictionary is interned here once, not once per prototype.
  struct DictionaryMap {
    const Dictionary& from;
    Dictionary& to;
    std::vector<uint32_t> here;
    uint32_t operator()(uint32_t id) {
      if (id >= here.size()) here.resize(from.size(), kNone);
      if (here[id] == kNone) here[id] = to.intern(from.value(id));
      return here[id];
    }
  };
  if (no_queue_ == kNone && n > 0) {  // as add() does for a table's first job: "" (none) is value 0
    no_queue_ = t.queues.intern("");
    no_account_ = t.accounts.intern("");
    no_qos_ = t.qos_names.intern("");
  }
  DictionaryMap owners{protos.owners, t.owners, {}}, groups{protos.groups, t.groups, {}},
      notes{protos.notes, t.notes, {}}, queues{protos.queues, t.queues, {}}, accounts{protos.accounts, t.accounts, {}},
      qos_names{protos.qos_names, t.qos_names, {}};
  // Per-job owners and groups: each piece's names interned in piece order (the order the jobs show them).
  std::vector<std::vector<uint32_t>> owner_here(pieces.size()), group_here(pieces.size());
  for (size_t p = 0; p < pieces.size(); ++p) {
    if (own_owner)
      for (const std::string& name : pieces[p].owner_names) owner_here[p].push_back(t.owners.intern(name));
    if (own_group)
      for (const std::string& name : pieces[p].group_names) group_here[p].push_back(t.groups.intern(name));
  }
  for (uint32_t p = 0; p < np; ++p) {
    owner[p] = own_owner ? 0 : owners(protos.owner[p]);
    group[p] = own_group ? 0 : groups(protos.group[p]);
    note[p] = protos.note[p] == kNone ? kNone : notes(protos.note[p]);
    queue[p] = queues(protos.queue[p]);
    account[p] = accounts(protos.account[p]);
    qos[p] = qos_names(protos.qos[p]);
    request[p] = map_request(protos.request[p]);
    soft[p] = map_request(protos.soft[p]);
  }
  // The columns grow side by side (growing one is first-touching its pages: a million jobs' columns
  // are some 150 MB).
  std::vector<std::string_view> id_texts;
  std::vector<std::span<const uint32_t>> id_ends;
  for (const CopiedJobs& c : pieces) {
    id_texts.push_back(c.id_text);
    id_ends.push_back(c.id_end);
  }
  tbb::task_group grow;
  grow.run([&] { t.id.append_parts(id_texts, id_ends); });  // ends checked above to go up within the text
  for (auto* v : {&t.owner, &t.group, &t.slots, &t.request}) grow.run([v, n1] { v->resize(n1); });
  grow.run([&] { t.priority.resize(n1); });
  // Columns stored once while every job has the same value (PerJob): where every prototype has the same,
  // the new jobs take it with nothing stored per job (at == nullptr), else each its prototype's.
  uint32_t *soft_at = nullptr, *note_at = nullptr, *queue_at = nullptr, *account_at = nullptr, *qos_at = nullptr;
  double* hold_at = nullptr;
  grow.run([&] { soft_at = grow_like(t.soft, n1, soft); });
  grow.run([&] { note_at = grow_like(t.note, n1, note); });
  grow.run([&] { queue_at = grow_like(t.queue, n1, queue); });
  grow.run([&] { account_at = grow_like(t.account, n1, account); });
  grow.run([&] { qos_at = grow_like(t.qos, n1, qos); });
  grow.run([&] { hold_at = grow_like(t.hold_until, n1, protos.hold_until); });
  grow.run([&] { t.reject.resize(n1, kNone); });
  // The times: one value where no piece gives them (submit 0, runtime and walltime unknown), else per job.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double *submit_at = nullptr, *runtime_at = nullptr, *walltime_at = nullptr;
  auto times = [&](PerJob<double>& col, double none, std::span<const double> CopiedJobs::*field, double*& at) {
    bool any = false;
    for (const CopiedJobs& c : pieces) any = any || !(c.*field).empty();
    col.resize(n1, none);
    if (any) at = col.per_job();
  };
  grow.run([&] { times(t.submit, 0.0, &CopiedJobs::submit, submit_at); });
  grow.run([&] { times(t.runtime, nan, &CopiedJobs::runtime, runtime_at); });
  grow.run([&] { times(t.walltime, nan, &CopiedJobs::walltime, walltime_at); });
  grow.run([&] { t.rule.resize(n1); });
  grow.run([&] { t.amount.add_jobs_like(protos.amount, like); });
  grow.run([&] { t.utilization.add_jobs_like(protos.utilization, like); });
  // The prototypes' choices, their requests mapped here (after the requests above: map_request is not
  // shared with the tasks).
  std::vector<uint32_t> choice_here(protos.choices.size());
  for (size_t c = 0; c < protos.choices.size(); ++c) {
    JobTable::Choice x = protos.choices[c];
    for (uint32_t& r : x.request) r = map_request(r);
    choice_here[c] = static_cast<uint32_t>(t.choices.size());
    t.choices.push_back(std::move(x));
  }
  const bool choices = !protos.choice.empty() || !t.choice.empty();
  if (choices) grow.run([&] { t.choice.resize(n1, kNone); });
  const bool shapes = !protos.pe_shape.empty() || !t.pe_shape.empty();  // Grid Engine's host rules
  if (shapes) grow.run([&] { t.pe_shape.resize(n1); });
  std::vector<JobTable::PeShape> shape_here = protos.pe_shape;  // their master requests mapped here
  for (JobTable::PeShape& x : shape_here) {
    if (x.master != kNone) x.master = map_request(x.master);
    if (x.master_only != kNone) x.master_only = map_request(x.master_only);
  }
  grow.wait();
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 4096), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i < r.end(); ++i) {
      const uint32_t p = like[i];
      const size_t j = n0 + i;
      t.owner[j] = owner[p];
      t.group[j] = group[p];
      t.priority[j] = protos.priority[p];
      t.slots[j] = protos.slots[p];
      t.request[j] = request[p];
      if (soft_at) soft_at[j] = soft[p];
      t.rule[j] = protos.rule[p];
      if (note_at) note_at[j] = note[p];
      if (hold_at) hold_at[j] = protos.hold_until[p];
      if (queue_at) queue_at[j] = queue[p];
      if (account_at) account_at[j] = account[p];
      if (qos_at) qos_at[j] = qos[p];
      if (choices) t.choice[j] = protos.choice_of(p) == kNone ? kNone : choice_here[protos.choice_of(p)];
      if (shapes) t.pe_shape[j] = p < shape_here.size() ? shape_here[p] : JobTable::PeShape{};
    }
  });
  tbb::parallel_for(size_t{0}, pieces.size(), [&](size_t p) {
    const CopiedJobs& c = pieces[p];
    const size_t j0 = n0 + first[p];
    for (const auto& [from, to, none] : {std::tuple{c.submit, submit_at, 0.0}, std::tuple{c.runtime, runtime_at, nan},
                                         std::tuple{c.walltime, walltime_at, nan}}) {
      if (to == nullptr) continue;  // no piece gives them: one value
      if (from.empty()) std::fill(to + j0, to + j0 + c.like.size(), none);
      else std::copy(from.begin(), from.end(), to + j0);
    }
    if (!c.priority.empty())
      std::copy(c.priority.begin(), c.priority.end(), t.priority.begin() + static_cast<std::ptrdiff_t>(j0));
    for (size_t i = 0; i < c.owner.size(); ++i) t.owner[j0 + i] = owner_here[p][c.owner[i]];
    for (size_t i = 0; i < c.group.size(); ++i) t.group[j0 + i] = group_here[p][c.group[i]];
  });
  tbb::parallel_invoke([&] { t.submit.uniform_again(); }, [&] { t.runtime.uniform_again(); },
                       [&] { t.walltime.uniform_again(); });
}

uint32_t JobBuilder::intern_request(Request r) {
  std::string text = canonical_text(r, catalog_);
  return intern_canonical(std::move(r), std::move(text));
}

uint32_t JobBuilder::intern_canonical(Request r, std::string text) {
  auto it = by_canonical_.find(text);
  if (it != by_canonical_.end()) return it->second;
  const uint32_t idx = static_cast<uint32_t>(table_.requests.size());
  table_.requests.push_back(std::move(r));
  table_.request_text.push_back(text);
  by_canonical_.emplace(std::move(text), idx);
  return idx;
}

uint32_t JobBuilder::parse_cached(std::string_view text) {
  const std::string key(text);
  if (auto it = by_text_.find(key); it != by_text_.end()) return it->second;
  if (auto it = bad_text_.find(key); it != bad_text_.end()) throw RequestError(it->second, 0);
  try {
    const uint32_t idx = intern_request(parse_request(text, catalog_));
    by_text_.emplace(key, idx);
    return idx;
  } catch (const RequestError& e) {
    const std::string msg = fmt::format("{} (column {})", e.what(), e.column);
    bad_text_.emplace(key, msg);
    throw RequestError(msg, e.column);
  }
}

void JobBuilder::set_request(std::string_view text) { table_.request.back() = parse_cached(text); }

void JobBuilder::set_soft(std::string_view text) {
  const uint32_t idx = parse_cached(text);
  const size_t n = soft_terms(table_.requests[idx]).size();
  if (n > kMaxSoftRequests)
    throw RequestError(fmt::format("{} soft requests; at most {} are supported", n, kMaxSoftRequests), 1);
  table_.soft.set(table_.soft.size() - 1, idx);
}

std::vector<const Request*> soft_terms(const Request& soft) {
  std::vector<const Request*> out;
  if (soft.kind == Request::Kind::And) {
    for (const auto& k : soft.kids) out.push_back(&k);
  } else {
    out.push_back(&soft);
  }
  return out;
}

void JobBuilder::set_request(Request r) {
  canonicalize(r, catalog_);
  table_.request.back() = intern_request(std::move(r));
}

std::vector<uint32_t> JobBuilder::intern_all(std::vector<Request> rs) {
  std::vector<std::string> text(rs.size());
  tbb::parallel_for(size_t{0}, rs.size(), [&](size_t i) {
    canonicalize(rs[i], catalog_);
    text[i] = canonical_text(rs[i], catalog_);
  });
  std::vector<uint32_t> out(rs.size());
  for (size_t i = 0; i < rs.size(); ++i) out[i] = intern_canonical(std::move(rs[i]), std::move(text[i]));
  return out;
}

uint32_t JobBuilder::intern(Request r) {
  canonicalize(r, catalog_);
  return intern_request(std::move(r));
}

void JobBuilder::set_request_index(uint32_t request) {
  if (request >= table_.requests.size()) throw ValueError(fmt::format("no interned request {}", request));
  table_.request.back() = request;
}

void JobBuilder::set_utilization(uint32_t attr, double fraction) {
  const int slot = catalog_.consumable_slot(attr);
  if (slot < 0) throw ValueError(fmt::format("attribute '{}' is not a consumable", catalog_.at(attr).name));
  if (!(fraction >= 0 && fraction <= 1))
    throw ValueError(fmt::format("utilization of '{}' must be a fraction from 0 to 1", catalog_.at(attr).name));
  table_.utilization.set_last(static_cast<uint32_t>(slot), fraction);
}

void JobBuilder::set_amount(uint32_t attr, double amount) {
  const AttributeDef& d = catalog_.at(attr);
  const int slot = catalog_.consumable_slot(attr);
  if (slot < 0) throw ValueError(fmt::format("attribute '{}' is not a consumable", d.name));
  if (d.requestable == Requestable::No) throw ValueError(fmt::format("attribute '{}' is not requestable", d.name));
  if (!(amount >= 0)) throw ValueError(fmt::format("attribute '{}': a request must not be negative", d.name));
  // SGE 8.1.9 takes lic=1.5 on an int consumable (compares 1.5)
  const bool as_double = d.type == AttrType::Int && catalog_.reading == GridEngineReading::SoGE819;
  check_number(d, as_double ? AttrType::Double : d.type, amount);
  table_.amount.set_last(static_cast<uint32_t>(slot), amount);
}

void JobBuilder::set_rule(AllocationRule rule) { table_.rule.back() = rule; }

void JobBuilder::set_times(double runtime, double walltime) {
  for (double v : {runtime, walltime})
    if (!std::isnan(v) && !(v >= 0 && std::isfinite(v)))
      throw ValueError(fmt::format("a time must be a finite number of seconds >= 0, not {}", v));
  table_.runtime.set(table_.runtime.size() - 1, runtime);
  table_.walltime.set(table_.walltime.size() - 1, walltime);
}

void JobBuilder::set_hold(double until) {
  if (std::isnan(until)) throw ValueError("a hold needs a release time or none");
  table_.hold_until.set(table_.hold_until.size() - 1, until);
}

void JobBuilder::set_depends(std::vector<std::string> ids) {
  depends_.emplace_back(static_cast<uint32_t>(table_.size() - 1), std::move(ids));
}

void JobBuilder::set_depends(uint32_t j, std::vector<std::string> ids) { depends_.emplace_back(j, std::move(ids)); }

void JobBuilder::set_submit(uint32_t j, double submit) { table_.submit.set(j, submit); }

void JobBuilder::set_credentials(std::string_view queue, std::string_view account, std::string_view qos) {
  const size_t last = table_.queue.size() - 1;
  table_.queue.set(last, table_.queues.intern(queue));
  table_.account.set(last, table_.accounts.intern(account));
  table_.qos.set(last, table_.qos_names.intern(qos));
}

void JobBuilder::reject(uint32_t j, std::string reason) {
  if (table_.reject[j] != kNone) return;  // the first reason stands
  table_.reject.set(j, static_cast<uint32_t>(table_.reject_reason.size()));
  table_.reject_reason.push_back(std::move(reason));
}

void JobBuilder::set_note(uint32_t j, std::string_view note) { table_.note.set(j, table_.notes.intern(note)); }

uint32_t JobBuilder::add_choice(const std::vector<uint32_t>& requests,
                                const std::vector<std::vector<std::pair<uint32_t, double>>>& amounts) {
  if (amounts.size() != requests.size()) throw ValueError("a choice's solutions each need their amounts");
  JobTable::Choice c;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i] >= table_.requests.size()) throw ValueError(fmt::format("no request {}", requests[i]));
    c.request.push_back(requests[i]);
    std::vector<JobAmounts::Entry> row;
    for (const auto& [attr, amount] : amounts[i]) {
      const int k = catalog_.consumable_slot(attr);
      if (k < 0) throw ValueError(fmt::format("{} is not a consumable", catalog_.at(attr).name));
      check_number(catalog_.at(attr), amount);
      bool set = false;
      for (JobAmounts::Entry& e : row)
        if (e.consumable == static_cast<uint32_t>(k)) e.amount = amount, set = true;
      if (!set) row.push_back({static_cast<uint32_t>(k), amount});
    }
    std::sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.consumable < b.consumable; });
    c.amounts.push_back(std::move(row));
  }
  table_.choices.push_back(std::move(c));
  return static_cast<uint32_t>(table_.choices.size() - 1);
}

void JobBuilder::set_gate(uint32_t c, const std::vector<std::pair<uint32_t, double>>& gate,
                          std::vector<JobTable::Choice::Outcome> outcome) {
  if (c >= table_.choices.size()) throw ValueError(fmt::format("no choice {}", c));
  JobTable::Choice& ch = table_.choices[c];
  if (gate.size() > kMaxGate) throw ValueError(fmt::format("a gate of {} pools; at most {}", gate.size(), kMaxGate));
  if (outcome.size() != size_t{1} << gate.size())
    throw ValueError(fmt::format("a gate of {} pools needs {} outcomes, not {}", gate.size(), size_t{1} << gate.size(),
                                 outcome.size()));
  for (const auto& o : outcome) {
    for (const uint32_t s : o.solutions)
      if (s >= ch.request.size()) throw ValueError(fmt::format("no solution {}", s));
    if (o.kind == JobTable::Choice::Outcome::Kind::Wait && o.wait_on >= gate.size())
      throw ValueError(fmt::format("no pool {} in the gate", o.wait_on));
  }
  ch.gate.clear();
  for (const auto& [attr, amount] : gate) {
    const int k = catalog_.consumable_slot(attr);
    if (k < 0) throw ValueError(fmt::format("{} is not a consumable", catalog_.at(attr).name));
    ch.gate.push_back({static_cast<uint32_t>(k), check_number(catalog_.at(attr), amount)});
  }
  ch.outcome = std::move(outcome);
}

void JobBuilder::set_choice(uint32_t c) {
  if (c >= table_.choices.size()) throw ValueError(fmt::format("no choice {}", c));
  if (table_.choice.empty()) table_.choice.assign(table_.size(), kNone);
  table_.choice.back() = c;
}

JobTable JobBuilder::build() && {
  if (!depends_.empty()) {  // dependency ids -> job indices
    std::unordered_map<std::string_view, uint32_t> index;
    for (uint32_t j = 0; j < table_.size(); ++j) index.emplace(table_.id[j], j);
    for (auto& [j, ids] : depends_)
      for (const auto& id : ids) {
        const auto it = index.find(id);
        if (it == index.end() || it->second == j) {
          reject(j, fmt::format("job {}: field 'depends': {} '{}'", table_.id[j],
                                it == index.end() ? "no job" : "a job cannot depend on itself:", id));
          continue;
        }
        table_.depends.add(j, it->second);
      }
  }
  // Forced attributes (Design60, the seed's reading): a consumable must be in the job's amounts, any
  // other in its request. Son of Grid Engine 8.1.9 keeps such a job off the taskers that define the
  // attribute instead (unrequested_forced, engine/match/eligibility.hpp).
  std::vector<std::vector<uint32_t>> mentioned(table_.requests.size());
  for (size_t r = 0; r < table_.requests.size(); ++r) mentioned[r] = mentioned_attributes(table_.requests[r]);
  for (uint32_t a = 0; a < catalog_.size() && catalog_.reading == GridEngineReading::Design60; ++a) {
    const AttributeDef& d = catalog_.at(a);
    if (d.requestable != Requestable::Forced) continue;
    const int slot = catalog_.consumable_slot(a);
    for (uint32_t j = 0; j < table_.size(); ++j) {
      const bool has =
          slot >= 0 ? !std::isnan(table_.amount.at(static_cast<size_t>(slot), j))
                    : std::binary_search(mentioned[table_.request[j]].begin(), mentioned[table_.request[j]].end(), a);
      if (!has) reject(j, fmt::format("attribute '{}' is forced but not requested", d.name));
    }
  }
  return std::move(table_);
}

}  // namespace colmatch
