// The storage both quota stores keep their entries in: a map split into
// shards, each behind its own mutex, with a bound on entries per shard.
// When a shard is full, entries unused for `idle` go first, then the least
// recently used one. The clock is the caller's.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace td::quota {

template <class Key, class Value, std::size_t Shards = 16>
class BoundedShards {
 public:
  using Clock = std::chrono::steady_clock;

  BoundedShards(std::size_t max_entries, Clock::duration idle)
      : max_per_shard_(max_entries / Shards + 1), idle_(idle) {}

  // Runs `f(value, last_used)` on the entry of `key` under its shard's lock,
  // the entry created (default-constructed, last used never: a zero time
  // point) when missing; then marks it used at `now`.
  template <class F>
  decltype(auto) with(const Key& key, Clock::time_point now, F&& f) {
    Shard& s = shard_of(key);
    std::lock_guard lock(s.mu);
    auto it = s.entries.find(key);
    if (it == s.entries.end()) {
      if (s.entries.size() >= max_per_shard_) evict(s, now);
      it = s.entries.emplace(key, Entry{}).first;
    }
    const Clock::time_point last = std::exchange(it->second.used, now);
    return f(it->second.value, last);
  }

  // Runs `f(value, last_used)` on the entry of `key` if there is one, under
  // its shard's lock, without marking it used; returns whether there was.
  template <class F>
  bool peek(const Key& key, F&& f) const {
    const Shard& s = shard_of(key);
    std::lock_guard lock(s.mu);
    auto it = s.entries.find(key);
    if (it == s.entries.end()) return false;
    f(it->second.value, it->second.used);
    return true;
  }

  // Runs `f(key, value, last_used)` on every entry, one shard's lock at a
  // time (a copy of what is needed is the caller's to take).
  template <class F>
  void for_each(F&& f) const {
    for (const Shard& s : shards_) {
      std::lock_guard lock(s.mu);
      for (const auto& [key, entry] : s.entries) f(key, entry.value, entry.used);
    }
  }

  // Drops the entry of `key`, if any.
  void erase(const Key& key) {
    Shard& s = shard_of(key);
    std::lock_guard lock(s.mu);
    s.entries.erase(key);
  }

  std::size_t size() const {
    std::size_t n = 0;
    for (const Shard& s : shards_) {
      std::lock_guard lock(s.mu);
      n += s.entries.size();
    }
    return n;
  }

 private:
  struct Entry {
    Value value{};
    Clock::time_point used{};
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<Key, Entry> entries;
  };

  Shard& shard_of(const Key& key) { return shards_[std::hash<Key>{}(key) % Shards]; }
  const Shard& shard_of(const Key& key) const { return shards_[std::hash<Key>{}(key) % Shards]; }

  void evict(Shard& s, Clock::time_point now) {
    std::erase_if(s.entries, [&](const auto& kv) { return now - kv.second.used > idle_; });
    if (s.entries.size() < max_per_shard_) return;
    auto oldest = std::min_element(s.entries.begin(), s.entries.end(),
                                   [](const auto& a, const auto& b) { return a.second.used < b.second.used; });
    s.entries.erase(oldest);
  }

  std::size_t max_per_shard_;
  Clock::duration idle_;
  std::array<Shard, Shards> shards_;
};

}  // namespace td::quota
