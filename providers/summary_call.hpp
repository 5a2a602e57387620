// The recap summarizer's request and answer in each provider's own shape
// (docs/design.md §Policy, the summarizer): one user message holding the
// instruction and the turns' extractive lines, the answer capped at
// `max_tokens`; the answer's text read back. Pure: the proxy sends it
// (proxy/net/recap_summarizer_net.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace td::providers {

// The path (after the upstream's path prefix) a summary request of
// `provider` ("openai", "anthropic", "gemini") for `model` goes to; "" for
// another provider.
std::string summary_request_path(std::string_view provider, std::string_view model);

// The request body: `prompt` as the one user message, no streaming.
std::string summary_request_body(std::string_view provider, std::string_view model, std::string_view prompt,
                                 std::uint32_t max_tokens);

// The answer's text (its text parts joined, trimmed); nullopt when `body` is
// not an answer of that provider or holds no text.
std::optional<std::string> summary_response_text(std::string_view provider, std::string_view body);

}  // namespace td::providers
