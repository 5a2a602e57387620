// What the upstream's rate-limit headers said about one response, held by
// RequestContext::rate_limit (filled by the usage filter) for the TPM ledger
// and survival mode.
#pragma once

#include <chrono>

#include "providers/rate_limits.hpp"

namespace td::proxy {

struct RateLimitInfo {
  providers::RateLimits limits;                   // absolute reset times
  std::chrono::system_clock::time_point received;  // when the headers arrived
};

}  // namespace td::proxy
