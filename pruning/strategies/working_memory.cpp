#include "pruning/strategies/working_memory.hpp"

#include <algorithm>

namespace td::pruning {

bool is_tool_message(const Message& m) {
  if (m.role == Role::Tool) return true;
  for (const Part& p : m.parts)
    if (p.kind == PartKind::ToolResult) return true;
  return false;
}

namespace {

bool is_system(const Message& m) { return m.role == Role::System || m.system_field; }
bool is_user_text(const Message& m) { return m.role == Role::User && !is_tool_message(m); }

std::uint32_t tool_results_in(const Message& m) {
  std::uint32_t n = 0;
  for (const Part& p : m.parts) n += p.kind == PartKind::ToolResult;
  if (n == 0 && m.role == Role::Tool) n = 1;
  return n;
}

}  // namespace

WorkingMemory working_memory(const Conversation& conv, const WorkingMemoryOptions& opt) {
  WorkingMemory wm;
  const auto& msgs = conv.messages;
  const auto size = static_cast<std::uint32_t>(msgs.size());

  const Message* prev = nullptr;  // previous non-system message
  for (std::uint32_t i = 0; i < size; ++i) {
    const Message& m = msgs[i];
    if (is_system(m)) continue;
    bool starts = prev == nullptr || (is_user_text(m) && !is_user_text(*prev)) ||
                  (m.role == Role::Assistant && is_tool_message(*prev));
    if (starts) wm.turn_start.push_back(i);
    prev = &m;
  }

  const std::uint32_t window = std::max<std::uint32_t>(opt.window_turns, 1);
  const std::uint32_t step = std::max<std::uint32_t>(opt.frontier_step_turns, 1);
  const std::uint32_t turns = wm.turns();

  // A grid point g is allowed once the history holds `window` turns after
  // it (the last one may be open: its first message is there) and
  // `keep_tool_uses` tool results from its start on. Both only grow with the
  // history, so an allowed point stays allowed, and the shortest history that
  // allowed it, [0, end), is the same in every later request.
  for (std::uint32_t g = step; g + window <= turns; g += step) {
    std::uint32_t end = wm.turn_start[g + window - 1] + 1;
    std::uint32_t tools = 0;
    for (std::uint32_t i = wm.turn_start[g]; i < end; ++i) tools += tool_results_in(msgs[i]);
    while (tools < opt.keep_tool_uses && end < size) tools += tool_results_in(msgs[end++]);
    if (tools < opt.keep_tool_uses) break;  // later points have even fewer
    wm.grid.push_back(g);
    wm.grid_eligible_end.push_back(end);
  }
  return wm;
}

}  // namespace td::pruning
