// Upstream rate-limit headers, read into one struct (the TPM runway's
// correction, F16).
//
//   OpenAI     x-ratelimit-{limit,remaining}-{requests,tokens},
//              x-ratelimit-reset-{requests,tokens} as Go durations ("6m0s",
//              "12ms", "1.5s", "0s"): relative to the response.
//   Anthropic  anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-
//              {limit,remaining,reset}, reset as an RFC 3339 time.
//   All        retry-after (delay seconds or an HTTP date), retry-after-ms.
//   Gemini     sends none; its runway is tracked locally.
//
// A limit of -1 or 0 comes from a proxy in front of the provider (Azure has
// been seen doing it) and means "unknown", not "nothing left": such a window
// is reported as unknown. Pure: "now" is passed in, absolute times come out.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace td::providers {

using SysTime = std::chrono::system_clock::time_point;

struct RateWindow {
  std::optional<std::int64_t> limit;      // per window; nullopt: not sent or unknown
  std::optional<std::int64_t> remaining;  // nullopt: not sent or unknown
  std::optional<SysTime> reset;           // when `remaining` refills to `limit`
  bool known() const { return limit || remaining || reset; }
};

struct RateLimits {
  RateWindow requests;
  RateWindow tokens;                   // OpenAI: all tokens; Anthropic: the combined budget
  RateWindow input_tokens;             // Anthropic only
  RateWindow output_tokens;            // Anthropic only
  std::optional<SysTime> retry_after;  // absolute; from retry-after-ms or retry-after
  bool present() const {
    return requests.known() || tokens.known() || input_tokens.known() || output_tokens.known() ||
           retry_after.has_value();
  }
};

struct Header {
  std::string_view name;  // any case
  std::string_view value;
};

RateLimits parse_rate_limits(std::span<const Header> headers, SysTime now);

// The pieces, exposed for tests and for other header-driven features.
// "6m0s", "1h2m3.5s", "12ms", "300us", "0s" → duration; nullopt if malformed.
std::optional<std::chrono::nanoseconds> parse_go_duration(std::string_view s);
// "2024-06-01T12:00:30Z", "2024-06-01T12:00:30.123+02:00" → time point.
std::optional<SysTime> parse_rfc3339(std::string_view s);
// IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT" (plus the obsolete RFC 850 and
// asctime forms HTTP still allows).
std::optional<SysTime> parse_http_date(std::string_view s);

}  // namespace td::providers
