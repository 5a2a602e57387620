// Token counts of a whole request, as OpenAI bills a chat completion, over the
// provider-neutral Conversation view (so every provider's adapter gets it).
//
// The rules (OpenAI cookbook "How to count tokens with tiktoken", and for
// tools the community-verified formula of hmarr/openai-chat-tokens, which
// reproduces the API's prompt_tokens for function definitions):
//   every message         3 + tokens(role) + tokens(content)
//   a message `name`      + tokens(name) + 1
//   every tool call       + tokens(function name) + tokens(arguments) + 3
//                         (the formula for `function_call`, applied per call:
//                         an assumption, OpenAI documents no tool_calls rule)
//   the reply primer      + 3 per request (<|start|>assistant<|message|>)
//   tool definitions      + tokens(schema rendered as OpenAI's TypeScript-like
//                         "namespace functions {...}" text) + 9,
//                         - 4 if the request has a system message
// The adapter puts the tool definitions in Conversation::fixed_overhead_text
// (raw JSON); BillingRules::render_tools turns them into what the model sees
// before counting (providers::billing_rules_for() sets OpenAI's renderer), and
// the result is cached by the raw text's hash. Without a renderer the raw text
// is counted. Generation config (fixed_overhead_bytes) is not billed as prompt
// tokens and is not counted.
// Opaque parts (images, files) are estimated from their JSON size, capped at
// BillingRules::opaque_cap (a high-detail image is at most ~1.5k tokens).
// For Gemini and Claude the same rules run over the calibrated estimator; the
// calibration absorbs their different per-message overheads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/token_counter.hpp"
#include "pruning/tokenizer/count_cache.hpp"

namespace td::tok {

struct BillingRules {
  std::uint32_t per_message = 3;
  std::uint32_t per_name = 1;
  std::uint32_t per_tool_call = 3;
  std::uint32_t reply_priming = 3;
  std::uint32_t tools_base = 9;
  std::uint32_t tools_system_discount = 4;
  std::uint64_t opaque_cap = 1536;
  // Raw tool definitions -> the text the model sees ("" = no function tools).
  std::string (*render_tools)(std::string_view raw) = nullptr;
};

struct ConversationCount {
  std::uint64_t total = 0;                 // what the request's prompt is billed
  std::vector<std::uint64_t> per_message;  // parallel to Conversation::messages; 0 if removed
  std::uint64_t tools = 0;                 // tool definitions, with their overhead
  std::uint64_t priming = 0;               // reply primer
  std::uint64_t cache_hits = 0;            // messages answered by the cache
};

// Counts one message (its own overhead included).
std::uint64_t count_message(const pruning::Message& m, const pruning::TokenCounter& counter,
                            const BillingRules& rules = {});

// The content hash under which a message's count is cached (salted with the
// counter's cache_salt()).
std::uint64_t message_hash(const pruning::Message& m, std::uint64_t salt);

// Counts the request. With a cache and a counter whose cache_salt() is
// non-zero, every message is looked up by its content hash first and only the
// new ones are counted. Messages marked removed count 0.
ConversationCount count_conversation(const pruning::Conversation& conv, const pruning::TokenCounter& counter,
                                     CountCache* cache = nullptr, const BillingRules& rules = {});

}  // namespace td::tok
