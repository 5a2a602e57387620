// libFuzzer: one provider's request body through the diet as the proxy runs
// it (parse -> count -> prune -> write), with a profile eager enough that
// every strategy fires on small inputs. TD_FUZZ_API picks the format. What
// the diet writes must parse again: the proxy never sends invalid JSON.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config.hpp"
#include "providers/route.hpp"
#include "diet/diet.hpp"
#include "pruning/profile.hpp"

namespace {

td::pruning::Profile eager_profile() {
  td::pruning::Profile p;
  p.window_turns = 1;
  p.keep_tool_uses = 0;
  p.frontier_step_turns = 1;
  p.trigger_tokens = 0;
  p.payback_requests = 0;
  p.identical_tool_calls = true;
  p.identical_tool_calls_min_bytes = 8;
  p.identical_tool_outputs_min_bytes = 16;
  p.low_entropy_min_run = 2;
  p.low_entropy_blob_min_bytes = 16;
  p.stale_tool_outputs_threshold_bytes = 32;
  p.stale_tool_outputs_head_bytes = 8;
  p.stale_tool_outputs_tail_bytes = 8;
  p.stale_assistant_text_threshold_bytes = 32;
  p.stale_assistant_text_head_bytes = 8;
  p.stale_assistant_text_tail_bytes = 8;
  p.trim_middle = true;
  p.trim_middle_sink_messages = 1;
  p.trim_middle_recent_messages = 1;
  p.trim_middle_budget_tokens = 0;
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const td::config::Config config;
  static const td::pruning::Profile profile = eager_profile();
  // Warm across inputs, as the proxy's are across requests: the memos' hits
  // and misses are both exercised.
  static td::diet::DietCaches caches;
  td::providers::ChatRoute route;
  route.api = td::providers::Api::TD_FUZZ_API;
  if (route.api == td::providers::Api::gemini) route.model = "gemini-2.5-flash";
  std::string body(reinterpret_cast<const char*>(data), size);
  td::diet::DietOptions options;
  options.profile = &profile;
  const td::diet::DietOutcome out = td::diet::diet_body(route, body, config, caches, options);
  if (out.rewritten && !td::providers::parse_request(route, body).request) __builtin_trap();
  return 0;
}
