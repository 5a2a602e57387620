// Truncated, malformed and wrongly-typed bodies are not parsed (the proxy then
// forwards them untouched) and never crash anything; writes of views that do
// not match the body refuse instead of producing garbage.
#include <doctest/doctest.h>

#include <random>

#include "bodies.hpp"
#include "providers/request.hpp"
#include "providers/route.hpp"
#include "roundtrip.hpp"

using namespace td::providers;
using namespace td::providers::test;
using td::pruning::Message;
using td::pruning::Part;
using td::pruning::PartKind;

namespace {

// Parse and, when that succeeds, edit everything editable and write: must not
// crash, and whatever is written must parse again.
void exercise(Api f, std::string_view body) {
  ParseOutcome p = parse(f, body, &test_memo());
  if (!p.request) {
    CHECK_FALSE(p.error.empty());
    return;
  }
  for (Message& m : p.request->conversation.messages)
    for (Part& part : m.parts)
      if (part.editable && part.kind != PartKind::ToolCall) td::pruning::set_text(m, part, "x");
  WriteOutcome w = write(*p.request, body);
  if (w.ok && w.changed) CHECK(parse(f, w.body, &test_memo()).request.has_value());
}

}  // namespace

TEST_CASE("fail open: wrongly-typed bodies are not parsed") {
  struct Case {
    Api f;
    const char* body;
  };
  for (Case c : {
           Case{Api::openai_chat, R"([])"},
           Case{Api::openai_chat, R"("messages")"},
           Case{Api::openai_chat, R"({"model":"m"})"},
           Case{Api::openai_chat, R"({"messages":{}})"},
           Case{Api::openai_chat, R"({"messages":[1]})"},
           Case{Api::openai_chat, R"({"messages":[{"content":"no role"}]})"},
           Case{Api::openai_chat, R"({"messages":[{"role":7,"content":"x"}]})"},
           Case{Api::openai_chat, R"({"messages":[{"role":"wizard","content":"x"}]})"},
           Case{Api::openai_chat, R"({"messages":[{"role":"user","content":5}]})"},
           Case{Api::openai_chat, R"({"messages":[{"role":"user","content":[7]}]})"},
           Case{Api::openai_chat, R"({"messages":[{"role":"assistant","tool_calls":"x"}]})"},
           Case{Api::openai_chat, R"({"messages":[{"role":"assistant","tool_calls":[3]}]})"},
           Case{Api::openai_chat, R"({"messages":[{"role":"user","role":"user","content":"dup"}]})"},
           Case{Api::openai_chat, R"({"messages":[],"messages":[]})"},
           Case{Api::anthropic, R"({"messages":[{"role":"wizard","content":"x"}]})"},
           Case{Api::anthropic, R"({"messages":[{"role":"system","content":7}]})"},
           Case{Api::anthropic, R"({"messages":[{"role":"user","content":null}]})"},
           Case{Api::anthropic, R"({"messages":[{"role":"user","content":[{"text":"no type"}]}]})"},
           Case{Api::anthropic, R"({"system":5,"messages":[]})"},
           Case{Api::gemini, R"({"contents":[{"role":"user"}]})"},
           Case{Api::gemini, R"({"contents":[{"role":"robot","parts":[]}]})"},
           Case{Api::gemini, R"({"contents":[{"parts":[5]}]})"},
           Case{Api::gemini, R"({"contents":[],"systemInstruction":{},"system_instruction":{}})"},
           Case{Api::openai_responses, R"({"input":5})"},
           Case{Api::openai_responses, R"({"input":[{"content":"no role or type"}]})"},
           Case{Api::openai_responses, R"({"input":[{"role":"user","content":7}]})"},
           Case{Api::openai_responses, R"({"input":"x","instructions":[1]})"},
       }) {
    INFO(c.body);
    ParseOutcome p = parse(c.f, c.body, &test_memo());
    CHECK_FALSE(p.request.has_value());
    CHECK_FALSE(p.error.empty());
  }
}

TEST_CASE("fail open: every truncation of real bodies, and random byte damage") {
  std::vector<std::pair<Api, std::string>> bodies = {
      {Api::openai_chat, fixture("providers/openai-chat.json")},
      {Api::anthropic, fixture("providers/anthropic.json")},
      {Api::gemini, fixture("providers/gemini.json")},
      {Api::openai_responses, fixture("providers/openai-responses.json")},
  };
  std::mt19937 rng(12345);
  for (const auto& entry : bodies) {
    const auto& f = entry.first;      // not a structured binding: clang 14's doctest
    const auto& body = entry.second;  // macros cannot capture one
    INFO(std::string(name(f)));
    std::size_t value_end = body.find_last_not_of(" \n\r\t") + 1;
    for (std::size_t n = 0; n < value_end; ++n) {
      ParseOutcome p = parse(f, std::string_view(body).substr(0, n), &test_memo());
      // Only whitespace may follow the value, so no strict prefix parses.
      CHECK_FALSE(p.request.has_value());
    }
    const std::string_view chars = "{}[]\":,\\ \n0aZ\x80\xff";
    for (int round = 0; round < 1500; ++round) {
      std::string damaged = body;
      for (int k = 0; k < 1 + round % 3; ++k) damaged[rng() % damaged.size()] = chars[rng() % chars.size()];
      exercise(f, damaged);
    }
  }
}

TEST_CASE("fail open: a view that does not fit the body is refused, not written") {
  const std::string body = fixture("providers/openai-chat.json");
  ParsedRequest r = parse_ok(Api::openai_chat, body, "chat");
  SUBCASE("another body") {
    WriteOutcome w = write(r, body + " ");
    CHECK_FALSE(w.ok);
  }
  SUBCASE("origin out of range") {
    r.conversation.messages[0].origin = 999;
    CHECK_FALSE(write(r, body).ok);
  }
  SUBCASE("a message twice") {
    r.conversation.messages.push_back(r.conversation.messages[1]);
    CHECK_FALSE(write(r, body).ok);
  }
  SUBCASE("an edited part marked not editable") {
    Message& m = r.conversation.messages[1];  // text + image
    REQUIRE(m.parts[1].kind == PartKind::Opaque);
    td::pruning::set_text(m, m.parts[1], "x");
    WriteOutcome w = write(r, body);
    CHECK_FALSE(w.ok);
    CHECK_FALSE(w.error.empty());
  }
  SUBCASE("Anthropic tool input edited into something that is not an object") {
    const std::string a = fixture("providers/anthropic.json");
    ParsedRequest ar = parse_ok(Api::anthropic, a, "anthropic");
    Message& m = ar.conversation.messages[2];
    REQUIRE(m.parts[3].kind == PartKind::ToolCall);
    td::pruning::set_text(m, m.parts[3], "not json");
    CHECK_FALSE(write(ar, a).ok);
    td::pruning::set_text(m, m.parts[3], R"({"command":"ls"})");
    WriteOutcome w = write(ar, a);
    CHECK(w.ok);
    CHECK(w.body.find(R"("input": {"command":"ls"}})") != std::string::npos);
  }
}

TEST_CASE("fail open: parse_request on junk never throws and says why") {
  auto route = chat_route("POST", "/v1/chat/completions");
  REQUIRE(route);
  for (std::string junk :
       {std::string(), std::string("\0\0\0", 3), std::string(100000, '['), std::string("{\"messages\":[")}) {
    ParseOutcome p = parse_request(*route, junk, &test_memo());
    CHECK_FALSE(p.request.has_value());
    CHECK_FALSE(p.error.empty());
  }
}

TEST_CASE("fail open: bodies nested a million deep are refused, where the nesting sits in each format") {
  const std::string deep = std::string(1'000'000, '[') + std::string(1'000'000, ']');
  const std::pair<Api, std::string> bodies[] = {
      {Api::openai_chat, deep},
      {Api::openai_chat, R"({"model":"m","messages":[{"role":"user","content":)" + deep + "}]}"},
      {Api::openai_responses, R"({"model":"m","input":)" + deep + "}"},
      {Api::anthropic, R"({"model":"m","messages":[],"tools":)" + deep + "}"},
      {Api::gemini, R"({"contents":[{"role":"user","parts":[{"text":"x","extra":)" + deep + "}]}]}"},
  };
  for (const auto& [api, body] : bodies) {
    ParseOutcome p = parse(api, body, &test_memo());
    CHECK_FALSE(p.request.has_value());
    CHECK(p.error.find("nesting too deep") != std::string::npos);
  }
}
