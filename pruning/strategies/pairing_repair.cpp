#include "pruning/strategies/pairing_repair.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pruning/strategies/working_memory.hpp"

namespace td::pruning {

namespace {

// Views into the call's part (no message moves while they are in use).
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

StrategyStats pairing_repair(Conversation& conv) {
  StrategyStats st{.name = "pairing_repair"};
  auto& msgs = conv.messages;
  const std::size_t n = msgs.size();
  // Results to add, each group before message `at` (ascending). Messages
  // only move when there is one: the common case changes nothing.
  struct Insert {
    std::size_t at;
    std::vector<Message> results;
  };
  std::vector<Insert> inserts;
  std::vector<Call> calls;
  std::size_t added = 0;

  std::size_t i = 0;
  while (i < n) {
    if (msgs[i].removed || msgs[i].role != Role::Assistant) {
      // Before any assistant message nothing can be answered.
      std::vector<Call> none;
      if (!msgs[i].removed) match_results(msgs[i], none, st);
      ++i;
      continue;
    }
    // An assistant message (with any directly following ones) and its block.
    calls.clear();
    while (i < n && (msgs[i].removed || msgs[i].role == Role::Assistant)) {
      if (!msgs[i].removed)
        for (const Part& p : msgs[i].parts)
          if (p.kind == PartKind::ToolCall) calls.push_back({p.id, p.name});
      ++i;
    }
    std::size_t insert_at = i;
    bool in_results = true;  // still in the tool results right after the call
    while (i < n && (msgs[i].removed || msgs[i].role != Role::Assistant)) {
      Message& m = msgs[i++];
      if (!m.removed) match_results(m, calls, st);
      const bool tool = !m.removed && is_tool_message(m);
      if (in_results && tool)
        insert_at = i;
      else if (!m.removed && !tool)
        in_results = false;
    }
    std::vector<Message> missing;
    for (const Call& c : calls)
      if (!c.answered) missing.push_back(unavailable_result(c));
    if (missing.empty()) continue;
    st.hits += static_cast<std::uint32_t>(missing.size());
    added += missing.size();
    inserts.push_back({insert_at, std::move(missing)});
  }
  if (inserts.empty()) return st;
  std::vector<Message> out;
  out.reserve(n + added);
  std::size_t k = 0;
  for (std::size_t j = 0; j <= n; ++j) {
    for (; k < inserts.size() && inserts[k].at == j; ++k)
      for (Message& r : inserts[k].results) out.push_back(std::move(r));
    if (j < n) out.push_back(std::move(msgs[j]));
  }
  msgs = std::move(out);
  return st;
}

}  // namespace td::pruning
