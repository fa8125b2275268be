#include "loaders/writers/explain.hpp"

#include <bit>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "engine/match/explain.hpp"
#include "engine/schedule/slurm_priority.hpp"

namespace colmatch::writers {
namespace {

// An amount of consumable k as requests write it (memory in the largest binary unit dividing it).
std::string amount_text(const Catalog& catalog, size_t k, double v) {
  const AttributeDef& d = catalog.at(catalog.consumables()[k]);
  if (d.type == AttrType::Memory && v > 0)
    for (const auto& [unit, bytes] :
         {std::pair{'T', 1099511627776.0}, {'G', 1073741824.0}, {'M', 1048576.0}, {'K', 1024.0}})
      if (v >= bytes) return fmt::format("{:.4g}{}", v / bytes, unit);
  return fmt::format("{}", v);
}

// For a step that is one clause: its attribute's name and the taskers describing it on some level
// (DIRAC, Grid Engine: a tasker without the attribute is not eligible, so a parameter no queue
// describes empties the set whatever its value).
std::optional<std::pair<std::string, uint64_t>> describing_taskers(const loaders::Dataset& ds, const Request& request,
                                                                   const EligibilityStep& s) {
  if (s.consumable >= 0) return std::nullopt;
  const Request& term = s.term < 0 ? request : request.kids[static_cast<size_t>(s.term)];
  if (term.kind != Request::Kind::Clause) return std::nullopt;
  const Column& col = ds.taskers.columns[term.clause.attr];
  uint64_t n = ds.taskers.size();
  if (!col.global().present) {
    n = 0;
    for (uint64_t w : col.defined()) n += static_cast<uint64_t>(std::popcount(w));
  }
  return std::pair{ds.catalog.at(term.clause.attr).name, n};
}

// Category c's request, its eligibility steps and eligible taskers, its soft tiers, and with `room` the
// room on its eligible taskers after the match's placements.
std::string category_steps(const loaders::Dataset& ds, const MatchOutcome& m, size_t c, bool room) {
  const Categories& cats = m.categories;
  const Request& request = ds.jobs.requests[cats.request[c]];
  const CategoryEligibility& e = m.eligible[c];
  std::string out = fmt::format("request: {}\n", ds.jobs.request_text[cats.request[c]]);
  out += fmt::format("eligibility, step by step over {} taskers (passing alone, left after it):\n", ds.taskers.size());
  uint64_t before = ds.taskers.size();
  bool emptied = false;
  for (const EligibilityStep& s : e.steps) {
    const std::string what = describe_step(ds.catalog, request, cats.unit_charge[c], s);
    out += fmt::format("  {:<48} {:>10} {:>10}", what, s.pass, s.after);
    if (!emptied && s.after == 0 && before > 0) {
      out += "   <- the first step that leaves none";
      emptied = true;
    }
    out += '\n';
    if (const auto described = describing_taskers(ds, request, s)) {
      const auto& [name, n] = *described;
      if (n == 0) out += fmt::format("      no tasker describes {}: a tasker without it fails the step\n", name);
      else if (n < ds.taskers.size())
        out += fmt::format("      {} of {} taskers describe {}; a tasker without it fails the step\n", n,
                           ds.taskers.size(), name);
    }
    const auto levels = step_level_counts(ds.catalog, ds.taskers, request, cats.unit_charge[c], s);
    if (!levels.empty()) {
      out += "      by level (each level that defines it must pass):";
      const char* sep = " ";
      for (const LevelCount& l : levels) {
        if (l.defined == 0) continue;
        out += fmt::format("{}{} defines it on {}, {} pass", sep, l.level, l.defined, l.pass);
        sep = "; ";
      }
      out += '\n';
    }
    before = s.after;
  }
  out += fmt::format("eligible taskers: {}\n", e.eligible.count());
  if (cats.soft[c] != 0 && !e.tiers.empty()) {
    out += "soft requests: " + ds.jobs.request_text[cats.soft[c]] + "\n";
    for (size_t v = 0; v < e.tiers.size(); ++v)
      out += fmt::format("  eligible taskers violating {} of them: {}\n", v, e.tiers[v].count());
  }
  if (room && e.eligible.count() > 0) {
    out += "room now on the eligible taskers (after this match's placements):\n";
    for (const Room& r : room_on_eligible(m.dispatch.capacity, e.eligible, cats.unit_charge[c]))
      out += fmt::format("  {}: charge {}, largest free {}, taskers with the charge free {}\n",
                         ds.catalog.at(ds.catalog.consumables()[r.consumable]).name,
                         amount_text(ds.catalog, r.consumable, r.charge),
                         amount_text(ds.catalog, r.consumable, r.largest_free), r.with_room);
  }
  return out;
}

}  // namespace

std::string explain_category(const loaders::Dataset& ds, const MatchOutcome& m, size_t c, bool room) {
  const Categories& cats = m.categories;
  return fmt::format("category {:016x}: {} jobs, {} slots each\n", cats.hash[c], cats.job_count[c], cats.slots[c]) +
         category_steps(ds, m, c, room);
}

std::string explain_job(const loaders::Dataset& ds, const MatchOutcome& m, uint32_t j) {
  const JobTable& jobs = ds.jobs;
  std::string out = fmt::format("job {}: ", jobs.id[j]);
  switch (m.dispatch.status[j]) {
    case JobStatus::Rejected:
      if (!jobs.rejected(j))  // removed when dispatched
        for (const auto& [x, why] : m.dispatch.removed)
          if (x == j) return out + "removed when dispatched: " + why + "\n";
      return out + "rejected: " + jobs.reject_reason[jobs.reject[j]] + "\n";
    case JobStatus::Assigned: {
      out += "assigned to";
      for (uint32_t a = 0; a < m.dispatch.alloc_count[j]; ++a) {
        const Allocation& x = m.dispatch.allocations[m.dispatch.alloc_first[j] + a];
        out += fmt::format(" {} ({} slots)", ds.taskers.names[x.tasker], x.slots);
      }
      out += '\n';
      break;
    }
    case JobStatus::Pending: {
      const size_t c = m.categories.of_job[j];
      const PendingReason r = m.dispatch.reason[j];
      if (r == PendingReason::BehindHigherPriority || r == PendingReason::TaskersHeld ||
          r == PendingReason::EligibleHeld) {  // blocking queues
        const auto& q = *ds.dispatch.queues;
        out += fmt::format("pending: {} (queue {})\n", reason_text(r), q.names[q.queue_of_job[j]]);
        break;
      }
      const std::vector<ChargeVector> solutions = solutions_need(m.categories, c);
      out += "pending: " +
             pending_reason(ds.catalog, jobs.requests[m.categories.request[c]], m.categories.unit_charge[c],
                            m.eligible[c], ds.taskers.size(), m.dispatch.reason[j] == PendingReason::NoEligibleTasker,
                            &m.dispatch.capacity, &solutions,
                            gate_wait_text(ds.catalog, jobs, m.categories, c, m.dispatch.capacity),
                            host_rule_shape(m.categories, c)) +
             "\n";
      break;
    }
  }
  if (ds.explain_priority) out += ds.explain_priority(j) + "\n";
  return out + explain_category(ds, m, m.categories.of_job[j]);
}

std::string explain_job_eligibility(const loaders::Dataset& ds, const MatchOutcome& m, uint32_t j) {
  const JobTable& jobs = ds.jobs;
  const std::string out = fmt::format("job {}: ", jobs.id[j]);
  if (jobs.rejected(j)) return out + "rejected: " + jobs.reject_reason[jobs.reject[j]] + "\n";
  const size_t c = m.categories.of_job[j];
  return out + "eligibility only (where it runs depends on every job of the batch: explain without --eligibility)\n" +
         fmt::format("category {:016x}: {} slots each\n", m.categories.hash[c], m.categories.slots[c]) +
         category_steps(ds, m, c, false);
}

// Slurm's priority/multifactor: job j's priority when the run decided on it, its weighted factors as sprio -l
// prints them (rounded) and the normalised ones (sprio -n).
static std::string slurm_priority_line(const loaders::Dataset& ds, const SimResult& r, const SimConfig& policy,
                                       uint32_t j) {
  const SlurmMultifactor& mf = policy.slurm_priority;
  const SlurmPriorityAt at =
      slurm_priority_at(ds.catalog, ds.taskers, ds.jobs, policy, r.start, r.end, r.last_cycle_time, j);
  const double w_age = mf.accounting ? mf.weight_age : 0, w_fs = mf.accounting ? mf.weight_fairshare : 0;
  // (the partition and QOS factors only when weighted: sprio -l's PARTITION and QOS columns)
  const bool part = mf.weight_partition != 0;
  const double w_qos = mf.accounting ? mf.weight_qos : 0;
  const bool qos = w_qos != 0;
  const double w_assoc = mf.accounting ? mf.weight_assoc : 0;
  const bool assoc = w_assoc != 0;
  const bool tres = !mf.weight_tres.empty();  // (sprio -l's TRES column: each weighted factor; here their sum)
  return fmt::format(
      "priority {} (priority/multifactor, computed at t = {}): age {:.0f} + fair share {:.0f} + job size "
      "{:.0f}{}{}{}{}; "
      "factors {:.4f}, {:.4f}, {:.4f}{}{}; weights {}, {}, {}{}{}{}\n",
      at.priority, at.computed, w_age * at.factors.age, w_fs * at.factors.fairshare,
      mf.weight_job_size * at.factors.job_size,
      part ? fmt::format(" + partition {:.0f}", mf.weight_partition * at.factors.partition) : "",
      qos ? fmt::format(" + QOS {:.0f}", w_qos * at.factors.qos) : "",
      assoc ? fmt::format(" + association {:.0f}", w_assoc * at.factors.assoc) : "",
      tres ? fmt::format(" + TRES {:.2f}", at.factors.tres) : "", at.factors.age, at.factors.fairshare,
      at.factors.job_size, part ? fmt::format(", {:.4f}", at.factors.partition) : "",
      qos ? fmt::format(", {:.4f}", at.factors.qos) : "", w_age, w_fs, mf.weight_job_size,
      part ? fmt::format(", {}", mf.weight_partition) : "", qos ? fmt::format(", {}", w_qos) : "",
      mf.accounting ? "" : " (no slurmdbd: age, fair share and QOS ignored)");
}

std::string explain_simulated_job(const loaders::Dataset& ds, const SimResult& r, const MatchOutcome& m, uint32_t j,
                                  const SimConfig& policy) {
  const JobTable& jobs = ds.jobs;
  std::string out = fmt::format("job {}: ", jobs.id[j]);
  if (jobs.rejected(j)) return out + "rejected: " + jobs.reject_reason[jobs.reject[j]] + "\n";
  if (r.reason[j] == SimReason::Rejected) return out + "rejected: " + r.detail[j] + "\n";  // by the simulator
  if (r.reason[j] == SimReason::Removed) return out + "removed " + r.detail[j] + "\n";
  if (!std::isnan(r.start[j])) {
    out += fmt::format("started at {} (submitted at {}, waited {} s){}, ends at {}, on", r.start[j], jobs.submit[j],
                       r.start[j] - jobs.submit[j], r.backfilled[j] ? " by backfill" : "", r.end[j]);
    for (uint32_t a = 0; a < r.alloc_count[j]; ++a) {
      const Allocation& x = r.allocations[r.alloc_first[j] + a];
      out += fmt::format(" {} ({} slots)", ds.taskers.names[x.tasker], x.slots);
    }
    out += '\n';
  } else {
    const double last = r.last_cycle_time;
    out += fmt::format(
        "pending at the end of the run (submitted at {}); at the last cycle that considered it (t = {}): {}",
        jobs.submit[j], last, sim_reason_text(r.reason[j]));
    if (!r.detail[j].empty()) out += ": " + r.detail[j];
    out += '\n';
    if (r.was_held[j]) out += "held at some time in the run\n";
    if (r.was_throttled[j]) out += "held back by a credential limit at some time in the run\n";
  }
  if (policy.slurm_priority.enabled && policy.scheduler == SchedulerKind::Moab)
    out += slurm_priority_line(ds, r, policy, j);
  // eligibility does not change over time: the steps over every tasker of the farm (those down at some
  // time included); free capacity does, so no room is shown
  return out + explain_category(ds, m, m.categories.of_job[j], false);
}

}  // namespace colmatch::writers
