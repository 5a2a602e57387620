// Token usage as the upstream reported it, in one provider-neutral shape.
//
// The providers count differently; this struct fixes one meaning so totals add
// up across providers (and the ledger, TPM runway and cost report can sum them):
//
//   prompt      every input token the request was billed for: fresh input plus
//               cache reads plus cache writes.
//                 OpenAI chat   prompt_tokens             (already includes cached_tokens)
//                 Responses     input_tokens              (already includes cached_tokens)
//                 Gemini        promptTokenCount + toolUsePromptTokenCount
//                               (promptTokenCount already includes cachedContentTokenCount)
//                 Anthropic     input_tokens + cache_read_input_tokens
//                               + cache_creation_input_tokens
//                               (Anthropic's input_tokens EXCLUDES both cache counts)
//   completion  every output token billed, reasoning included.
//                 OpenAI        completion_tokens / output_tokens (include reasoning)
//                 Gemini        candidatesTokenCount + thoughtsTokenCount
//                               (candidatesTokenCount EXCLUDES thoughts)
//                 Anthropic     output_tokens (includes thinking)
//   cached_read  part of `prompt` served from the provider's prompt cache.
//   cache_write  part of `prompt` written to the cache (Anthropic only; billed
//                at 1.25x / 2x; the others write for free).
//   reasoning    part of `completion` spent thinking, where the provider says so
//                (OpenAI reasoning_tokens, Gemini thoughtsTokenCount); 0 for
//                Anthropic, which folds thinking into output_tokens.
//
// So fresh (full-price) input = prompt - cached_read - cache_write, always.
//
// The one usage type: the readers fill it, the request context carries it
// (proxy/phases/request_context.hpp) and the ledger stores its fields in
// columns of the same names. Counts are never negative: a negative count in
// a response is read as 0 (usage_fields.cpp, normalise()).
#pragma once

#include <cstdint>
#include <string>

namespace td::providers {

struct Usage {
  std::uint64_t prompt = 0;
  std::uint64_t completion = 0;
  std::uint64_t cached_read = 0;
  std::uint64_t cache_write = 0;
  std::uint64_t reasoning = 0;
  bool present = false;  // the upstream reported usage (all zeros otherwise)

  std::uint64_t total() const { return prompt + completion; }
  // 0 when a provider reports more cached tokens than prompt tokens.
  std::uint64_t fresh_prompt() const {
    const std::uint64_t cached = cached_read + cache_write;
    return prompt > cached ? prompt - cached : 0;
  }
  bool operator==(const Usage&) const = default;
};

// "prompt=.. completion=.. cached_read=.. cache_write=.. reasoning=.." for logs
// and test failure messages.
std::string to_string(const Usage& u);

}  // namespace td::providers
