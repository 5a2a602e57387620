#include "pruning/strategies/trim_middle.hpp"

#include <algorithm>
#include <string>

#include "pruning/recall_span.hpp"
#include "pruning/snip.hpp"
#include "pruning/strategies/common.hpp"

namespace td::pruning {

namespace {

std::uint64_t text_bytes(const Message& m) {
  std::uint64_t b = 0;
  for (const Part& p : m.parts) b += p.text.size() + p.opaque_bytes;
  return b;
}

}  // namespace

StrategyStats trim_middle(Conversation& conv, const TrimMiddleOptions& opt, const WorkingMemory& wm,
                          std::uint32_t stale_turns, const std::vector<std::uint64_t>& message_tokens,
                          std::uint64_t total, std::uint32_t* cut_end_out) {
  StrategyStats st{.name = "trim_middle"};
  if (cut_end_out) *cut_end_out = 0;
  if (!opt.trim_middle || total <= opt.trim_middle_budget_tokens || stale_turns == 0) return st;
  auto& msgs = conv.messages;
  const auto size = static_cast<std::uint32_t>(msgs.size());

  // Cut start: after the sinks and the tool results answering them.
  std::uint32_t cut_start = 0, sinks = 0;
  while (cut_start < size && (detail::is_system(msgs[cut_start]) || sinks < opt.trim_middle_sink_messages)) {
    if (!detail::is_system(msgs[cut_start])) ++sinks;
    ++cut_start;
  }
  while (cut_start < size && is_tool_message(msgs[cut_start])) ++cut_start;

  // Cut end: a turn start on the grid, at most the frontier, leaving at
  // least `trim_middle_recent_messages` messages after it.
  const std::uint32_t step = std::max<std::uint32_t>(opt.frontier_step_turns, 1);
  std::uint32_t cut_end = 0;
  std::uint64_t dropped_tokens = 0;
  std::uint32_t cursor = cut_start;
  for (std::uint32_t g = step; g <= stale_turns; g += step) {
    std::uint32_t end = wm.start_of(g, size);
    if (end <= cut_start || size - end < opt.trim_middle_recent_messages) continue;
    for (; cursor < end; ++cursor)
      if (!detail::is_system(msgs[cursor])) dropped_tokens += message_tokens[cursor];
    cut_end = end;
    if (total - dropped_tokens <= opt.trim_middle_budget_tokens) break;
  }
  if (cut_end <= cut_start + 1) return st;  // a single message is never replaced

  std::uint32_t dropped = 0;
  std::uint64_t bytes = 0;
  for (std::uint32_t i = cut_start; i < cut_end; ++i) {
    if (detail::is_system(msgs[i]) || msgs[i].removed) continue;
    bytes += text_bytes(msgs[i]);
    ++dropped;
  }
  if (dropped == 0) return st;
  Part p;
  p.text = "[... " + std::to_string(dropped) + " earlier messages (" + std::to_string(bytes) +
           " bytes) omitted to fit the context window ...";
  if (opt.recall) {
    // The span as the request would have carried it, by its handle (docs/design.md §Recall).
    auto span = std::make_shared<const std::string>(recall_span_text(conv, cut_start, cut_end));
    p.text += recall_ref(recall_handle(*span));
    p.hidden.push_back(std::move(span));
  }
  p.text += ']';
  p.edited = true;
  // Only a cut that removes more than its notice adds: a token is at least a
  // byte, so the notice costs at most its length in tokens.
  if (dropped_tokens <= p.text.size()) return st;
  for (std::uint32_t i = cut_start; i < cut_end; ++i)
    if (!detail::is_system(msgs[i]) && !msgs[i].removed) remove_message(msgs[i]);
  if (cut_end_out) *cut_end_out = cut_end;
  Message notice;
  notice.role = Role::User;
  notice.changed = true;
  st.hits = dropped;
  st.bytes_saved = bytes > p.text.size() ? bytes - p.text.size() : 0;
  notice.parts.push_back(std::move(p));
  msgs.insert(msgs.begin() + cut_start, std::move(notice));
  return st;
}

}  // namespace td::pruning
