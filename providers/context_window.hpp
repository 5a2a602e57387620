// How large a model's context window is, for context-overflow recovery
// (F21; proxy/filters/recovery_filter.hpp): what a provider's
// context-length error says (response_error.hpp recognises the error), and
// the windows of common models when it says nothing.
//
// The wordings read (numbers as the provider counts them):
//   OpenAI     "maximum context length is W tokens. However, your messages
//              resulted in N tokens" / "you requested N tokens (P in the
//              messages, O in the completion)"
//   Anthropic  "prompt is too long: N tokens > W maximum" / "input length and
//              `max_tokens` exceed context limit: P + O > W"
//   Gemini     "The input token count (N) exceeds the maximum number of
//              tokens allowed (W)." / Vertex "input token count is N but model
//              only supports up to W"
#pragma once

#include <cstdint>
#include <string_view>

namespace td::providers {

struct ContextOverflow {
  std::uint64_t window = 0;  // the limit the provider names (0: not said)
  std::uint64_t prompt = 0;  // the provider's count of the request's prompt (0: not said)
  std::uint64_t output = 0;  // the output it reserved for the answer, where it says (0: not said)
};

// What an error message (ResponseError::message) says about the overflow.
ContextOverflow context_overflow_in(std::string_view message);

// The context window of a common model family, input and output together
// (Gemini: the input limit); 0 when the model is not in the table. A
// `provider/` prefix is ignored; the first matching row wins.
std::uint64_t known_context_window(std::string_view model);

}  // namespace td::providers
