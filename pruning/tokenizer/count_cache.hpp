// A bounded, thread-safe map from a content hash to a token count, so a
// history that is resent every turn is counted once: a resent message costs a
// hash and a lookup.
//
// Sharded (16 shards, each behind its own mutex, picked by the key's top
// bits) and set-associative (8 ways per set, least recently used evicted
// within the set): memory is fixed at construction, 16 bytes per entry.
// Keys are 64-bit content hashes (XXH3); two different messages sharing one
// would share a count, with odds of about n^2 / 2^65 for n cached messages.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

namespace td::tok {

class CountCache {
 public:
  // Holds at most `max_entries` counts (rounded up to a power of two, at
  // least one set per shard).
  explicit CountCache(std::size_t max_entries = std::size_t{1} << 18);

  std::optional<std::uint64_t> get(std::uint64_t key) const;
  void put(std::uint64_t key, std::uint64_t count);

  struct Stats {
    std::uint64_t hits = 0, misses = 0, inserts = 0, evictions = 0;
  };
  Stats stats() const;
  std::size_t capacity() const { return kShards * sets_per_shard_ * kWays; }
  std::size_t memory_bytes() const { return capacity() * sizeof(Entry); }

 private:
  static constexpr std::size_t kShards = 16, kWays = 8;
  struct Entry {
    std::uint64_t key = 0;  // 0 = empty
    std::uint32_t count = 0;
    std::uint32_t stamp = 0;  // shard clock at last use
  };
  struct alignas(64) Shard {
    mutable std::mutex mu;
    mutable std::uint32_t clock = 0;
    mutable Stats stats;  // guarded by mu, like everything here
    std::unique_ptr<Entry[]> entries;
  };
  Shard& shard(std::uint64_t key) const { return shards_[key >> 60]; }
  Entry* set(const Shard& s, std::uint64_t key) const {
    return s.entries.get() + (key & (sets_per_shard_ - 1)) * kWays;
  }

  std::size_t sets_per_shard_;
  mutable std::array<Shard, kShards> shards_;
};

}  // namespace td::tok
