// Stale tool outputs (F7; docs/design.md §Strategies): the middle of a stale
// tool output (before the frontier) of at least
// `stale_tool_outputs_threshold_bytes` is cut to whole informative lines of
// head and tail, a few error lines and the names the hidden lines mention
// (pruning/snip.hpp), each gap one notice, "[… 120 lines hidden]". An output
// the agent truncated itself is cut as any other, its own notice
// (`stale_tool_outputs_truncated_markers`, "…33930 tokens truncated…") kept
// visible in the cut. Left alone: outputs identical_tool_outputs replaced,
// results of `exclude_tools`, placeholders of an output the agent saved to a
// file (`stale_tool_outputs_saved_markers`: the model can read the file
// again), cuts saving less than `stale_tool_outputs_min_saving_bytes`, and
// file reads kept whole until superseded (strategies/file_reads.hpp). A
// function of earlier messages only, so the form never changes as the
// history grows, except once where the session's model recalled lines of an
// output (`recalled`, pruning/recalled_lines.hpp): those lines are kept in
// its cut from then on (docs/design.md §Recall, "Recalled lines stay").
// Reports: hits = outputs cut (deduplicated reads included), bytes_saved =
// bytes removed net of notices.
#pragma once

#include <cstdint>
#include <string_view>

#include "pruning/conversation.hpp"
#include "pruning/memo.hpp"
#include "pruning/profile.hpp"
#include "pruning/recalled_lines.hpp"
#include "pruning/strategy_options.hpp"
#include "pruning/strategies/working_memory.hpp"
#include "pruning/strategy_stats.hpp"

namespace td::pruning {

// The profile fields it reads (pruning/strategy_options.hpp).
// clang-format off
#define TD_STALE_TOOL_OUTPUTS_OPTIONS(X) \
  X(stale_tool_outputs) \
  X(stale_tool_outputs_threshold_bytes) \
  X(stale_tool_outputs_head_bytes) \
  X(stale_tool_outputs_tail_bytes) \
  X(stale_tool_outputs_error_lines) \
  X(stale_tool_outputs_names) \
  X(stale_tool_outputs_keep_reads_bytes) \
  X(stale_tool_outputs_keep_reads_revisited) \
  X(stale_tool_outputs_keep_reads_dedupe) \
  X(stale_tool_outputs_keep_reads_dedupe_run_bytes) \
  X(stale_tool_outputs_keep_reads_dedupe_line_chars) \
  X(stale_tool_outputs_keep_edited_turns) \
  X(stale_tool_outputs_keep_fresh_reads_turns) \
  X(stale_tool_outputs_keep_fresh_reads_bytes) \
  X(stale_tool_outputs_held_reads_bytes) \
  X(stale_tool_outputs_keep_edited_copies) \
  X(stale_tool_outputs_read_outline) \
  X(stale_assistant_text_copied_line_bytes) \
  X(stale_tool_outputs_min_saving_bytes) \
  X(stale_tool_outputs_saved_markers) \
  X(stale_tool_outputs_truncated_markers) \
  X(exclude_tools) \
  X(recall) \
  X(recalled_lines) \
  TD_WORKING_MEMORY_OPTIONS(X)
// clang-format on
TD_STRATEGY_OPTIONS(StaleToolOutputsOptions, TD_STALE_TOOL_OUTPUTS_OPTIONS);

struct CallReads;  // strategies/file_reads.hpp

// `snips` (may be null) remembers each output's cut, `calls` (may be null)
// what each call says for the reads; `recalled` (may be null) the lines the
// session's model recalled.
StrategyStats stale_tool_outputs(Conversation& conv, const StaleToolOutputsOptions& opt, std::uint32_t limit,
                                 Memo<Snipped>* snips = nullptr, Memo<CallReads>* calls = nullptr,
                                 const RecalledLines* recalled = nullptr);

// Whether `text` holds one of the profile's saved-output markers (exposed for tests).
bool saved_by_agent(std::string_view text, const StaleToolOutputsOptions& opt);

}  // namespace td::pruning
