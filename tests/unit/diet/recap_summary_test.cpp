// The recap written by a model through the diet (diet/recap_summary.hpp)
// against a fake summarizer: a prefix is summarized once (a second request
// with the same prefix asks no model) and renders the same bytes after; a
// failing summarizer gives the extractive recap, cached so it stays; a
// summarizer of another provider is never asked.
#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>

#include "config/config.hpp"
#include "diet/diet.hpp"
#include "diet/recap_summary.hpp"
#include "pruning/strategies/recap.hpp"
#include "trajectory_body.hpp"

using namespace td::diet;
using td::test::fixture;

namespace {

struct FakeSummarizer : RecapSummarizer {
  std::optional<std::string> answer;
  mutable std::vector<SummaryCall> calls;
  std::optional<std::string> summarize(const SummaryCall& call) const override {
    calls.push_back(call);
    return answer;
  }
};

// The first `n` messages of the longest trajectory as an OpenAI chat body.
std::string prefix_body(std::size_t n) {
  static const rapidjson::Document t = td::test::trajectory("mini-swe-agent-12.json");
  return td::test::prefix_body(t, n, "gpt-4o");
}

td::config::Config summarizing_config() {
  td::config::Config cfg;
  td::pruning::Profile p;
  p.token_threshold = 15000;  // over the session's requests as the stale cuts send them
  p.recap_budget_tokens = 2000;
  p.summarizer.provider = "openai";
  p.summarizer.model = "gpt-4.1-mini";
  p.summarizer.max_tokens = 5000;
  cfg.profiles.push_back(p);
  return cfg;
}

// The body's recap message, as JSON text.
std::string recap_of(const std::string& body) {
  const auto at = body.find(td::pruning::kRecapMarker);
  if (at == std::string::npos) return {};
  return body.substr(at, body.find("\"}", at) - at);
}

// One request as the diet filter runs it: the diet, and when it asks for a
// summary, the summarizer, then the diet again.
struct Sent {
  std::string body;
  DietOutcome outcome;
  bool asked = false;
};
Sent send(const std::string& request, const td::config::Config& cfg, DietCaches& caches, const FakeSummarizer& s,
          td::providers::Provider provider = td::providers::Provider::openai) {
  Sent out;
  out.body = request;
  out.outcome = diet_body({}, out.body, cfg, caches);
  const td::pruning::Profile& p = cfg.profiles.front();
  if (wants_summary(out.outcome, p)) {
    out.asked = summarize_recap(s, out.outcome, p, provider, {{"authorization", "Bearer k"}}, caches.summaries);
    out.body = request;
    out.outcome = diet_body({}, out.body, cfg, caches);
    CHECK_FALSE(wants_summary(out.outcome, p));
  }
  return out;
}

}  // namespace

TEST_CASE("recap summary: a prefix is summarized once, and its recap renders the same bytes after") {
  const td::config::Config cfg = summarizing_config();
  DietCaches caches;
  FakeSummarizer s;
  s.answer = "SUMMARY: the agent found the failing test and fixed src/parser.py.";
  const std::string request = prefix_body(200);
  const Sent first = send(request, cfg, caches, s);
  REQUIRE(first.asked);
  REQUIRE(s.calls.size() == 1);
  const SummaryCall& call = s.calls.front();
  CHECK(call.provider == "openai");
  CHECK(call.upstream == "openai");
  CHECK(call.model == "gpt-4.1-mini");
  CHECK(call.max_tokens == 2000);  // bounded by the recap's budget
  CHECK(call.prompt.starts_with(kSummaryInstruction));
  CHECK(call.prompt.find("turn ") != std::string::npos);  // the extractive lines
  CHECK(call.headers == std::vector<std::pair<std::string, std::string>>{{"authorization", "Bearer k"}});
  const std::string recap = recap_of(first.body);
  REQUIRE(!recap.empty());
  CHECK(recap.find("SUMMARY: the agent found") != std::string::npos);

  // The same request again, and the history grown by a turn with the same
  // cut: no model asked, the recap byte for byte.
  const Sent again = send(request, cfg, caches, s);
  CHECK_FALSE(again.asked);
  CHECK(again.body == first.body);
  const Sent grown = send(prefix_body(202), cfg, caches, s);
  REQUIRE(grown.outcome.result.recap_prefix_hash == first.outcome.result.recap_prefix_hash);  // the same cut
  CHECK_FALSE(grown.asked);
  CHECK(recap_of(grown.body) == recap);
  CHECK(s.calls.size() == 1u);
}

TEST_CASE("recap summary: a failure gives the extractive recap, cached so the bytes stay") {
  const td::config::Config cfg = summarizing_config();
  const std::string request = prefix_body(200);
  // The extractive recap, as a profile without a summarizer renders it.
  td::config::Config plain = cfg;
  plain.profiles.front().summarizer = {};
  DietCaches plain_caches;
  std::string extractive = request;
  diet_body({}, extractive, plain, plain_caches);

  DietCaches caches;
  FakeSummarizer s;  // answers nothing: a timeout, an error status, no text
  const Sent first = send(request, cfg, caches, s);
  CHECK(first.asked);
  CHECK(first.body == extractive);
  s.answer = "a later answer that must not change the bytes";
  const Sent again = send(request, cfg, caches, s);
  CHECK_FALSE(again.asked);
  CHECK(again.body == extractive);
  CHECK(s.calls.size() == 1);
}

TEST_CASE("recap summary: a summarizer of another provider is not asked; under the threshold nothing is") {
  const td::config::Config cfg = summarizing_config();
  DietCaches caches;
  FakeSummarizer s;
  s.answer = "never used";
  const Sent other = send(prefix_body(200), cfg, caches, s, td::providers::Provider::anthropic);
  CHECK_FALSE(other.asked);
  CHECK(s.calls.empty());
  CHECK(recap_of(other.body).find("never used") == std::string::npos);
  CHECK(!recap_of(other.body).empty());
  const Sent small = send(prefix_body(6), cfg, caches, s);
  CHECK_FALSE(small.asked);
  CHECK(recap_of(small.body).empty());
  CHECK(s.calls.empty());
}
