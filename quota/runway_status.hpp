// One runway as the dashboard shows it (docs/design.md §Dashboard, "runways"):
// its tightest bucket now, and what the upstream's rate-limit headers last
// said of it. Both stores list their runways this way (RunwayStore::list(),
// shared_state::SharedStore::list_runways()); the proxy's stats endpoint
// renders them. Pure: the time is the caller's.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "providers/provider.hpp"
#include "providers/rate_limits.hpp"
#include "pruning/runway.hpp"

namespace td::quota {

// What an answer's rate-limit headers said of a runway, kept as told (the
// requests' window is not a runway bucket: it is shown, never enforced).
struct HeaderNote {
  std::optional<std::int64_t> requests_limit, requests_remaining, tokens_remaining;
  std::optional<providers::SysTime> requests_reset, tokens_reset;
  providers::SysTime seen{};  // when the answer came; zero: no headers yet
  bool known() const { return seen != providers::SysTime{}; }
};

// The headers' note of an answer (the tokens' window: OpenAI's combined one,
// Anthropic's input one).
HeaderNote header_note(const providers::RateLimits& headers, providers::SysTime received);

struct RunwayStatus {
  providers::Provider provider = providers::Provider::other;
  std::string client;                    // runway_client(): a key's fingerprint, `anon-…`, or "" (anonymous, shared)
  std::string group;                     // the quota group
  double limit = 0;                      // the tightest bucket's limit per window; 0: no limit known
  double level = 0;                      // its tokens now (below 0: taken ahead of the refill)
  std::chrono::milliseconds full_in{0};  // until it is full again at its refill
  HeaderNote headers;
  bool shared = false;  // the replicas' shared runway (Redis), not this process's
};

// The status of runway `key` (runway_key()) from its buckets at the time
// they were viewed; nullopt for a key not made by runway_key().
std::optional<RunwayStatus> runway_status(std::string_view key, const pruning::Runway& now);

}  // namespace td::quota
