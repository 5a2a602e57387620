#include "pruning/recall_span.hpp"

#include <algorithm>

#include "pruning/strategies/common.hpp"

namespace td::pruning {

namespace {

void body(std::string& out, std::string_view text) {
  out += text;
  if (!text.empty() && text.back() != '\n') out += '\n';
}

}  // namespace

std::string recall_span_text(const Conversation& conv, std::uint32_t start, std::uint32_t end) {
  std::string out;
  end = std::min<std::uint32_t>(end, static_cast<std::uint32_t>(conv.messages.size()));
  for (std::uint32_t i = start; i < end; ++i) {
    const Message& m = conv.messages[i];
    if (m.removed || detail::is_system(m)) continue;
    for (const Part& p : m.parts) {
      switch (p.kind) {
        case PartKind::Text:
          out += m.role == Role::Assistant ? "[assistant]\n" : "[user]\n";
          body(out, p.text);
          break;
        case PartKind::ToolCall:
          out += "[call " + p.name + " " + p.id + "]\n";
          body(out, p.text);
          break;
        case PartKind::ToolResult:
          out += "[result " + p.id + "]\n";
          body(out, p.text);
          break;
        case PartKind::Thinking:
          out += "[thinking: not shown]\n";
          break;
        case PartKind::Opaque:
          out += "[part of " + std::to_string(p.opaque_bytes) + " bytes: not text]\n";
          break;
      }
    }
  }
  return out;
}

}  // namespace td::pruning
