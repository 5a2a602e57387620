// The lossy strategies' plan (pipeline steps 2-7), computed once per history.
//
// The pipeline prunes a copy of the messages the largest frontier step could
// reach, [0, limit), then picks the frontier from what each step would save
// and keeps the pruned forms before it (pipeline.cpp). The copy holds nothing
// past `limit`, so no strategy can look ahead; the one fact one needs from
// there, old thinking's end, is computed on the whole request and passed in.
// The plan is therefore a pure function of those messages, that end, the
// steps' options (LossyOptions: what they read of the profile) and the token
// counter.
//
// An agent resends the same history for `frontier_step_turns` turns before
// `limit` moves, so the plan is memoized (pruning/memo.hpp) under a 128-bit
// hash of exactly those inputs: every field of each message but its position
// in the body (Message::origin, restored on use), its parts' texts by their
// stored digests (text_hash.hpp), every field of the steps' options, the
// counter's salt.
// A miss computes the same plan; the memo changes how fast, never what.
// Without caches, or without counts cached (Tally::salt() == 0), nothing is
// memoized.
//
// Reports nothing of its own: `stats` are the six strategies' reports on the
// whole prefix, which the pipeline cuts at the frontier it settles on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/memo.hpp"
#include "pruning/profile.hpp"
#include "pruning/strategies/identical_tool_calls.hpp"
#include "pruning/strategies/identical_tool_outputs.hpp"
#include "pruning/strategies/low_entropy.hpp"
#include "pruning/strategies/old_thinking.hpp"
#include "pruning/strategies/stale_assistant_text.hpp"
#include "pruning/strategies/stale_tool_outputs.hpp"
#include "pruning/strategy_stats.hpp"
#include "pruning/tally.hpp"

namespace td::pruning {

struct PipelineCaches;

// What steps 2-7 read of the profile: each one's options, cut once per
// request (pruning/strategy_options.hpp). The plan's key hashes these, not
// the whole profile: a field none of them reads does not change the plan.
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

struct LossyPlan {
  std::vector<std::uint32_t> changed;  // ascending: the messages the strategies changed
  std::vector<Message> pruned;         // their pruned forms, parallel to `changed`
  std::vector<std::uint64_t> tokens;   // their tokens as pruned, parallel to `changed`
  std::vector<StrategyStats> stats;    // steps 2-7, in pipeline order, every edit listed

  std::size_t memo_bytes() const;
};

// The plan for messages [0, limit) of `conv`; `thinking_end` is
// old_thinking_end() of the whole of `conv`. `caches` (may be null) holds the
// plan memo and the strategies' memos.
std::shared_ptr<const LossyPlan> plan_lossy(const Conversation& conv, const LossyOptions& options, std::uint32_t limit,
                                            std::uint32_t thinking_end, const Tally& tally,
                                            PipelineCaches* caches);

// The strategies' names and empty reports, in pipeline order (no plan ran).
std::vector<StrategyStats> lossy_names();

// Every field of `options`, hashed through its visit() (which lists, by
// construction, every field the steps read).
std::uint64_t options_fingerprint(const LossyOptions& options);

}  // namespace td::pruning
