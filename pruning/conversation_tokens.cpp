#include "pruning/conversation_tokens.hpp"

#include "pruning/tokenizer/message_count.hpp"

namespace td::pruning {

// One set of billing rules for the whole proxy: these delegate to the
// tokenizer's message-level counting (pruning/tokenizer/message_count.hpp),
// which is what `tokendiet count --request` reports too.

std::uint64_t message_tokens(const Message& m, const TokenCounter& counter) {
  return m.removed ? 0 : tok::count_message(m, counter);
}

std::uint64_t conversation_tokens(const Conversation& conv, const TokenCounter& counter) {
  return tok::count_conversation(conv, counter).total;
}

}  // namespace td::pruning
