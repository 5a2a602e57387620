// The diet's strategies in their fixed order (docs/design.md §Strategies):
// the one file a strategy is registered in, one line a step.
//
//   1. working memory   decides which turns are stale (never edits anything)
//   2. old thinking     drops/blanks reasoning of stale assistant messages
//   3. identical calls  collapses repeated tool calls (off by default)
//   4. identical outputs  a later identical tool output -> reference to the first
//   5. low entropy      folds repeated lines, progress bars, base64/hex blobs
//   6. stale outputs    head + tail (+ error lines, names) of large stale tool outputs
//   7. stale assistant  head + tail (+ names) of long stale assistant prose and
//                       tool-call argument strings
//   8. completed tasks  semantic mode: a completed task's outputs -> tombstones
//                       (decided on the history as sent, placed on the pruned forms)
//   9. trim middle      drops whole middle turns over a budget (off by default)
//   9b. recap           over token_threshold, the turns between the task and a
//                       grid point before the window become one recap message
//                       (read from the history as sent; not after trim-middle cut)
//  10. pairing repair   no tool call without a result and no result without a call
//
// Two runs, because the frontier is settled between them (pipeline.cpp):
// steps 2-7 (run_lossy_strategies) before it, on the plan's copy of every
// message the largest frontier step could reach (lossy_plan.hpp, memoized);
// steps 8-10 (run_after_frontier) after it, on the request itself with the
// plan's forms before the frontier in place. Step 1 and the decisions that
// read the history as sent (completed tasks' tombstones, the recap's cut)
// are made by the pipeline first, since both runs depend on them.
//
// Each step takes its own options, cut from the profile
// (pruning/strategy_options.hpp); a step that needs to know what another did
// asks by the strategy's stat name, never by its position here.
#pragma once

#include <cstdint>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/pipeline.hpp"
#include "pruning/profile.hpp"
#include "pruning/strategies/completed_tasks.hpp"
#include "pruning/strategies/identical_tool_calls.hpp"
#include "pruning/strategies/identical_tool_outputs.hpp"
#include "pruning/strategies/low_entropy.hpp"
#include "pruning/strategies/old_thinking.hpp"
#include "pruning/strategies/recap.hpp"
#include "pruning/strategies/stale_assistant_text.hpp"
#include "pruning/strategies/stale_tool_outputs.hpp"
#include "pruning/strategies/trim_middle.hpp"
#include "pruning/strategies/working_memory.hpp"
#include "pruning/strategy_stats.hpp"
#include "pruning/tally.hpp"

namespace td::pruning {

struct PipelineCaches;

// What steps 2-7 read of the profile: each one's options, cut once per
// request. The plan's key hashes these (lossy_plan.cpp), not the whole
// profile: a field none of them reads does not change the plan.
struct LossyOptions {
  OldThinkingOptions old_thinking;
  IdenticalToolCallsOptions identical_tool_calls;
  IdenticalToolOutputsOptions identical_tool_outputs;
  LowEntropyOptions low_entropy;
  StaleToolOutputsOptions stale_tool_outputs;
  StaleAssistantTextOptions stale_assistant_text;

  explicit LossyOptions(const Profile& p)
      : old_thinking(p), identical_tool_calls(p), identical_tool_outputs(p), low_entropy(p), stale_tool_outputs(p),
        stale_assistant_text(p) {}
  bool operator==(const LossyOptions&) const = default;
  template <class V>
  void visit(V&& v) const {
    old_thinking.visit(v);
    identical_tool_calls.visit(v);
    identical_tool_outputs.visit(v);
    low_entropy.visit(v);
    stale_tool_outputs.visit(v);
    stale_assistant_text.visit(v);
  }
};

// Steps 2-7, in order, on messages [0, limit) of `conv` (old thinking on
// [0, thinking_limit)); their reports, in order. `caches` (may be null)
// holds the strategies' memos.
std::vector<StrategyStats> run_lossy_strategies(Conversation& conv, const LossyOptions& options, std::uint32_t limit,
                                                std::uint32_t thinking_limit, PipelineCaches* caches);

// What steps 8-10 take besides the conversation.
struct AfterFrontier {
  std::vector<Tombstone> tombstones;        // completed_tasks()'s, decided on the history as sent
  const TrimMiddleOptions& trim_middle;     // survival's hardest level sets its own
  const WorkingMemory& wm;
  const RecapPlan& recap;                   // recap_plan()'s, read from the history as sent
  const RecapSummaries* summaries = nullptr;
  const std::vector<std::uint64_t>& orig;   // per message: tokens as sent
  std::vector<std::uint64_t>& now;          // per message: tokens as pruned so far (updated)
  const Tally& tally;
};

// Steps 8-10, in order, on `conv` (the plan's forms before the frontier in
// place; r.stale_turns and r.tokens_before set): their reports appended to
// r.strategies, and what trim-middle and the recap say of themselves set in
// `r`. Returns the request's tokens as counted after step 8 (the later steps
// restructure; the pipeline counts again if one fired).
std::uint64_t run_after_frontier(Conversation& conv, AfterFrontier in, PipelineResult& r);

}  // namespace td::pruning
