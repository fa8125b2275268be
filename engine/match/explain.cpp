#include "engine/match/explain.hpp"

#include <cmath>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace colmatch {

std::string describe_step(const Catalog& catalog, const Request& request, const ChargeVector& need,
                          const EligibilityStep& step) {
  if (step.forced >= 0)
    return fmt::format("no {} (forced, not requested)", catalog.at(static_cast<uint32_t>(step.forced)).name);
  if (step.consumable >= 0) {
    const size_t k = static_cast<size_t>(step.consumable);
    const AttributeDef& d = catalog.at(catalog.consumables()[k]);
    std::string amount = fmt::format("{}", need[k]);
    if (d.type == AttrType::Memory)  // in the largest binary unit that divides it (the units requests use)
      for (const auto& [unit, bytes] :
           {std::pair{'T', 1099511627776.0}, {'G', 1073741824.0}, {'M', 1048576.0}, {'K', 1024.0}})
        if (need[k] >= bytes && std::fmod(need[k], bytes) == 0) {
          amount = fmt::format("{}{}", need[k] / bytes, unit);
          break;
        }
    if (step.kind == ChargeKind::DefinedOnly) return fmt::format("{} defined (requested 0)", d.name);
    if (step.kind == ChargeKind::WhereDefined) return fmt::format("{}>={} where defined (default)", d.name, amount);
    return fmt::format("{}>={}", d.name, amount);
  }
  if (step.term < 0) return canonical_text(request, catalog);
  const Request& term = request.kids[static_cast<size_t>(step.term)];
  const bool group = term.kind == Request::Kind::And || term.kind == Request::Kind::Or;
  return group ? "(" + canonical_text(term, catalog) + ")" : canonical_text(term, catalog);
}

std::vector<std::string> global_pool_waits(const Catalog& catalog, const Capacity& capacity, const ChargeVector& need) {
  std::vector<std::string> out;
  for (const auto& [k, amount] : need.nonzero()) {
    if (k >= capacity.consumables()) break;
    const double free = capacity.global_free(k);
    if (!(amount > 0) || std::isnan(free) || free >= amount) continue;
    const AttributeDef& d = catalog.at(catalog.consumables()[k]);
    std::string w = fmt::format("{}: {:g} of {:g} free", d.label.empty() ? d.name : d.label, std::max(free, 0.0),
                                capacity.global_configured(k));
    if (amount != 1) w += fmt::format(", {:g} needed", amount);
    out.push_back(std::move(w));
  }
  return out;
}

std::string global_pool_wait_text(const Catalog& catalog, const Capacity& capacity, const ChargeVector& need,
                                  const std::vector<ChargeVector>* solutions_need) {
  std::vector<std::string> each;  // per solution (or the one charge): what it waits for
  if (solutions_need != nullptr && !solutions_need->empty()) {
    for (const ChargeVector& s : *solutions_need) {
      const std::vector<std::string> w = global_pool_waits(catalog, capacity, s);
      if (w.empty()) continue;
      const std::string text = fmt::format("{}", fmt::join(w, " and "));
      if (std::find(each.begin(), each.end(), text) == each.end()) each.push_back(text);
    }
  } else {
    const std::vector<std::string> w = global_pool_waits(catalog, capacity, need);
    if (!w.empty()) each.push_back(fmt::format("{}", fmt::join(w, " and ")));
  }
  if (each.empty()) return "";
  return fmt::format("waiting for {}", fmt::join(each, " or "));
}

std::string gate_wait_text(const Catalog& catalog, const JobTable& jobs, const Categories& cats, size_t c,
                           const Capacity& capacity) {
  const JobTable::Choice* ch = gate_of(cats, jobs, c);
  if (ch == nullptr) return "";
  const JobTable::Choice::Outcome& o = ch->outcome[capacity.room_mask(ch->gate)];
  if (o.kind != JobTable::Choice::Outcome::Kind::Wait) return "";
  const JobAmounts::Entry& pool = ch->gate[o.wait_on];
  return global_pool_wait_text(
      catalog, capacity, ChargeVector(static_cast<uint32_t>(capacity.consumables()), {{pool.consumable, pool.amount}}));
}

std::string pending_reason(const Catalog& catalog, const Request& request, const ChargeVector& need,
                           const CategoryEligibility& e, uint64_t taskers, bool no_eligible, const Capacity* capacity,
                           const std::vector<ChargeVector>* solutions_need, const std::string& gate_wait,
                           const std::string& shape) {
  if (!gate_wait.empty()) return gate_wait;
  if (!no_eligible) {
    std::string out =
        shape.empty()
            ? fmt::format("eligible but no free capacity: {} eligible taskers, none with room now", e.eligible.count())
            : fmt::format("eligible but no free capacity: {} eligible taskers, no room now for {}", e.eligible.count(),
                          shape);
    if (capacity != nullptr)
      if (const std::string w = global_pool_wait_text(catalog, *capacity, need, solutions_need); !w.empty())
        out += "; " + w;
    return out;
  }
  if (taskers == 0) return "no eligible tasker: the farm has no taskers";
  uint64_t before = taskers;
  for (const EligibilityStep& s : e.steps) {
    if (s.after > 0) {
      before = s.after;
      continue;
    }
    const std::string what = describe_step(catalog, request, need, s);
    if (s.pass == 0 || before == taskers)
      return fmt::format("no eligible tasker: {} matches {} of {}", what, s.pass, taskers);
    return fmt::format("no eligible tasker: {} matches {} of {}, none of the {} left before it", what, s.pass, taskers,
                       before);
  }
  return "no eligible tasker";
}

std::string host_rule_shape(const Categories& cats, size_t c) {
  const JobTable::PeShape shape = cats.pe_shape_of(c);
  const uint32_t most = cats.slots[c];
  const std::string slots = shape.min_slots > 0 ? fmt::format("{} to {} slots", shape.min_slots, most)
                                                : fmt::format("{} slot{}", most, most == 1 ? "" : "s");
  const std::string master = cats.master_category(c) != kNone ? ", the master on a -masterq queue" : "";
  switch (cats.rule[c]) {
    case AllocationRule::HostPeSlots: return slots + " on one host ($pe_slots)" + master;
    case AllocationRule::HostFillUp: return slots + " host after host ($fill_up)" + master;
    case AllocationRule::HostRoundRobin: return slots + ", one a host in turn ($round_robin)" + master;
    case AllocationRule::HostBlocks:
      return fmt::format("{}, {} a host (allocation_rule {}){}", slots, shape.per_host, shape.per_host, master);
    default: return {};
  }
}

}  // namespace colmatch
