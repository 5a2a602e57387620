// Similar tool outputs (docs/design.md §Strategies): a stale tool output
// (before the frontier) that mostly repeats an earlier one becomes a
// reference to it plus the lines that differ:
//   [same output as tool call <id>, but for the lines below: 240 lines (19285 bytes) omitted]
//   [its lines 9-11 instead:]
//   <the new lines>
//   [its lines 40-52 left out]
//   [after its line 120:]
//   <the new lines>
// Bodies are compared as identical_tool_outputs compares them, without the
// wrapper agents put around an output (Codex's Chunk ID, Wall time, exit
// code and line total, Claude Code's reminders), which is kept around the
// reference as it was: the same command's output under another wrapper or
// line count, a file read again after an edit, a test run with one more
// failure. Line numbers count the earlier body's lines from 1; "(message
// <k>)" is added when the id answered more than one call, as in
// identical_tool_outputs. With `recall` on, the first line ends with the
// output's own handle ("... omitted t1a2b3c4d]") and the part keeps its body
// in `hidden`, so tokendiet_recall gives it back whole (docs/design.md §Recall).
//
// The earlier output is the one sharing the most bytes of lines (lines of
// at least 8 bytes, each looked up among the first 16 earlier outputs that
// hold it: bounds on the work, not settings) among the earlier outputs of at
// least `similar_tool_outputs_min_bytes` that are not themselves references;
// it must hold `similar_tool_outputs_min_shared` of the body's bytes. The
// diff (pruning/line_diff.hpp) gives up past `similar_tool_outputs_max_edits`
// deleted and inserted lines, and a reference saving fewer than
// `similar_tool_outputs_min_saving_bytes` is not made. Results of
// `exclude_tools` and parts that cannot be edited are not replaced (they
// may be referred to).
// Stable: the reference depends on the output and earlier ones as sent, so
// its bytes never change as the history grows.
// Reports: hits = outputs replaced, bytes_saved = bytes net of the references.
#pragma once

#include <cstdint>

#include "pruning/conversation.hpp"
#include "pruning/profile.hpp"
#include "pruning/strategies/identical_tool_outputs.hpp"
#include "pruning/strategy_options.hpp"
#include "pruning/strategy_stats.hpp"

namespace td::pruning {

// The profile fields it reads (pruning/strategy_options.hpp): its own, and
// identical_tool_outputs' wrappers.
// clang-format off
#define TD_SIMILAR_TOOL_OUTPUTS_OPTIONS(X) \
  X(similar_tool_outputs) \
  X(similar_tool_outputs_min_bytes) \
  X(similar_tool_outputs_min_shared) \
  X(similar_tool_outputs_max_edits) \
  X(similar_tool_outputs_min_saving_bytes) \
  TD_IDENTICAL_TOOL_OUTPUTS_OPTIONS(X)
// clang-format on
TD_STRATEGY_OPTIONS(SimilarToolOutputsOptions, TD_SIMILAR_TOOL_OUTPUTS_OPTIONS);

StrategyStats similar_tool_outputs(Conversation& conv, const SimilarToolOutputsOptions& opt, std::uint32_t limit);

}  // namespace td::pruning
