#include "loaders/writers/results.hpp"

#include <filesystem>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

#include "engine/match/explain.hpp"
#include "loaders/writers/text.hpp"

namespace colmatch::writers {

std::string notes_json(const JobTable& jobs) {
  std::vector<uint64_t> count(jobs.notes.size(), 0);
  for (const uint32_t n : jobs.note)
    if (n != kNone) ++count[n];
  std::string out = "{";
  for (uint32_t n = 0; n < count.size(); ++n)
    out += fmt::format("{}{}: {}", n == 0 ? "" : ", ", json_string(jobs.notes.value(n)), count[n]);
  return out + "}";
}

std::string summary_json(const loaders::Dataset& ds, const MatchOutcome& m, const RunInfo& info) {
  uint64_t no_eligible = 0, no_capacity = 0, behind = 0, held = 0, eligible_held = 0, sparse = 0;
  for (auto r : m.dispatch.reason) {
    if (r == PendingReason::NoEligibleTasker) ++no_eligible;
    if (r == PendingReason::NoFreeCapacity) ++no_capacity;
    if (r == PendingReason::BehindHigherPriority) ++behind;
    if (r == PendingReason::TaskersHeld) ++held;
    if (r == PendingReason::EligibleHeld) ++eligible_held;
  }
  // blocking queues (Slurm's main pass) only: the other formats' summaries keep their keys
  const std::string queues = ds.dispatch.queues
                                 ? fmt::format(
                                       "  \"pending_behind_higher_priority\": {},\n  \"pending_taskers_held\": {},\n"
                                       "  \"pending_eligible_held\": {},\n",
                                       behind, held, eligible_held)
                                 : std::string();
  for (const auto& e : m.eligible) sparse += e.eligible.sparse() ? 1 : 0;
  return fmt::format(
      "{{\n"
      "  \"farm\": {},\n  \"format\": {},\n"
      "  \"taskers\": {},\n  \"jobs\": {},\n"
      "  \"assigned\": {},\n  \"pending\": {},\n  \"pending_no_eligible_tasker\": {},\n"
      "  \"pending_no_free_capacity\": {},\n{}  \"rejected\": {},\n"
      "  \"categories\": {},\n  \"categories_sparse\": {},\n"
      "  \"seconds\": {{\"load\": {:.6f}, \"categorize\": {:.6f}, \"eligibility\": {:.6f}, \"dispatch\": {:.6f}, "
      "\"match_total\": {:.6f}}},\n"
      "  \"notes\": {},\n"
      "  \"threads\": {},\n  \"instruction_set\": {},\n  \"huge_pages\": {}\n}}\n",
      json_string(ds.name), json_string(info.format), ds.taskers.size(), ds.jobs.size(), m.dispatch.assigned,
      m.dispatch.pending, no_eligible, no_capacity, queues, m.dispatch.rejected, m.categories.size(), sparse,
      info.load_s, m.timings.categorize_s, m.timings.eligibility_s, m.timings.dispatch_s, m.timings.total(),
      notes_json(ds.jobs), info.threads, json_string(kernels::isa_name(m.isa)), info.huge_pages);
}

namespace {

constexpr uint32_t kJobsPerPiece = 8192;  // ~1 MB of results.csv: formatted and written while cache-warm

// The rows of results.csv, a piece of jobs at a time (see write_results). The pending reasons, one per
// category and kind (issue 11: why is my job pending), are computed up front for the pairs some job
// needs, so that pieces can be formatted in parallel.
class ResultRows {
 public:
  ResultRows(const loaders::Dataset& ds, const MatchOutcome& m)
      : ds_(ds), m_(m), reason_(kKinds * m.categories.size()) {
    const JobTable& jobs = ds.jobs;
    for (const auto& [j, why] : m.dispatch.removed) removed_.emplace(j, why);
    std::vector<uint8_t> need(reason_.size(), 0);
    for (uint32_t j = 0; j < jobs.size(); ++j)
      if (m.dispatch.status[j] == JobStatus::Pending) need[slot(j)] = 1;
    tbb::parallel_for(size_t{0}, need.size(), [&](size_t i) {
      if (!need[i]) return;
      const size_t c = i / kKinds;
      Reason& r = reason_[i];
      if (i % kKinds >= 2) {  // blocking queues: what was held or blocked, not the category's room
        r.text = reason_text(static_cast<PendingReason>(i % kKinds + 1));
      } else {
        const std::vector<ChargeVector> solutions = solutions_need(m.categories, c);
        r.text = pending_reason(ds.catalog, jobs.requests[m.categories.request[c]], m.categories.unit_charge[c],
                                m.eligible[c], ds.taskers.size(), i % kKinds == 0, &m.dispatch.capacity, &solutions,
                                gate_wait_text(ds.catalog, jobs, m.categories, c, m.dispatch.capacity),
                                host_rule_shape(m.categories, c));
      }
      r.row_tail = ",pending,,0,";
      csv_field(r.row_tail, r.text);  // quoted once, written for each of its jobs
      r.row_tail += '\n';
    });
  }
  size_t pieces() const { return (ds_.jobs.size() + kJobsPerPiece - 1) / kJobsPerPiece; }
  // Appends the rows of the jobs of piece `p`.
  void piece(size_t p, std::string& csv) const {
    const JobTable& jobs = ds_.jobs;
    const auto& d = m_.dispatch;
    const uint32_t first_job = static_cast<uint32_t>(p * kJobsPerPiece);
    const uint32_t end_job = static_cast<uint32_t>(std::min<size_t>(jobs.size(), first_job + size_t{kJobsPerPiece}));
    // Sized first (the common row, a pending job without a note, is its id and its reason's row tail;
    // any other row is guessed at 64 bytes), so that the piece is not copied as it grows.
    size_t bytes = 0;
    for (uint32_t j = first_job; j < end_job; ++j)
      bytes += jobs.id[j].size() +
               (d.status[j] == JobStatus::Pending && jobs.note[j] == kNone ? reason_[slot(j)].row_tail.size() : 64);
    csv.reserve(csv.size() + bytes);
    for (uint32_t j = first_job; j < end_job; ++j) {
      const std::string_view id = jobs.id[j];
      if (d.status[j] == JobStatus::Pending && jobs.note[j] == kNone) {  // the common row, in two copies
        if (plain_field(id)) csv += id;
        else csv_field(csv, id);
        csv += reason_[slot(j)].row_tail;
        continue;
      }
      csv_field(csv, id);
      switch (d.status[j]) {
        case JobStatus::Assigned: {
          const uint32_t first = d.alloc_first[j];
          for (uint32_t a = first; a < first + d.alloc_count[j]; ++a) {
            if (a != first) csv_field(csv, jobs.id[j]);
            csv += ",assigned,";
            csv_field(csv, ds_.taskers.names[d.allocations[a].tasker]);
            csv += ',';
            fmt::format_to(std::back_inserter(csv), "{}", d.allocations[a].slots);
            csv += ',';
            if (jobs.note[j] != kNone) csv_field(csv, jobs.notes.value(jobs.note[j]));
            csv += '\n';
          }
          break;
        }
        case JobStatus::Pending:  // with a note (the common row, without, is written above)
          csv += ",pending,,0,";
          csv_field(csv, reason_[slot(j)].text + "; " + jobs.notes.value(jobs.note[j]));
          csv += '\n';
          break;
        case JobStatus::Rejected:
          csv += ",rejected,,0,";
          csv_field(csv, jobs.rejected(j) ? jobs.reject_reason[jobs.reject[j]] : removed_.at(j));
          csv += '\n';
          break;
      }
    }
  }

 private:
  struct Reason {
    std::string text;      // the reason
    std::string row_tail;  // a pending job's row after its id when it has no note (the reason quoted)
  };
  // A pending job's reason: [5c + r - 1] for reason r of category c (PendingReason's order: no eligible
  // tasker, no free capacity, then blocking queues' behind a blocked queue, queue held, eligible held).
  static constexpr size_t kKinds = 5;
  size_t slot(uint32_t j) const {
    const auto r = static_cast<size_t>(m_.dispatch.reason[j]);
    return kKinds * size_t{m_.categories.of_job[j]} + (r == 0 ? 1 : r - 1);
  }
  const loaders::Dataset& ds_;
  std::unordered_map<uint32_t, std::string> removed_;  // jobs removed when dispatched: why
  const MatchOutcome& m_;
  std::vector<Reason> reason_;
};

constexpr const char* kResultsHeader = "job,status,tasker,slots,reason\n";

}  // namespace

std::string results_csv(const loaders::Dataset& ds, const MatchOutcome& m) {
  const ResultRows rows(ds, m);
  std::string csv = kResultsHeader;
  for (size_t p = 0; p < rows.pieces(); ++p) rows.piece(p, csv);
  return csv;
}

std::string categories_csv(const loaders::Dataset& ds, const MatchOutcome& m) {
  const JobTable& jobs = ds.jobs;
  // One row per category, formatted in parallel (its steps spell out each clause), joined in order.
  std::vector<std::string> rows(m.categories.size());
  tbb::parallel_for(size_t{0}, rows.size(), [&](size_t c) {
    std::string& row = rows[c];
    row = fmt::format("{:016x},{},{},{},{},", m.categories.hash[c], m.categories.job_count[c], m.categories.slots[c],
                      m.eligible[c].eligible.count(), m.eligible[c].eligible.sparse() ? "roaring" : "dense");
    const Request& request = jobs.requests[m.categories.request[c]];
    csv_field(row, jobs.request_text[m.categories.request[c]]);
    std::string steps;  // each step of the eligibility chain: what it checks, passing alone / left after it
    for (const EligibilityStep& s : m.eligible[c].steps) {
      if (!steps.empty()) steps += "; ";
      steps +=
          fmt::format("{}: {}/{}", describe_step(ds.catalog, request, m.categories.unit_charge[c], s), s.pass, s.after);
    }
    row += ',';
    csv_field(row, steps);
    row += '\n';
  });
  std::string cats = "category,jobs,slots,eligible_taskers,representation,request,steps\n";
  size_t bytes = cats.size();
  for (const std::string& row : rows) bytes += row.size();
  cats.reserve(bytes);
  for (const std::string& row : rows) cats += row;
  return cats;
}

namespace {

// `categories`: categories.csv's text, or nullopt to format it here (while results.csv is written).
void write_all(const std::string& dir, const loaders::Dataset& ds, const MatchOutcome& m, const RunInfo& info,
               std::optional<std::string> categories) {
  const JobTable& jobs = ds.jobs;
  std::string pools;
  if (info.pools) {
    pools = "pool,jobs,eligible,taskers,requirements\n";
    std::vector<int64_t> first_cat(jobs.requests.size(), -1);
    std::vector<uint64_t> pool_jobs(jobs.requests.size(), 0);
    for (size_t c = 0; c < m.categories.size(); ++c) {
      const uint32_t r = m.categories.request[c];
      if (first_cat[r] < 0) first_cat[r] = static_cast<int64_t>(c);
      pool_jobs[r] += m.categories.job_count[c];
    }
    for (size_t r = 0; r < jobs.requests.size(); ++r) {
      if (first_cat[r] < 0) continue;
      const auto& set = m.eligible[static_cast<size_t>(first_cat[r])].eligible;
      const uint64_t h = fnv1a(jobs.request_text[r]);
      std::string names;
      for (uint32_t t : set.to_vector()) {
        if (!names.empty()) names += ';';
        names += ds.taskers.names[t];
      }
      pools += fmt::format("{:016x},{},{},", h, pool_jobs[r], set.count());
      csv_field(pools, names);
      pools += ',';
      csv_field(pools, jobs.request_text[r]);
      pools += '\n';
    }
  }
  // categories.csv, unless given (the CLI formats it beside dispatch), is formatted while results.csv is
  // written (its writing is mostly the kernel copying the pieces, on one thread). `cats` outlives the
  // task group, whose destructor waits (and cancels) should anything throw before the wait.
  std::string cats;
  tbb::task_group beside;
  if (categories) cats = std::move(*categories);
  else beside.run([&] { cats = categories_csv(ds, m); });
  OutputSet out(dir);  // one transaction: a pools.csv of an earlier run does not survive one without
  if (info.pools) out.add("pools.csv", pools);
  const ResultRows rows(ds, m);
  out.add_pieces("results.csv", rows.pieces() + 1, [&](size_t p, std::string& csv) {
    if (p == 0) csv = kResultsHeader;
    else rows.piece(p - 1, csv);
  });
  beside.wait();
  out.add("categories.csv", cats);
  out.add("summary.json", summary_json(ds, m, info));
  out.publish();
}

}  // namespace

void write_results(const std::string& dir, const loaders::Dataset& ds, const MatchOutcome& m, const RunInfo& info) {
  write_all(dir, ds, m, info, std::nullopt);
}

void write_results(const std::string& dir, const loaders::Dataset& ds, const MatchOutcome& m, const RunInfo& info,
                   std::string categories) {
  write_all(dir, ds, m, info, std::move(categories));
}

}  // namespace colmatch::writers
