// Old thinking (F10): reasoning the model wrote in earlier turns.
//
// Removes: the Thinking parts of stale assistant messages (before the
// frontier, and never in the last `old_thinking_keep_last_messages` messages nor
// in the last assistant turn, whatever the profile says).
//   - A Thinking part without a signature (DeepSeek/OpenRouter
//     reasoning_content, Gemini thought text) is blanked to "": the field
//     stays, because DeepSeek's thinking mode wants reasoning_content present
//     on assistant messages that carry tool calls.
//   - A Thinking part with a signature (Anthropic thinking, Gemini thought
//     with thoughtSignature) is never edited: a changed signed block is
//     rejected. It is dropped whole, which Anthropic allows for every turn
//     but the last assistant turn (the API strips earlier thinking itself)
//     and Gemini allows for every turn but the current one (only the current
//     turn's signatures are validated). Gemini's signatures on functionCall
//     parts live on ToolCall parts and are never touched.
//   - Opaque parts (redacted_thinking) are kept.
//   - A message whose every part would go keeps its thinking: an assistant
//     message is never emptied or removed, so roles keep alternating.
// Why it is safe: the model acted on that reasoning long ago; its calls,
// results and answers, which carry what it concluded, all stay.
// Reports: hits = thinking parts blanked or dropped, bytes_saved = their text.
#pragma once

#include <cstdint>

#include "pruning/conversation.hpp"
#include "pruning/profile.hpp"
#include "pruning/strategy_options.hpp"
#include "pruning/strategy_stats.hpp"

namespace td::pruning {

// The profile fields it reads (pruning/strategy_options.hpp).
// clang-format off
#define TD_OLD_THINKING_OPTIONS(X) \
  X(old_thinking) \
  X(old_thinking_keep_last_messages)
// clang-format on
TD_STRATEGY_OPTIONS(OldThinkingOptions, TD_OLD_THINKING_OPTIONS);

// Where old thinking stops whatever the frontier: the last assistant message
// and the last `old_thinking_keep_last_messages` messages of the request. It is
// the one fact a lossy strategy reads past the frontier, so the pipeline
// computes it on the whole request and hands it to its plan, which holds
// only the messages it may prune (pruning/lossy_plan.hpp).
std::uint32_t old_thinking_end(const Conversation& conv, const OldThinkingOptions& opt);

// Prunes the thinking of messages before `limit`, which the caller clips to
// old_thinking_end() of the whole request (the plan's copy holds only the
// messages it may prune, so the strategy cannot find that end itself).
StrategyStats old_thinking(Conversation& conv, const OldThinkingOptions& opt, std::uint32_t limit);

}  // namespace td::pruning
