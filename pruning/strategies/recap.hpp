// Recap (F15's standard-mode recap; docs/design.md §Policy, Standard's
// recap): the turns between the attention sinks (system messages and the
// task, kept verbatim) and a cut on the frontier's grid become one user
// message, placed where they were:
//
//   [tokendiet recap: turns 1-24 (messages 2-97) were replaced by this summary; ...]
//   turn 2: asked: ... | concluded: ... | read: src/a.py | wrote: src/b.py
//     ran: `pytest -x` (exit 1) | errors: E AssertionError: ...
//
// recap_plan() decides the cut, a pure function of the history as sent (the
// session's requests replayed over `token_threshold`, under the payback rule
// and the loss cap, or whatever it costs to fit `context_window`), and writes
// the extractive text, a function of the replaced messages only; recap()
// applies it, with a model's summary where the caller's lookup holds one.
// Reports: hits = messages replaced, bytes_saved = their text bytes net.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/memo.hpp"
#include "pruning/recall_span.hpp"
#include "pruning/step_cost.hpp"
#include "pruning/profile.hpp"
#include "pruning/strategy_options.hpp"
#include "pruning/strategies/working_memory.hpp"
#include "pruning/strategy_stats.hpp"
#include "pruning/tally.hpp"

namespace td::pruning {

struct DietWithout;  // pruning/strategies/completed_tasks.hpp

// The profile fields it reads (pruning/strategy_options.hpp).
// clang-format off
#define TD_RECAP_OPTIONS(X) \
  X(recap) \
  X(token_threshold) \
  X(recap_budget_tokens) \
  X(recap_text_bytes) \
  X(recap_items) \
  X(recall) \
  TD_WORKING_MEMORY_OPTIONS(X) \
  TD_STEP_COST_OPTIONS(X)
// clang-format on
TD_STRATEGY_OPTIONS(RecapOptions, TD_RECAP_OPTIONS);

// How a recap message starts (and how tests and the reanchor step know one).
inline constexpr std::string_view kRecapMarker = "[tokendiet recap: ";

// The summary text cached for a prefix hash: nullopt when none is known; ""
// when the extractive recap stands for that prefix (the summarizer failed).
using RecapSummaries = std::function<std::optional<std::string>(std::uint64_t prefix_hash)>;

struct RecapPlan {
  std::uint32_t start = 0;        // first message replaced
  std::uint32_t end = 0;          // one past the last replaced (0: no recap)
  std::string header;             // the recap's first line
  std::string text;               // the extractive recap message's text (header and turn lines)
  std::uint64_t prefix_hash = 0;  // of messages [0, end) as sent: the summary's key
  // With `recall`: the replaced messages as sent (pruning/recall_span.hpp),
  // whose handle the header names; what tokendiet_recall answers for it.
  std::shared_ptr<const std::string> span;
  bool stepped = false;  // the cut moved at this request (the last one replayed)
};

// The hash of messages [0, end) of `conv` (roles, part kinds, texts, ids and
// names): the key a summary of that prefix is cached under. Pure.
std::uint64_t recap_prefix_hash(const Conversation& conv, std::uint32_t end);

// Where the recap stands for `conv` as the client sent it (before any other
// strategy edited it): `orig` its per-message tokens, `fixed` the rest of the
// request, `context_window` the model's window (0: unknown). Pure.
// `as_sent` (may be null: the history as the client sent it) is the diet
// without the recap and semantic mode, request by request: the threshold and
// the window are weighed on the requests as that diet sent them, so a
// history the stale cuts keep small is not recapped (docs/design.md §Policy,
// Standard's recap).
// `lines` (may be null) memoizes each turn's line by the turn's messages:
// a resent history's lines are looked up, not rebuilt (docs/design.md
// §Memos and caches); `spans` (may be null) the recalled span and its handle.
RecapPlan recap_plan(const Conversation& conv, const RecapOptions& opt, const std::vector<std::uint64_t>& orig,
                     std::uint64_t fixed, std::uint64_t context_window, const Tally& tally,
                     Memo<std::string>* lines = nullptr, Memo<RecallSpan>* spans = nullptr,
                     const DietWithout* as_sent = nullptr);

// Applies the plan: messages [start, end) removed (system messages stay),
// the recap inserted at `start`: the header and the summary `summaries`
// holds for the plan's prefix hash when it holds a non-empty one, else the
// extractive text. `summary_missing` (may be null) is set when a lookup was
// given and knew nothing of the prefix: the caller may have it summarized.
StrategyStats recap(Conversation& conv, const RecapPlan& plan, const RecapSummaries* summaries = nullptr,
                    bool* summary_missing = nullptr);

}  // namespace td::pruning
