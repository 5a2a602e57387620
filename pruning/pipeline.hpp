// The diet: every pruning strategy, composed in one fixed order.
//
// The proxy (and `tokendiet replay`) run the diet as named steps
// (diet/diet.hpp): adapter parse -> count_tokens -> decide
// (pruning/decision.hpp) -> run_pipeline -> adapter write. run_pipeline()
// edits the Conversation in place through set_text()/remove_message()/part
// removal and new messages (origin == kNewOrigin), which the adapters'
// writers render.
//
// Order: the table in pruning/strategy_order.cpp, the one place it is
// written, run by run_strategies() (each step's doc comment is in
// pruning/strategies/, and each takes its own options cut from the profile,
// docs/design.md §Strategies).
//
// Stability (docs/design.md §Principles (4)): every decision is a pure function of the
// history (message positions and content). Strategies 2-7 only edit messages
// before the stale frontier, which moves in steps of `frontier_step_turns`
// turns and only when the tokens it saves pay for the prompt-cache rewrite it
// causes; a stale message's pruned form depends only on itself and earlier
// messages. So a request pruned at turn t renders identically at turn t+1,
// except at the few turns where the frontier jumps.
//
// Speed: steps 2-7 run on a copy of the messages the largest step could
// reach, and that plan is memoized by a hash of exactly its inputs
// (pruning/lossy_plan.hpp): an agent resends the same history until the grid
// of steps moves, so most requests look their plan up. The memos and the
// count cache are the caller's (pruning/pipeline_caches.hpp): they change how
// fast, never what.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pruning/archived_output.hpp"
#include "pruning/conversation.hpp"
#include "pruning/decision.hpp"
#include "pruning/lossy_plan.hpp"
#include "pruning/pipeline_caches.hpp"
#include "pruning/strategy_stats.hpp"
#include "pruning/token_counter.hpp"

namespace td::pruning {

struct PipelineResult {
  std::uint64_t tokens_before = 0;        // the request as the client sent it
  std::uint64_t tokens_after = 0;         // as pruned (not written: as it would have been)
  std::vector<std::string_view> fired;    // names of strategies that changed something, in order
                                          // (StrategyStats::name: string literals)
  std::vector<StrategyStats> strategies;  // every strategy that ran, in pipeline order
  std::uint32_t turns = 0;                // turns in the history (working_memory.hpp)
  std::uint32_t stale_turns = 0;          // turns before the frontier (0: nothing stale)
  std::uint32_t stale_messages = 0;       // messages before the frontier
  std::uint32_t trimmed_until = 0;        // trim-middle dropped messages up to here (0: none)
  bool semantic_stepped = false;          // semantic eviction placed tombstones at this request
  bool recap_stepped = false;             // the recap's cut moved at this request (strategies/recap.hpp)
  // What semantic eviction took out (strategies/completed_tasks.hpp): one
  // entry per tombstone in the written request (none when not written).
  std::vector<ArchivedOutput> archived;
  // What the written request's notices hid, each text once (Part::hidden;
  // with the profile's `recall`): tokendiet_recall answers a handle
  // (pruning/snip.hpp, recall_handle()) from these (docs/design.md §Recall).
  std::vector<std::shared_ptr<const std::string>> hidden;
  // A recap was made and the settings' summaries knew nothing of its prefix:
  // its hash and extractive text (the header, then the turn lines), which
  // the proxy may have a model summarize (docs/design.md §Policy).
  bool recap_summary_missing = false;
  std::uint64_t recap_prefix_hash = 0;
  std::string recap_extractive;
  // The plan a later request will look up, when its memo lacks it: the
  // caller computes it off the request's path with plan_ahead()
  // (pruning/lossy_plan.hpp). Only with caches.
  PlanAhead ahead;

  bool changed() const { return !fired.empty(); }
  std::uint64_t tokens_saved() const { return tokens_before > tokens_after ? tokens_before - tokens_after : 0; }
};

// Counts `conv` per message as td::tok::count_message bills it (tool
// definitions: their raw text). With `caches` (and a counter whose counts may
// be cached) each message is counted once and then looked up by its content
// hash, so a resent history costs hashes, not BPE.
Counted count_tokens(const Conversation& conv, const TokenCounter& counter, PipelineCaches* caches = nullptr);

// Does what `decision` says to `conv`, whose count_tokens() is `counted`:
// Mode::None runs nothing; otherwise the strategies run with the decision's
// profile at its level, on `conv` itself when the decision writes, else on a
// copy (`conv` left as it came, the savings reported). Survival's levels
// (pruning/decision.hpp) are the profile with other constants: at Window the
// frontier may move turn by turn up to the working-memory window, every step
// that saves anything taken (no trigger, no cache-economics gate); at
// DropMiddle trim-middle also drops every whole turn between the sinks and
// that frontier, on the profile's grid of frontier_step_turns turns. Pure besides `caches` (which
// change how fast, never what): no I/O, no clock. Throws on allocation
// failure or a `counted` of another conversation; callers fail open.
PipelineResult run_pipeline(Conversation& conv, const Counted& counted, const Decision& decision,
                            const TokenCounter& counter, PipelineCaches* caches = nullptr);

}  // namespace td::pruning
