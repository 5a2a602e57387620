#include "quota/session_store.hpp"

#include <algorithm>

namespace td::quota {

SessionStore::Entry& SessionStore::entry(Shard& s, std::uint64_t session, Clock::time_point now) {
  auto it = s.entries.find(session);
  if (it != s.entries.end() && now - it->second.used > kIdleExpiry) it->second = Entry{};
  if (it == s.entries.end()) {
    if (s.entries.size() >= max_per_shard_) {
      std::erase_if(s.entries, [&](const auto& kv) { return now - kv.second.used > kIdleExpiry; });
      if (s.entries.size() >= max_per_shard_) {
        auto oldest = std::min_element(s.entries.begin(), s.entries.end(),
                                       [](const auto& a, const auto& b) { return a.second.used < b.second.used; });
        s.entries.erase(oldest);
      }
    }
    it = s.entries.emplace(session, Entry{}).first;
  }
  it->second.used = now;
  return it->second;
}

SessionFacts SessionStore::get(std::uint64_t session, Clock::time_point now) {
  Shard& s = shard_of(session);
  std::lock_guard lock(s.mu);
  auto it = s.entries.find(session);
  if (it == s.entries.end() || now - it->second.used > kIdleExpiry) return {};
  return it->second.facts;
}

void SessionStore::remember(std::uint64_t session, const pruning::SessionMemory& memory, Clock::time_point now) {
  Shard& s = shard_of(session);
  std::lock_guard lock(s.mu);
  entry(s, session, now).facts.memory = memory;
}

void SessionStore::billed(std::uint64_t session, double cached_prefix, Clock::time_point now) {
  Shard& s = shard_of(session);
  std::lock_guard lock(s.mu);
  SessionFacts& f = entry(s, session, now).facts;
  f.cached_prefix = cached_prefix;
  f.billed_at = now;
}

std::size_t SessionStore::size() const {
  std::size_t n = 0;
  for (const Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    n += s.entries.size();
  }
  return n;
}

}  // namespace td::quota
