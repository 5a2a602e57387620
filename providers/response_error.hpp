// What kind of error an upstream answered, for the features that react to
// one: context-overflow recovery (F21) retries a request the provider found
// too long; survival mode (F16) backs off on rate limits.
//
// Context length exceeded, as each provider says it (landscape.md §4.8):
//   OpenAI     400, error.code "context_length_exceeded" (message "maximum
//              context length"; OpenAI-compatible servers such as vLLM say
//              the same words without the code)
//   Anthropic  400 invalid_request_error "prompt is too long: N tokens > M
//              maximum" (also "input length and `max_tokens` exceed context limit")
//   Gemini     400 INVALID_ARGUMENT "The input token count (N) exceeds the
//              maximum number of tokens allowed (M)." (Vertex: "...input
//              token count is N but model only supports up to M")
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace td::providers {

struct ResponseError {
  bool is_error = false;  // status >= 400 or an error member seen
  bool context_length_exceeded = false;
  bool rate_limited = false;  // 429, RESOURCE_EXHAUSTED, rate_limit_error
  bool overloaded = false;    // 529 / overloaded_error / 503 UNAVAILABLE
  std::string code;           // error.code / error.type / error.status, whichever is set
  std::string message;        // error.message, cut to 300 bytes (for logs; never a key)
  // How long the body says to wait, where it says so: Gemini's
  // details[].RetryInfo.retryDelay ("31s"; Gemini sends no Retry-After),
  // OpenAI's "Please try again in 1.634s." (headers, when sent, are better).
  std::optional<std::chrono::milliseconds> retry_delay;
};

// status: the HTTP status (a mid-stream error event arrives with 200).
// error_json: the value of the body's top-level "error" member (an object, or
// a plain string from some servers), as ResponseFacts::error_json() has it;
// may be empty.
ResponseError classify_error(int status, std::string_view error_json);

// The same from a whole (small) JSON error body.
ResponseError classify_error_body(int status, std::string_view body);

}  // namespace td::providers
