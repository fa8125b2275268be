#include "engine/schedule/throttles.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace colmatch {

Credentials::Credentials(const JobTable& jobs, const std::vector<Throttle>& throttles) : jobs_(jobs) {
  for (size_t kind = 0; kind < kCredentialKinds; ++kind) {
    names_[kind] = &credential_names(jobs, static_cast<CredentialKind>(kind));
    const size_t n = names_[kind]->size();
    running_[kind].assign(n, 0);
    slots_[kind].assign(n, 0);
    max_jobs_[kind].assign(n, std::numeric_limits<uint64_t>::max());
    max_slots_[kind].assign(n, std::numeric_limits<double>::infinity());
    min_slots_[kind].assign(n, std::numeric_limits<double>::infinity());
    for (uint32_t j = 0; j < jobs.size(); ++j) {
      double& m = min_slots_[kind][cred(kind, j)];
      m = std::min(m, static_cast<double>(jobs.slots[j]));
    }
  }
  for (bool named : {false, true})  // defaults first, then named limits override them
    for (const Throttle& th : throttles) {
      if (th.name.empty() == named) continue;
      const auto kind = static_cast<size_t>(th.kind);
      for (uint32_t id = 0; id < names_[kind]->size(); ++id) {
        if (named && names_[kind]->value(id) != th.name) continue;
        max_jobs_[kind][id] = th.max_jobs;
        max_slots_[kind][id] = th.max_slots;
      }
    }
  for (size_t kind = 0; kind < kCredentialKinds; ++kind)
    if (std::any_of(throttles.begin(), throttles.end(),
                    [&](const Throttle& th) { return static_cast<size_t>(th.kind) == kind; }))
      limited_[limited_count_++] = static_cast<uint8_t>(kind);
}

std::string Credentials::describe(const Violation& v) const {
  static const char* kind_name[kCredentialKinds] = {"user", "group", "class", "account", "qos"};
  const std::string& name = names_[v.kind]->value(v.id);
  if (v.slots) return fmt::format("{} {} max_slots {}", kind_name[v.kind], name, max_slots_[v.kind][v.id]);
  return fmt::format("{} {} max_jobs {}", kind_name[v.kind], name, max_jobs_[v.kind][v.id]);
}

PerJob<double> Credentials::priorities(const std::vector<CredentialPriority>& list) const {
  std::array<std::vector<double>, kCredentialKinds> per;
  for (size_t kind = 0; kind < kCredentialKinds; ++kind) per[kind].assign(names_[kind]->size(), 0.0);
  for (const CredentialPriority& cp : list) {
    const auto kind = static_cast<size_t>(cp.kind);
    for (uint32_t id = 0; id < names_[kind]->size(); ++id)
      if (names_[kind]->value(id) == cp.name) per[kind][id] += cp.priority;
  }
  PerJob<double> out(jobs_.size(), 0.0);
  if (list.empty()) return out;
  double* at = out.per_job();
  for (uint32_t j = 0; j < jobs_.size(); ++j)
    for (size_t kind = 0; kind < kCredentialKinds; ++kind) at[j] += per[kind][cred(kind, j)];
  out.uniform_again();
  return out;
}

ThrottleStreams::ThrottleStreams(const Credentials& creds, size_t ranks) : creds_(creds), parked_(ranks, 0) {
  for (size_t kind = 0; kind < kCredentialKinds; ++kind) streams_[kind].resize(creds.count(kind));
}

void ThrottleStreams::park(uint32_t r, const Credentials::Violation& v) {
  parked_[r] = 1;
  Stream& s = streams_[v.kind][v.id];
  if (!s.active) {
    s.parked.push(r);
  } else if (creds_.full(v.kind, v.id)) {  // nothing more of it starts until one of its jobs ends
    s.active = false;
    s.parked.push(r);
  } else {
    s.deferred.push_back(r);  // too large for the room left; smaller jobs of it may still start
  }
}

void ThrottleStreams::activate(size_t kind, uint32_t id) {
  Stream& s = streams_[kind][id];
  for (uint32_t r : s.deferred) s.parked.push(r);
  s.deferred.clear();
  if (creds_.full(kind, id)) return;
  s.active = true;
  schedule_head(kind, id);
}

// Drops the stale tops of a stream (jobs started by a full cycle while parked) and enters its head in
// heads_ if it has one ranked before its entry there.
void ThrottleStreams::schedule_head(size_t kind, uint32_t id) {
  Stream& s = streams_[kind][id];
  while (!s.parked.empty() && !parked_[s.parked.top()]) s.parked.pop();
  if (!s.active || s.parked.empty() || s.parked.top() >= s.entry) return;
  s.entry = s.parked.top();
  heads_.push({s.entry, static_cast<uint32_t>(kind), id});
}

uint32_t ThrottleStreams::next_head() {
  while (!heads_.empty()) {
    const auto [r, kind, id] = heads_.top();
    Stream& s = streams_[kind][id];
    if (s.active && s.entry == r && !s.parked.empty() && s.parked.top() == r && parked_[r]) return r;
    heads_.pop();
    if (s.entry == r) {
      s.entry = kNoHead;
      schedule_head(kind, id);
    }
  }
  return kNoHead;
}

uint32_t ThrottleStreams::surface_head() {
  const auto [r, kind, id] = heads_.top();
  heads_.pop();
  Stream& s = streams_[kind][id];
  s.parked.pop();
  s.entry = kNoHead;
  parked_[r] = 0;
  schedule_head(kind, id);
  return r;
}

}  // namespace colmatch
