// The diet of one chat request body, as named steps:
//
//   parse_step   the body in the provider-neutral view (resent messages
//                taken from the parsed-message memo)
//   count_step   every message as billed (the count cache)
//   decide       pruning::decide (pruning/decision.hpp): mode, what the
//                pipeline runs with and whether it writes, admission; with
//                the proxy's runway and session memory (DietOptions::policy),
//                the tri-modal policy, which may prune at harder levels
//                (diet/diet_policy.hpp)
//   prune_step   pruning::run_pipeline, as decided (the memos)
//   thinking_step  the thinking settings lowered, when the decision says so
//                (providers/thinking_budget.hpp): edits, from the request's
//                own parse
//   write_step   the edits spliced into the body, when the decision writes,
//                with thinking_step's in the same pass
//
// diet_body() runs them in that order, and parses the body once (parse_step;
// the policy's harder levels prune second parses of it). DietFilter (the proxy's request body
// filter) and `tokendiet replay` both call it, so replay measures exactly
// what the proxy sends. The caches every step uses are passed in
// (diet/diet_caches.hpp): the proxy's, or replay's own.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "json/splice.hpp"
#include "providers/route.hpp"
#include "diet/diet_policy.hpp"
#include "diet/diet_caches.hpp"
#include "pruning/decision.hpp"
#include "pruning/pipeline.hpp"

namespace td::tok {
class Calibration;
}

namespace td::diet {

struct DietOptions {
  const pruning::Profile* profile = nullptr;  // nullptr: the one the config picks for the model
  // Set: report raw_estimate, for the calibration to learn from; decisions
  // never use it.
  tok::Calibration* calibration = nullptr;
  // Set: the policy decides with what it returns (the proxy's runway and
  // session memory); null: the profile alone (replay, tests).
  const PolicyFactsFn* policy = nullptr;
  // false: the profile's semantic eviction (completed_tasks) is off, as when
  // there is no archive to keep what it would evict, or a write to it failed
  // (docs/design.md §The archive).
  bool semantic_eviction = true;
  // Without a policy: the lines the session's model recalled, kept visible
  // in their cuts (`tokendiet replay`'s model of the proxy's session memory;
  // with a policy they come with its facts). Null: none.
  std::shared_ptr<const pruning::RecalledLines> recalled{};
};

struct DietOutcome {
  bool parsed = false;     // false: not a body the adapter understands (error says why)
  bool fail_open = false;  // parse or write failed: `body` was left exactly as it came
  std::string error;
  std::string model;  // from the body (or the Gemini path)
  bool stream = false;
  // The profile that applied: the config's (or the built-in one when none
  // matches the model), which outlives the outcome.
  const pruning::Profile* profile = nullptr;
  std::string_view profile_name() const { return profile ? std::string_view(profile->name) : std::string_view(); }
  pruning::Decision decision;  // what the diet decided (once parsed)
  pruning::PipelineResult result;
  bool rewritten = false;  // the pruned request replaced `body` (or went to `rewritten`)
  bool exact = false;      // tokens were counted by the model's own tokenizer
  // The prompt as sent, as the diet counted it (estimated models: the
  // uncalibrated estimate), which the logging phase compares with what the
  // upstream billed (the calibration; the runway's bill ratio).
  std::uint64_t raw_estimate = 0;
  // With a policy: where its runway and session are, and what thinking_step
  // lowered ("" nothing).
  std::string runway_key;
  std::uint64_t session = 0;
  std::string thinking;
  // File reads of the newest assistant message re-reading a path the
  // session read before (pruning/rereads.hpp).
  std::uint32_t rereads = 0;
  // Why the diet left the request alone although its profile is on ("" it
  // did not): kClientCompaction, kServerHistory.
  std::string_view reason;

  // The written request holds tombstones (semantic eviction): their entries
  // must be archived before it goes.
  bool tombstoned() const { return rewritten && !result.archived.empty(); }
};

// The reason of a client's own compaction request (pruning/client_compaction.hpp).
inline constexpr std::string_view kClientCompaction = "client_compaction";
// The reason of a request whose earlier turns the provider holds
// (providers::ParsedRequest::server_history): nothing cut.
inline constexpr std::string_view kServerHistory = "server_history";

// 1. Parse: no request means the body goes as it came (error says why).
providers::ParseOutcome parse_step(const providers::ChatRoute& route, std::string_view body, DietCaches& caches);

// 2. Count: the request as the client sent it.
pruning::Counted count_step(const pruning::Conversation& conv, const pruning::TokenCounter& counter,
                            DietCaches& caches);

// 4. Prune `conv` (counted by count_step) as `decision` says.
pruning::PipelineResult prune_step(pruning::Conversation& conv, const pruning::Counted& counted,
                                   const pruning::Decision& decision, const pruning::TokenCounter& counter,
                                   DietCaches& caches);

// 5. Write: when the decision writes and the pipeline changed something,
// `rewritten` receives the spliced request (`body` is the bytes parse_step saw),
// with `extra` (thinking_step's edits of `body`) spliced in the same pass;
// `extra` is written whatever the decision says of the messages. An `extra`
// that cannot be written is left out, the messages' edits written without it
// (`extra_dropped`).
struct Written {
  bool ok = true;          // false: nothing written (error says why); forward `body` as it came
  bool rewritten = false;  // `rewritten` holds the pruned request
  bool extra_dropped = false;
  std::string error;
};
Written write_step(const providers::ParsedRequest& request, const pruning::PipelineResult& result,
                   const pruning::Decision& decision, std::string_view body, std::string& rewritten,
                   std::vector<json::Edit> extra = {});

// 4b. Re-anchor (pruning/reanchor.hpp): the task restated after the newest
// message when the decision compressed harder than the diet (survival's
// level cut something), or
// on every reanchor_every_turns-th of `turns`; reported as the stat
// kReanchorStat, its tokens added to `result`.
inline constexpr const char* kReanchorStat = "reanchor";
// The tokens a user message of `text` adds, its overhead included (the
// restatement; recovery's note).
std::uint64_t user_message_tokens(std::string text, const pruning::TokenCounter& counter);
void reanchor_step(providers::ParsedRequest& request, const pruning::Profile& profile,
                   const pruning::Decision& decision, std::uint32_t turns, const pruning::TokenCounter& counter,
                   pruning::PipelineResult& result);

// 6. Thinking: when the decision lowers thinking, the edits that lower the
// thinking fields of the request for its model within the profile's targets,
// read from and written against the request's own parse (it parses nothing:
// it has no bytes to parse), for write_step to splice in. Empty: no such
// field, already low, or a write that cannot be done; otherwise `reason`
// says what changes.
std::vector<json::Edit> thinking_step(const providers::ParsedRequest& request, const pruning::Profile& profile,
                                      std::string& reason);

// Puts `body` on the diet of its profile: steps 1 to 6. `body` is replaced
// only when the pipeline changed something, the decision writes and the
// writer spliced it; otherwise it is untouched. Never throws for bad input:
// failures come back as fail_open with a reason.
DietOutcome diet_body(const providers::ChatRoute& route, std::string& body, const config::Config& config,
                      DietCaches& caches, const DietOptions& options = {});

// The same, leaving `body` as it came: the pruned request, when there is one
// (DietOutcome::rewritten), goes to `rewritten`. For a diet on a diet thread,
// while the request's thread may still need the original bytes.
DietOutcome diet_body(const providers::ChatRoute& route, std::string_view body, std::string& rewritten,
                      const config::Config& config, DietCaches& caches, const DietOptions& options = {});

// The plan ahead (pruning/lossy_plan.hpp): `ahead` is what diet_body()
// reported for `body` (DietOutcome::result.ahead), `body` the bytes it saw.
// Parses them again and computes the plan into `caches`, for a later request
// of the session to find. Off the request's path (the proxy's thread for it,
// replay untimed); changes what later requests cost, never what they send.
// Never throws: false when nothing was computed (bytes it cannot read, or
// none due).
bool plan_ahead(const providers::ChatRoute& route, std::string_view body, const pruning::PlanAhead& ahead,
                DietCaches& caches) noexcept;

}  // namespace td::diet
