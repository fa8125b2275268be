// Moab's per-credential throttling (seed 001, step 4 of the scheduling iteration: MAXJOB and MAXPROC per
// user, group, class, account and QoS) and the credentials' priorities (USERCFG[alice] PRIORITY=10 ...):
// the running jobs and slots of every credential, with the limit that applies to each. The simulator asks
// it whether a job may start and tells it when one starts or ends; it knows nothing of time or taskers.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/schedule/policy.hpp"

namespace colmatch {

/// Running jobs and slots per credential of each kind (CredentialKind order), with the limits that apply
/// to each: a named Throttle wins over its kind's default one. O(jobs + credentials) memory.
class Credentials {
 public:
  /// `throttles` as SimPolicy::throttles. Keeps a reference to `jobs`.
  Credentials(const JobTable& jobs, const std::vector<Throttle>& throttles);

  /// The first limit job j would break by starting now (kind kCredentialKinds: none).
  struct Violation {
    size_t kind = kCredentialKinds;
    uint32_t id = 0;
    bool slots = false;  ///< max_slots, else max_jobs
    explicit operator bool() const noexcept { return kind < kCredentialKinds; }
  };
  Violation violation(uint32_t j) const noexcept {
    for (size_t kind = 0; kind < kCredentialKinds; ++kind) {
      const uint32_t id = cred(kind, j);
      if (running_[kind][id] + 1 > max_jobs_[kind][id]) return {kind, id, false};
      if (slots_[kind][id] + jobs_.slots[j] > max_slots_[kind][id]) return {kind, id, true};
    }
    return {};
  }
  /// No job of credential (kind, id) could start now: its job limit is reached, or its slot limit has
  /// less room than the smallest job it has.
  bool full(size_t kind, uint32_t id) const noexcept {
    return running_[kind][id] + 1 > max_jobs_[kind][id] ||
           slots_[kind][id] + min_slots_[kind][id] > max_slots_[kind][id];
  }
  /// The limit in words, for a job's reason: "user alice max_jobs 2".
  std::string describe(const Violation& v) const;

  /// The credentials of that kind.
  size_t count(size_t kind) const noexcept { return names_[kind]->size(); }

  /// Per job: the sum of the priorities of its credentials (SimPolicy::credential_priorities).
  std::vector<double> priorities(const std::vector<CredentialPriority>& list) const;

  /// Job j's credential of `kind` (an id into credential_names).
  uint32_t cred(size_t kind, uint32_t j) const { return credential_ids(jobs_, static_cast<CredentialKind>(kind))[j]; }

  /// Job j started (sign +1) or ended (-1): its credentials' running jobs and slots.
  void add(uint32_t j, int sign) {
    for (size_t kind = 0; kind < kCredentialKinds; ++kind) {
      const uint32_t id = cred(kind, j);
      running_[kind][id] = static_cast<uint64_t>(static_cast<int64_t>(running_[kind][id]) + sign);
      slots_[kind][id] += sign * static_cast<double>(jobs_.slots[j]);
    }
  }

 private:
  const JobTable& jobs_;
  std::array<const Dictionary*, kCredentialKinds> names_{};
  std::array<std::vector<uint64_t>, kCredentialKinds> running_;
  std::array<std::vector<double>, kCredentialKinds> slots_;
  std::array<std::vector<uint64_t>, kCredentialKinds> max_jobs_;
  std::array<std::vector<double>, kCredentialKinds> max_slots_;
  std::array<std::vector<double>, kCredentialKinds> min_slots_;  // the fewest slots any of its jobs asks for
};

}  // namespace colmatch
