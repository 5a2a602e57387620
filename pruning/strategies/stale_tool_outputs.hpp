// Stale tool outputs (F7; codetether snippet.rs, omni-dev-fusion's archive
// truncation), line-aware.
//
// Removes: the middle of a stale tool output (before the frontier) of at
// least `stale_tool_outputs_threshold_bytes` bytes. Kept: whole lines from the start up
// to `stale_tool_outputs_head_bytes`, whole lines from the end up to
// `stale_tool_outputs_tail_bytes`, and up to `stale_tool_outputs_error_lines` lines of the middle
// that look like errors (error, exception, traceback, failed, fatal, panic,
// assert...), each gap replaced by one line
//   [… 120 lines hidden]
// and, after the last gap, up to `stale_tool_outputs_names` names the hidden lines
// mention (paths, identifiers, numbers, error codes; pruning/snip.hpp) that
// no earlier stale output listed already (a function of earlier messages
// only, so the rendering is stable):
//   [hidden names: src/app.py parse_args E1234]
// A line longer than the head (tail) budget is cut inside, at a space where
// it has one in reach, else on a UTF-8 character boundary, never inside a
// character. A cut saving fewer than `stale_tool_outputs_min_saving_bytes`
// bytes, notices and names counted, is not made. Outputs already replaced by
// identical_tool_outputs, results of `exclude_tools`, outputs the cut would
// not shrink (a dedup marker is far below the threshold), and outputs the
// agent already masked or truncated itself (holding one of
// `stale_tool_outputs_skip_markers`: Gemini CLI's "<tool_output_masked>" and
// "Output too large. ", Claude Code's "<persisted-output>", Codex's
// "…N tokens truncated…"...) are left alone: cutting a placeholder again
// saves little and garbles what the agent wrote to find the full output.
// File reads the agent may still copy from (strategies/file_reads.hpp) up
// to `stale_tool_outputs_keep_reads_bytes` are not cut but kept whole until
// superseded, with their runs of lines that earlier kept reads hold replaced
// by "[N lines as in an earlier output]" (`stale_tool_outputs_keep_reads_dedupe`).
// Why it is safe: the output is stale (the agent acted on it turns ago); the
// head says what it was, the tail how it ended, the error lines what failed,
// the names what it was about; the notice says how much is missing, so the
// model can re-run the call.
// Reports: hits = outputs cut (deduplicated reads included), bytes_saved =
// bytes removed net of notices.
#pragma once

#include <cstdint>
#include <string_view>

#include "pruning/conversation.hpp"
#include "pruning/memo.hpp"
#include "pruning/profile.hpp"
#include "pruning/strategy_options.hpp"
#include "pruning/strategies/working_memory.hpp"
#include "pruning/strategy_stats.hpp"

namespace td::pruning {

// The profile fields it reads (pruning/strategy_options.hpp).
#define TD_STALE_TOOL_OUTPUTS_OPTIONS(X) X(stale_tool_outputs) X(stale_tool_outputs_threshold_bytes) X(stale_tool_outputs_head_bytes) \
  X(stale_tool_outputs_tail_bytes) X(stale_tool_outputs_error_lines) X(stale_tool_outputs_names) \
  X(stale_tool_outputs_keep_reads_bytes) X(stale_tool_outputs_keep_reads_revisited) \
  X(stale_tool_outputs_keep_reads_dedupe) X(stale_tool_outputs_keep_reads_dedupe_run_bytes) \
  X(stale_tool_outputs_keep_reads_dedupe_line_chars) X(stale_tool_outputs_min_saving_bytes) \
  X(stale_tool_outputs_skip_markers) X(exclude_tools) TD_WORKING_MEMORY_OPTIONS(X)
TD_STRATEGY_OPTIONS(StaleToolOutputsOptions, TD_STALE_TOOL_OUTPUTS_OPTIONS);

// `snips` (may be null) remembers each output's cut.
StrategyStats stale_tool_outputs(Conversation& conv, const StaleToolOutputsOptions& opt, std::uint32_t limit,
                                 Memo<Snipped>* snips = nullptr);

// Whether `text` holds one of the profile's skip markers (exposed for tests).
bool cut_by_agent(std::string_view text, const StaleToolOutputsOptions& opt);

}  // namespace td::pruning
