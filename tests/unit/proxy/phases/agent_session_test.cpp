// The agents' own session ids (proxy/phases/agent_session.hpp), in the
// shapes the CLIs send them (tests/fixtures/providers/anthropic-claude-code-*).
#include <doctest/doctest.h>

#include <string>

#include "proxy/phases/agent_session.hpp"

using namespace td::proxy;

TEST_CASE("the x-tokendiet-session header wins over an agent's id") {
  SimpleHeaderMap h{{"x-tokendiet-session", "mine"}, {"session_id", "0199a3c1-codex"}};
  CHECK(session_from_head(h) == "mine");
}

TEST_CASE("Codex CLI: the session-id header, else an older version's session_id or conversation_id") {
  // As Codex CLI 0.171 sends it (recorded against the fake upstream).
  CHECK(session_from_head(SimpleHeaderMap{{"session-id", "01a22157-691a-7e50-851b-20e5a005ea6d"},
                                          {"x-codex-window-id", "01a22157-691a-7e50-851b-20e5a005ea6d:0"}}) ==
        "01a22157-691a-7e50-851b-20e5a005ea6d");
  CHECK(session_from_head(SimpleHeaderMap{{"session_id", "0199a3c1-5e2b-7a41-9c1e-2f6f0d3b8a77"}}) ==
        "0199a3c1-5e2b-7a41-9c1e-2f6f0d3b8a77");
  CHECK(session_from_head(SimpleHeaderMap{{"conversation_id", "abc-123"}}) == "abc-123");
  CHECK(session_from_head(SimpleHeaderMap{{"session_id", "not an id; x=1"}}).empty());
  CHECK(session_from_head(SimpleHeaderMap{}).empty());
}

TEST_CASE("Claude Code 2.1: the x-claude-code-session-id header") {
  CHECK(session_from_head(SimpleHeaderMap{{"x-claude-code-session-id", "c34d502e-b8fc-44b0-8352-80f2d6abbfd3"}}) ==
        "c34d502e-b8fc-44b0-8352-80f2d6abbfd3");
}

TEST_CASE("Claude Code: metadata.user_id, the older form and the JSON text") {
  CHECK(session_from_body(
            R"({"model":"m","messages":[],"metadata":{"user_id":"user_0f3c9a8e_account__session_5b1d"}})") == "5b1d");
  CHECK(
      session_from_body(
          R"({"messages":[],"metadata":{"user_id":"user_ab12_account_1c2d-3e_session_378860fb-9985-439a-af2a-b7ddaa664459"},"stream":true})") ==
      "378860fb-9985-439a-af2a-b7ddaa664459");
  CHECK(
      session_from_body(
          R"({"metadata":{"user_id":"{\"device_id\":\"01fc30\",\"account_uuid\":\"\",\"session_id\":\"378860fb-9985-439a-af2a-b7ddaa664459\"}"},"max_tokens":1})") ==
      "378860fb-9985-439a-af2a-b7ddaa664459");
}

TEST_CASE("Claude Code: found at the end of a large body, where it puts its metadata") {
  std::string body = R"({"messages":[{"role":"user","content":")" + std::string(100'000, 'x') + R"("}],)";
  body += R"("metadata":{"user_id":"user_ab_account__session_s-1"},"max_tokens":10})";
  CHECK(session_from_body(body) == "s-1");
}

TEST_CASE("no session from other user ids, text that only mentions one, or malformed values") {
  CHECK(session_from_body(R"({"metadata":{"user_id":"alice"}})").empty());
  CHECK(session_from_body(R"({"messages":[{"content":"\"user_id\": \"user_a_account__session_x\""}]})").empty());
  CHECK(session_from_body(R"({"metadata":{"user_id":"user_a_account__session_"}})").empty());
  CHECK(session_from_body(R"({"metadata":{"user_id":"user_a_account__session_a b"}})").empty());
  CHECK(session_from_body(R"({"metadata":{"user_id":"user_a_account__session_x)").empty());
  CHECK(session_from_body("").empty());
}
