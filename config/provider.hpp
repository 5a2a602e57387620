// Which provider a request goes to: the one provider enum of tokendiet, the
// names of config.upstreams (kProviders in config.hpp). The proxy decides it
// from the path (proxy/phases/routing.hpp) for every request, chat or not; it
// picks the error body shape (proxy/phases/errors.hpp) and is the ledger's
// provider column. The wire format of a chat request is another question,
// answered by providers/api.hpp's Api (OpenAI alone speaks two: chat
// completions and Responses).
#pragma once

#include <cstdint>
#include <string_view>

namespace td::config {

enum class Provider : std::uint8_t { openai, gemini, anthropic, other };

// The name the log line and the ledger use ("openai", ..., "other").
constexpr std::string_view to_string(Provider p) {
  switch (p) {
    case Provider::openai:
      return "openai";
    case Provider::gemini:
      return "gemini";
    case Provider::anthropic:
      return "anthropic";
    case Provider::other:
      return "other";
  }
  return "other";
}

}  // namespace td::config
