#include "pruning/tokenizer/count_cache.hpp"

#include <limits>

namespace td::tok {
namespace {
std::uint64_t normal_key(std::uint64_t key) { return key ? key : 1; }
}  // namespace

CountCache::CountCache(std::size_t max_entries) {
  std::size_t sets = 1;
  while (sets * kShards * kWays < max_entries) sets <<= 1;
  sets_per_shard_ = sets;
  for (Shard& s : shards_) s.entries = std::make_unique<Entry[]>(sets * kWays);
}

std::optional<std::uint64_t> CountCache::get(std::uint64_t key) const {
  key = normal_key(key);
  const Shard& s = shard(key);
  std::lock_guard lock(s.mu);
  Entry* e = set(s, key);
  for (std::size_t w = 0; w < kWays; ++w) {
    if (e[w].key == key) {
      e[w].stamp = ++s.clock;
      ++s.stats.hits;
      return e[w].count;
    }
  }
  ++s.stats.misses;
  return std::nullopt;
}

void CountCache::put(std::uint64_t key, std::uint64_t count) {
  key = normal_key(key);
  if (count > std::numeric_limits<std::uint32_t>::max()) return;  // not worth a slot
  Shard& s = shard(key);
  std::lock_guard lock(s.mu);
  Entry* e = set(s, key);
  Entry* victim = &e[0];
  for (std::size_t w = 0; w < kWays; ++w) {
    if (e[w].key == key || e[w].key == 0) {
      victim = &e[w];
      break;
    }
    // Oldest by the shard clock (unsigned distance survives wrap-around).
    if (s.clock - e[w].stamp > s.clock - victim->stamp) victim = &e[w];
  }
  if (victim->key != 0 && victim->key != key) ++s.stats.evictions;
  victim->key = key;
  victim->count = static_cast<std::uint32_t>(count);
  victim->stamp = ++s.clock;
  ++s.stats.inserts;
}

CountCache::Stats CountCache::stats() const {
  Stats total;
  for (const Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    total.hits += s.stats.hits;
    total.misses += s.stats.misses;
    total.inserts += s.stats.inserts;
    total.evictions += s.stats.evictions;
  }
  return total;
}

}  // namespace td::tok
