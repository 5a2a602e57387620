// The decision a request's diet turns on, made once its tokens are counted
// and before anything is pruned (the steps: proxy/filters/diet.hpp):
//
//   parse -> count (Counted) -> decide (Decision) -> prune -> write
//
// A policy has to see the count before it decides how hard to prune, so
// decide() takes the count; the pipeline then does what the decision says
// and reads neither `enabled` nor `shadow` itself. Pure: no clock, no state.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "pruning/mode.hpp"
#include "pruning/profile.hpp"

namespace td::pruning {

// The request as the client sent it, counted as the pipeline bills it
// (count_tokens() in pruning/pipeline.hpp).
struct Counted {
  std::uint64_t total = 0;              // fixed + every message
  std::uint64_t fixed = 0;              // the reply primer and the tool definitions
  std::vector<std::uint64_t> messages;  // parallel to Conversation::messages (0: removed)
};

// What the pipeline needs besides the conversation.
struct PipelineSettings {
  const Profile* profile = nullptr;  // the strategies' constants (set whenever the pipeline runs)
  bool write = false;  // the pruned conversation replaces the request; false (shadow, or
                       // nothing to do): savings are computed on a copy and reported only
};

// Whether the request goes upstream now.
struct Admission {
  enum class Kind : std::uint8_t {
    Send,    // now
    Wait,    // after `wait` (the proxy holds it on a timer, never a thread)
    Reject,  // answered 429 by the proxy, Retry-After `wait` (rounded up to seconds)
  };
  Kind kind = Kind::Send;
  std::chrono::milliseconds wait{0};
};

struct Decision {
  Mode mode = Mode::None;
  PipelineSettings settings;
  Admission admission;
};

// Today's rule, by the profile alone: disabled -> None (nothing runs);
// shadow -> Standard, written nowhere; otherwise Standard, written. Every
// request is sent now. `counted` is what a policy that looks at the request's
// size will read; this rule does not.
Decision decide(const Counted& counted, const Profile& profile);

}  // namespace td::pruning
