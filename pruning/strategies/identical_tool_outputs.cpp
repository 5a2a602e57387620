#include "pruning/strategies/identical_tool_outputs.hpp"

#include <string_view>
#include <unordered_map>

#include "pruning/strategies/common.hpp"
#include "pruning/text_hash.hpp"

namespace td::pruning {

namespace {

struct FirstCopy {
  std::uint32_t message;
  const std::string* id;
  const std::string* text;
};

// A text's content hash is already a good hash: use its low word as is.
struct Low64 {
  std::size_t operator()(std::uint64_t h) const { return static_cast<std::size_t>(h); }
};

}  // namespace

StrategyStats identical_tool_outputs(Conversation& conv, const Profile& profile, std::uint32_t limit) {
  StrategyStats st{.name = "identical_tool_outputs"};
  if (!profile.identical_tool_outputs) return st;
  auto& msgs = conv.messages;
  if (limit > msgs.size()) limit = static_cast<std::uint32_t>(msgs.size());

  // First copies by their texts' content hash (text_hash.hpp: computed once
  // per text and shared with the count cache and the memo); the pointers are
  // into first copies, which are never edited here (a first copy is never a
  // later copy), and the vector is not resized.
  std::unordered_map<std::uint64_t, FirstCopy, Low64> first;
  std::unordered_map<std::string_view, std::uint32_t, detail::TextHash> answers;  // results seen per call id
  detail::ToolNames names(profile);

  for (std::uint32_t i = 0; i < limit; ++i) {
    Message& m = msgs[i];
    names.learn(m);
    if (m.removed) continue;
    for (Part& p : m.parts) {
      if (p.kind != PartKind::ToolResult) continue;
      ++answers[p.id];
      if (p.text.size() < profile.identical_tool_outputs_min_bytes) continue;
      auto [it, inserted] = first.try_emplace(text_hash(p).lo, FirstCopy{i, &p.id, &p.text});
      if (inserted || !p.editable || detail::excluded_tool(profile, names.of_result(p))) continue;
      const FirstCopy& f = it->second;
      if (*f.text != p.text) continue;  // 64-bit collision: a different text
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
