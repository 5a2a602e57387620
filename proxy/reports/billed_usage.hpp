// The usage filter's report (proxy/filters/usage_filter.hpp): what the
// upstream's answer said it billed and allows (docs/design.md §Usage).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "providers/rate_limits.hpp"
#include "providers/usage.hpp"

namespace td::proxy {

// What the upstream's rate-limit headers said about one response.
struct RateLimitInfo {
  providers::RateLimits limits{};                    // absolute reset times
  std::chrono::system_clock::time_point received{};  // when the headers arrived
};

struct BilledUsage {
  providers::Usage usage{};              // as the upstream reported it
  std::string response_model{};          // the model the upstream says answered; "" if unsaid
  bool context_length_exceeded = false;  // the upstream found the prompt too long
  std::string upstream_error_code{};     // error.code / type / status of an error answer ("" none)
  std::optional<RateLimitInfo> rate_limit{};
};

}  // namespace td::proxy
