#include "pruning/strategies/pairing_repair.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pruning/strategies/working_memory.hpp"

namespace td::pruning {

namespace {

// Views into the call's part, which stays put while the messages move (a
// moved vector keeps its buffer).
struct Call {
  std::string_view id, name;
  bool answered = false;
};

// Removes the tool results of `m` that answer none of `calls` (marking the
// ones they answer); drops the message if that empties it.
void match_results(Message& m, std::vector<Call>& calls, StrategyStats& st) {
  bool touched = false;
  for (std::size_t j = 0; j < m.parts.size();) {
    Part& p = m.parts[j];
    if (p.kind != PartKind::ToolResult) {
      ++j;
      continue;
    }
    Call* match = nullptr;
    for (Call& c : calls)
      if (!c.answered && c.id == p.id) {
        match = &c;
        break;
      }
    if (match) {
      match->answered = true;
      ++j;
      continue;
    }
    st.add(0, p.text.size(), 0);
    m.parts.erase(m.parts.begin() + static_cast<std::ptrdiff_t>(j));
    touched = true;
  }
  if (!touched) return;
  m.changed = true;
  if (m.parts.empty()) m.removed = true;
}

Message unavailable_result(const Call& c) {
  Message m;
  m.role = Role::Tool;
  m.changed = true;
  Part p;
  p.kind = PartKind::ToolResult;
  p.id = std::string(c.id);
  p.name = std::string(c.name);
  p.text = kUnavailableResult;
  p.edited = true;
  m.parts.push_back(std::move(p));
  return m;
}

}  // namespace

StrategyStats repair_pairing(Conversation& conv) {
  StrategyStats st{.name = "pairing_repair"};
  auto& msgs = conv.messages;
  const std::size_t n = msgs.size();
  std::vector<Message> out;
  out.reserve(n + 4);

  std::size_t i = 0;
  while (i < n) {
    if (msgs[i].removed || msgs[i].role != Role::Assistant) {
      // Before any assistant message nothing can be answered.
      std::vector<Call> none;
      if (!msgs[i].removed) match_results(msgs[i], none, st);
      out.push_back(std::move(msgs[i++]));
      continue;
    }
    // An assistant message (with any directly following ones) and its block.
    std::vector<Call> calls;
    while (i < n && (msgs[i].removed || msgs[i].role == Role::Assistant)) {
      if (!msgs[i].removed)
        for (const Part& p : msgs[i].parts)
          if (p.kind == PartKind::ToolCall) calls.push_back({p.id, p.name});
      out.push_back(std::move(msgs[i++]));
    }
    std::size_t insert_at = out.size();
    bool in_results = true;  // still in the tool results right after the call
    while (i < n && (msgs[i].removed || msgs[i].role != Role::Assistant)) {
      Message& m = msgs[i];
      if (!m.removed) match_results(m, calls, st);
      bool tool = !m.removed && is_tool_message(m);
      out.push_back(std::move(msgs[i++]));
      if (in_results && tool)
        insert_at = out.size();
      else if (!out.back().removed && !tool)
        in_results = false;
    }
    std::vector<Message> missing;
    for (const Call& c : calls)
      if (!c.answered) missing.push_back(unavailable_result(c));
    if (missing.empty()) continue;
    st.hits += static_cast<std::uint32_t>(missing.size());
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(insert_at), std::make_move_iterator(missing.begin()),
               std::make_move_iterator(missing.end()));
  }
  msgs = std::move(out);
  return st;
}

}  // namespace td::pruning
