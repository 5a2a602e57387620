// Generation settings that cannot be written fail open with a reason; the
// settings writer composes with the message writer; random bodies and
// settings against the RapidJSON oracle.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <random>

#include "generation_settings_oracle.hpp"

using namespace td::providers;
namespace json = td::json;
using namespace td::providers::test;
using namespace td::providers::gen_test;

TEST_CASE("generation settings: fail open on what cannot be written") {
  struct Case {
    Api api;
    const char* body;
    const char* problem;  // what the reader reports ("" nothing)
    GenerationSettings want;
    const char* error;
  };
  auto effort = [](const char* v) {
    GenerationSettings g;
    g.reasoning_effort = v;
    return g;
  };
  auto cap = [](std::int64_t v) {
    GenerationSettings g;
    g.max_output_tokens = v;
    return g;
  };
  auto budget = [](std::int64_t v) {
    GenerationSettings g;
    g.thinking_budget = v;
    return g;
  };
  auto type = [](const char* v) {
    GenerationSettings g;
    g.thinking_type = v;
    return g;
  };
  auto level = [](const char* v) {
    GenerationSettings g;
    g.thinking_level = v;
    return g;
  };
  GenerationSettings thoughts;
  thoughts.include_thoughts = true;
  for (const Case& c : {
           Case{Api::openai_chat, R"({"messages":[],"max_tokens":"500"})", "max_tokens: not an integer", cap(9),
                "max_tokens: not an integer"},
           Case{Api::openai_chat, R"({"messages":[],"max_completion_tokens":5.5})",
                "max_completion_tokens: not an integer", cap(9), "not an integer"},
           Case{Api::openai_chat, R"({"messages":[],"max_completion_tokens":1e3})", "not an integer", cap(9),
                "not an integer"},
           Case{Api::openai_chat, R"({"messages":[],"max_completion_tokens":99999999999999999999})", "not an integer",
                cap(9), "not an integer"},
           Case{Api::openai_chat, R"({"messages":[],"reasoning_effort":3})", "reasoning_effort: not a string",
                effort("low"), "not a string"},
           Case{Api::openai_chat, R"({"messages":[],"reasoning_effort":"low","reasoning_effort":"high"})",
                "duplicated key", effort("medium"), "duplicated key"},
           Case{Api::openai_chat, R"({"messages":[]})", "", effort(""), "empty"},
           Case{Api::openai_chat, R"({"messages":[]})", "", cap(0), "below 1"},
           Case{Api::openai_chat, R"({"messages":[]})", "", budget(1), "openai_chat has no thinking_budget"},
           Case{Api::openai_responses, R"({"input":"x","reasoning":"high"})", "reasoning: not an object", effort("low"),
                "reasoning: not an object"},
           Case{Api::openai_responses, R"({"input":"x","reasoning":[]})", "not an object", effort("low"),
                "not an object"},
           Case{Api::openai_responses, R"({"input":"x"})", "", level("low"), "has no thinking_level"},
           Case{Api::anthropic, R"({"messages":[],"thinking":"on"})", "thinking: not an object", type("adaptive"),
                "not an object"},
           Case{Api::anthropic, R"({"messages":[],"thinking":{"type":"enabled","budget_tokens":"x"}})",
                "thinking.budget_tokens: not an integer", budget(2048), "not an integer"},
           Case{Api::anthropic, R"({"messages":[]})", "", budget(2048), "needs thinking.type \"enabled\""},
           Case{Api::anthropic, R"({"messages":[],"thinking":{"type":"adaptive"}})", "", budget(2048),
                "needs thinking.type \"enabled\""},
           Case{Api::anthropic, R"({"messages":[],"thinking":{"type":"enabled","budget_tokens":4096}})", "",
                budget(512), "1024"},
           Case{Api::anthropic, R"({"messages":[]})", "", type("enabled"), "needs thinking.budget_tokens"},
           Case{Api::anthropic, R"({"messages":[]})", "", type("sometimes"), "enabled, disabled or adaptive"},
           Case{Api::anthropic, R"({"messages":[],"thinking":{"type":7}})", "thinking.type: not a string",
                type("disabled"), "not a string"},
           Case{Api::anthropic, R"({"messages":[],"output_config":{"effort":null,"effort":"x"}})", "duplicated key",
                effort("low"), "duplicated key"},
           Case{Api::anthropic, R"({"messages":[]})", "", thoughts, "anthropic has no include_thoughts"},
           Case{Api::gemini, R"({"contents":[],"generationConfig":{},"generation_config":{}})", "both spellings",
                cap(5), "both spellings"},
           Case{Api::gemini, R"({"contents":[],"generationConfig":{"thinkingConfig":{"thinkingBudget":1024}}})", "",
                level("low"), "together"},
           Case{Api::gemini, R"({"contents":[],"generationConfig":{"thinkingConfig":{"thinkingLevel":"high"}}})", "",
                budget(1024), "together"},
           Case{Api::gemini, R"({"contents":[],"generationConfig":{"thinkingConfig":{"thinkingLevel":7}}})",
                "thinkingLevel: not a string", budget(1024), "together"},
           Case{Api::gemini, R"({"contents":[]})", "", budget(-2), "below -1"},
           Case{Api::gemini, R"({"contents":[],"generationConfig":{"thinkingConfig":{"includeThoughts":"yes"}}})",
                "includeThoughts: not a boolean", thoughts, "not a boolean"},
           Case{Api::gemini, R"({"contents":[],"generationConfig":5})", "generationConfig: not an object", cap(5),
                "not an object"},
           Case{Api::gemini, R"({"contents":[]})", "", effort("low"), "gemini has no reasoning_effort"},
           Case{Api::gemini, R"([1,2])", "not a JSON object", cap(5), "not a JSON object"},
           Case{Api::gemini, R"({"contents":[)", "does not parse", cap(5), "does not parse"},
           Case{Api::openai_chat, "", "does not parse", cap(5), "does not parse"},
       }) {
    INFO(c.body);
    const SettingsRead r = read_generation_settings(c.api, c.body);
    if (*c.problem) {
      REQUIRE(r.problems.size() == 1);
      CHECK(r.problems[0].find(c.problem) != std::string::npos);
    } else {
      CHECK(r.problems.empty());
    }
    check_refused(Body{c.api, c.body, c.body, ""}, c.want, c.error);
  }
  // A wrongly-typed field does not stop the others from being read or written.
  const std::string body = R"({"messages":[],"max_tokens":"many","reasoning_effort":"high"})";
  const SettingsRead r = read_generation_settings(Api::openai_chat, body);
  CHECK(r.settings.reasoning_effort == "high");
  CHECK_FALSE(r.settings.max_output_tokens);
  SettingsWrite w = write_generation_settings(Api::openai_chat, body, effort("low"));
  CHECK(w.body == R"({"messages":[],"max_tokens":"many","reasoning_effort":"low"})");
  // Gemini's dynamic and off budgets are budgets.
  for (std::int64_t b : {-1, 0}) {
    w = write_generation_settings(Api::gemini, R"({"contents":[]})", budget(b));
    CHECK(w.ok);
    CHECK(read_generation_settings(Api::gemini, w.body).settings.thinking_budget == b);
  }
}

TEST_CASE("generation settings: applied after the message writer") {
  // What the proxy does: prune messages (providers::write), then write the
  // settings into the resulting body.
  for (const Body& body : recorded_bodies()) {
    ParseOutcome p = parse(body.api, body.text);
    REQUIRE(p.request.has_value());
    auto& msgs = p.request->conversation.messages;
    auto first = std::find_if(msgs.begin(), msgs.end(), [](const auto& m) { return !m.system_field; });
    if (msgs.end() - first < 3) continue;
    INFO(body.label);
    td::pruning::remove_message(*first);
    WriteOutcome pruned = write(*p.request, body.text);
    REQUIRE(pruned.ok);
    REQUIRE(pruned.changed);
    GenerationSettings want;
    want.max_output_tokens = 4321;
    if (body.api != Api::gemini)
      want.reasoning_effort = "low";
    else if (!read_generation_settings(body.api, pruned.body).settings.thinking_budget)
      want.thinking_level = "low";
    SettingsWrite w = write_generation_settings(body.api, pruned.body, want);
    INFO(w.error);
    REQUIRE(w.ok);
    const SettingsRead back = read_generation_settings(body.api, w.body);
    CHECK(back.settings.max_output_tokens == 4321);
    CHECK(back.settings.reasoning_effort == want.reasoning_effort);
    ParseOutcome a = parse(body.api, pruned.body), b = parse(body.api, w.body);
    REQUIRE(a.request.has_value());
    REQUIRE(b.request.has_value());
    CHECK(summary(a.request->conversation) == summary(b.request->conversation));
  }
}

namespace {

// A request of format `api` whose settings fields are each, at random,
// absent, a value, null, of the wrong type, or under a null or wrongly-typed
// parent; Gemini's keys in either spelling (now and then both).
std::string random_body(Api api, std::mt19937& rng) {
  rapidjson::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  const char* base = api == Api::openai_chat        ? R"({"messages":[{"role":"user","content":"hi"}]})"
                     : api == Api::openai_responses ? R"({"input":"hi"})"
                     : api == Api::anthropic        ? R"({"messages":[{"role":"user","content":"hi"}]})"
                                                    : R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})";
  d.Parse(base);
  const bool snake_body = rng() % 3 == 0;
  std::vector<std::string> paths;
  for (Setting s : kAllSettings)
    if (*expected_wire(api, s)) paths.emplace_back(expected_wire(api, s));
  if (api == Api::openai_chat) paths.emplace_back("max_tokens");
  std::shuffle(paths.begin(), paths.end(), rng);
  for (const std::string& path : paths) {
    auto keys = split(path);
    for (auto& k : keys)
      if (api == Api::gemini && (snake_body != (rng() % 10 == 0))) k = snake(k);
    rapidjson::Value value;
    const bool is_string = path.ends_with("effort") || path.ends_with("type") || path.ends_with("Level");
    const bool is_bool = path.ends_with("Thoughts");
    const int pick = static_cast<int>(rng() % 7);
    if (pick <= 1) continue;
    if (pick <= 3) {  // a value of the right type
      static const char* kStrings[] = {"low", "high", "enabled", "disabled", "adaptive", "medium"};
      static const std::int64_t kNumbers[] = {-1, 0, 1, 1024, 4096, 8192, 32000};
      if (is_string)
        value.SetString(rapidjson::StringRef(kStrings[rng() % 6]));
      else if (is_bool)
        value.SetBool(rng() % 2);
      else
        value.SetInt64(kNumbers[rng() % 7]);
    } else if (pick == 4) {
      value.SetNull();
    } else if (pick == 5) {  // the wrong type
      if (is_string)
        value.SetInt(3);
      else
        value.SetString("3");
    } else if (keys.size() > 1) {  // a parent that is null or not an object
      keys.resize(1 + rng() % (keys.size() - 1));
      if (rng() % 2)
        value.SetArray();
      else
        value.SetNull();
    }
    rapidjson::Value* v = &d;
    for (std::size_t i = 0; v && i < keys.size(); ++i) {
      if (!v->IsObject()) {
        v = nullptr;
        break;
      }
      auto it = v->FindMember(keys[i].c_str());
      if (it == v->MemberEnd()) {
        v->AddMember(rapidjson::Value(keys[i].c_str(), a),
                     i + 1 == keys.size() ? rapidjson::Value() : rapidjson::Value(rapidjson::kObjectType), a);
        it = v->FindMember(keys[i].c_str());
      }
      v = &it->value;
    }
    if (v) *v = value;
  }
  constexpr Style kStyles[] = {Style::Compact, Style::Pretty, Style::PythonAscii};
  return serialize(d, kStyles[rng() % 3]);
}

GenerationSettings random_want(Api api, std::mt19937& rng) {
  GenerationSettings g;
  static const char* kStrings[] = {"low", "high", "enabled", "disabled", "adaptive", "medium"};
  static const std::int64_t kNumbers[] = {-2, -1, 0, 1, 512, 1024, 4096, 8192};
  for (Setting s : kAllSettings) {
    if (!*expected_wire(api, s) || rng() % 2) continue;
    switch (s) {
      case Setting::reasoning_effort:
        g.reasoning_effort = kStrings[rng() % 6];
        break;
      case Setting::thinking_type:
        g.thinking_type = kStrings[rng() % 6];
        break;
      case Setting::thinking_level:
        g.thinking_level = kStrings[rng() % 6];
        break;
      case Setting::thinking_budget:
        g.thinking_budget = kNumbers[rng() % 8];
        break;
      case Setting::max_output_tokens:
        g.max_output_tokens = kNumbers[rng() % 8];
        break;
      case Setting::include_thoughts:
        g.include_thoughts = rng() % 2;
        break;
    }
  }
  return g;
}

}  // namespace

TEST_CASE("generation settings: random bodies and settings") {
  // Whatever the body holds, a write either fails open with a reason or
  // means exactly the input with the wanted fields set (the same oracle).
  std::mt19937 rng(20260707);
  std::size_t written = 0, refused = 0, unchanged = 0;
  for (int n = 0; n < 4000; ++n) {
    const Api api = static_cast<Api>(n % 4);
    const std::string body = random_body(api, rng);
    const GenerationSettings want = random_want(api, rng);
    INFO(body);
    const SettingsRead before = read_generation_settings(api, body);
    SettingsWrite w = write_generation_settings(api, body, want);
    INFO("error: " << w.error);
    if (!w.ok) {
      ++refused;
      CHECK_FALSE(w.error.empty());
      CHECK_FALSE(w.changed);
      continue;
    }
    rapidjson::Document in, out;
    in.Parse(body.data(), body.size());
    normalize(in, api);
    const std::string result(w.result(body));
    out.Parse(result.data(), result.size());
    INFO(result);
    REQUIRE(!out.HasParseError());
    json::Document ours;
    CHECK(ours.parse(result));
    // Both spellings of one Gemini key: the oracle's renaming would merge
    // them, so only validity is checked (the fields under them were refused).
    if (std::any_of(before.problems.begin(), before.problems.end(),
                    [](const std::string& p) { return p.find("both spellings") != std::string::npos; }))
      continue;
    normalize(out, api);
    oracle_write(in, api, want, before.settings);
    CHECK(out == in);
    if (!w.changed) {
      ++unchanged;
      continue;
    }
    ++written;
    const SettingsRead back = read_generation_settings(api, result);
    if (want.reasoning_effort) CHECK(back.settings.reasoning_effort == want.reasoning_effort);
    if (want.thinking_type) CHECK(back.settings.thinking_type == want.thinking_type);
    if (want.thinking_budget) CHECK(back.settings.thinking_budget == want.thinking_budget);
    if (want.thinking_level) CHECK(back.settings.thinking_level == want.thinking_level);
    if (want.include_thoughts) CHECK(back.settings.include_thoughts == want.include_thoughts);
    CHECK(parse(api, result).request.has_value());
  }
  CHECK(written > 800);
  CHECK(refused > 400);
  CHECK(unchanged > 200);
}
