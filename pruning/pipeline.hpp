// The diet: every pruning strategy, composed in one fixed order.
//
// run_pipeline() is the one entry point the proxy (and `tokendiet replay`)
// calls: adapter parse -> run_pipeline -> adapter write. It edits the
// Conversation in place through set_text()/remove_message()/part removal and
// new messages (origin == kNewOrigin), which the adapters' writers render.
//
// Order (pipeline.cpp; each step's doc comment is in pruning/strategies/):
//   1. working memory   decides which turns are stale (never edits anything)
//   2. old thinking     drops/blanks reasoning of stale assistant messages
//   3. identical calls  collapses repeated tool calls (off by default)
//   4. identical outputs  a later identical tool output -> reference to the first
//   5. low entropy      folds repeated lines, progress bars, base64/hex blobs
//   6. stale outputs    head + tail (+ error lines, names) of large stale tool outputs
//   7. stale assistant  head + tail (+ names) of long stale assistant prose and
//                       tool-call argument strings
//   8. trim middle      drops whole middle turns over a budget (off by default)
//   9. pairing repair   no tool call without a result and no result without a call
//
// Stability (DESIGN principle 4): every decision is a pure function of the
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
// of steps moves, so most requests look their plan up (87 % of the recorded
// trajectories' planned requests). The memo changes how fast, never what.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/mode.hpp"
#include "pruning/profile.hpp"
#include "pruning/strategy_stats.hpp"
#include "pruning/token_counter.hpp"
#include "pruning/tokenizer/count_cache.hpp"

namespace td::pruning {

struct PipelineResult {
  std::uint64_t tokens_before = 0;  // the request as the client sent it
  std::uint64_t tokens_after = 0;   // as pruned (shadow: as it would have been)
  Mode mode = Mode::None;           // None: profile disabled, nothing ran
  bool shadow = false;              // the profile is in shadow mode: conv left as it came
  std::vector<std::string_view> fired;   // names of strategies that changed something, in order
                                         // (StrategyStats::name: string literals)
  std::vector<StrategyStats> strategies;  // every strategy that ran, in pipeline order
  std::uint32_t stale_turns = 0;          // turns before the frontier (0: nothing stale)
  std::uint32_t stale_messages = 0;       // messages before the frontier
  std::uint32_t trimmed_until = 0;        // trim-middle dropped messages up to here (0: none)

  bool changed() const { return !fired.empty(); }
  std::uint64_t tokens_saved() const { return tokens_before > tokens_after ? tokens_before - tokens_after : 0; }
};

// Runs the pipeline of `profile` over `conv`. Pure: no I/O, no clock, no
// state between calls. Throws only on allocation failure; callers fail open.
// In shadow mode the edits are made on a copy and `conv` is left untouched.
// Tokens are counted per message as td::tok::count_message bills them (tool
// definitions: their raw text); with `cache` (and an exact counter) each
// message, original or pruned, is counted once and then looked up by its
// content hash, so a resent history costs hashes, not BPE.
PipelineResult run_pipeline(Conversation& conv, const Profile& profile, const TokenCounter& counter,
                            tok::CountCache* cache = nullptr);

}  // namespace td::pruning
