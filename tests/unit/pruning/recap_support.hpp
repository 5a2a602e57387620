// What the recap's tests share (recap_test.cpp, recap_stability_test.cpp):
// requests of a recorded session (pruning::request_ends() says where each
// ended), a profile with only the threshold set, and
// the longest trajectories with a threshold their requests pass.
#pragma once

#include <cstdint>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/loss_cap.hpp"  // request_ends(): where each request of a session ended
#include "pruning/profile.hpp"

namespace td::pruning::test {

// The request holding the first `n` messages.
inline Conversation prefix(const Conversation& c, std::size_t n) {
  Conversation p = c;
  p.messages.resize(n);
  return p;
}

inline Profile recap_profile(std::uint64_t threshold) {
  Profile p;
  p.token_threshold = threshold;
  return p;
}

// Over the longest sessions' requests as the diet sends them (about 26-31k
// quarter-byte tokens at most, under the stale cuts), so the recap comes.
inline constexpr std::uint64_t kThreshold = 15000;

inline const char* const kLongest[] = {"mini-swe-agent-12", "mini-swe-agent-11", "mini-swe-agent-10",
                                       "mini-swe-agent-6"};

}  // namespace td::pruning::test
