// What each format parses into, and the exact bytes each kind of edit writes.
#include <doctest/doctest.h>

#include "providers/request.hpp"
#include "providers/route.hpp"
#include "roundtrip.hpp"

using namespace td::providers;
using namespace td::providers::test;
using td::pruning::Message;
using td::pruning::Part;
using td::pruning::PartKind;
using td::pruning::Role;

namespace {

std::string written(const ParsedRequest& r, std::string_view body) {
  WriteOutcome w = write(r, body);
  INFO(w.error);
  REQUIRE(w.ok);
  return w.changed ? w.body : std::string(body);
}

Message new_message(Role role, PartKind kind, std::string text, std::string id = {}, std::string name = {}) {
  Message m;
  m.role = role;
  m.changed = true;
  Part& p = m.parts.emplace_back();
  p.kind = kind;
  p.text = std::move(text);
  p.id = std::move(id);
  p.name = std::move(name);
  return m;
}

}  // namespace

TEST_CASE("openai chat: view and splices") {
  const std::string body =
      R"({"model":"gpt-4o","messages":[{"role":"system","content":"sys"},)"
      R"({"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}},)"
      R"({"id":"c2","type":"function","function":{"name":"cat","arguments":"{\"f\":1}"}}]},)"
      R"({"role":"tool","tool_call_id":"c1","content":"a b"},{"role":"tool","tool_call_id":"c2","content":"long output"}],"stream":true})";
  ParsedRequest r = parse_ok(Api::openai_chat, body, "chat");
  CHECK(r.model == "gpt-4o");
  CHECK(r.conversation.model == "gpt-4o");
  CHECK(r.stream);
  auto& msgs = r.conversation.messages;
  REQUIRE(msgs.size() == 4);
  CHECK(msgs[1].parts.size() == 2);
  CHECK(msgs[1].parts[1].id == "c2");
  CHECK(msgs[1].parts[1].name == "cat");
  CHECK(msgs[1].parts[1].text == R"({"f":1})");
  CHECK(msgs[3].role == Role::Tool);
  CHECK(msgs[3].parts[0].kind == PartKind::ToolResult);

  SUBCASE("edit a tool result: only its string changes") {
    td::pruning::set_text(msgs[3], msgs[3].parts[0], "[hidden 11 chars]");
    std::string expected = body;
    expected.replace(expected.find("\"long output\""), 13, "\"[hidden 11 chars]\"");
    CHECK(written(r, body) == expected);
  }
  SUBCASE("drop a tool call and its result") {
    msgs[1].parts.pop_back();
    msgs[1].changed = true;
    td::pruning::remove_message(msgs[3]);
    CHECK(
        written(r, body) ==
        R"({"model":"gpt-4o","messages":[{"role":"system","content":"sys"},)"
        R"({"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]},)"
        R"({"role":"tool","tool_call_id":"c1","content":"a b"}],"stream":true})");
  }
  SUBCASE("drop every call: tool_calls goes, content stays null") {
    msgs[1].parts.clear();
    msgs[1].changed = true;
    CHECK(written(r, body).find(R"({"role":"assistant","content":null},{"role":"tool")") != std::string::npos);
  }
  SUBCASE("insert a recap message after the system prompt") {
    msgs.insert(msgs.begin() + 1, new_message(Role::User, PartKind::Text, "recap"));
    CHECK(written(r, body).find(R"("content":"sys"},{"role":"user","content":"recap"},{"role":"assistant")") !=
          std::string::npos);
  }
  SUBCASE("a new tool message per result, a new assistant call") {
    Message call = new_message(Role::Assistant, PartKind::ToolCall, R"({"q":"x"})", "c9", "recall");
    Message result = new_message(Role::Tool, PartKind::ToolResult, "archived text", "c9");
    msgs.push_back(call);
    msgs.push_back(result);
    CHECK(
        written(r, body).find(
            R"({"role":"assistant","content":null,"tool_calls":[{"id":"c9","type":"function","function":{"name":"recall","arguments":"{\"q\":\"x\"}"}}]},)"
            R"({"role":"tool","tool_call_id":"c9","content":"archived text"}])") != std::string::npos);
  }
}

TEST_CASE("openai chat: reasoning_content, legacy functions, developer role") {
  const std::string body =
      R"({"messages":[{"role":"developer","content":"d"},{"role":"assistant","reasoning_content":"think","content":"ok"},)"
      R"({"role":"assistant","function_call":{"name":"f","arguments":"{}"}},{"role":"function","name":"f","content":"r"}]})";
  ParsedRequest r = parse_ok(Api::openai_chat, body, "chat");
  auto& msgs = r.conversation.messages;
  CHECK(msgs[0].role == Role::System);
  REQUIRE(msgs[1].parts.size() == 2);
  CHECK(msgs[1].parts[0].kind == PartKind::Thinking);
  CHECK(msgs[2].parts[0].id == "f");  // legacy calls pair by name
  CHECK(msgs[3].parts[0].id == "f");
  SUBCASE("old reasoning pruned: the member goes") {
    msgs[1].parts.erase(msgs[1].parts.begin());
    msgs[1].changed = true;
    CHECK(written(r, body).find(R"({"role":"assistant","content":"ok"})") != std::string::npos);
  }
  SUBCASE("reasoning edited in place") {
    td::pruning::set_text(msgs[1], msgs[1].parts[0], "");
    CHECK(written(r, body).find(R"("reasoning_content":"","content":"ok")") != std::string::npos);
  }
}

TEST_CASE("anthropic: cache breakpoints, signatures, tool results keep their fields") {
  const std::string body =
      R"({"model":"claude-x","system":"be brief","messages":[)"
      R"({"role":"user","content":"hi"},)"
      R"({"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"SIG"},{"type":"tool_use","id":"u1","name":"ls","input":{"d":"."}}]},)"
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"u1","is_error":true,"content":"boom","cache_control":{"type":"ephemeral"}}]},)"
      R"({"role":"assistant","content":"done"}],"max_tokens":10})";
  ParsedRequest r = parse_ok(Api::anthropic, body, "anthropic");
  auto& msgs = r.conversation.messages;
  REQUIRE(msgs.size() == 5);
  CHECK(msgs[0].system_field);
  CHECK(msgs[0].role == Role::System);
  CHECK(msgs[0].cache_protected);
  CHECK(msgs[1].cache_protected);
  CHECK(msgs[3].cache_protected);
  CHECK_FALSE(msgs[4].cache_protected);
  CHECK(msgs[2].parts[0].signature == "SIG");
  CHECK_FALSE(msgs[2].parts[0].editable);
  CHECK(msgs[2].parts[1].text == R"({"d":"."})");
  CHECK(msgs[3].role == Role::Tool);
  CHECK(msgs[3].parts[0].is_error);

  SUBCASE("edited result keeps is_error and cache_control") {
    td::pruning::set_text(msgs[3], msgs[3].parts[0], "b...m");
    CHECK(
        written(r, body).find(
            R"({"type":"tool_result","tool_use_id":"u1","is_error":true,"content":"b...m","cache_control":{"type":"ephemeral"}})") !=
        std::string::npos);
  }
  SUBCASE("signed thinking may be dropped, not edited") {
    msgs[2].parts.erase(msgs[2].parts.begin());
    msgs[2].changed = true;
    CHECK(written(r, body).find(R"({"role":"assistant","content":[{"type":"tool_use")") != std::string::npos);
  }
  SUBCASE("system edited and removed") {
    td::pruning::set_text(msgs[0], msgs[0].parts[0], "be very brief");
    CHECK(written(r, body).find(R"("system":"be very brief","messages")") != std::string::npos);
    td::pruning::remove_message(msgs[0]);
    CHECK(written(r, body).rfind(R"({"model":"claude-x","messages":[)", 0) == 0);
  }
  SUBCASE("new messages: a tool result goes in a user message") {
    msgs.push_back(new_message(Role::Tool, PartKind::ToolResult, "out", "u9"));
    CHECK(written(r, body).find(
              R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"u9","content":"out"}]}])") !=
          std::string::npos);
  }
}

TEST_CASE("anthropic: a system message inside messages is parsed and kept where it stands") {
  // Claude Code's default model sends its environment block this way.
  const std::string body =
      R"({"model":"claude-x","system":[{"type":"text","text":"top"}],"messages":[)"
      R"({"role":"user","content":"hi"},)"
      R"({"role":"system","content":"<env>cwd: /w</env>"},)"
      R"({"role":"assistant","content":[{"type":"tool_use","id":"u1","name":"ls","input":{}}]},)"
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"u1","content":"a b c"}]},)"
      R"({"role":"system","content":[{"type":"text","text":"effort: medium","cache_control":{"type":"ephemeral"}}],"output_config":{"effort":"medium"}},)"
      R"({"role":"user","content":"go on"}]})";
  ParsedRequest r = parse_ok(Api::anthropic, body, "anthropic");
  auto& msgs = r.conversation.messages;
  REQUIRE(msgs.size() == 7);
  CHECK(msgs[2].role == Role::System);
  CHECK_FALSE(msgs[2].system_field);
  CHECK(msgs[2].parts[0].text == "<env>cwd: /w</env>");
  CHECK(msgs[5].role == Role::System);
  CHECK(msgs[4].role == Role::Tool);
  // The breakpoint on the second system message protects everything up to it.
  CHECK(msgs[5].cache_protected);
  CHECK(msgs[4].cache_protected);
  CHECK_FALSE(msgs[6].cache_protected);

  SUBCASE("an edit elsewhere leaves both system messages byte for byte") {
    td::pruning::set_text(msgs[4], msgs[4].parts[0], "[hidden]");
    const std::string out = written(r, body);
    CHECK(out.find(R"({"role":"system","content":"<env>cwd: /w</env>"},)") != std::string::npos);
    CHECK(
        out.find(
            R"({"role":"system","content":[{"type":"text","text":"effort: medium","cache_control":{"type":"ephemeral"}}],"output_config":{"effort":"medium"}})") !=
        std::string::npos);
    CHECK(out.find(R"("content":"[hidden]")") != std::string::npos);
  }
  SUBCASE("a removed message around them: they stay, in order") {
    td::pruning::remove_message(msgs[1]);
    const std::string out = written(r, body);
    CHECK(out.find(R"("messages":[{"role":"system","content":"<env>cwd: /w</env>"},{"role":"assistant")") !=
          std::string::npos);
  }
}

// Every block type the agents' CLIs send (Claude Code 2.1's own list, Codex's
// Responses items) parses, the ones tokendiet does not edit as opaque parts
// that are written back as they came.
TEST_CASE("anthropic and responses: the agents' other block and item types pass through") {
  const std::string anthropic =
      R"({"messages":[{"role":"user","content":[{"type":"text","text":"q"},{"type":"container_upload","file_id":"f1"},)"
      R"({"type":"search_result","source":"s","title":"t","content":[{"type":"text","text":"x"}]},{"type":"document","source":{"type":"text","data":"d"}}]},)"
      R"({"role":"system","content":[{"type":"tool_addition","tool":{"type":"tool_definition","definition":{"name":"T"}}},{"type":"tool_removal","tool":{"type":"tool_reference","name":"U"}}]},)"
      R"({"role":"assistant","content":[{"type":"server_tool_use","id":"s1","name":"web_search","input":{}},)"
      R"({"type":"web_search_tool_result","tool_use_id":"s1","content":[]},{"type":"web_fetch_tool_result","tool_use_id":"s1","content":{}},)"
      R"({"type":"code_execution_tool_result","tool_use_id":"s1","content":{}},{"type":"bash_code_execution_tool_result","tool_use_id":"s1","content":{}},)"
      R"({"type":"text_editor_code_execution_tool_result","tool_use_id":"s1","content":{}},{"type":"tool_search_tool_result","tool_use_id":"s1","content":{}},)"
      R"({"type":"mcp_tool_use","id":"m1","name":"n","server_name":"srv","input":{}},{"type":"mcp_tool_result","tool_use_id":"m1","content":[]},)"
      R"({"type":"compaction","content":"summary"},{"type":"redacted_thinking","data":"x"},{"type":"tool_use","id":"u1","name":"ToolSearch","input":{}}]},)"
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"u1","content":[{"type":"tool_reference","tool_name":"TodoWrite"}]}]}],)"
      R"("tools":[{"name":"T","defer_loading":true,"input_schema":{"type":"object"}}],"context_management":{"edits":[]}})";
  ParsedRequest a = parse_ok(Api::anthropic, anthropic, "anthropic blocks");
  REQUIRE(a.conversation.messages.size() == 4);
  CHECK(a.conversation.messages[1].role == Role::System);
  for (const Part& p : a.conversation.messages[2].parts)
    CHECK((p.kind == PartKind::Opaque || p.kind == PartKind::ToolCall));
  CHECK(a.conversation.messages[3].role == Role::Tool);
  CHECK_FALSE(a.conversation.messages[3].parts[0].editable);  // a tool_reference is no text
  CHECK(written(a, anthropic) == anthropic);

  const std::string responses =
      R"({"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]},)"
      R"({"type":"local_shell_call","call_id":"c0","action":{"type":"exec","command":["ls"]},"status":"completed"},)"
      R"({"type":"local_shell_call_output","call_id":"c0","output":"a"},{"type":"web_search_call","id":"ws1","status":"completed"},)"
      R"({"type":"compaction","encrypted_content":"gAAA"},{"type":"custom_tool_call","call_id":"c1","name":"apply_patch","input":"*** Begin Patch"},)"
      R"({"type":"custom_tool_call_output","call_id":"c1","output":"Done"},{"type":"item_reference","id":"r1"}]})";
  ParsedRequest b = parse_ok(Api::openai_responses, responses, "responses items");
  CHECK(b.conversation.messages.size() == 8);
  CHECK(written(b, responses) == responses);
}

TEST_CASE("anthropic: top-level automatic caching protects every message") {
  const std::string body =
      R"({"cache_control":{"type":"ephemeral"},"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]})";
  ParsedRequest r = parse_ok(Api::anthropic, body, "anthropic");
  for (const Message& m : r.conversation.messages) CHECK(m.cache_protected);
}

TEST_CASE("gemini: signatures stay with their parts, responses pair by name") {
  const std::string body =
      R"({"contents":[{"role":"user","parts":[{"text":"q"}]},)"
      R"({"role":"model","parts":[{"functionCall":{"name":"f","args":{}},"thoughtSignature":"S1"},{"functionCall":{"name":"g","args":{"a":1}}}]},)"
      R"({"role":"user","parts":[{"functionResponse":{"name":"f","response":{"result":"r1"}}},{"functionResponse":{"name":"g","response":{"x":1,"y":[2]}}}]}],)"
      R"("generationConfig":{"thinkingConfig":{"thinkingBudget":100}}})";
  auto route = chat_route("POST", "/v1beta/models/gemini-3-pro:generateContent");
  REQUIRE(route);
  ParseOutcome p = parse_request(*route, body, &test_memo());
  REQUIRE(p.request);
  ParsedRequest& r = *p.request;
  CHECK(r.model == "gemini-3-pro");
  CHECK(r.conversation.model == "gemini-3-pro");
  auto& msgs = r.conversation.messages;
  REQUIRE(msgs.size() == 3);
  CHECK(msgs[1].role == Role::Assistant);
  CHECK(msgs[1].parts[0].signature == "S1");
  CHECK_FALSE(msgs[1].parts[0].editable);
  CHECK(msgs[1].parts[1].id == "g");
  CHECK(msgs[2].role == Role::Tool);
  CHECK(msgs[2].parts[0].text == "r1");
  CHECK(msgs[2].parts[1].text == R"({"x":1,"y":[2]})");

  SUBCASE("a one-string response is edited in place, any other becomes {output}") {
    td::pruning::set_text(msgs[2], msgs[2].parts[0], "R1");
    td::pruning::set_text(msgs[2], msgs[2].parts[1], "[hidden]");
    CHECK(
        written(r, body).find(
            R"({"functionResponse":{"name":"f","response":{"result":"R1"}}},{"functionResponse":{"name":"g","response":{"output":"[hidden]"}}})") !=
        std::string::npos);
  }
  SUBCASE("a new system instruction goes before contents") {
    Message sys = new_message(Role::System, PartKind::Text, "rules");
    sys.system_field = true;
    msgs.insert(msgs.begin(), sys);
    CHECK(written(r, body).rfind(R"({"systemInstruction":{"parts":[{"text":"rules"}]},"contents":[)", 0) == 0);
  }
}

TEST_CASE("openai responses: items and a bare input string") {
  const std::string body = R"({"model":"gpt-5","instructions":"sys","input":[{"role":"user","content":"q"},)"
                           R"({"type":"function_call","call_id":"c1","name":"sh","arguments":"{}"},)"
                           R"({"type":"function_call_output","call_id":"c1","output":"big"},)"
                           R"({"type":"reasoning","id":"rs","summary":[],"encrypted_content":"ENC"}]})";
  ParsedRequest r = parse_ok(Api::openai_responses, body, "responses");
  auto& msgs = r.conversation.messages;
  REQUIRE(msgs.size() == 5);
  CHECK(msgs[0].system_field);
  CHECK(msgs[2].parts[0].kind == PartKind::ToolCall);
  CHECK(msgs[2].parts[0].id == "c1");
  CHECK(msgs[3].role == Role::Tool);
  CHECK(msgs[4].parts[0].kind == PartKind::Thinking);
  CHECK(msgs[4].parts[0].signature == "ENC");
  CHECK_FALSE(msgs[4].parts[0].editable);
  td::pruning::set_text(msgs[3], msgs[3].parts[0], "small");
  CHECK(written(r, body).find(R"("output":"small"})") != std::string::npos);

  const std::string s = R"({"model":"m","input":"hello"})";
  ParsedRequest rs = parse_ok(Api::openai_responses, s, "string input");
  td::pruning::set_text(rs.conversation.messages[0], rs.conversation.messages[0].parts[0], "hi");
  CHECK(written(rs, s) == R"({"model":"m","input":"hi"})");
  rs.conversation.messages.push_back(new_message(Role::Assistant, PartKind::Text, "a"));
  CHECK(written(rs, s) ==
        R"({"model":"m","input":[{"role":"user","content":"hi"},{"role":"assistant","content":"a"}]})");
}
