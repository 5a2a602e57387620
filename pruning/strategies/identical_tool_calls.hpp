// Identical tool calls collapsed (F9; docs/design.md §Strategies). Off by
// default: replay showed the arguments it hides (paths, commands) are what
// later turns refer to.
//
// Removes: the arguments of a stale tool call (before the frontier) whose
// name and arguments (at least `identical_tool_calls_min_bytes` bytes) equal those of
// an earlier call. They become a JSON object that names the first call:
//   {"same_arguments_as_call":"<first id>","recall":"t1a2b3c4d"}
// (with `recall`: the arguments' handle, pruning/snip.hpp), so the arguments stay valid JSON for every provider (OpenAI parses the
// string, Anthropic and Gemini require an object). The call's id and name,
// and its result, stay.
// Why it is safe: the first call, with the full arguments, is still there.
// Calls of `exclude_tools` and non-editable parts are kept.
// Reports: hits = calls collapsed, bytes_saved = argument bytes net.
#pragma once

#include <cstdint>

#include "pruning/conversation.hpp"
#include "pruning/profile.hpp"
#include "pruning/strategy_options.hpp"
#include "pruning/strategy_stats.hpp"

namespace td::pruning {

// The profile fields it reads (pruning/strategy_options.hpp).
// clang-format off
#define TD_IDENTICAL_TOOL_CALLS_OPTIONS(X) \
  X(identical_tool_calls) \
  X(identical_tool_calls_min_bytes) \
  X(exclude_tools) \
  X(recall)
// clang-format on
TD_STRATEGY_OPTIONS(IdenticalToolCallsOptions, TD_IDENTICAL_TOOL_CALLS_OPTIONS);

StrategyStats identical_tool_calls(Conversation& conv, const IdenticalToolCallsOptions& opt, std::uint32_t limit);

}  // namespace td::pruning
