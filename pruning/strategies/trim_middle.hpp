// Trim-middle (F12; docs/design.md §Strategies). Off by default: replay
// shows what it drops is referred to later (docs/benchmarks.md §Compression
// (replay)).
//
// Removes: whole stale turns between the attention sinks and the recent
// part, while the request is still over `trim_middle_budget_tokens` after every
// other strategy. Kept: system messages, the first `trim_middle_sink_messages` other
// messages (and the tool results answering them), and everything from the
// cut end on: at least `trim_middle_recent_messages` messages and never anything past
// the stale frontier. The cut end is the first turn on the frontier's grid
// (multiples of `frontier_step_turns` turns) that brings the request under
// the budget, or the frontier itself: it moves in whole steps, never turn by
// turn. The dropped range becomes one user message
//   [... 57 earlier messages (123456 bytes) omitted to fit the context window ...]
// which states a fact and asks nothing (a notice worded as an instruction is
// followed as one: docs/design.md §Strategies, Prior art). The cut never separates a call from its results (it
// starts after the sinks' results and ends on a turn boundary); pairing
// repair runs afterwards anyway. A cut whose messages hold no more tokens
// than the notice has bytes is not made: it would grow the request.
// Reports: hits = messages dropped, bytes_saved = their text bytes net.
#pragma once

#include <cstdint>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/profile.hpp"
#include "pruning/strategy_options.hpp"
#include "pruning/strategies/working_memory.hpp"
#include "pruning/strategy_stats.hpp"

namespace td::pruning {

// The profile fields it reads (pruning/strategy_options.hpp).
// clang-format off
#define TD_TRIM_MIDDLE_OPTIONS(X) \
  X(trim_middle) \
  X(trim_middle_sink_messages) \
  X(trim_middle_recent_messages) \
  X(trim_middle_budget_tokens) \
  X(frontier_step_turns) \
  X(recall)
// clang-format on
TD_STRATEGY_OPTIONS(TrimMiddleOptions, TD_TRIM_MIDDLE_OPTIONS);

// `message_tokens[i]`: tokens of message i as pruned so far; `total`: the
// whole request's tokens; `stale_turns`: the frontier (turns before it).
// `*cut_end` (if given) is set to the end of the dropped range, 0 if none.
StrategyStats trim_middle(Conversation& conv, const TrimMiddleOptions& opt, const WorkingMemory& wm,
                          std::uint32_t stale_turns, const std::vector<std::uint64_t>& message_tokens,
                          std::uint64_t total, std::uint32_t* cut_end_out = nullptr);

}  // namespace td::pruning
