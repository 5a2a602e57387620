// Stale assistant text: what the model itself wrote turns ago, its prose and
// the arguments of its tool calls, when long.
//
// Removes: the middle of a Text part of a stale assistant message (before the
// frontier) of at least `stale_assistant_text_threshold_bytes` bytes (with
// `stale_assistant_text_prose`), and the middle of every string value of at least
// that size inside a stale tool call's arguments (with `stale_assistant_text_tool_arguments`:
// heredocs, scripts, file contents the agent wrote). Kept: whole lines from
// the start up to `stale_assistant_text_head_bytes`, from the end up to
// `stale_assistant_text_tail_bytes`, and the names the hidden part mentions (up to
// `stale_assistant_text_names`; a name an earlier stale assistant message already listed
// is not listed again), as in stale tool outputs (pruning/snip.hpp), and
// every line the message is the first to copy word for word from an earlier
// tool output (strategies/copied_lines.hpp; lines of at least
// `stale_assistant_text_copied_line_bytes`): the code an agent quoted in an
// edit is what it quotes again. A line
// (a paragraph of prose) longer than the budget is cut at a space, never
// inside a word, and the notice counts a piece of a line as bytes, never as
// "1 line". A cut saving fewer than `stale_assistant_text_min_saving_bytes`
// bytes, notice and names counted, is not made. Arguments
// are re-serialised compactly and stay a valid JSON object, as every
// provider requires; they are changed only when that makes them shorter.
// Never touched: thinking (old_thinking's job), the call's id and name, calls
// of `exclude_tools`, non-editable parts, any message that is not stale
// (the last assistant turn never is).
// Why it is safe: the agent acted on this long ago, and the results of its
// calls, its later messages and the recent turns carry on what followed; the
// head keeps the intent, the tail the conclusion, the names the specifics.
// Reports: hits = parts shortened, bytes_saved = bytes removed net.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pruning/conversation.hpp"
#include "pruning/memo.hpp"
#include "pruning/profile.hpp"
#include "pruning/strategy_options.hpp"
#include "pruning/snip.hpp"
#include "pruning/strategies/copied_lines.hpp"
#include "pruning/strategy_stats.hpp"

namespace td::pruning {

// The profile fields it reads (pruning/strategy_options.hpp).
#define TD_STALE_ASSISTANT_TEXT_OPTIONS(X) X(stale_assistant_text) X(stale_assistant_text_prose) X(stale_assistant_text_tool_arguments) \
  X(stale_assistant_text_threshold_bytes) X(stale_assistant_text_head_bytes) X(stale_assistant_text_tail_bytes) \
  X(stale_assistant_text_names) X(stale_assistant_text_min_saving_bytes) \
  X(stale_assistant_text_copied_line_bytes) X(exclude_tools)
TD_STRATEGY_OPTIONS(StaleAssistantTextOptions, TD_STALE_ASSISTANT_TEXT_OPTIONS);

// `snips` (may be null) remembers each part's cut; `copied` (built on the
// messages as the client sent them) names the lines each cut keeps.
StrategyStats stale_assistant_text(Conversation& conv, const StaleAssistantTextOptions& opt, std::uint32_t limit,
                                   Memo<Snipped>* snips = nullptr, const CopiedLines& copied = {});

// Tool-call arguments with their long string values snipped (exposed for
// tests); `args` unchanged if it is not a JSON object or would not shrink.
std::string snip_arguments(std::string_view args, const StaleAssistantTextOptions& opt);

// The same as a Snipped (its slots inside JSON strings), memoised by the
// strategy and rendered with the names the request already listed.
Snipped snip_arguments_template(std::string_view args, const StaleAssistantTextOptions& opt);
Snipped snip_arguments_template(std::string_view args, const StaleAssistantTextOptions& opt,
                                const SnipOptions& options);

}  // namespace td::pruning
