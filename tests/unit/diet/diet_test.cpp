// The diet's steps with the caches passed in (diet/diet.hpp): two
// DietCaches never warm each other, a warm one gives the request a fresh one
// gives; Claude Code's bodies through the diet.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "diet/diet.hpp"
#include "providers/request.hpp"
#include "providers/route.hpp"
#include "trajectory_body.hpp"

using namespace td::diet;
using td::test::eager_config;
using td::test::fixture;
using td::test::trajectory_body;

namespace {

const std::string& history() { return td::test::gpt4o_history(); }

// Everything a diet decided and did, as text.
std::string summary(const DietOutcome& d, const std::string& body) {
  std::string s = std::string(td::pruning::mode_name(d.decision.mode)) + (d.decision.settings.write ? " write" : "") +
                  " " + std::to_string(d.result.tokens_before) + "->" + std::to_string(d.result.tokens_after) +
                  " stale " + std::to_string(d.result.stale_turns) + "/" + std::to_string(d.result.stale_messages) +
                  " trimmed " + std::to_string(d.result.trimmed_until) + " fired " +
                  td::pruning::join_names(d.result.fired) + (d.rewritten ? " rewritten" : "") +
                  (d.fail_open ? " FAIL " + d.error : "");
  for (const auto& st : d.result.strategies)
    s += " " + std::string(st.name) + ":" + std::to_string(st.hits) + "/" + std::to_string(st.bytes_saved);
  return s + "\n" + body;
}

// How much a DietCaches has been used: every lookup of every cache.
std::uint64_t lookups(const DietCaches& c) {
  const auto counts = c.pipeline.counts.stats();
  return counts.hits + counts.misses + c.pipeline.plans.hits() + c.pipeline.plans.misses() + c.pipeline.snips.hits() +
         c.pipeline.snips.misses() + c.pipeline.folds.hits() + c.pipeline.folds.misses() + c.parsed.hits();
}

std::string diet(DietCaches& caches, const td::config::Config& cfg) {
  std::string body = history();
  const DietOutcome d = diet_body({}, body, cfg, caches);
  return summary(d, body);
}

}  // namespace

TEST_CASE("diet caches: two are independent, and a warm one diets a request as a fresh one does") {
  const td::config::Config cfg = eager_config();
  DietCaches a, b;
  const std::string first = diet(a, cfg);
  CHECK(first.find(" rewritten") != std::string::npos);  // the diet did act
  CHECK(a.pipeline.counts.stats().inserts > 0);
  CHECK(a.pipeline.plans.misses() > 0);  // planned, and remembered
  CHECK(a.pipeline.snips.misses() > 0);
  CHECK(lookups(b) == 0);  // untouched by a's request
  CHECK(b.pipeline.counts.stats().inserts == 0);

  // Warm: the same request through `a` again is looked up, and comes out the same.
  const auto counts_before = a.pipeline.counts.stats();
  const std::uint64_t plans_before = a.pipeline.plans.hits();
  CHECK(diet(a, cfg) == first);
  CHECK(a.pipeline.counts.stats().hits > counts_before.hits);
  CHECK(a.pipeline.plans.hits() > plans_before);
  CHECK(a.parsed.hits() > 0);  // its messages were parsed once

  // Fresh: `b` has seen nothing, gives the same, and `a` sees none of it.
  const std::uint64_t a_used = lookups(a);
  CHECK(diet(b, cfg) == first);
  CHECK(b.parsed.hits() == 0);
  CHECK(b.pipeline.plans.hits() == 0);
  CHECK(lookups(a) == a_used);
}

namespace {

// The system messages inside `messages` of an Anthropic body, as sent, in order.
std::vector<std::string> inline_system_messages(const std::string& body) {
  const td::providers::ChatRoute route{td::providers::Api::anthropic, {}, false};
  std::vector<std::string> out;
  td::providers::ParseOutcome p = td::providers::parse_request(route, body);
  REQUIRE(p.request);
  const auto& r = *p.request;
  for (const auto& m : r.conversation.messages)
    if (m.role == td::pruning::Role::System && !m.system_field) out.emplace_back(r.doc.raw(r.messages[m.origin].node));
  return out;
}

// Diets a Claude Code body with `cfg` and checks what Claude Code's default
// model needs: no fail open, the body dieted, every system message inside
// `messages` sent byte for byte where it stood, the first one before the
// first assistant turn, the result a body that parses. Returns the outcome
// and the body as dieted.
std::pair<DietOutcome, std::string> diet_claude_code_body(const std::string& original, const td::config::Config& cfg,
                                                          std::size_t system_messages_expected) {
  const td::providers::ChatRoute route{td::providers::Api::anthropic, {}, false};
  const std::vector<std::string> system_messages = inline_system_messages(original);
  REQUIRE(system_messages.size() == system_messages_expected);
  DietCaches caches;
  std::string body = original;
  DietOutcome d = diet_body(route, body, cfg, caches);
  INFO(d.error);
  CHECK(d.parsed);
  CHECK_FALSE(d.fail_open);
  CHECK(d.rewritten);
  CHECK(d.result.tokens_after < d.result.tokens_before);
  std::size_t at = 0;
  for (const std::string& s : system_messages) {
    const std::size_t found = body.find(s, at);
    CHECK(found != std::string::npos);
    if (found != std::string::npos) at = found + s.size();
  }
  CHECK(body.find(system_messages[0]) < body.find(R"("role":"assistant")"));
  CHECK(td::providers::parse_request(route, body).request.has_value());
  return {d, body};
}

}  // namespace

// Claude Code with its default model puts its environment block in a system
// message inside `messages` (tests/fixtures/providers/anthropic-claude-code-default.json,
// synthesized from Claude Code 2.1's request shape: see the README there).
// Such a body used to fail open; it is dieted, and every system message goes
// upstream byte for byte, where it stood.
TEST_CASE("diet: Claude Code's default-model body is dieted, its system messages untouched") {
  td::config::Config cfg;  // the defaults, with every frontier step paying for itself
  td::pruning::Profile profile;
  profile.cache_write_price = 0.0;
  cfg.profiles.push_back(profile);
  diet_claude_code_body(fixture("providers/anthropic-claude-code-default.json"), cfg, 2);
}

// The same with a body Claude Code 2.1.332 itself sent, with its default model
// (tests/fixtures/providers/anthropic-claude-code-recorded.json: the 9th
// request of the realcli suite's scripted session, recorded straight from the
// CLI; see the README there): its environment block and a later "the user
// hasn't heard from you" turn are system messages inside `messages`, every
// assistant turn starts with signed thinking, and the file it printed twice
// with Bash is a repeat. Under the default profile the diet fires,
// identical_tool_outputs among its strategies, and the newest thinking keeps
// its signature.
TEST_CASE("diet: a recorded Claude Code body is dieted under the default profile") {
  td::config::Config cfg;
  cfg.profiles.push_back(td::pruning::Profile{});
  const std::string original = fixture("providers/anthropic-claude-code-recorded.json");
  const auto [d, body] = diet_claude_code_body(original, cfg, 2);
  const std::string fired = td::pruning::join_names(d.result.fired);
  INFO(fired);
  CHECK(fired.find("identical_tool_outputs") != std::string::npos);
  const std::size_t at = original.rfind(R"("signature":")");
  REQUIRE(at != std::string::npos);
  const std::string newest = original.substr(at, original.find('"', at + 13) - at + 1);
  CHECK(body.find(newest) != std::string::npos);
}
