// What the proxy remembers of each agent session between its requests
// (docs/design.md §Policy): survival's level and latch, whether thinking is
// lowered, how much of the last prompt the provider cached, so the next
// request's cache reads are not counted against an input quota that does
// not count them (Anthropic), and the lines its model recalled, which the
// diet keeps visible from then on (pruning/recalled_lines.hpp; docs/design.md
// §Recall).
//
// A session is the x-tokendiet-session header's value where the client
// sends one, else the agent's own session id (Claude Code's, Codex's:
// proxy/phases/agent_session.hpp), else the start of its history (system
// messages and first user message) and the API key: the same agent conversation maps to the same
// session on every replica and after a restart. The memory is bounded
// (max_sessions, least recently used out, and an idle session forgotten
// after kIdleExpiry) and rebuildable: a session forgotten is decided afresh
// from the runway. Thread-safe, sharded; the clock is passed in.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "pruning/decision.hpp"
#include "pruning/recalled_lines.hpp"
#include "quota/bounded_shards.hpp"

namespace td::quota {

struct SessionFacts {
  pruning::SessionMemory memory;
  // Provider tokens of the last prompt that its cache holds now (read or
  // written by the last request), and when that bill came.
  double cached_prefix = 0;
  std::chrono::steady_clock::time_point billed_at{};
  // The lines the session's model recalled (at most RecalledLines::kMaxAdds
  // ranges): shared with the requests that read them, replaced on a change.
  std::shared_ptr<const pruning::RecalledLines> recalled{};
};

class SessionStore {
 public:
  using Clock = std::chrono::steady_clock;
  explicit SessionStore(std::size_t max_sessions = 65'536) : entries_(max_sessions, kIdleExpiry) {}
  SessionStore(const SessionStore&) = delete;
  SessionStore& operator=(const SessionStore&) = delete;

  // The session's facts (fresh ones when unknown or idle too long).
  SessionFacts get(std::uint64_t session, Clock::time_point now) const;
  // After a decision: the session's memory now.
  void remember(std::uint64_t session, const pruning::SessionMemory& memory, Clock::time_point now);
  // Recovery's retry fitted a request of the session in `fit_tokens` (the
  // diet's) after a context-length error: remembered, the lowest kept.
  void overflowed(std::uint64_t session, std::uint64_t fit_tokens, Clock::time_point now);
  // A bill came: the prompt the provider's cache now holds.
  void billed(std::uint64_t session, double cached_prefix, Clock::time_point now);
  // The session's model recalled these ranges: added to what it recalled
  // before, in order, while there is room.
  void recalled(std::uint64_t session, const std::vector<pruning::RecalledLines::Range>& ranges, Clock::time_point now);

  std::size_t size() const { return entries_.size(); }

  static constexpr std::chrono::hours kIdleExpiry{1};

 private:
  // The session's facts to update: forgotten first if idle too long.
  template <class F>
  void update(std::uint64_t session, Clock::time_point now, F&& f);

  BoundedShards<std::uint64_t, SessionFacts> entries_;
};

}  // namespace td::quota
