// Generation settings on every recorded request body of every format (wire
// recordings in three serialisations, the synthesized provider bodies, the
// replay trajectories as chat bodies): each setting the format has is read
// as RapidJSON sees it, and written with only that field's bytes changed,
// the result meaning exactly the input with that field set; plus the exact
// bytes of inserts, the pairing rules, and failing open on what we cannot
// write.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <random>

#include "generation_settings_oracle.hpp"

using namespace td::providers;
namespace json = td::json;
using namespace td::providers::test;
using namespace td::providers::gen_test;

TEST_CASE("generation settings: wire fields per format") {
  for (Api api : {Api::openai_chat, Api::openai_responses, Api::anthropic, Api::gemini})
    for (Setting s : kAllSettings) CHECK(wire_field(api, s) == expected_wire(api, s));
}

TEST_CASE("generation settings: read and written on every recorded body of every format") {
  const auto bodies = recorded_bodies();
  REQUIRE(bodies.size() >= 100);
  std::size_t per_api[4] = {}, thinking_bodies = 0;
  for (const Body& body : bodies) {
    INFO(body.label);
    ++per_api[static_cast<int>(body.api)];
    const SettingsRead r = read_generation_settings(body.api, body.text);
    CHECK(r.problems.empty());
    rapidjson::Document d;
    d.Parse(body.text.data(), body.text.size());
    normalize(d, body.api);
    CHECK(r.settings == oracle_read(d, body.api));
    if (r.settings.thinking_budget || r.settings.include_thoughts || r.settings.reasoning_effort) ++thinking_bodies;
    {
      ParseOutcome p = parse(body.api, body.text);
      REQUIRE(p.request.has_value());
      CHECK(read_generation_settings(*p.request).settings == r.settings);
    }
    // Writing what the body already says writes nothing.
    SettingsWrite same = write_generation_settings(body.api, body.text, r.settings);
    CHECK(same.ok);
    CHECK_FALSE(same.changed);
    CHECK(same.result(body.text) == body.text);

    json::Document doc;
    REQUIRE(doc.parse(body.text));
    for (Setting s : kAllSettings) {
      const std::string wire(wire_field(body.api, s));
      GenerationSettings want = new_value(s, r.settings);
      INFO("setting " << name(s) << " " << wire);
      if (wire.empty()) {
        check_refused(body, want, "has no");
        continue;
      }
      Region region = region_of(doc, wire);
      if (body.api == Api::openai_chat && s == Setting::max_output_tokens && doc.find(0, "max_tokens") != json::kNone) {
        region = region_of(doc, "max_tokens");
        if (doc.find(0, wire) != json::kNone) region = hull(region, region_of(doc, wire));
      }
      if (body.api == Api::anthropic && s == Setting::thinking_type && r.settings.thinking_budget)
        region = region_of(doc, "thinking");  // the budget goes with "enabled"
      if (body.api == Api::anthropic && s == Setting::thinking_budget && r.settings.thinking_type != "enabled") {
        check_refused(body, want, "\"enabled\"");
        want.thinking_type = "enabled";
        region = hull(region, region_of(doc, "thinking.type"));
      }
      if (body.api == Api::gemini && ((s == Setting::thinking_level && r.settings.thinking_budget) ||
                                      (s == Setting::thinking_budget && r.settings.thinking_level))) {
        check_refused(body, want, "together");
        continue;
      }
      check_write(body, want, region);
    }
  }
  for (std::size_t n : per_api) CHECK(n >= 4);
  CHECK(thinking_bodies >= 10);
}

TEST_CASE("generation settings: inserted members follow the body's spacing") {
  struct Case {
    Api api;
    const char* body;
    GenerationSettings want;
    const char* expect;
  };
  GenerationSettings low;
  low.reasoning_effort = "low";
  GenerationSettings cap;
  cap.max_output_tokens = 100;
  GenerationSettings gem;
  gem.thinking_budget = 8192;
  gem.include_thoughts = true;
  gem.max_output_tokens = 2000;
  GenerationSettings budget;
  budget.thinking_budget = 8192;
  GenerationSettings level;
  level.thinking_level = "low";
  GenerationSettings enable;
  enable.thinking_type = "enabled";
  enable.thinking_budget = 2048;
  for (
      const Case& c : {
          Case{Api::openai_chat, R"({"model":"m","messages":[]})", low,
               R"({"model":"m","messages":[],"reasoning_effort":"low"})"},
          Case{Api::openai_chat, "{\n  \"model\": \"m\",\n  \"messages\": []\n}", low,
               "{\n  \"model\": \"m\",\n  \"messages\": [],\n  \"reasoning_effort\": \"low\"\n}"},
          Case{Api::openai_chat, "{\n    \"messages\": []\n}", low,
               "{\n    \"messages\": [],\n    \"reasoning_effort\": \"low\"\n}"},
          Case{Api::openai_chat, R"({"model": "m", "messages": []})", low,
               R"({"model": "m", "messages": [], "reasoning_effort": "low"})"},
          Case{Api::openai_chat, R"({"messages":[],"reasoning_effort":null})", low,
               R"({"messages":[],"reasoning_effort":"low"})"},
          // OpenAI chat's output cap: whichever the body uses, else the current name.
          Case{Api::openai_chat, R"({"messages":[]})", cap, R"({"messages":[],"max_completion_tokens":100})"},
          Case{Api::openai_chat, R"({"messages":[],"max_tokens":7})", cap, R"({"messages":[],"max_tokens":100})"},
          Case{Api::openai_chat, R"({"max_completion_tokens":7,"messages":[]})", cap,
               R"({"max_completion_tokens":100,"messages":[]})"},
          Case{Api::openai_chat, R"({"max_tokens":7,"messages":[],"max_completion_tokens":7})", cap,
               R"({"max_tokens":100,"messages":[],"max_completion_tokens":100})"},
          Case{Api::openai_responses, R"({"input":"hi"})", low, R"({"input":"hi","reasoning":{"effort":"low"}})"},
          Case{Api::openai_responses, R"({"input":"hi","reasoning":null})", low,
               R"({"input":"hi","reasoning":{"effort":"low"}})"},
          Case{Api::openai_responses, R"({"reasoning": {"summary": "auto"}, "input": "hi"})", low,
               R"({"reasoning": {"summary": "auto", "effort": "low"}, "input": "hi"})"},
          Case{Api::openai_responses, R"({"reasoning":{ },"input":"hi"})", low,
               R"({"reasoning":{"effort":"low" },"input":"hi"})"},
          Case{Api::openai_responses, R"({"input":"hi","max_output_tokens":5})", cap,
               R"({"input":"hi","max_output_tokens":100})"},
          Case{Api::anthropic, R"({"messages":[],"max_tokens":1024})", low,
               R"({"messages":[],"max_tokens":1024,"output_config":{"effort":"low"}})"},
          Case{Api::anthropic, R"({"messages":[]})", enable,
               R"({"messages":[],"thinking":{"type":"enabled","budget_tokens":2048}})"},
          Case{Api::anthropic, R"({"messages":[],"thinking":{"type":"disabled"}})", enable,
               R"({"messages":[],"thinking":{"type":"enabled","budget_tokens":2048}})"},
          Case{Api::anthropic, R"({"messages":[],"thinking":{"budget_tokens":1024,"type":"enabled"}})", budget,
               R"({"messages":[],"thinking":{"budget_tokens":8192,"type":"enabled"}})"},
          // Gemini: one generationConfig for every new member, snake_case where the object uses it.
          Case{
              Api::gemini, R"({"contents":[]})", gem,
              R"({"contents":[],"generationConfig":{"maxOutputTokens":2000,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}}})"},
          Case{Api::gemini, R"({"contents":[],"generationConfig":{}})", cap,
               R"({"contents":[],"generationConfig":{"maxOutputTokens":100}})"},
          Case{Api::gemini, R"({"contents":[],"generationConfig":null})", budget,
               R"({"contents":[],"generationConfig":{"thinkingConfig":{"thinkingBudget":8192}}})"},
          Case{
              Api::gemini, R"({"contents":[],"generationConfig":{"thinkingConfig":{"include_thoughts":true}}})", budget,
              R"({"contents":[],"generationConfig":{"thinkingConfig":{"include_thoughts":true,"thinking_budget":8192}}})"},
          Case{
              Api::gemini, R"({"system_instruction":{"parts":[]},"contents":[]})", level,
              R"({"system_instruction":{"parts":[]},"contents":[],"generation_config":{"thinking_config":{"thinking_level":"low"}}})"},
          Case{Api::gemini, R"({"contents":[],"generation_config":{"thinking_config":{"thinking_budget":1024}}})",
               budget, R"({"contents":[],"generation_config":{"thinking_config":{"thinking_budget":8192}}})"},
          Case{
              Api::gemini, R"({"contents":[],"generationConfig":{"thinkingConfig":{"thinkingBudget":1024}}})", gem,
              R"({"contents":[],"generationConfig":{"thinkingConfig":{"thinkingBudget":8192,"includeThoughts":true},"maxOutputTokens":2000}})"},
      }) {
    INFO(c.body);
    SettingsWrite w = write_generation_settings(c.api, c.body, c.want);
    INFO(w.error);
    CHECK(w.ok);
    CHECK(w.body == c.expect);
  }
}

TEST_CASE("generation settings: the same values, however spelled, are not rewritten") {
  GenerationSettings same;
  same.reasoning_effort = "low";
  same.max_output_tokens = 1024;
  for (const char* body :
       {R"({"messages":[],"reasoning_effort":"\u006cow","max_tokens":1024})",
        R"({"messages":[],"reasoning_effort":"lo\u0077","max_completion_tokens":1024,"max_tokens":1024})"}) {
    INFO(body);
    SettingsWrite w = write_generation_settings(Api::openai_chat, body, same);
    CHECK(w.ok);
    CHECK_FALSE(w.changed);
    CHECK(w.body.empty());
  }
  // Nor refused when the body breaks a rule we would keep: not ours to fix.
  for (const auto& entry :
       {std::pair{Api::anthropic, R"({"thinking":{"type":"enabled","budget_tokens":500}})"},
        std::pair{Api::anthropic, R"({"thinking":{"type":"enabled"}})"},
        std::pair{Api::gemini,
                  R"({"generationConfig":{"thinkingConfig":{"thinkingLevel":"low","thinkingBudget":0}}})"}}) {
    const auto& api = entry.first;    // not a structured binding: clang 14's doctest
    const auto& body = entry.second;  // macros cannot capture one
    INFO(body);
    const SettingsRead r = read_generation_settings(api, body);
    CHECK(r.problems.empty());
    SettingsWrite w = write_generation_settings(api, body, r.settings);
    CHECK(w.ok);
    CHECK_FALSE(w.changed);
  }
}

TEST_CASE("generation settings: Anthropic thinking.type switches drop the budget") {
  const std::string body = R"({"model":"m","thinking":{"type":"enabled","budget_tokens":4096},"messages":[]})";
  for (const char* type : {"adaptive", "disabled"}) {
    GenerationSettings want;
    want.thinking_type = type;
    SettingsWrite w = write_generation_settings(Api::anthropic, body, want);
    REQUIRE(w.ok);
    CHECK(w.body == std::string(R"({"model":"m","thinking":{"type":")") + type + R"("},"messages":[]})");
  }
  // The budget first: it goes with its separator.
  GenerationSettings adaptive;
  adaptive.thinking_type = "adaptive";
  SettingsWrite w = write_generation_settings(
      Api::anthropic, R"({"thinking": {"budget_tokens": 4096, "type": "enabled", "display": "omitted"}})", adaptive);
  CHECK(w.body == R"({"thinking": {"type": "adaptive", "display": "omitted"}})");
  // No type at all (not valid upstream, but not ours to crash on).
  w = write_generation_settings(Api::anthropic, R"({"thinking":{"budget_tokens":4096}})", adaptive);
  CHECK(w.body == R"({"thinking":{"type":"adaptive"}})");
}
