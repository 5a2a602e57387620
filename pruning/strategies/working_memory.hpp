// Working memory (F6): which part of the history is recent and never touched,
// and where the stale part may end. This step edits nothing; it gives every
// lossy strategy its boundary.
//
// A *turn* is one exchange. It starts
//   - at a user message with text of its own (not only tool results) that
//     does not follow another such user message, or
//   - at an assistant message that follows a tool result (the next step of
//     an agent loop, with no user message in between),
// and runs through the assistant's reply and the tool results answering it.
// Consecutive assistant messages belong to one turn; tool results (role tool,
// or Anthropic user messages carrying tool_result blocks) never start one.
// System messages (and Anthropic/Gemini system fields) belong to no turn:
// they are always kept, wherever they stand.
//
//   chat:    [U A] [U A] [U A]          agent:  [U A T] [A T] [A T T] [U A T]
//
// The last `window_turns` turns are working memory, and so are the last
// `keep_tool_uses` tool results (Anthropic context editing's `keep`). The
// stale frontier may only sit on a turn boundary that is a multiple of
// `frontier_step_turns` turns (principle 4: cut points move in large fixed
// steps keyed to positions); the pipeline decides whether it actually moves
// there (trigger, clear_at_least, cache economics).
#pragma once

#include <cstdint>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/profile.hpp"
#include "pruning/strategy_options.hpp"

namespace td::pruning {

// The profile fields it reads (pruning/strategy_options.hpp).
// clang-format off
#define TD_WORKING_MEMORY_OPTIONS(X) \
  X(window_turns) \
  X(keep_tool_uses) \
  X(frontier_step_turns)
// clang-format on
TD_STRATEGY_OPTIONS(WorkingMemoryOptions, TD_WORKING_MEMORY_OPTIONS);

// A tool-result message: role Tool, or any message carrying a ToolResult part.
bool is_tool_message(const Message& m);

struct WorkingMemory {
  std::vector<std::uint32_t> turn_start;  // first message of each turn, ascending
  // Grid points (turn counts, multiples of the step) the frontier may move to
  // in this request, ascending; for each, where the request that first
  // allowed it ended (a message index: the history then was [0, end)).
  std::vector<std::uint32_t> grid;
  std::vector<std::uint32_t> grid_eligible_end;

  std::uint32_t turns() const { return static_cast<std::uint32_t>(turn_start.size()); }
  // Message index where turn `t` starts; `size` for t == turns().
  std::uint32_t start_of(std::uint32_t t, std::uint32_t size) const {
    return t < turn_start.size() ? turn_start[t] : size;
  }
};

WorkingMemory working_memory(const Conversation& conv, const WorkingMemoryOptions& opt);

}  // namespace td::pruning
