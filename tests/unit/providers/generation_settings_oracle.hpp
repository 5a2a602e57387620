// The oracle and checks the generation-settings tests share: recorded bodies,
// RapidJSON's reading and writing of each setting, and "only these bytes
// changed".
#pragma once

#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "bodies.hpp"
#include "providers/generation_settings.hpp"
#include "providers/route.hpp"
#include "roundtrip.hpp"

namespace td::providers::gen_test {

using namespace td::providers::test;

struct Body {
  Api api;
  std::string label;
  std::string text;
  std::string model;  // the body's "model", or Gemini's from the recorded path
};

inline std::string path_of(std::string_view uri) {
  auto scheme = uri.find("://");
  return std::string(uri.substr(uri.find('/', scheme == std::string_view::npos ? 0 : scheme + 3)));
}

inline std::vector<Body> recorded_bodies() {
  std::vector<Body> out;
  constexpr Style kStyles[] = {Style::Compact, Style::Pretty, Style::PythonAscii};
  for (const auto& file : fixture_files("wire", ".request.json")) {
    std::string text = fixture(file);
    rapidjson::Document d;
    d.Parse(text.data(), text.size());
    REQUIRE(!d.HasParseError());
    auto route = chat_route("POST", path_of(d["uri"].GetString()));
    REQUIRE(route.has_value());
    std::string model = route->model;
    if (d["body"].HasMember("model") && d["body"]["model"].IsString()) model = d["body"]["model"].GetString();
    for (Style s : kStyles)
      out.push_back({route->api, file + " style " + std::to_string(int(s)), serialize(d["body"], s), model});
  }
  for (auto [file, api] :
       {std::pair{"providers/openai-chat.json", Api::openai_chat},
        std::pair{"providers/anthropic.json", Api::anthropic}, std::pair{"providers/gemini.json", Api::gemini},
        std::pair{"providers/openai-responses.json", Api::openai_responses},
        std::pair{"providers/openai-responses-string.json", Api::openai_responses}}) {
    std::string text = fixture(file);
    rapidjson::Document d;
    d.Parse(text.data(), text.size());
    REQUIRE(!d.HasParseError());
    const std::string model = d.HasMember("model") && d["model"].IsString() ? d["model"].GetString() : "";
    out.push_back({api, file, text, model});
    for (Style s : kStyles)
      out.push_back({api, std::string(file) + " style " + std::to_string(int(s)), serialize(d, s), model});
  }
  for (const auto& file : fixture_files("replay", ".json")) {
    if (file.ends_with("README.json")) continue;
    Trajectory t = load_trajectory(std::string(TD_FIXTURES) + "/" + file);
    out.push_back({Api::openai_chat, file, chat_body(t, t.messages.size()), t.model});
  }
  return out;
}

// ---- an oracle on RapidJSON's tree ------------------------------------------

// Where each setting lives, written out independently of the code under test.
inline const char* expected_wire(Api api, Setting s) {
  switch (api) {
    case Api::openai_chat:
      return s == Setting::reasoning_effort    ? "reasoning_effort"
             : s == Setting::max_output_tokens ? "max_completion_tokens"
                                               : "";
    case Api::openai_responses:
      return s == Setting::reasoning_effort    ? "reasoning.effort"
             : s == Setting::max_output_tokens ? "max_output_tokens"
                                               : "";
    case Api::anthropic:
      return s == Setting::reasoning_effort    ? "output_config.effort"
             : s == Setting::thinking_type     ? "thinking.type"
             : s == Setting::thinking_budget   ? "thinking.budget_tokens"
             : s == Setting::max_output_tokens ? "max_tokens"
                                               : "";
    case Api::gemini:
      return s == Setting::thinking_budget     ? "generationConfig.thinkingConfig.thinkingBudget"
             : s == Setting::thinking_level    ? "generationConfig.thinkingConfig.thinkingLevel"
             : s == Setting::include_thoughts  ? "generationConfig.thinkingConfig.includeThoughts"
             : s == Setting::max_output_tokens ? "generationConfig.maxOutputTokens"
                                               : "";
  }
  return "";
}

inline std::vector<std::string> split(std::string_view path) {
  std::vector<std::string> out;
  while (!path.empty()) {
    auto dot = path.find('.');
    out.emplace_back(path.substr(0, dot));
    path = dot == std::string_view::npos ? std::string_view{} : path.substr(dot + 1);
  }
  return out;
}

inline std::string snake(std::string_view camel) {
  std::string out;
  for (char c : camel) {
    if (c >= 'A' && c <= 'Z') {
      out += '_';
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

// Gemini's snake_case spellings along the settings paths, renamed to camelCase.
inline void normalize(rapidjson::Value& v, Api api, int depth = 0) {
  if (api != Api::gemini || !v.IsObject() || depth > 2) return;
  for (auto& m : v.GetObject()) {
    std::string key = m.name.GetString();
    for (const char* camel : {"generationConfig", "thinkingConfig", "thinkingBudget", "thinkingLevel",
                              "includeThoughts", "maxOutputTokens"})
      if (key == snake(camel)) m.name.SetString(rapidjson::StringRef(camel));
    normalize(m.value, api, depth + 1);
  }
}

inline const rapidjson::Value* at(const rapidjson::Value& root, std::string_view path) {
  if (path.empty()) return nullptr;
  const rapidjson::Value* v = &root;
  for (const auto& key : split(path)) {
    if (!v->IsObject()) return nullptr;
    auto it = v->FindMember(key.c_str());
    if (it == v->MemberEnd()) return nullptr;
    v = &it->value;
  }
  return v->IsNull() ? nullptr : v;
}

// The settings as RapidJSON reads them (from a normalized tree).
inline GenerationSettings oracle_read(const rapidjson::Value& root, Api api) {
  GenerationSettings g;
  auto str = [&](Setting s, std::optional<std::string>& out) {
    if (auto* v = at(root, expected_wire(api, s))) out = v->GetString();
  };
  auto num = [&](const char* path, std::optional<std::int64_t>& out) {
    if (auto* v = at(root, path); v && !out) out = v->GetInt64();
  };
  str(Setting::reasoning_effort, g.reasoning_effort);
  str(Setting::thinking_type, g.thinking_type);
  str(Setting::thinking_level, g.thinking_level);
  num(expected_wire(api, Setting::thinking_budget), g.thinking_budget);
  num(expected_wire(api, Setting::max_output_tokens), g.max_output_tokens);
  if (api == Api::openai_chat) num("max_tokens", g.max_output_tokens);
  if (auto* v = at(root, expected_wire(api, Setting::include_thoughts))) g.include_thoughts = v->GetBool();
  return g;
}

inline void set_path(rapidjson::Document& d, std::string_view path, rapidjson::Value value) {
  auto& a = d.GetAllocator();
  rapidjson::Value* v = &d;
  const auto keys = split(path);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (v->IsNull()) v->SetObject();
    auto it = v->FindMember(keys[i].c_str());
    if (it == v->MemberEnd()) {
      v->AddMember(rapidjson::Value(keys[i].c_str(), a), rapidjson::Value(rapidjson::kNullType), a);
      it = v->FindMember(keys[i].c_str());
    }
    v = &it->value;
  }
  *v = value;
}

// What the writer must make of tree `d` (normalized): `want` set, and the
// members the pairing rules take along.
inline void oracle_write(rapidjson::Document& d, Api api, const GenerationSettings& want,
                         const GenerationSettings& before) {
  auto& a = d.GetAllocator();
  for (Setting s : kAllSettings) {
    std::string path = expected_wire(api, s);
    rapidjson::Value v;
    switch (s) {
      case Setting::reasoning_effort:
        if (!want.reasoning_effort) continue;
        v.SetString(want.reasoning_effort->c_str(), a);
        break;
      case Setting::thinking_type:
        if (!want.thinking_type) continue;
        v.SetString(want.thinking_type->c_str(), a);
        if (*want.thinking_type != "enabled" && want.thinking_type != before.thinking_type && d.HasMember("thinking") &&
            d["thinking"].IsObject())
          d["thinking"].RemoveMember("budget_tokens");
        break;
      case Setting::thinking_budget:
        if (!want.thinking_budget) continue;
        v.SetInt64(*want.thinking_budget);
        break;
      case Setting::thinking_level:
        if (!want.thinking_level) continue;
        v.SetString(want.thinking_level->c_str(), a);
        break;
      case Setting::include_thoughts:
        if (!want.include_thoughts) continue;
        v.SetBool(*want.include_thoughts);
        break;
      case Setting::max_output_tokens:
        if (!want.max_output_tokens) continue;
        v.SetInt64(*want.max_output_tokens);
        if (api == Api::openai_chat && at(d, "max_tokens")) {  // null is no value
          d["max_tokens"].SetInt64(*want.max_output_tokens);
          if (!at(d, "max_completion_tokens")) continue;
        }
        break;
    }
    set_path(d, path, std::move(v));
  }
}

// ---- byte spans --------------------------------------------------------------

// The bytes a write may touch: a value's span, or (insert) a point inside
// an object.
struct Region {
  std::uint32_t begin = 0, end = 0;
  bool insert = false;
};

// For `path` in the (camelCase or snake_case) body: the leaf value, the null
// parent that becomes an object, or the object a member is added to.
inline Region region_of(const json::Document& d, std::string_view path) {
  std::uint32_t obj = d.root();
  const auto keys = split(path);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::uint32_t m = d.find(obj, keys[i]);
    if (m == json::kNone) m = d.find(obj, snake(keys[i]));
    if (m == json::kNone) return {d.node(obj).begin + 1, d.node(obj).end - 1, true};
    if (i + 1 == keys.size() || d.node(m).type == json::Type::Null) return {d.node(m).begin, d.node(m).end, false};
    obj = m;
  }
  return {};
}

inline Region hull(const Region& a, const Region& b) {
  return {std::min(a.begin, b.begin), std::max(a.end, b.end), a.insert && b.insert};
}

// `out` is `in` with only bytes inside `r` changed (an insert: nothing of
// `in` lost, the new bytes at one point inside the object).
inline void check_only(std::string_view in, std::string_view out, const Region& r) {
  const std::size_t max = std::min(in.size(), out.size());
  std::size_t p = 0, s = 0;
  while (p < max && in[p] == out[p]) ++p;
  while (s < max - p && in[in.size() - 1 - s] == out[out.size() - 1 - s]) ++s;
  INFO("changed input bytes [" << p << ", " << in.size() - s << "), allowed [" << r.begin << ", " << r.end
                               << "] insert " << r.insert);
  if (r.insert) {
    CHECK(p + s == in.size());
    CHECK(p >= r.begin);
    CHECK(p <= r.end);
  } else {
    CHECK(p >= r.begin);
    CHECK(in.size() - s <= r.end);
  }
}

// ---- the write check ---------------------------------------------------------

// Writes `want` into `body` and checks everything: it parses with both
// parsers, means the input with `want` applied, reads back, changed only
// the bytes of `region`, keeps the messages, and a second write is a no-op.
inline void check_write(const Body& body, const GenerationSettings& want, const Region& region) {
  const SettingsRead before = read_generation_settings(body.api, body.text);
  SettingsWrite w = write_generation_settings(body.api, body.text, want);
  INFO("write error: " << w.error);
  REQUIRE(w.ok);
  REQUIRE(w.changed);
  json::Document ours;
  CHECK(ours.parse(w.body));
  rapidjson::Document in, out;
  in.Parse(body.text.data(), body.text.size());
  out.Parse(w.body.data(), w.body.size());
  INFO(w.body.substr(0, 600));
  REQUIRE(!out.HasParseError());
  normalize(in, body.api);
  normalize(out, body.api);
  oracle_write(in, body.api, want, before.settings);
  CHECK(out == in);

  const SettingsRead back = read_generation_settings(body.api, w.body);
  CHECK(back.problems.empty());
  CHECK(back.settings == oracle_read(in, body.api));
  // Every field written reads back as written.
  if (want.reasoning_effort) CHECK(back.settings.reasoning_effort == want.reasoning_effort);
  if (want.thinking_type) CHECK(back.settings.thinking_type == want.thinking_type);
  if (want.thinking_budget) CHECK(back.settings.thinking_budget == want.thinking_budget);
  if (want.thinking_level) CHECK(back.settings.thinking_level == want.thinking_level);
  if (want.include_thoughts) CHECK(back.settings.include_thoughts == want.include_thoughts);
  if (want.max_output_tokens) CHECK(back.settings.max_output_tokens == want.max_output_tokens);
  check_only(body.text, w.body, region);

  // The message view is untouched.
  ParseOutcome p0 = parse(body.api, body.text), p1 = parse(body.api, w.body);
  REQUIRE(p0.request.has_value());
  REQUIRE(p1.request.has_value());
  CHECK(summary(p0.request->conversation) == summary(p1.request->conversation));
  // The same write through the parsed request, and once more: nothing to do.
  CHECK(write_generation_settings(*p0.request, want).body == w.body);
  SettingsWrite again = write_generation_settings(body.api, w.body, want);
  CHECK(again.ok);
  CHECK_FALSE(again.changed);
}

// A value different from the body's.
inline GenerationSettings new_value(Setting s, const GenerationSettings& now) {
  GenerationSettings g;
  switch (s) {
    case Setting::reasoning_effort:
      g.reasoning_effort = now.reasoning_effort == "low" ? "high" : "low";
      break;
    case Setting::thinking_type:
      g.thinking_type = now.thinking_type == "disabled" ? "adaptive" : "disabled";
      break;
    case Setting::thinking_budget:
      g.thinking_budget = now.thinking_budget == 8192 ? 4096 : 8192;
      break;
    case Setting::thinking_level:
      g.thinking_level = now.thinking_level == "low" ? "high" : "low";
      break;
    case Setting::include_thoughts:
      g.include_thoughts = !now.include_thoughts.value_or(false);
      break;
    case Setting::max_output_tokens:
      g.max_output_tokens = now.max_output_tokens.value_or(1233) + 1;
      break;
  }
  return g;
}

inline void check_refused(const Body& body, const GenerationSettings& want, std::string_view reason) {
  SettingsWrite w = write_generation_settings(body.api, body.text, want);
  INFO("error: " << w.error);
  CHECK_FALSE(w.ok);
  CHECK_FALSE(w.changed);
  CHECK(w.body.empty());
  CHECK(w.error.find(reason) != std::string::npos);
  CHECK(w.result(body.text) == body.text);
}

}  // namespace td::providers::gen_test
