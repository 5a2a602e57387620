// Lowering thinking on recorded bodies: every recorded request of every
// format as it came (its own model), and with thinking settings planted in it
// for the model families of the table. Applying the change alters only the
// bytes of the field it names (everything else byte for byte, the other
// settings as they were); a second lowering changes nothing; a body without
// a thinking field gets none.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include "generation_settings_oracle.hpp"
#include "providers/thinking_budget.hpp"
#include "thinking_settings.hpp"

using namespace td::providers;
namespace json = td::json;
using namespace td::providers::thinking_test;
using namespace td::providers::test;
using namespace td::providers::gen_test;

namespace {

struct Plant {
  const char* model;
  GenerationSettings settings;  // written into the recorded body
  GenerationSettings lowered;   // the change expected
};

GenerationSettings adaptive(const char* effort_value) {
  GenerationSettings g;
  g.thinking_type = "adaptive";
  g.reasoning_effort = effort_value;
  return g;
}

const GenerationSettings kNoChange{};

std::vector<Plant> plants(Api api) {
  switch (api) {
    case Api::openai_chat:
    case Api::openai_responses:
      return {{"gpt-5.1", effort("high"), effort("low")}, {"gpt-5.1", effort("minimal"), kNoChange},
              {"gpt-5", effort("medium"), effort("low")}, {"gpt-5-pro", effort("high"), kNoChange},
              {"o3-mini", effort("high"), effort("low")}, {"gpt-4.1", effort("high"), kNoChange}};
    case Api::anthropic:
      return {{"claude-sonnet-4-5", enabled(16000, 32000), budget(8192)},
              {"claude-opus-4-1", enabled(30000, 20000), budget(8192)},
              {"claude-opus-4-1", enabled(30000, 5000), budget(4999)},
              {"claude-sonnet-4-5", enabled(4096, 8192), kNoChange},
              {"claude-opus-4-6", adaptive("high"), effort("low")},
              {"claude-opus-4-6", adaptive("low"), kNoChange}};
    case Api::gemini:
      return {{"gemini-2.5-pro", budget(-1), budget(8192)},
              {"gemini-2.5-pro", budget(32768), budget(8192)},
              {"gemini-2.5-flash", budget(24576), budget(8192)},
              {"gemini-2.5-flash-lite", budget(-1), budget(8192)},
              {"gemini-2.5-flash", budget(1024), kNoChange},
              {"gemini-3-pro-preview", level("high"), level("low")},
              {"gemini-3-flash-preview", level("HIGH"), level("LOW")},
              {"gemini-3-flash-preview", level("medium"), level("low")},
              {"gemini-3-pro-preview", level("low"), kNoChange},
              {"gemini-3-pro-preview", budget(4096), kNoChange}};
  }
  return {};
}

// `body` without Gemini's thinking `field` (either spelling, under either
// spelling of its parents), so the other one can be planted: the two never
// go together.
std::string without_gemini(const std::string& body, const char* camel) {
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  REQUIRE(!d.HasParseError());
  const std::string snake_name = snake(camel);
  for (const char* gc : {"generationConfig", "generation_config"}) {
    if (!d.HasMember(gc) || !d[gc].IsObject()) continue;
    for (const char* tc : {"thinkingConfig", "thinking_config"}) {
      if (!d[gc].HasMember(tc) || !d[gc][tc].IsObject()) continue;
      d[gc][tc].RemoveMember(camel);
      d[gc][tc].RemoveMember(snake_name.c_str());
    }
  }
  return serialize(d, Style::Compact);
}

// The one setting `want` names (a lowering changes one field).
Setting only_setting(const GenerationSettings& want) {
  std::vector<Setting> set;
  if (want.reasoning_effort) set.push_back(Setting::reasoning_effort);
  if (want.thinking_type) set.push_back(Setting::thinking_type);
  if (want.thinking_budget) set.push_back(Setting::thinking_budget);
  if (want.thinking_level) set.push_back(Setting::thinking_level);
  if (want.include_thoughts) set.push_back(Setting::include_thoughts);
  if (want.max_output_tokens) set.push_back(Setting::max_output_tokens);
  REQUIRE(set.size() == 1);
  return set.front();
}

bool has_thinking(const GenerationSettings& g) { return g.reasoning_effort || g.thinking_budget || g.thinking_level; }

struct Tally {
  std::size_t lowered[4] = {};
  std::size_t left = 0;
  std::size_t none_added = 0;
};

// Lowers `body` for its model and checks the write, the bytes and a second
// lowering; returns the change.
ThinkingChange check_lowering(const Body& body, Tally& tally) {
  INFO(body.label << " model " << body.model);
  const SettingsRead before = read_generation_settings(body.api, body.text);
  REQUIRE(before.problems.empty());
  const ThinkingChange c = lower_thinking(body.api, body.model, before.settings);
  INFO("reason: " << c.reason);
  CHECK_FALSE(c.reason.empty());
  const SettingsWrite w = apply_thinking_change(body.api, body.text, c);
  CHECK(w.ok);
  CHECK(w.changed == !c.empty());
  if (c.empty()) {
    ++tally.left;
    if (!has_thinking(before.settings)) ++tally.none_added;
  } else {
    ++tally.lowered[static_cast<int>(body.api)];
    const Setting s = only_setting(c.want);
    json::Document doc;
    REQUIRE(doc.parse(body.text));
    // Only that field's value bytes changed, the result means the input
    // with it set, messages untouched, the same write again a no-op.
    check_write(body, c.want, region_of(doc, wire_field(body.api, s)));
    // Every other setting reads as it did.
    GenerationSettings expected = before.settings;
    if (c.want.reasoning_effort) expected.reasoning_effort = c.want.reasoning_effort;
    if (c.want.thinking_budget) expected.thinking_budget = c.want.thinking_budget;
    if (c.want.thinking_level) expected.thinking_level = c.want.thinking_level;
    CHECK(read_generation_settings(body.api, w.body).settings == expected);
  }
  // Lowering the lowered body changes nothing.
  const std::string out(w.result(body.text));
  const ThinkingChange again = lower_thinking(body.api, body.model, read_generation_settings(body.api, out).settings);
  INFO("again: " << again.reason);
  CHECK(again.empty());
  const SettingsWrite twice = apply_thinking_change(body.api, out, again);
  CHECK(twice.ok);
  CHECK_FALSE(twice.changed);
  // The same through the parsed request.
  ParseOutcome p = parse(body.api, body.text);
  REQUIRE(p.request.has_value());
  p.request->model = body.model;
  ThinkingChange via;
  const SettingsWrite pw = lower_thinking_in(*p.request, {}, &via);
  CHECK(via.want == c.want);
  CHECK(pw.ok);
  CHECK(pw.result(body.text) == out);
  return c;
}

}  // namespace

TEST_CASE("thinking budget: recorded bodies as they came") {
  Tally tally;
  for (const Body& body : recorded_bodies()) check_lowering(body, tally);
  // The Responses body asks gpt-5.1 for medium effort; the rest carry no
  // lowerable thinking (Anthropic's budgets are small, the Gemini 3
  // recording asks for thoughts without a level).
  CHECK(tally.lowered[static_cast<int>(Api::openai_responses)] >= 4);
  CHECK(tally.none_added >= 50);
}

TEST_CASE("thinking budget: recorded bodies with thinking planted per model family") {
  Tally tally;
  std::size_t planted = 0;
  for (const Body& recorded : recorded_bodies()) {
    for (const Plant& plant : plants(recorded.api)) {
      std::string base = recorded.text;
      if (recorded.api == Api::gemini) {
        const SettingsRead r = read_generation_settings(recorded.api, base);
        if (plant.settings.thinking_level && r.settings.thinking_budget) base = without_gemini(base, "thinkingBudget");
        if (plant.settings.thinking_budget && r.settings.thinking_level) base = without_gemini(base, "thinkingLevel");
      }
      const SettingsWrite w = write_generation_settings(recorded.api, base, plant.settings);
      INFO(recorded.label << ": " << w.error);
      REQUIRE(w.ok);
      ++planted;
      const ThinkingChange c = check_lowering(
          {recorded.api, recorded.label + " planted for " + plant.model, std::string(w.result(base)), plant.model},
          tally);
      CHECK(c.want == plant.lowered);
    }
  }
  CHECK(planted >= 200);
  for (Api api : {Api::openai_chat, Api::openai_responses, Api::anthropic, Api::gemini})
    CHECK(tally.lowered[static_cast<int>(api)] >= 8);
  CHECK(tally.left >= 50);  // already low, gpt-5-pro, unknown models, adaptive effort already low
}
