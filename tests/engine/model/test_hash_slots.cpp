// HashSlots (engine/model/hash_slots.hpp): the open-addressing index under job ids, categories' raw keys and
// Accelerator kinds. Keys whose hashes collide are told apart by the caller's equality, through growth.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/model/hash_slots.hpp"

using namespace colmatch;

namespace {

struct Entry {
  uint32_t key = 0;  // 0: empty
  uint32_t value = 0;
  bool empty() const noexcept { return key == 0; }
};

TEST(HashSlots, CollidingHashesAreToldApartByTheCallersEqualityThroughGrowth) {
  HashSlots<Entry> slots(4);                                   // 16 slots: grows many times below
  auto hash = [](uint32_t key) { return uint64_t{key % 7}; };  // seven hashes for 3,000 keys
  for (uint32_t key = 1; key <= 3000; ++key) {
    size_t at = 0;
    ASSERT_EQ(slots.find(
                  hash(key), [&](const Entry& e) { return e.key == key; }, at),
              nullptr)
        << key;
    slots.insert(at, hash(key), {key, key * 10});
  }
  EXPECT_EQ(slots.size(), 3000u);
  for (uint32_t key = 1; key <= 3000; ++key) {
    size_t at = 0;
    const Entry* e = slots.find(
        hash(key), [&](const Entry& x) { return x.key == key; }, at);
    ASSERT_NE(e, nullptr) << key;
    EXPECT_EQ(e->value, key * 10);
  }
  size_t at = 0;
  EXPECT_EQ(slots.find(
                hash(3001), [](const Entry& x) { return x.key == 3001; }, at),
            nullptr);
}

}  // namespace
