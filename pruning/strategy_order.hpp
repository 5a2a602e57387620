// The diet's strategies in their fixed order, written once: the table in
// strategy_order.cpp lists every step with its stage, and run_strategies()
// runs one stage's steps in that order (docs/design.md §Strategies).
//
// Two stages, because the frontier is settled between them (pipeline.cpp):
// Stage::BeforeFrontier on the plan's copy of every message the largest
// frontier step could reach (lossy_plan.hpp, memoized); Stage::AfterFrontier
// on the request itself, the plan's forms before the frontier in place.
// Working memory (step 1, which edits nothing) and the decisions read from
// the history as sent (completed_tasks_plan(), recap_plan()) are made by the
// pipeline first, since both stages depend on them.
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
#include "pruning/strategies/similar_tool_outputs.hpp"
#include "pruning/strategies/stale_assistant_text.hpp"
#include "pruning/strategies/stale_tool_outputs.hpp"
#include "pruning/strategies/trim_middle.hpp"
#include "pruning/strategies/working_memory.hpp"
#include "pruning/strategy_stats.hpp"
#include "pruning/tally.hpp"

namespace td::pruning {

struct PipelineCaches;

enum class Stage : std::uint8_t { BeforeFrontier, AfterFrontier };

// What the steps before the frontier read of the profile: each one's
// options, cut once per request. The plan's key hashes these
// (lossy_plan.cpp), not the whole profile: a field none of them reads does
// not change the plan.
struct LossyOptions {
  OldThinkingOptions old_thinking;
  IdenticalToolCallsOptions identical_tool_calls;
  IdenticalToolOutputsOptions identical_tool_outputs;
  SimilarToolOutputsOptions similar_tool_outputs;
  LowEntropyOptions low_entropy;
  StaleToolOutputsOptions stale_tool_outputs;
  StaleAssistantTextOptions stale_assistant_text;

  explicit LossyOptions(const Profile& p)
      : old_thinking(p),
        identical_tool_calls(p),
        identical_tool_outputs(p),
        similar_tool_outputs(p),
        low_entropy(p),
        stale_tool_outputs(p),
        stale_assistant_text(p) {}
  bool operator==(const LossyOptions&) const = default;
  template <class V>
  void visit(V&& v) const {
    old_thinking.visit(v);
    identical_tool_calls.visit(v);
    identical_tool_outputs.visit(v);
    similar_tool_outputs.visit(v);
    low_entropy.visit(v);
    stale_tool_outputs.visit(v);
    stale_assistant_text.visit(v);
  }
};

// What the steps read besides the conversation; a stage's caller fills its part.
struct StageInputs {
  // Stage::BeforeFrontier (the plan, lossy_plan.cpp).
  struct Before {
    const LossyOptions& options;
    std::uint32_t limit = 0;                  // the steps edit messages [0, limit)
    std::uint32_t thinking_limit = 0;         // old thinking: [0, thinking_limit), old_thinking_end() of the request
    PipelineCaches* caches = nullptr;         // may be null: the strategies' memos
    const RecalledLines* recalled = nullptr;  // may be null: the lines the session's model recalled
  };
  // Stage::AfterFrontier (pipeline.cpp; result.stale_turns and
  // result.tokens_before set): what trim-middle and the recap say of
  // themselves, and what completed tasks archived, are set in `result`.
  struct After {
    std::vector<Tombstone> tombstones;     // completed_tasks_plan()'s, decided on the history as sent
    const TrimMiddleOptions& trim_middle;  // survival's hardest level sets its own
    const WorkingMemory& wm;
    const RecapPlan& recap;  // recap_plan()'s, read from the history as sent
    const RecapSummaries* summaries = nullptr;
    const std::vector<std::uint64_t>& orig;  // per message: tokens as sent
    std::vector<std::uint64_t>& now;         // per message: tokens as pruned so far (updated)
    const Tally& tally;
    PipelineResult& result;
    // Set by the run: the request's tokens as counted after completed tasks
    // (the later steps restructure; the pipeline counts again if one fired).
    std::uint64_t total = 0;
  };
  Before* before = nullptr;  // for Stage::BeforeFrontier
  After* after = nullptr;    // for Stage::AfterFrontier
};

// Runs the steps of `stage`, in order, on `conv`: their reports, in order.
std::vector<StrategyStats> run_strategies(Stage stage, Conversation& conv, StageInputs in);

// The names of the steps of `stage`, in order, as empty reports (no step ran).
std::vector<StrategyStats> strategy_names(Stage stage);

}  // namespace td::pruning
