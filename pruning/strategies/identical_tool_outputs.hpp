// Identical tool outputs (F8; codetether dedup.rs).
//
// Removes: a stale tool output (before the frontier) of at least
// `identical_tool_outputs_min_bytes` bytes that is byte-identical to an earlier tool output,
// the later copy becoming
//   [same output as tool call <id>: <N> bytes omitted]
// where <id> is the call id of the first copy. Call ids may be reused once
// answered (gpt-4o, SWE-agent demonstrations): when the first copy's id
// answers more than one call before the copy, the reference also names the
// message: "... tool call <id> (message <k>) ...", k counting from 1 in the
// request. Both depend only on earlier messages, so the marker is stable.
// Why it is safe: the first copy is still in the request, verbatim or pruned
// exactly as the copy itself would have been; re-running a command that gave
// the same output adds no information. Results of `exclude_tools` are kept.
// Reports: hits = outputs replaced, bytes_saved = bytes net of the markers.
#pragma once

#include <cstdint>

#include "pruning/conversation.hpp"
#include "pruning/profile.hpp"
#include "pruning/strategy_stats.hpp"

namespace td::pruning {

StrategyStats identical_tool_outputs(Conversation& conv, const Profile& profile, std::uint32_t limit);

}  // namespace td::pruning
