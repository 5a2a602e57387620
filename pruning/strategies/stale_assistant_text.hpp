// Stale assistant text (docs/design.md §Strategies): the middle of long
// stale assistant prose (`stale_assistant_text_prose`) and of long string
// values in stale tool-call arguments (`stale_assistant_text_tool_arguments`)
// is cut as stale tool outputs are (pruning/snip.hpp: whole lines of head
// and tail, the names the hidden part mentions), prose between words; the
// lines the message is the first to copy from an earlier tool output are
// kept (strategies/copied_lines.hpp). Arguments stay a valid JSON object and
// change only when that makes them shorter. Never touched: thinking, a
// call's id and name, calls of `exclude_tools`, non-editable parts, any
// message that is not stale. A cut saving less than
// `stale_assistant_text_min_saving_bytes` is not made.
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
// clang-format off
#define TD_STALE_ASSISTANT_TEXT_OPTIONS(X) \
  X(stale_assistant_text) \
  X(stale_assistant_text_prose) \
  X(stale_assistant_text_tool_arguments) \
  X(stale_assistant_text_threshold_bytes) \
  X(stale_assistant_text_head_bytes) \
  X(stale_assistant_text_tail_bytes) \
  X(stale_assistant_text_names) \
  X(stale_assistant_text_min_saving_bytes) \
  X(stale_assistant_text_copied_line_bytes) \
  X(exclude_tools) \
  X(recall)
// clang-format on
TD_STRATEGY_OPTIONS(StaleAssistantTextOptions, TD_STALE_ASSISTANT_TEXT_OPTIONS);

// `snips` (may be null) remembers each part's cut; `copied` (built on the
// messages as the client sent them) names the lines each cut keeps;
// `decoded` (may be null) remembers a call's arguments decoded for those
// lines (line_text()), so a resent history's calls are parsed once.
StrategyStats stale_assistant_text(Conversation& conv, const StaleAssistantTextOptions& opt, std::uint32_t limit,
                                   Memo<Snipped>* snips = nullptr, const CopiedLines& copied = {},
                                   Memo<std::string>* decoded = nullptr);

// Tool-call arguments with their long string values snipped (exposed for
// tests); `args` unchanged if it is not a JSON object or would not shrink.
std::string snip_arguments(std::string_view args, const StaleAssistantTextOptions& opt);

// The same as a Snipped (its slots inside JSON strings), memoised by the
// strategy and rendered with the names the request already listed.
Snipped snip_arguments_template(std::string_view args, const StaleAssistantTextOptions& opt);
Snipped snip_arguments_template(std::string_view args, const StaleAssistantTextOptions& opt,
                                const SnipOptions& options);

}  // namespace td::pruning
