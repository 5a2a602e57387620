#include "pruning/strategies/old_thinking.hpp"

#include <algorithm>

#include "pruning/strategies/common.hpp"

namespace td::pruning {

std::uint32_t old_thinking_end(const Conversation& conv, const OldThinkingOptions& opt) {
  const auto& msgs = conv.messages;
  const auto size = static_cast<std::uint32_t>(msgs.size());
  std::uint32_t last_assistant = size;
  for (std::uint32_t i = size; i-- > 0;)
    if (msgs[i].role == Role::Assistant && !msgs[i].removed) {
      last_assistant = i;
      break;
    }
  const std::uint32_t keep_from =
      size > opt.old_thinking_keep_last_messages ? size - opt.old_thinking_keep_last_messages : 0;
  return std::min(last_assistant, keep_from);
}

StrategyStats old_thinking(Conversation& conv, const OldThinkingOptions& opt, std::uint32_t limit) {
  StrategyStats st{.name = "old_thinking"};
  if (!opt.old_thinking) return st;
  auto& msgs = conv.messages;
  limit = std::min(limit, static_cast<std::uint32_t>(msgs.size()));

  for (std::uint32_t i = 0; i < limit; ++i) {
    Message& m = msgs[i];
    if (m.role != Role::Assistant || m.removed) continue;
    bool has_other =
        std::any_of(m.parts.begin(), m.parts.end(), [](const Part& p) { return p.kind != PartKind::Thinking; });
    for (std::size_t j = 0; j < m.parts.size();) {
      Part& p = m.parts[j];
      if (p.kind != PartKind::Thinking || p.text.empty()) {
        ++j;
        continue;
      }
      if (p.signature.empty() && p.editable) {
        st.add(i, p.text.size(), 0);
        set_text(m, p, std::string{});
        ++j;
      } else if (!p.signature.empty() && has_other) {
        st.add(i, p.text.size() + p.signature.size(), 0);
        m.parts.erase(m.parts.begin() + static_cast<std::ptrdiff_t>(j));
        m.changed = true;
      } else {
        ++j;
      }
    }
  }
  return st;
}

}  // namespace td::pruning
