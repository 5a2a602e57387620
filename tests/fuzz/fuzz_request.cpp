// libFuzzer: one provider's request body through the diet as the proxy runs
// it (parse -> count -> prune -> write), with a profile eager enough that
// every strategy fires on small inputs. TD_FUZZ_API picks the format. What
// the diet writes must parse again: the proxy never sends invalid JSON.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config.hpp"
#include "providers/route.hpp"
#include "proxy/filters/diet.hpp"
#include "pruning/profile.hpp"

namespace {

td::pruning::Profile eager_profile() {
  td::pruning::Profile p;
  p.window_turns = 1;
  p.keep_tool_uses = 0;
  p.frontier_step_turns = 1;
  p.trigger_tokens = 0;
  p.payback_requests = 0;
  p.dedup_tool_calls = true;
  p.dedup_call_min_bytes = 8;
  p.dedup_min_bytes = 16;
  p.fold_min_run = 2;
  p.fold_blob_min_bytes = 16;
  p.snippet_threshold_bytes = 32;
  p.snippet_head_bytes = 8;
  p.snippet_tail_bytes = 8;
  p.assistant_threshold_bytes = 32;
  p.assistant_head_bytes = 8;
  p.assistant_tail_bytes = 8;
  p.trim_middle = true;
  p.sink_messages = 1;
  p.recent_messages = 1;
  p.trim_budget_tokens = 0;
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const td::config::Config config;
  static const td::pruning::Profile profile = eager_profile();
  td::providers::ChatRoute route;
  route.api = td::providers::Api::TD_FUZZ_API;
  if (route.api == td::providers::Api::gemini) route.model = "gemini-2.5-flash";
  std::string body(reinterpret_cast<const char*>(data), size);
  td::proxy::DietOptions options;
  options.profile = &profile;
  const td::proxy::DietOutcome out = td::proxy::diet_body(route, body, config, options);
  if (out.rewritten && !td::providers::parse_request(route, body).request) __builtin_trap();
  return 0;
}
