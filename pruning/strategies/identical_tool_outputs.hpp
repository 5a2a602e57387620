// Identical tool outputs (F8; docs/design.md §Strategies).
//
// Removes: a stale tool output (before the frontier) whose body, of at least
// `identical_tool_outputs_min_bytes` bytes, is byte-identical to the body of an
// earlier tool output. The body is the output without what agents wrap around
// it, which differs from call to call even when the output does not:
//   - lines at its start or end beginning with one of
//     `identical_tool_outputs_wrapper_lines` (plain prefixes, no patterns; by
//     default Codex's headers "Chunk ID: ", "Wall time: ", "Process exited
//     with code ", "Original token count: ", "Output:"...);
//   - `<tag>...</tag>` blocks at its start or end, for each tag in
//     `identical_tool_outputs_wrapper_tags` (by default Claude Code's
//     "system-reminder");
//   - blank space at either end (the body of "out\n" is "out").
// The later copy's body becomes
//   [same output as tool call <id>: <N> bytes omitted]
// with its own wrapper text kept around it as it was (the reminder that came
// with it, its exit code), where <id> is the call id of the first copy. Call
// ids may be reused once answered (gpt-4o, SWE-agent demonstrations): when the
// first copy's id answers more than one call before the copy, the reference
// also names the message: "... tool call <id> (message <k>) ...", k counting
// from 1 in the request. With `recall`, the marker ends with the body's
// recall handle ("... 2048 bytes omitted t1a2b3c4d]", pruning/snip.hpp), which
// tokendiet_recall answers with the body. All depend only on earlier
// messages, so the marker is stable.
// Why it is safe: the first copy is still in the request, verbatim or pruned
// exactly as the copy itself would have been; re-running a command that gave
// the same output adds no information, and what differed (the wrapper) is
// kept. Results of `exclude_tools` are kept.
// Reports: hits = outputs replaced, bytes_saved = bytes net of the markers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pruning/conversation.hpp"
#include "pruning/memo.hpp"
#include "pruning/profile.hpp"
#include "pruning/strategy_options.hpp"
#include "pruning/strategy_stats.hpp"

namespace td::pruning {

// The profile fields it reads (pruning/strategy_options.hpp).
// clang-format off
#define TD_IDENTICAL_TOOL_OUTPUTS_OPTIONS(X) \
  X(identical_tool_outputs) \
  X(identical_tool_outputs_min_bytes) \
  X(identical_tool_outputs_wrapper_lines) \
  X(identical_tool_outputs_wrapper_tags) \
  X(exclude_tools) \
  X(recall)
// clang-format on
TD_STRATEGY_OPTIONS(IdenticalToolOutputsOptions, TD_IDENTICAL_TOOL_OUTPUTS_OPTIONS);

// Where the body of a tool output stands once the profile's wrappers are
// taken off (exposed for tests): text.substr(begin, end - begin).
struct ToolOutputBody {
  std::size_t begin = 0, end = 0;
};
ToolOutputBody tool_output_body(std::string_view text, const IdenticalToolOutputsOptions& opt);

// A tool output's body and the low word of its content hash, what the step
// keys first copies by.
struct OutputBody {
  ToolOutputBody at;
  std::uint64_t hash = 0;  // of the body's bytes: the text's own when the body is the whole text
  std::size_t memo_bytes() const { return sizeof(OutputBody); }
};

// `bodies` (may be null) memoizes each output's OutputBody by its text hash
// and the wrappers (pipeline_caches.hpp): a resent history's outputs are
// unwrapped and their bodies hashed once, not on every plan.
StrategyStats identical_tool_outputs(Conversation& conv, const IdenticalToolOutputsOptions& opt, std::uint32_t limit,
                                     Memo<OutputBody>* bodies = nullptr);

}  // namespace td::pruning
