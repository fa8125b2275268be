#include "engine/schedule/sge_priority.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace colmatch {

namespace {

// sge_normalize_value: 0.5 when the range is (nearly) empty (SGE_EPSILON, 1e-6).
double normalized(double v, double lo, double hi) noexcept { return hi - lo < 1e-6 ? 0.5 : (v - lo) / (hi - lo); }

}  // namespace

double sge_request_urgency(bool numeric, double urgency, double value, double slots) noexcept {
  return numeric ? value * urgency * slots : urgency;
}

double sge_urgency_slots(const std::string& setting, double lo, double hi) {
  if (lo == hi) return lo;  // a fixed slot count
  if (setting == "min") return lo;
  if (setting == "max") return hi;
  // avg: the mean of the range's ids (pe_urgency_slots sums them and divides by their count)
  if (setting == "avg") return std::floor((lo + hi) / 2);
  double v = 0;
  try {
    size_t used = 0;
    v = std::stod(setting, &used);
    if (used != setting.size() || !(v >= 0)) throw std::invalid_argument(setting);
  } catch (const std::exception&) {
    throw std::invalid_argument("urgency_slots '" + setting + "' is not min, max, avg or a number");
  }
  return v;
}

std::vector<SgePriorityTerms> sge_priorities(const SgePriorityWeights& w, std::span<const SgeUrgencyInput> jobs,
                                             double now) {
  std::vector<SgePriorityTerms> out(jobs.size());
  double lo = std::numeric_limits<double>::max(), hi = std::numeric_limits<double>::lowest();
  double max_tickets = 0;  // sgeee_scheduler's max_tix (min_tix 0)
  for (const SgeUrgencyInput& in : jobs) max_tickets = std::max(max_tickets, in.tickets.total);
  for (size_t j = 0; j < jobs.size(); ++j) {
    const SgeUrgencyInput& in = jobs[j];
    SgePriorityTerms& t = out[j];
    t.npprior = normalized(in.posix_priority + 1024, 0, 2048);
    t.rrcontr = in.rrcontr;
    t.wtcontr = w.weight_waiting_time * (now - in.submit);
    if (in.deadline > 0) t.dlcontr = w.weight_deadline / std::max(in.deadline - now, 1.0);
    t.urg = t.wtcontr + t.dlcontr + t.rrcontr;
    t.tickets = in.tickets;
    if (!in.ranged) continue;
    lo = std::min(lo, t.urg);
    hi = std::max(hi, t.urg);
  }
  if (lo > hi) lo = hi = 0;  // nothing ranged: every nurg 0.5
  for (size_t j = 0; j < jobs.size(); ++j) {
    SgePriorityTerms& t = out[j];
    t.nurg = normalized(t.urg, lo, hi);
    t.ntckts = normalized(t.tickets.total, 0, max_tickets);
    // a held or failed job: the scheduler gives it no priority (qstat prints 0)
    if (jobs[j].ranged) t.prio = w.weight_urgency * t.nurg + w.weight_priority * t.npprior + w.weight_ticket * t.ntckts;
  }
  return out;
}

std::string sge_priority_text(const SgePriorityWeights& w, const SgePriorityTerms& t) {
  std::string tickets;
  if (t.tickets.total != 0)
    tickets =
        fmt::format(" (tckts {:g} = otckt {:g} + ftckt {:g}{})", t.tickets.total, t.tickets.oticket, t.tickets.fticket,
                    t.tickets.sticket != 0 ? fmt::format(" + stckt {:g}", t.tickets.sticket) : std::string());
  return fmt::format(
      "prio {:.5f} = {:g} * npprior {:.5f} + {:g} * nurg {:.5f} (urg {:g} = rrcontr {:g} + wtcontr {:g} + dlcontr "
      "{:g}) + {:g} * ntckts {:.5f}{}",
      t.prio, w.weight_priority, t.npprior, w.weight_urgency, t.nurg, t.urg, t.rrcontr, t.wtcontr, t.dlcontr,
      w.weight_ticket, t.ntckts, tickets);
}

}  // namespace colmatch
