// Reads one provider's usage object ("usage" / "usageMetadata") into raw
// counts, and turns raw counts into the neutral Usage (see usage.hpp for what
// each Usage field means per provider).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "providers/api.hpp"
#include "providers/usage.hpp"

namespace td::providers {

// The counts as the provider spells them, before normalisation.
struct RawUsage {
  std::optional<std::int64_t> input;        // prompt_tokens | input_tokens | promptTokenCount
  std::optional<std::int64_t> output;       // completion_tokens | output_tokens | candidatesTokenCount
  std::optional<std::int64_t> cache_read;   // cached_tokens | cache_read_input_tokens | cachedContentTokenCount
  std::optional<std::int64_t> cache_write;  // cache_creation_input_tokens
  std::optional<std::int64_t> reasoning;    // reasoning_tokens | thoughtsTokenCount
  std::optional<std::int64_t> tool_prompt;  // toolUsePromptTokenCount (Gemini)

  bool any() const { return input || output || cache_read || cache_write || reasoning || tool_prompt; }
};

// Parses a usage object's JSON text. Returns nullopt when it is not an object
// or carries none of the known counts (e.g. Vertex's first-chunk
// {"trafficType": "ON_DEMAND"}).
std::optional<RawUsage> read_usage_object(Api api, std::string_view json);

// Anthropic's message_delta usage updates only the counts it carries.
void merge_into(RawUsage& base, const RawUsage& update);

Usage normalise(Api api, const RawUsage& raw);

// Whether a streamed response of `api` reports usage only when the request
// asks for it (OpenAI chat: stream_options.include_usage).
bool stream_usage_on_request(Api api);

}  // namespace td::providers
