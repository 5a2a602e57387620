// A replay fixture (tests/fixtures/replay, OpenAI chat messages) as the
// neutral view, for the pruning tests that run a real trajectory.
#pragma once

#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <fstream>
#include <sstream>
#include <string>

#include "pruning/conversation.hpp"
#include "pruning_support.hpp"

namespace td::pruning::test {

// A replay trajectory (OpenAI chat messages) as the neutral view.
inline Conversation trajectory(const std::string& name) {
  std::ifstream in(std::string(TD_FIXTURES) + "/replay/" + name + ".json", std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  rapidjson::Document d;
  d.Parse(ss.str().c_str());
  REQUIRE_FALSE(d.HasParseError());
  Conversation c;
  c.model = d["model"].GetString();
  for (const auto& m : d["messages"].GetArray()) {
    const std::string role = m["role"].GetString();
    const std::string content = m.HasMember("content") && m["content"].IsString() ? m["content"].GetString() : "";
    if (role == "tool") {
      c.messages.push_back(tool_msg(m["tool_call_id"].GetString(), content));
      continue;
    }
    Message one = msg(role == "system" ? Role::System
                      : role == "user" ? Role::User
                                       : Role::Assistant,
                      {text_part(content)});
    if (m.HasMember("tool_calls"))
      for (const auto& t : m["tool_calls"].GetArray())
        one.parts.push_back(
            call_part(t["id"].GetString(), t["function"]["name"].GetString(), t["function"]["arguments"].GetString()));
    c.messages.push_back(std::move(one));
  }
  for (std::size_t i = 0; i < c.messages.size(); ++i) c.messages[i].origin = static_cast<std::uint32_t>(i);
  return c;
}

}  // namespace td::pruning::test
