// Request bodies made of the recorded trajectories (tests/fixtures/replay),
// for the filter tests.
#pragma once

#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "config/config.hpp"

namespace td::test {

inline std::string fixture(const std::string& name) {
  std::ifstream in(std::string(TD_FIXTURES) + "/" + name, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string json_text(const rapidjson::Document& d) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  d.Accept(w);
  return sb.GetString();
}

// A replay trajectory (tests/fixtures/replay/`name`), parsed.
inline rapidjson::Document trajectory(const std::string& name) {
  const std::string text = fixture("replay/" + name);
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

// A replay trajectory as the compact OpenAI chat body an SDK sends for its
// last turn: every message before the last assistant message (`model`, if
// given, instead of the trajectory's).
inline std::string trajectory_body(const std::string& name, const char* model = nullptr) {
  const rapidjson::Document d = trajectory(name);
  rapidjson::Document body(rapidjson::kObjectType);
  auto& a = body.GetAllocator();
  if (model)
    body.AddMember("model", rapidjson::Value(model, a), a);
  else
    body.AddMember("model", rapidjson::Value(d["model"], a), a);
  rapidjson::Value messages(d["messages"], a);
  while (!messages.Empty() && std::string_view(messages[messages.Size() - 1]["role"].GetString()) != "assistant")
    messages.PopBack();
  if (!messages.Empty()) messages.PopBack();
  body.AddMember("messages", messages, a);
  return json_text(body);
}

// A long recorded history as gpt-4o's request (its own tokenizer: counts and
// plans are cached), built once: the diet and cache tests' shared body.
inline const std::string& gpt4o_history() {
  static const std::string body = trajectory_body("mini-swe-agent-12.json", "gpt-4o");
  return body;
}

// The request holding trajectory `t`'s first `n` messages (at most all of
// them), as an OpenAI chat body for `model`.
inline std::string prefix_body(const rapidjson::Document& t, std::size_t n, const char* model) {
  rapidjson::Document body(rapidjson::kObjectType);
  auto& a = body.GetAllocator();
  body.AddMember("model", rapidjson::Value(model, a), a);
  rapidjson::Value messages(rapidjson::kArrayType);
  n = std::min<std::size_t>(n, t["messages"].Size());
  for (std::size_t i = 0; i < n; ++i) messages.PushBack(rapidjson::Value(t["messages"][i], a), a);
  body.AddMember("messages", messages, a);
  return json_text(body);
}

// A profile that prunes the recorded histories from 20,000 tokens on,
// every frontier step paying for itself.
inline td::config::Config eager_config() {
  td::config::Config cfg;
  td::pruning::Profile eager;
  eager.name = "eager";
  eager.trigger_tokens = 20000;
  eager.cache_write_price = 0.0;
  cfg.profiles.push_back(eager);
  return cfg;
}

}  // namespace td::test
