#include "pruning/strategies/identical_tool_outputs.hpp"

#include <string_view>
#include <unordered_map>

#include "pruning/strategies/common.hpp"

namespace td::pruning {

namespace {

struct FirstCopy {
  std::uint32_t message;
  const std::string* id;
};

}  // namespace

StrategyStats dedup_tool_outputs(Conversation& conv, const Profile& profile, std::uint32_t limit) {
  StrategyStats st{.name = "identical_tool_outputs"};
  if (!profile.dedup_tool_outputs) return st;
  auto& msgs = conv.messages;
  if (limit > msgs.size()) limit = static_cast<std::uint32_t>(msgs.size());

  // Keys are views into the first copies' texts, which are never edited here
  // (a first copy is never a later copy) and the vector is not resized.
  std::unordered_map<std::string_view, FirstCopy, detail::TextHash> first;
  std::unordered_map<std::string_view, std::uint32_t, detail::TextHash> answers;  // results seen per call id
  detail::ToolNames names(profile);

  for (std::uint32_t i = 0; i < limit; ++i) {
    Message& m = msgs[i];
    names.learn(m);
    if (m.removed) continue;
    for (Part& p : m.parts) {
      if (p.kind != PartKind::ToolResult) continue;
      ++answers[p.id];
      if (p.text.size() < profile.dedup_min_bytes) continue;
      auto [it, inserted] = first.try_emplace(std::string_view{p.text}, FirstCopy{i, &p.id});
      if (inserted || !p.editable || detail::excluded_tool(profile, names.of_result(p))) continue;
      const FirstCopy& f = it->second;
      std::string marker = "[same output as tool call " + *f.id;
      if (answers[*f.id] > 1) marker += " (message " + std::to_string(f.message + 1) + ")";
      marker += ": " + std::to_string(p.text.size()) + " bytes omitted]";
      if (marker.size() >= p.text.size()) continue;
      st.add(i, p.text.size(), marker.size());
      set_text(m, p, std::move(marker));
    }
  }
  return st;
}

}  // namespace td::pruning
