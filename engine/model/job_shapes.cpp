// How a job is placed beyond its request and slots (jobs.hpp, JobBuilder): Slurm's fit units, node count
// ranges, node picks and --prefer fallback, Grid Engine's parallel environment shapes and master queues. Each
// setter checks the shape against the job's rule and slots and throws ValueError for one the placement cannot
// take.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "engine/model/jobs.hpp"

namespace colmatch {

void JobBuilder::set_fit_unit(double fit, double limit, double tasks, double total) {
  if (!(fit > 0) || !(limit >= 0) || !(tasks >= 0) || !std::isfinite(fit) || !std::isfinite(limit) ||
      !std::isfinite(tasks))
    throw ValueError(
        fmt::format("a fit unit takes a task > 0 and a limit and a cap >= 0, not {}, {} and {}", fit, limit, tasks));
  if (total != 0 && (table_.rule.back() != AllocationRule::OnePerTasker || !(total > table_.slots.back()) ||
                     total != std::floor(total) || total > 1e9))
    throw ValueError(
        fmt::format("{} tasks over {} taskers: a whole number above the slots of a job of one slot a tasker", total,
                    table_.slots.back()));
  table_.fit_unit.resize(table_.size());
  table_.fit_unit.back() = {fit, limit, tasks, total};
}

void JobBuilder::set_pe_shape(uint32_t min_slots, uint32_t per_host) {
  const AllocationRule r = table_.rule.back();
  const uint32_t slots = table_.slots.back();
  if (!by_host(r)) throw ValueError("a PE shape is for a job of a Grid Engine host rule (set_rule first)");
  if (min_slots > slots) throw ValueError(fmt::format("a slot range of {} to {}", min_slots, slots));
  if ((r == AllocationRule::HostBlocks) != (per_host > 0))
    throw ValueError("slots a host are for allocation_rule N (HostBlocks), and it needs them");
  if (per_host > 0 && (slots % per_host != 0 || min_slots % per_host != 0))
    throw ValueError(fmt::format("{} slots a host do not divide {} (or its range's {})", per_host, slots, min_slots));
  if (min_slots == 0 && per_host == 0) return;
  table_.pe_shape.resize(table_.size());
  table_.pe_shape.back().min_slots = min_slots;
  table_.pe_shape.back().per_host = per_host;
}

void JobBuilder::set_node_range(uint32_t min_nodes) {
  if (table_.rule.back() != AllocationRule::OnePerTasker)
    throw ValueError("a node count range is for a job of one slot a tasker (set_rule OnePerTasker first)");
  const uint32_t slots = table_.slots.back();
  if (min_nodes < 1 || min_nodes >= slots)
    throw ValueError(fmt::format("a node count range of {} to {}", min_nodes, slots));
  table_.pe_shape.resize(table_.size());
  table_.pe_shape.back().min_slots = min_nodes;
}

void JobBuilder::set_master_request(std::string_view text) {
  if (!by_host(table_.rule.back())) throw ValueError("a master queue request is for a job of a Grid Engine host rule");
  const uint32_t r = parse_cached(text);
  table_.pe_shape.resize(table_.size());
  table_.pe_shape.back().master = r;
}

void JobBuilder::set_master_only_request(std::string_view text) {
  if (table_.pe_shape.size() != table_.size() || table_.pe_shape.back().master == kNone)
    throw ValueError("a master-only request is for a job of a master queue request (set_master_request first)");
  table_.pe_shape.back().master_only = parse_cached(text);
}

void JobBuilder::set_node_picks(std::vector<JobTable::NodePick> picks) {
  if (picks.empty()) throw ValueError("a list of node picks needs a pick");
  if (table_.rule.back() != AllocationRule::OnePerTasker)
    throw ValueError("node picks are for a job of one slot a tasker (set_rule OnePerTasker first)");
  uint64_t apart = 0;
  for (const JobTable::NodePick& p : picks) {
    if (p.count == 0) throw ValueError("a node pick of 0 taskers");
    if (p.requests.empty()) throw ValueError("a node pick of no request");
    for (const uint32_t r : p.requests)
      if (r >= table_.requests.size()) throw ValueError(fmt::format("no request {}", r));
    if (p.count > table_.slots.back())
      throw ValueError(fmt::format("a node pick of {} taskers for a job of {} slots", p.count, table_.slots.back()));
    if (p.apart) apart += p.count;
  }
  if (apart > table_.slots.back())
    throw ValueError(fmt::format("node picks apart of {} taskers for a job of {} slots", apart, table_.slots.back()));
  std::string key;
  for (const JobTable::NodePick& p : picks) {
    for (const uint32_t r : p.requests) key.append(reinterpret_cast<const char*>(&r), sizeof r);
    key.append(reinterpret_cast<const char*>(&p.count), sizeof p.count);
    key.push_back(p.apart ? '1' : '0');
  }
  const auto [it, fresh] = by_picks_.emplace(std::move(key), static_cast<uint32_t>(table_.node_picks.size()));
  if (fresh) table_.node_picks.push_back(std::move(picks));
  table_.node_pick.resize(table_.size(), kNone);
  table_.node_pick.back() = it->second;
}

void JobBuilder::set_fallback(std::string_view request, std::string_view soft) {
  JobTable::Fallback f{parse_cached(request), 0};
  if (!soft.empty()) {
    f.soft = parse_cached(soft);
    const size_t n = soft_terms(table_.requests[f.soft]).size();
    if (n > kMaxSoftRequests)
      throw RequestError(fmt::format("{} soft requests; at most {} are supported", n, kMaxSoftRequests), 1);
  }
  table_.fallback.resize(table_.size());
  table_.fallback.back() = f;
}

}  // namespace colmatch
