#include "pruning/conversation_tokens.hpp"

namespace td::pruning {

std::uint64_t message_tokens(const Message& m, const TokenCounter& counter) {
  if (m.removed) return 0;
  std::uint64_t n = kTokensPerMessage;
  for (const Part& p : m.parts) {
    switch (p.kind) {
      case PartKind::ToolCall:
        n += kTokensPerToolCall + counter.count(p.name) + counter.count(p.text);
        break;
      case PartKind::Opaque:
        n += (p.opaque_bytes + 3) / 4;  // images and files: an estimate, never edited
        break;
      default:
        n += counter.count(p.text);
        break;
    }
  }
  return n;
}

std::uint64_t conversation_tokens(const Conversation& conv, const TokenCounter& counter) {
  std::uint64_t n = kTokensReplyPrimer;
  for (const Message& m : conv.messages) n += message_tokens(m, counter);
  if (!conv.fixed_overhead_text.empty())
    n += counter.count(conv.fixed_overhead_text);
  else
    n += (conv.fixed_overhead_bytes + 3) / 4;
  return n;
}

}  // namespace td::pruning
