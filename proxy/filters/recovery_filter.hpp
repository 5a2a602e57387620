// Context-overflow recovery (F21; docs/design.md §Policy, Recovery): the
// failure phase's filter. When the upstream answers a context-length error
// (providers::classify_error_body(), each provider's wording) before any byte
// reached the client, the request goes once more, compressed to fit:
//
//   the window   what the error says (providers/context_window.hpp), else the
//                profile's context_window, else the model's known window;
//                minus the output cap the request asks for (OpenAI, Anthropic:
//                the window holds the answer too), and aimed at
//                recovery_margin of it, in the diet's tokens (the provider's
//                count of the prompt, where the error gives it, calibrates ours)
//   the cut      survival's harder levels (pruning::Level::Window, then
//                DropMiddle) on the request as it was sent: the first that fits
//   the anchor   the task restated (pruning/reanchor.hpp, F22) when
//                reanchor_after_compression, unless the request carries it
//   the note     recovery_note as a new user message at the end of the
//                context (before a trailing assistant prefill), so the model
//                knows older history was compressed
//
// The client sees only the second answer; ctx.recovery ("retried") goes to
// the log line and /metrics, ctx.retries counts the attempt. A request that
// no level makes fit, or whose window is unknown, is not retried: the client
// gets the upstream's error unchanged (ctx.recovery "no_fit"). The failure
// phase gives filters one retry per request, so there is never a second.
// Runs on the request's I/O thread: a rare path, one parse and up to two
// pipeline runs of the body.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "providers/response_error.hpp"
#include "providers/route.hpp"
#include "proxy/phases/filter.hpp"
#include "diet/diet_caches.hpp"
#include "pruning/decision.hpp"

namespace td::proxy {

// What recover_body() made of a request the upstream found too long.
struct Recovery {
  std::string_view outcome;  // "retried" (body holds the retry), "no_fit", or "" (not ours to retry)
  std::string body;          // the compressed request
  pruning::Level level = pruning::Level::Standard;
  std::uint64_t tokens_before = 0;  // the request as it was sent, as the diet counts
  std::uint64_t tokens_after = 0;   // the retry, note included
  double budget = 0;                // what it had to fit in, in the diet's tokens
  std::vector<std::string_view> fired;
  // The texts the retry's cuts hid (PipelineResult::hidden), and the profile
  // it used: the recall offer is extended with them (docs/design.md §Recall).
  std::vector<std::shared_ptr<const std::string>> hidden;
  const pruning::Profile* profile = nullptr;
};

// The request `body` (sent on `route`, answered with `error`) compressed to
// fit the window, at the first harder level that does. Pure besides `caches`;
// throws only on allocation failure.
Recovery recover_body(const providers::ChatRoute& route, std::string_view body, const providers::ResponseError& error,
                      const config::Config& config, diet::DietCaches& caches,
                      std::string_view chosen = {});  // x-tokendiet-profile, "" none

class RecoveryFilter final : public Filter {
 public:
  // `caches`: the process's (process_state().diet_caches()), which outlive the filter.
  RecoveryFilter(const config::Config& config, diet::DietCaches& caches)
      : config_(std::make_shared<const config::Config>(config)), caches_(caches) {}
  std::string_view name() const override { return "recovery"; }
  RetryDecision upstream_failure_filter(RequestContext& ctx, const UpstreamOutcome& outcome,
                                        std::string& body) override;

 private:
  std::shared_ptr<const config::Config> config_;
  diet::DietCaches& caches_;
};

}  // namespace td::proxy
