// Pairing repair (F13; docs/design.md §Strategies), always the last step.
//
// Guarantees every provider's pairing rule on the request as sent:
//   - a tool call of an assistant message is answered by a tool result with
//     its id among the messages that follow it, up to the next assistant
//     message (its "block"); a call left unanswered gets a result inserted
//     right after the tool results that follow the call (or right after the
//     assistant message when there are none):
//       role tool, the call's id and name, text
//       "[tool result unavailable: elided by context management]"
//   - a tool result whose id answers no unanswered call of its block (or
//     that comes before any assistant message) is removed; its message goes
//     too if nothing else is left in it.
// Ids may be reused once answered, so a result matches the first unanswered
// call with its id in its own block only. No role is ever invented (the
// inserted message is a tool result, which the adapters render in their own
// form), and ids are kept exactly. Removed messages are skipped.
// Why it is safe: a request with an orphan either way is rejected by OpenAI,
// Anthropic and Gemini alike; this only ever makes such a request valid.
// Reports: hits = results inserted + results removed, bytes_saved = bytes of
// the removed results.
#pragma once

#include "pruning/conversation.hpp"
#include "pruning/strategy_stats.hpp"

namespace td::pruning {

inline constexpr const char* kUnavailableResult = "[tool result unavailable: elided by context management]";

StrategyStats pairing_repair(Conversation& conv);

}  // namespace td::pruning
