// Token counts of a Conversation, as OpenAI bills a chat request: every
// message costs its text plus a fixed frame (role and delimiters), a name its
// tokens + 1, a tool call its name and arguments, and the request a reply
// primer and its tool definitions. These delegate to td::tok::count_message /
// count_conversation (pruning/tokenizer/message_count.hpp, where the rules and
// their sources are documented). Exact per-token rules differ per provider;
// the pipeline only needs consistent counts to compare a message with its
// pruned form, and the same counter is used for both.
#pragma once

#include <cstdint>

#include "pruning/conversation.hpp"
#include "pruning/token_counter.hpp"

namespace td::pruning {

inline constexpr std::uint64_t kTokensPerMessage = 3;   // <|start|>role ... <|end|>
inline constexpr std::uint64_t kTokensPerToolCall = 3;  // the call's frame
inline constexpr std::uint64_t kTokensReplyPrimer = 3;  // <|start|>assistant<|message|>

// 0 for a removed message.
std::uint64_t message_tokens(const Message& m, const TokenCounter& counter);

// Every message, the reply primer and the fixed overhead.
std::uint64_t conversation_tokens(const Conversation& conv, const TokenCounter& counter);

}  // namespace td::pruning
