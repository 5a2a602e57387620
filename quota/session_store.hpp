// What the proxy remembers of each agent session between its requests
// (docs/design.md §Policy): survival's level and latch, whether thinking is
// lowered, and how much of the last prompt the provider cached, so the next
// request's cache reads are not counted against an input quota that does
// not count them (Anthropic).
//
// A session is the x-tokendiet-session header's value where the client
// sends one, else the start of its history (system messages and first user
// message) and the API key: the same agent conversation maps to the same
// session on every replica and after a restart. The memory is bounded
// (max_sessions, least recently used out, and an idle session forgotten
// after kIdleExpiry) and rebuildable: a session forgotten is decided afresh
// from the runway. Thread-safe, sharded; the clock is passed in.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "pruning/decision.hpp"

namespace td::quota {

struct SessionFacts {
  pruning::SessionMemory memory;
  // Provider tokens of the last prompt that its cache holds now (read or
  // written by the last request), and when that bill came.
  double cached_prefix = 0;
  std::chrono::steady_clock::time_point billed_at{};
};

class SessionStore {
 public:
  using Clock = std::chrono::steady_clock;
  explicit SessionStore(std::size_t max_sessions = 65'536) : max_per_shard_(max_sessions / kShards + 1) {}
  SessionStore(const SessionStore&) = delete;
  SessionStore& operator=(const SessionStore&) = delete;

  // The session's facts (fresh ones when unknown or idle too long).
  SessionFacts get(std::uint64_t session, Clock::time_point now);
  // After a decision: the session's memory now.
  void remember(std::uint64_t session, const pruning::SessionMemory& memory, Clock::time_point now);
  // A bill came: the prompt the provider's cache now holds.
  void billed(std::uint64_t session, double cached_prefix, Clock::time_point now);

  std::size_t size() const;

  static constexpr std::chrono::hours kIdleExpiry{1};

 private:
  struct Entry {
    SessionFacts facts;
    Clock::time_point used{};
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<std::uint64_t, Entry> entries;
  };
  static constexpr std::size_t kShards = 16;
  Shard& shard_of(std::uint64_t session) { return shards_[(session >> 7) % kShards]; }
  Entry& entry(Shard& s, std::uint64_t session, Clock::time_point now);

  std::size_t max_per_shard_;
  std::array<Shard, kShards> shards_;
};

}  // namespace td::quota
