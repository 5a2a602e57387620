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
// counter's salt, and the session's recalled lines when it has any.
// A miss computes the same plan; the memo changes how fast, never what.
// Without caches nothing is memoized. The strategies read no token count,
// so with a counter whose counts are not cached (Tally::salt() == 0: the
// calibrated estimator, whose ratio moves as it learns) the plan is
// memoized without its counts and plan_tokens() counts its pruned forms
// on each request.
//
// Reports nothing of its own: `stats` are the seven strategies' reports on the
// whole prefix, which the pipeline cuts at the frontier it settles on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/memo.hpp"
#include "pruning/profile.hpp"
#include "pruning/recalled_lines.hpp"
#include "pruning/strategy_stats.hpp"
#include "pruning/tally.hpp"

namespace td::pruning {

struct PipelineCaches;
struct LossyOptions;  // pruning/strategy_order.hpp

struct LossyPlan {
  std::vector<std::uint32_t> changed;  // ascending: the messages the strategies changed
  std::vector<Message> pruned;         // their pruned forms, parallel to `changed`
  std::vector<std::uint64_t> tokens;   // their tokens as pruned, parallel to `changed`; empty under an unsalted counter
  // Parallel to `changed`: 0, or the grid point (turns) the frontier must
  // reach before that pruned form applies (a read of a file being edited,
  // strategies/edited_files.hpp; kHeldBeyond: not in this plan).
  std::vector<std::uint32_t> held_until;
  // The forms sent while held of the messages whose held reads are some of
  // their changed tool results (Claude Code's parallel results share a
  // message): the pruned form with the held results whole. A held message
  // without one is sent as the client sent it.
  struct PartlyHeld {
    std::size_t k = 0;                 // its index in `changed`
    std::vector<std::uint32_t> parts;  // the held results' part indices, ascending
    Message form;
    std::uint64_t tokens = 0;  // the form's, under a salted tally (as `tokens`); else counted at use
  };
  std::vector<PartlyHeld> partly_held;  // ascending by k

  // Message `changed[k]`'s entry, if it is partly held.
  const PartlyHeld* partly(std::size_t k) const;
  // The tokens of `partly_held` entry `h`'s form as `tally` counts them.
  static std::uint64_t tokens_of(const PartlyHeld& h, const Tally& tally) {
    return tally.salt() != 0 && h.tokens != 0 ? h.tokens : tally.message(h.form);
  }
  std::vector<StrategyStats> stats;  // steps 2-7, in pipeline order, every edit listed

  std::size_t memo_bytes() const;
};

// The plan for messages [0, limit) of `conv`; `thinking_end` is
// old_thinking_end() of the whole of `conv`. `caches` (may be null) holds the
// plan memo and the strategies' memos; `recalled` (may be null) the lines
// the session's model recalled (pruning/recalled_lines.hpp), part of the key.
// `key` (may be null) receives the plan's memo key (with caches).
std::shared_ptr<const LossyPlan> plan_lossy(const Conversation& conv, const LossyOptions& options, std::uint32_t limit,
                                            std::uint32_t thinking_end, const Tally& tally, PipelineCaches* caches,
                                            const RecalledLines* recalled = nullptr, memo_detail::Key* key = nullptr);

// The plan's pruned forms' tokens as `tally` counts them: its stored counts,
// or, for a plan memoized without them, counted now.
std::vector<std::uint64_t> plan_tokens(const LossyPlan& plan, const Tally& tally);

// Every field of `options`, hashed through its visit() (which lists, by
// construction, every field the steps read).
std::uint64_t options_fingerprint(const LossyOptions& options);

// The plan ahead (docs/design.md §Memos and caches): the plan a later request
// of the session looks up once its grid reaches the next point covers
// messages this request already holds (the window's turns). A request that
// finds that plan missing from the memo says so (PipelineResult::ahead), and
// the caller computes it with plan_ahead() off the request's path (the
// proxy's thread for it while the model answers; replay untimed), so the
// request that steps finds it instead of planning the whole history while
// the client waits. What a request sends is unchanged: the memo changes how
// fast, never what.
struct PlanAhead {
  std::uint32_t limit = 0;                      // the plan's messages: [0, limit); 0: none due
  std::shared_ptr<const LossyOptions> options;  // the steps' options it is planned with
  memo_detail::Key found;                       // its mark in PipelineCaches::aheads, once computed
  bool due() const { return limit > 0; }
};

// The plan of the grid point after `grid_back` (turns) by `step` turns, when
// its messages are all in `conv` (turn_start: where each turn starts), old
// thinking ends at or past them in this request (and so in every later one),
// and `caches` lacks it; else none due. `current` is the memo key of this
// request's own plan (plan_lossy()): once the next one is computed ahead or
// found memoized, that is remembered under it (PipelineCaches::aheads), so
// the requests after do not hash the next key again.
PlanAhead next_plan(const Conversation& conv, const std::vector<std::uint32_t>& turn_start, std::uint32_t grid_back,
                    std::uint32_t step, const LossyOptions& options, std::uint32_t thinking_end, const Tally& tally,
                    PipelineCaches& caches, const memo_detail::Key& current);

// What PipelineCaches::aheads remembers: the next point's plan of a history
// was computed ahead or found in the plan memo.
struct AheadFound {
  std::size_t memo_bytes() const { return sizeof(AheadFound); }
};

// Computes the plan `ahead` names for `conv` (the same history as sent, or a
// later one) into `caches`, as plan_lossy() would on the request that needs it.
void plan_ahead(const Conversation& conv, const PlanAhead& ahead, const Tally& tally, PipelineCaches& caches);

}  // namespace td::pruning
