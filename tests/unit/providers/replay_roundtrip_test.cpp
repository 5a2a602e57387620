// Every request of every recorded trajectory (tests/fixtures/replay/), built
// as the OpenAI chat body an SDK would send at that turn: it parses to the
// trajectory's messages, writes back unchanged, and survives an edit and a
// removal with every other byte in place.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include "bodies.hpp"
#include "providers/request.hpp"
#include "roundtrip.hpp"

using namespace td::providers;
using namespace td::providers::test;
using td::pruning::PartKind;
using td::pruning::Role;

namespace {

// The parsed view says what the trajectory says.
void check_view(const Trajectory& t, const ParsedRequest& r) {
  INFO(t.id);
  REQUIRE(r.conversation.messages.size() == t.messages.size());
  CHECK(r.model == t.model);
  CHECK(r.stream);
  for (std::size_t i = 0; i < t.messages.size(); ++i) {
    INFO("message " << i);
    rapidjson::Document d;
    d.Parse(t.messages[i].data(), t.messages[i].size());
    const auto& m = r.conversation.messages[i];
    std::string_view role = d["role"].GetString();
    CHECK(m.role == (role == "system"      ? Role::System
                     : role == "user"      ? Role::User
                     : role == "assistant" ? Role::Assistant
                                           : Role::Tool));
    std::size_t k = 0;
    auto next = [&](PartKind kind) -> const td::pruning::Part& {
      REQUIRE(k < m.parts.size());
      CHECK(m.parts[k].kind == kind);
      return m.parts[k++];
    };
    if (d.HasMember("reasoning_content") && d["reasoning_content"].IsString())
      CHECK(next(PartKind::Thinking).text == d["reasoning_content"].GetString());
    if (role == "tool") {
      const auto& p = next(PartKind::ToolResult);
      CHECK(p.text == d["content"].GetString());
      CHECK(p.id == d["tool_call_id"].GetString());
    } else if (d["content"].IsString()) {
      CHECK(next(PartKind::Text).text == d["content"].GetString());
    }
    if (d.HasMember("tool_calls")) {
      for (const auto& c : d["tool_calls"].GetArray()) {
        const auto& p = next(PartKind::ToolCall);
        CHECK(p.id == c["id"].GetString());
        CHECK(p.name == c["function"]["name"].GetString());
        CHECK(p.text == c["function"]["arguments"].GetString());
      }
    }
    CHECK(k == m.parts.size());
  }
}

}  // namespace

TEST_CASE("replay: every request of every trajectory round-trips") {
  const auto files = fixture_files("replay", ".json");
  REQUIRE(files.size() >= 20);
  std::size_t requests = 0;
  for (const auto& file : files) {
    Trajectory t = load_trajectory(std::string(TD_FIXTURES) + "/" + file);
    {
      std::string whole = chat_body(t, t.messages.size());
      ParsedRequest r = parse_ok(Api::openai_chat, whole, t.id + " whole");
      check_view(t, r);
    }
    for (std::size_t turn = 0; turn < t.assistant_at.size(); ++turn) {
      const std::size_t count = t.assistant_at[turn];
      if (count == 0) continue;
      const std::string label = t.id + " request " + std::to_string(turn);
      const std::string body = chat_body(t, count);
      ParsedRequest r = parse_ok(Api::openai_chat, body, label);
      REQUIRE(r.conversation.messages.size() == count);
      // One edit and one removal per request, at positions that move with t.
      for (std::size_t k = 0; k < count; ++k)
        if (check_edit(Api::openai_chat, body, r, (turn * 5 + k) % count, label)) break;
      check_remove(Api::openai_chat, body, r, (turn * 7) % count, label);
      ++requests;
    }
    // The final request once more in every style, with every check on a sample of messages.
    const std::string last = chat_body(t, t.messages.size());
    rapidjson::Document d;
    d.Parse(last.data(), last.size());
    for (Style s : {Style::Compact, Style::Pretty, Style::PythonAscii})
      check_all(Api::openai_chat, serialize(d, s), t.id + " style " + std::to_string(int(s)), 12);
  }
  MESSAGE(requests << " requests checked");
  CHECK(requests > 1000);
}
