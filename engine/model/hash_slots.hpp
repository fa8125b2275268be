// Open addressing over 64-bit hashes: the index under colmatch's tables of many small keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace colmatch {

/// An open-addressing index (linear probing; a power-of-two number of slots, at most half full, doubled
/// when it would be more) of 64-bit hashes, each slot a hash and a Payload. It serves the tables of many
/// small keys (job ids, the raw keys of job categories, Accelerator job kinds), where a node-based map
/// costs an allocation per key and a cache miss per step. Equality past the hash is the caller's
/// (`same` in find), so hashes may collide. Payload: trivially copyable, with `bool empty() const`
/// true for Payload{} (the empty slot) and false for every payload inserted.
template <class Payload>
class HashSlots {
 public:
  /// Room for `keys` keys before the first doubling (at least 8).
  explicit HashSlots(size_t keys = 512) {
    size_t n = 16;
    while (n < 2 * keys) n *= 2;
    slots_.resize(n);
    mask_ = n - 1;
  }
  /// The payload of the first slot with hash `h` that `same(payload)` accepts, or nullptr; `at` is
  /// then the empty slot where insert() puts the key. Expected O(1).
  template <class Same>
  const Payload* find(uint64_t h, Same&& same, size_t& at) const {
    for (at = h & mask_;; at = (at + 1) & mask_) {
      const Slot& s = slots_[at];
      if (s.payload.empty()) return nullptr;
      if (s.hash == h && same(s.payload)) return &s.payload;
    }
  }
  /// Puts `p` in slot `at`, which find() returned for `h` with no insert() since.
  void insert(size_t at, uint64_t h, const Payload& p) {
    slots_[at] = {h, p};
    if (++used_ * 2 <= slots_.size()) return;
    std::vector<Slot> old(2 * slots_.size());
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const Slot& o : old) {
      if (o.payload.empty()) continue;
      size_t i = o.hash & mask_;
      while (!slots_[i].payload.empty()) i = (i + 1) & mask_;
      slots_[i] = o;
    }
  }
  size_t size() const noexcept { return used_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    Payload payload{};
  };
  std::vector<Slot> slots_;
  size_t mask_ = 0, used_ = 0;
};

}  // namespace colmatch
