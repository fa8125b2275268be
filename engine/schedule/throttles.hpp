// Moab's per-credential throttling (seed 001, step 4 of the scheduling iteration: MAXJOB and MAXPROC per
// user, group, class, account and QoS) and the credentials' priorities (USERCFG[alice] PRIORITY=10 ...):
// the running jobs and slots of every credential, with the limit that applies to each. The simulator asks
// it whether a job may start and tells it when one starts or ends; it knows nothing of time or taskers.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

#include "engine/schedule/policy.hpp"

namespace colmatch {

/// Running jobs and slots per credential of each kind (CredentialKind order), with the limits that apply
/// to each: a named Throttle wins over its kind's default one. O(jobs + credentials) memory.
class Credentials {
 public:
  /// `throttles` as SimConfig::throttles. Keeps a reference to `jobs`.
  Credentials(const JobTable& jobs, const std::vector<Throttle>& throttles);

  /// The first limit job j would break by starting now (kind kCredentialKinds: none).
  struct Violation {
    size_t kind = kCredentialKinds;
    uint32_t id = 0;
    bool slots = false;  ///< max_slots, else max_jobs
    explicit operator bool() const noexcept { return kind < kCredentialKinds; }
  };
  Violation violation(uint32_t j) const noexcept {
    for (size_t i = 0; i < limited_count_; ++i) {  // a kind no throttle names cannot be broken
      const size_t kind = limited_[i];
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

  /// Per job: the sum of the priorities of its credentials (SimConfig::credential_priorities); one
  /// value stored when every job's is the same (no credential priorities: 0).
  PerJob<double> priorities(const std::vector<CredentialPriority>& list) const;

  /// Job j's credential of `kind` (an id into credential_names).
  uint32_t cred(size_t kind, uint32_t j) const { return credential_id(jobs_, static_cast<CredentialKind>(kind), j); }

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
  std::array<uint8_t, kCredentialKinds> limited_{};              // the kinds some throttle names, in kind order
  size_t limited_count_ = 0;
};

/// Moab's step 4 undone lazily, for a queue whose jobs have fixed ranks (static priority order). A job
/// a limit keeps from starting is parked on that credential (its rank kept in the credential's stream)
/// until a job of the credential ends. Then, instead of moving every parked job back to the ready queue
/// (a user with 10,000 waiting jobs and max_jobs 2 would have all of them moved back and forth at every
/// end of one of its jobs), the stream is made active and its parked jobs are taken back one at a time,
/// in rank order, just before a scan in rank order would pass them (the scan merges ready jobs with the
/// active streams' heads), until the credential is full again. A cycle thus makes the same starts as if
/// every parked job had been unparked. Memory O(ranks + credentials).
class ThrottleStreams {
 public:
  static constexpr uint32_t kNoHead = UINT32_MAX;
  /// `ranks`: the number of ranked jobs. Keeps a reference to `creds`.
  ThrottleStreams(const Credentials& creds, size_t ranks);
  /// The job of rank r is parked on the limit `v` (Credentials::violation) it breaks.
  void park(uint32_t r, const Credentials::Violation& v);
  /// The job of rank r is parked on a limit.
  bool parked(uint32_t r) const noexcept { return parked_[r] != 0; }
  /// The job of rank r started although parked (a full cycle starts jobs of active streams).
  void forget(uint32_t r) noexcept { parked_[r] = 0; }
  /// A job of credential (kind, id) ended: its parked jobs may start again.
  void activate(size_t kind, uint32_t id);
  /// The smallest rank of a parked job of an active stream, or kNoHead.
  uint32_t next_head();
  /// Takes back the rank next_head() named (no longer parked) and returns it.
  uint32_t surface_head();

 private:
  struct Stream {
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> parked;
    std::vector<uint32_t> deferred;  // parked on its slot limit while active: wait for the next end
    uint32_t entry = kNoHead;        // its rank in heads_
    bool active = false;
  };
  void schedule_head(size_t kind, uint32_t id);

  const Credentials& creds_;
  std::vector<uint8_t> parked_;  // per rank
  std::array<std::vector<Stream>, kCredentialKinds> streams_;
  using Head = std::tuple<uint32_t, uint32_t, uint32_t>;  // (rank, kind, credential)
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads_;
};

}  // namespace colmatch
