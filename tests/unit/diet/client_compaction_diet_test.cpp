// The diet leaves a client's own compaction request alone (F29): the same
// history the diet prunes goes as it came once its newest message is a known
// agent's compaction prompt, in each wire format; mode none, reason
// client_compaction.
#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <string>

#include "config/config.hpp"
#include "providers/route.hpp"
#include "diet/diet.hpp"
#include "trajectory_body.hpp"

using namespace td::diet;
using td::test::eager_config;
using td::test::fixture;
using td::test::trajectory_body;

namespace {

// The recorded history with one more user message at the end.
std::string with_user_message(const std::string& text) {
  rapidjson::Document d;
  const std::string body = trajectory_body("mini-swe-agent-12.json", "gpt-4o");
  d.Parse(body.data(), body.size());
  REQUIRE_FALSE(d.HasParseError());
  auto& a = d.GetAllocator();
  rapidjson::Value m(rapidjson::kObjectType);
  m.AddMember("role", "user", a);
  m.AddMember("content", rapidjson::Value(text.data(), static_cast<rapidjson::SizeType>(text.size()), a), a);
  d["messages"].PushBack(m, a);
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  d.Accept(w);
  return sb.GetString();
}

std::string json_string(const std::string& s) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return sb.GetString();
}

}  // namespace

TEST_CASE("diet: a compaction request goes as it came, the same history otherwise is pruned") {
  const td::config::Config cfg = eager_config();
  {
    DietCaches caches;
    std::string body = with_user_message("Carry on with the next failing test.");
    const DietOutcome d = diet_body({}, body, cfg, caches);
    CHECK(d.rewritten);  // the history is worth pruning
    CHECK(d.reason.empty());
    CHECK(d.decision.mode == td::pruning::Mode::Standard);
  }
  for (const char* name : {"codex.txt", "claude-code.txt", "gemini-cli.txt", "gemini-cli-verify.txt"}) {
    CAPTURE(name);
    DietCaches caches;
    const std::string sent = with_user_message(fixture(std::string("compaction/") + name));
    std::string body = sent;
    const DietOutcome d = diet_body({}, body, cfg, caches);
    CHECK(d.parsed);
    CHECK_FALSE(d.rewritten);
    CHECK(body == sent);
    CHECK(d.reason == kClientCompaction);
    CHECK(d.decision.mode == td::pruning::Mode::None);
    CHECK(d.result.tokens_before == d.result.tokens_after);
    CHECK(d.result.tokens_before > 20000);
  }
}

TEST_CASE("diet: the compaction request of each agent in its own wire format is recognised") {
  const td::config::Config cfg = eager_config();
  struct Case {
    const char* what;
    td::providers::Api api;
    std::string body;
  };
  const std::string codex = json_string(fixture("compaction/codex.txt"));
  const std::string claude = json_string(fixture("compaction/claude-code.txt"));
  const std::string gemini = json_string(fixture("compaction/gemini-cli.txt"));
  const Case cases[] = {
      {"codex responses", td::providers::Api::openai_responses,
       R"({"model":"gpt-5.1-codex","instructions":"You are Codex.","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":)" +
           codex + R"(}]}],"tools":[{"type":"function","name":"shell","parameters":{}}],"stream":true})"},
      {"claude code messages", td::providers::Api::anthropic,
       R"({"model":"claude-sonnet-4-5","max_tokens":20000,"system":[{"type":"text","text":"You are a helpful AI assistant tasked with summarizing conversations."}],"messages":[{"role":"user","content":"fix it"},{"role":"assistant","content":"done"},{"role":"user","content":[{"type":"text","text":)" +
           claude + R"(}]}],"tools":[{"name":"Bash","input_schema":{"type":"object"}}],"stream":true})"},
      {"gemini cli generateContent", td::providers::Api::gemini,
       R"({"contents":[{"role":"user","parts":[{"text":"fix it"}]},{"role":"model","parts":[{"text":"done"}]},{"role":"user","parts":[{"text":)" +
           gemini +
           R"(}]}],"systemInstruction":{"parts":[{"text":"You are a specialized system component responsible for distilling chat history into a structured XML <state_snapshot>."}]}})"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    td::providers::ChatRoute route;
    route.api = c.api;
    if (c.api == td::providers::Api::gemini) route.model = "gemini-2.5-pro";
    DietCaches caches;
    std::string body = c.body;
    const DietOutcome d = diet_body(route, body, cfg, caches);
    CHECK(d.parsed);
    CHECK(body == c.body);
    CHECK(d.reason == kClientCompaction);
    CHECK(d.decision.mode == td::pruning::Mode::None);
  }
}

TEST_CASE("diet: re-anchoring every N turns adds one message after the newest; every byte before it as without") {
  td::config::Config plain = eager_config(), anchored = eager_config();
  anchored.profiles[0].reanchor_every_turns = 1;
  DietCaches c1, c2;
  std::string without = with_user_message("Carry on.");
  std::string with = without;
  const DietOutcome a = diet_body({}, without, plain, c1);
  const DietOutcome b = diet_body({}, with, anchored, c2);
  REQUIRE(a.rewritten);
  REQUIRE(b.rewritten);
  const std::size_t end = without.rfind(']');
  REQUIRE(end != std::string::npos);
  CHECK(with.compare(0, end, without, 0, end) == 0);  // the cached prefix: every message before, byte for byte
  rapidjson::Document d;
  d.Parse(with.data(), with.size());
  REQUIRE_FALSE(d.HasParseError());
  const std::string restated = d["messages"][d["messages"].Size() - 1]["content"].GetString();
  CHECK(restated.rfind("[tokendiet: the task, restated]\n<pr_description>", 0) == 0);
  CHECK(b.result.tokens_after > a.result.tokens_after);
  CHECK(b.result.fired.back() == "reanchor");
  // The profile left as it is: no restatement without a compression.
  CHECK(std::find(a.result.fired.begin(), a.result.fired.end(), std::string_view("reanchor")) == a.result.fired.end());
}
