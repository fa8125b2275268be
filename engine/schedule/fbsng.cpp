#include "engine/schedule/fbsng.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/columns.hpp"
#include "engine/request.hpp"
#include "engine/schedule/simulation.hpp"

namespace colmatch {

FbsngQueuePriorities::FbsngQueuePriorities(std::vector<FbsngQueue> params) : params_(std::move(params)) {
  p_.reserve(params_.size());
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
    p_.push_back(q.qp_min);  // Q1
  }
}

void FbsngQueuePriorities::on_start(uint32_t q) {
  // Q2: one tick for every queue, then the starting queue drops by its QPD
  for (size_t i = 0; i < p_.size(); ++i) p_[i] = std::min(params_[i].qp_max, p_[i] + params_[i].qpi);
  p_[q] -= params_[q].qpd;
  // Priorities are relative: all queues move together so that the one nearest its QPmin sits at it
  double above = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < p_.size(); ++i) above = std::min(above, p_[i] - params_[i].qp_min);
  for (size_t i = 0; i < p_.size(); ++i) p_[i] = std::min(params_[i].qp_max, p_[i] - above);
}

std::vector<FbsngQueue> fbsng_queue_params(const FbsngPolicy& policy, const JobTable& jobs) {
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

std::optional<JobTable> fbsng_apply_requirements(const FbsngPolicy& policy, CredentialKind kind, const Catalog& catalog,
                                                 const JobTable& jobs) {
  const Dictionary& names = credential_names(jobs, kind);
  const std::vector<uint32_t>& of_job = credential_ids(jobs, kind);
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
    const uint32_t type = of_job[j];
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

}  // namespace colmatch
