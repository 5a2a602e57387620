// Anthropic: the breakpoint tokendiet adds on the part the pipeline marks
// Part::cache_anchor (the last one before the previous request's frontier),
// and when it adds none.
#include <doctest/doctest.h>

#include <rapidjson/document.h>

#include "providers/request.hpp"
#include "roundtrip.hpp"

using namespace td::providers;
using namespace td::providers::test;

namespace {

constexpr std::string_view kMark = R"("cache_control":{"type":"ephemeral"})";

// A Claude Code-like body: system and the newest message carry breakpoints.
std::string body_with(std::string_view system_mark, std::string_view last_mark, std::string_view extra = "") {
  std::string b = R"({"model":"claude-x","system":[{"type":"text","text":"sys")";
  b += system_mark;
  b += R"(}],"messages":[)";
  b += R"({"role":"user","content":[{"type":"text","text":"task"}]},)";
  b +=
      R"({"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"SIG"},{"type":"tool_use","id":"u1","name":"Read","input":{"file_path":"a.py"}}]},)";
  b += R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"u1","content":"line 1\nline 2"}]},)";
  b += R"({"role":"assistant","content":[{"type":"tool_use","id":"u2","name":"Bash","input":{"command":"ls"}}]},)";
  b +=
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"u2","content":"a.py b.py"},{"type":"text","text":"go on")";
  b += last_mark;
  b += R"(}]}])";
  b += extra;
  b += "}";
  return b;
}

std::string write_ok(const ParsedRequest& r, std::string_view body) {
  WriteOutcome w = write(r, body);
  INFO(w.error);
  REQUIRE(w.ok);
  REQUIRE(w.changed);
  rapidjson::Document d;
  d.Parse(w.body.data(), w.body.size());
  REQUIRE_FALSE(d.HasParseError());
  return w.body;
}

std::size_t marks(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t at = s.find(kMark); at != std::string_view::npos; at = s.find(kMark, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("anthropic: the anchored part gets a breakpoint, the rest stays byte for byte") {
  const std::string mark = std::string(",") + std::string(kMark);
  const std::string body = body_with(mark, mark);
  ParsedRequest r = parse_ok(Api::anthropic, body, "anthropic");
  CHECK(cache_anchors_free(r) > 0);
  auto& msgs = r.conversation.messages;
  REQUIRE(msgs.size() == 6);
  msgs[3].parts[0].cache_anchor = true;  // the first tool result

  SUBCASE("with a text edit elsewhere (the array written in place)") {
    td::pruning::set_text(msgs[5], msgs[5].parts[0], "a.py");
    const std::string out = write_ok(r, body);
    CHECK(
        out.find(
            R"({"type":"tool_result","tool_use_id":"u1","content":"line 1\nline 2","cache_control":{"type":"ephemeral"}})") !=
        std::string::npos);
    CHECK(marks(out) == 3);
    CHECK(out.find(R"("content":"a.py")") != std::string::npos);
  }
  SUBCASE("with the anchored part itself edited") {
    td::pruning::set_text(msgs[3], msgs[3].parts[0], "[… 2 lines hidden]");
    const std::string out = write_ok(r, body);
    CHECK(
        out.find(
            R"({"type":"tool_result","tool_use_id":"u1","content":"[… 2 lines hidden]","cache_control":{"type":"ephemeral"}})") !=
        std::string::npos);
  }
  SUBCASE("with a message restructured (the array rebuilt), the anchored one untouched") {
    msgs[2].parts.erase(msgs[2].parts.begin());  // the signed thinking dropped
    msgs[2].changed = true;
    const std::string out = write_ok(r, body);
    CHECK(out.find(R"({"role":"assistant","content":[{"type":"tool_use","id":"u1")") != std::string::npos);
    CHECK(out.find(R"("content":"line 1\nline 2","cache_control":{"type":"ephemeral"}})") != std::string::npos);
    CHECK(marks(out) == 3);
  }
  SUBCASE("a restructured anchored message: its kept block carries it") {
    msgs[2].parts.erase(msgs[2].parts.begin());
    msgs[2].changed = true;
    msgs[3].parts[0].cache_anchor = false;
    msgs[2].parts[0].cache_anchor = true;  // the tool_use, now the only block
    const std::string out = write_ok(r, body);
    CHECK(
        out.find(
            R"({"type":"tool_use","id":"u1","name":"Read","input":{"file_path":"a.py"},"cache_control":{"type":"ephemeral"}})") !=
        std::string::npos);
  }
  SUBCASE("the same request twice: the same bytes") {
    td::pruning::set_text(msgs[5], msgs[5].parts[0], "a.py");
    CHECK(write_ok(r, body) == write_ok(r, body));
  }
}

TEST_CASE("anthropic: no breakpoint of tokendiet's where the client's caching rules it out") {
  const std::string mark = std::string(",") + std::string(kMark);
  auto anchored_write = [](const std::string& body) {
    ParsedRequest r = parse_ok(Api::anthropic, body, "anthropic");
    auto& msgs = r.conversation.messages;
    msgs[3].parts[0].cache_anchor = true;
    td::pruning::set_text(msgs[5], msgs[5].parts[0], "a.py");
    WriteOutcome w = write(r, body);
    REQUIRE(w.ok);
    return std::make_pair(cache_anchors_free(r) > 0, w.body);
  };
  SUBCASE("a client that does not cache: none (it would start billing cache writes)") {
    auto [allowed, out] = anchored_write(body_with("", ""));
    CHECK_FALSE(allowed);
    CHECK(marks(out) == 0);
  }
  SUBCASE("four breakpoints already: none") {
    const std::string tools = R"(,"tools":[{"name":"a","input_schema":{},"cache_control":{"type":"ephemeral"}},)"
                              R"({"name":"b","input_schema":{},"cache_control":{"type":"ephemeral"}}])";
    auto [allowed, out] = anchored_write(body_with(mark, mark, tools));
    CHECK_FALSE(allowed);
    CHECK(marks(out) == 4);
  }
  SUBCASE("a client breakpoint with a ttl: none (a 5-minute one may not precede a 1-hour one)") {
    const std::string ttl = R"(,"cache_control":{"type":"ephemeral","ttl":"1h"})";
    auto [allowed, out] = anchored_write(body_with(ttl, mark));
    CHECK_FALSE(allowed);
    CHECK(marks(out) == 1);
  }
  SUBCASE("the words inside a string do not count as a breakpoint") {
    std::string body = body_with(mark, mark);
    const std::string quoted = R"(line 1\nline 2)";
    body.replace(body.find(quoted), quoted.size(), R"(\"cache_control\": 3 \"ttl\": 4)");
    auto [allowed, out] = anchored_write(body);
    CHECK(allowed);
    CHECK(marks(out) == 3);
  }
  SUBCASE("a block that has one already: not a second") {
    std::string body = body_with("", mark);
    const std::string result = R"("content":"line 1\nline 2")";
    body.replace(body.find(result), result.size(), result + mark);
    auto [allowed, out] = anchored_write(body);
    CHECK(allowed);
    CHECK(marks(out) == 2);
  }
}

TEST_CASE("anthropic: the held reads' anchor (rank 2) takes a breakpoint only when two are free") {
  const std::string mark = std::string(",") + std::string(kMark);
  auto write_ranks = [](const std::string& body) {
    ParsedRequest r = parse_ok(Api::anthropic, body, "anthropic");
    auto& msgs = r.conversation.messages;
    msgs[2].parts[1].cache_anchor = 2;  // the tool_use before the read
    msgs[3].parts[0].cache_anchor = 1;  // the frontier's
    td::pruning::set_text(msgs[5], msgs[5].parts[0], "a.py");
    WriteOutcome w = write(r, body);
    REQUIRE(w.ok);
    return std::make_pair(cache_anchors_free(r), w.body);
  };
  const std::string on_call = R"("input":{"file_path":"a.py"},"cache_control":{"type":"ephemeral"}})";
  const std::string on_result = R"("content":"line 1\nline 2","cache_control":{"type":"ephemeral"}})";
  SUBCASE("the client's two: both anchors") {
    auto [free, out] = write_ranks(body_with(mark, mark));
    CHECK(free == 2);
    CHECK(marks(out) == 4);
    CHECK(out.find(on_call) != std::string::npos);
    CHECK(out.find(on_result) != std::string::npos);
  }
  SUBCASE("three of the client's: the frontier's alone") {
    const std::string tools = R"(,"tools":[{"name":"a","input_schema":{},"cache_control":{"type":"ephemeral"}}])";
    auto [free, out] = write_ranks(body_with(mark, mark, tools));
    CHECK(free == 1);
    CHECK(marks(out) == 4);
    CHECK(out.find(on_call) == std::string::npos);
    CHECK(out.find(on_result) != std::string::npos);
  }
}

TEST_CASE("other formats ignore the anchor") {
  const std::string body =
      R"({"model":"gpt-x","messages":[{"role":"user","content":"task"},)"
      R"({"role":"assistant","content":"ok","tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]},)"
      R"({"role":"tool","tool_call_id":"c1","content":"a b"},{"role":"user","content":"go on"}]})";
  ParsedRequest r = parse_ok(Api::openai_chat, body, "openai_chat");
  CHECK(cache_anchors_free(r) == 0);
  auto& msgs = r.conversation.messages;
  msgs[2].parts[0].cache_anchor = true;
  td::pruning::set_text(msgs[3], msgs[3].parts[0], "go");
  WriteOutcome w = write(r, body);
  REQUIRE(w.ok);
  CHECK(w.body.find("cache_control") == std::string::npos);
}

TEST_CASE("anthropic: a tool result without content, edited and anchored, is written alike in place and rebuilt") {
  const std::string mark = std::string(",") + std::string(kMark);
  std::string body = body_with(mark, mark);
  const std::string result = R"(,"content":"line 1\nline 2")";
  body.erase(body.find(result), result.size());  // {"type":"tool_result","tool_use_id":"u1"}
  const std::string expected =
      R"({"type":"tool_result","tool_use_id":"u1","content":"x","cache_control":{"type":"ephemeral"}})";
  for (bool rebuilt : {false, true}) {
    ParsedRequest r = parse_ok(Api::anthropic, body, "anthropic");
    auto& msgs = r.conversation.messages;
    msgs[3].parts[0].cache_anchor = true;
    td::pruning::set_text(msgs[3], msgs[3].parts[0], "x");
    if (rebuilt) {
      msgs[2].parts.erase(msgs[2].parts.begin());
      msgs[2].changed = true;
    }
    INFO(rebuilt);
    CHECK(write_ok(r, body).find(expected) != std::string::npos);
  }
}
