// The diet's thinking step (diet/diet.hpp, docs/design.md §Thinking budget):
// thinking is lowered from the request's own parse and spliced in the same
// pass as the messages' edits, so a request's body is parsed once, and the
// bytes are those the two steps wrote one after the other.
#include <doctest/doctest.h>

#include <string>

#include "config/config.hpp"
#include "diet/diet.hpp"
#include "json/json_spans.hpp"
#include "providers/route.hpp"
#include "providers/thinking_budget.hpp"
#include "trajectory_body.hpp"

using namespace td::diet;
using td::test::trajectory_body;

namespace {

// A runway well under the profile's thinking threshold, with room for the request.
PolicyFacts pressed(const PolicyQuery&) {
  PolicyFacts f;
  f.runway.combined = {10'000'000, 5'000'000, 10'000'000 / 60'000.0};
  f.runway_key = "test";
  return f;
}

struct Dieted {
  DietOutcome out;
  std::string body;
  std::uint64_t parses = 0;  // of JSON bodies, on this thread
};

Dieted diet(std::string body, const td::pruning::Profile& profile) {
  const td::config::Config cfg;
  DietCaches caches;
  const PolicyFactsFn facts = pressed;
  DietOptions options;
  options.profile = &profile;
  options.policy = &facts;
  const auto route = td::providers::chat_route("POST", "/v1/chat/completions");
  REQUIRE(route);
  const std::uint64_t before = td::json::Document::parses_on_this_thread();
  Dieted d;
  d.out = diet_body(*route, body, cfg, caches, options);
  d.parses = td::json::Document::parses_on_this_thread() - before;
  d.body = std::move(body);
  return d;
}

td::pruning::Profile thinking_profile(std::uint64_t trigger_tokens) {
  td::pruning::Profile p;
  p.tpm_limit = 10'000'000;
  p.thinking_budget_runway_fraction = 0.99;
  p.trigger_tokens = trigger_tokens;
  p.cache_write_price = 0.0;
  return p;
}

}  // namespace

TEST_CASE("diet: thinking lowered from the one parse of the body, in the same bytes as two writes") {
  std::string body = trajectory_body("tau-bench-3.json", "gpt-5");
  body.insert(body.size() - 1, R"(,"reasoning_effort":"high")");
  // Without cuts (a trigger above the body) and with them (every message a candidate).
  for (std::uint64_t trigger : {100'000'000ull, 1ull}) {
    CAPTURE(trigger);
    td::pruning::Profile profile = thinking_profile(trigger);
    const Dieted lowered = diet(body, profile);
    REQUIRE_FALSE(lowered.out.fail_open);
    CHECK(lowered.out.decision.lower_thinking);
    CHECK(lowered.out.thinking.find("reasoning_effort high -> low") != std::string::npos);
    CHECK(lowered.body.find(R"("reasoning_effort":"low")") != std::string::npos);
    CHECK(lowered.parses == 1);

    // The bytes the messages' write and a second write of the thinking give.
    profile.thinking_budget = false;
    const Dieted messages_only = diet(body, profile);
    REQUIRE_FALSE(messages_only.out.fail_open);
    CHECK(messages_only.out.rewritten == (trigger == 1));
    const td::providers::ThinkingChange change =
        td::providers::lower_thinking(td::providers::Api::openai_chat, "gpt-5", {.reasoning_effort = "high"});
    const td::providers::SettingsWrite second =
        td::providers::apply_thinking_change(td::providers::Api::openai_chat, messages_only.body, change);
    REQUIRE(second.ok);
    CHECK(lowered.body == second.result(messages_only.body));
  }
}
