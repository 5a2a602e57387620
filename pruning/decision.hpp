// The decision a request's diet turns on, made once its tokens are counted
// and before anything is written (the steps: diet/diet.hpp):
//
//   parse -> count (Counted) -> decide (Decision) -> prune -> write
//
// decide() is the tri-modal policy's first two modes (docs/design.md
// §Policy): standard, today's diet; survival, when the TPM runway cannot
// take the request: harder compression levels, then a wait, then an honest
// 429. It also says when to lower thinking. Pure: no clock, no state; the
// runway, the session's memory and the tokens each level leaves are inputs.
// The pipeline does what the decision says and reads neither `enabled` nor
// `shadow` itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pruning/control_arm.hpp"
#include "pruning/mode.hpp"
#include "pruning/profile.hpp"
#include "pruning/recalled_lines.hpp"
#include "pruning/runway.hpp"

namespace td::pruning {

// The request as the client sent it, counted as the pipeline bills it
// (count_tokens() in pruning/pipeline.hpp).
struct Counted {
  std::uint64_t total = 0;              // fixed + every message
  std::uint64_t fixed = 0;              // the reply primer and the tool definitions
  std::vector<std::uint64_t> messages;  // parallel to Conversation::messages (0: removed)
};

// How hard the pipeline cuts (pipeline.hpp): each level renders stably (the
// same history at the same level gives the same bytes).
enum class Level : std::uint8_t {
  Standard = 0,    // the profile as it is: the standard diet (Mode::Standard's level)
  Window = 1,      // the stale frontier moved up to the working-memory window
  DropMiddle = 2,  // and whole middle turns dropped (sinks and recent turns kept)
};
inline constexpr Level kHardestLevel = Level::DropMiddle;

// What the pipeline needs besides the conversation.
struct PipelineSettings {
  const Profile* profile = nullptr;  // the strategies' constants (set whenever the pipeline runs)
  bool write = false;                // the pruned conversation replaces the request; false (shadow, or
                                     // nothing to do): savings are computed on a copy and reported only
  Level level = Level::Standard;
  // The model's context window (the profile's context_window, else the
  // model's known one; 0: unknown): a recap is taken, whatever it costs,
  // when the request would not fit it otherwise (strategies/recap.hpp).
  std::uint64_t context_window = 0;
  // The summaries a model wrote for recaps, by prefix hash (the proxy's
  // cache; strategies/recap.hpp): null, the recap is extractive.
  const std::function<std::optional<std::string>(std::uint64_t)>* recap_summaries = nullptr;
  // The lines the session's model recalled (pruning/recalled_lines.hpp):
  // kept visible in the cuts of their texts. Null: none.
  std::shared_ptr<const RecalledLines> recalled{};
};

// Whether the request goes upstream now.
struct Admission {
  enum class Kind : std::uint8_t {
    Send,    // now
    Wait,    // after `wait` (the proxy holds it on a timer, never a thread)
    Reject,  // answered 429 by the proxy, Retry-After `wait` (rounded up to seconds)
  };
  Kind kind = Kind::Send;
  std::chrono::milliseconds wait{0};
};

// What survival did, for the explain headers and /metrics.
enum class SurvivalOutcome : std::uint8_t {
  None,        // not in survival
  Compressed,  // sent now, at a harder level
  Waited,      // held for the runway, then sent
  Rejected,    // answered 429
  TooLarge,    // over a whole window even at the hardest level: sent as the diet left it
};
constexpr const char* outcome_name(SurvivalOutcome o) {
  switch (o) {
    case SurvivalOutcome::None:
      return "none";
    case SurvivalOutcome::Compressed:
      return "compressed";
    case SurvivalOutcome::Waited:
      return "waited";
    case SurvivalOutcome::Rejected:
      return "rejected";
    case SurvivalOutcome::TooLarge:
      return "too_large";
  }
  return "none";
}

// What the proxy remembers of a session between its requests (bounded, and
// rebuildable: lost, the next request decides afresh from the runway).
struct SessionMemory {
  Level level = Level::Standard;       // survival's level in force while the pressure lasts
  std::uint32_t latched_messages = 0;  // the history's length when the level last changed
  bool thinking_lowered = false;       // thinking is lowered (hysteresis, below)
  // The session overflowed the model's window and recovery's retry fitted
  // it in this many tokens (the diet's): later requests are sent at the
  // first level that fits under it, without another failed round trip (0: never).
  std::uint64_t fit_tokens = 0;
  friend bool operator==(const SessionMemory&, const SessionMemory&) = default;
};

struct PolicyInput {
  const Counted* counted = nullptr;
  const Profile* profile = nullptr;
  Runway runway;               // unknown (no limits): no survival, no thinking change
  double bill_ratio = 1.0;     // provider tokens per counted token (the calibrated estimate)
  double cached_prefix = 0;    // provider tokens it will read from its cache and not count,
                               // if the request is sent at the session's last level
  double reserved_output = 0;  // the output cap the provider reserves at admission
  std::uint32_t messages = 0;  // messages in the history
  SessionMemory memory;
  // The session is in the profile's control arm (control_arm.hpp).
  bool control = false;
};

struct Decision {
  Mode mode = Mode::None;
  PipelineSettings settings;
  Admission admission;
  bool lower_thinking = false;  // lower the request's thinking (providers/thinking_budget.hpp)
  SurvivalOutcome outcome = SurvivalOutcome::None;
  RunwayAsk ask;         // what the request takes from the runway when sent (0: nothing)
  Runway::Left left;     // the runway after it (unknown: 0, 0)
  SessionMemory memory;  // the session's memory after this request
  Arm arm = Arm::Treatment;
};

// The request at a level, after the pipeline ran at it: the caller runs the
// pipeline on demand (pure, memoised by the caller).
struct LevelCut {
  std::uint64_t tokens = 0;  // the request's tokens as cut at that level
  std::uint32_t turns = 0;   // turns in its history (working_memory.hpp)
};
using LevelTokens = std::function<LevelCut(Level)>;

// The policy:
//   - disabled -> None; shadow -> Standard, written nowhere, nothing else
//     (arm Shadow);
//   - a control-arm session (arm Control): decided as below with the
//     request as sent in place of the diet's level, and written only when
//     survival or recovery's memory cut it (a harder level); otherwise sent
//     as it came (the diet's figures reported), thinking never lowered;
//   - otherwise Standard, written, and with a known runway:
//     - thinking lowered while the runway left is under the threshold
//       (restored once it is back over twice that: never flips each request);
//     - survival, when the request at the session's level does not fit
//       (tokens x bill_ratio, minus cached reads, x quota_margin): the levels
//       from the session's one up to the hardest, the first that fits; none:
//       held up to max_wait_ms, else rejected with the wait after which it
//       fits; over a whole window even at the hardest level: sent at the
//       diet's level (the upstream decides). The level stays while the
//       pressure lasts (the diet's level would not fit twice over), and a
//       history no longer than the one that set it (a retry) is decided at
//       that same level (the latch: a retry after a 429 sends the same
//       bytes, and fits when its Retry-After says).
Decision decide(const PolicyInput& in, const LevelTokens& tokens_at);

// The mode a request is reported in once the pipeline ran: Standard becomes
// Semantic when tombstones of completed tasks went into the written request
// (strategies/completed_tasks.hpp); None and Survival stay (survival's
// outcome says more about what happened to the request).
Mode reported_mode(Mode decided, bool tombstones_written);

// The profile alone (no runway): disabled -> None; shadow -> Standard,
// written nowhere; otherwise Standard, written; sent now.
Decision decide(const Counted& counted, const Profile& profile);

}  // namespace td::pruning
