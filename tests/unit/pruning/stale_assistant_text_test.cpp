#include <doctest/doctest.h>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "pruning/strategies/stale_assistant_text.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {
std::string prose() {
  std::string s = "I will look at the parser first.\n";
  for (int i = 0; i < 40; ++i) s += "Thinking about it some more, line after line of reasoning.\n";
  s += "The bug is in parse_header of src/http/parser.c.\n";
  for (int i = 0; i < 40; ++i) s += "More reasoning that says little.\n";
  s += "So the fix is to check the length first.\n";
  return s;
}
std::string heredoc_args() {
  std::string script = "cat > /testbed/reproduce.py << 'EOF'\nimport sys\n";
  for (int i = 0; i < 60; ++i)
    script += "print('case " + std::to_string(i) + "', check_value_" + std::to_string(i) + "())\n";
  return script + "EOF\npython /testbed/reproduce.py";
}
bool is_json_object(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.c_str(), s.size());
  return !d.HasParseError() && d.IsObject();
}
std::string args_of(const std::string& script) {
  rapidjson::Document d(rapidjson::kObjectType);
  d.AddMember("command", rapidjson::Value(script.c_str(), d.GetAllocator()), d.GetAllocator());
  d.AddMember("timeout", 30, d.GetAllocator());
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  d.Accept(w);
  return b.GetString();
}
}  // namespace

TEST_CASE("stale assistant text: long prose keeps its start, its end and its names") {
  Conversation c;
  c.messages = {user_msg("task"), assistant_msg(prose()), user_msg("go on"), assistant_msg("ok")};
  auto st = stale_assistant_text(c, Profile{}, 2);
  CHECK(st.hits == 1);
  const std::string& t = c.messages[1].parts[0].text;
  CHECK(t.size() < prose().size() / 4);
  CHECK(t.rfind("I will look at the parser first.\n", 0) == 0);
  CHECK(t.find("So the fix is to check the length first.\n") != std::string::npos);
  CHECK(t.find("parse_header") != std::string::npos);
  CHECK(t.find("src/http/parser.c") != std::string::npos);
  CHECK(c.messages[1].changed);
}

TEST_CASE("stale assistant text: tool-call arguments stay a valid JSON object with id and name") {
  std::string script = heredoc_args();
  std::string args = args_of(script);
  Conversation c;
  c.messages = {user_msg("task"), assistant_call("call_7", args), tool_msg("call_7", "ok"), assistant_msg("done")};
  auto st = stale_assistant_text(c, Profile{}, 3);
  CHECK(st.hits == 1);
  const Part& call = c.messages[1].parts[1];
  CHECK(call.id == "call_7");
  CHECK(call.name == "bash");
  CHECK(call.text.size() < args.size() * 3 / 4);
  CHECK(is_json_object(call.text));
  rapidjson::Document d;
  d.Parse(call.text.c_str());
  CHECK(d["timeout"].GetInt() == 30);
  std::string cmd = d["command"].GetString();
  CHECK(cmd.rfind("cat > /testbed/reproduce.py << 'EOF'\n", 0) == 0);
  CHECK(cmd.find("python /testbed/reproduce.py") != std::string::npos);
  CHECK(cmd.find("check_value_5") != std::string::npos);  // a name of the hidden part
}

TEST_CASE("snip_arguments: not an object, or nothing long, is returned as is") {
  Profile p;
  CHECK(snip_arguments("[1,2,3]", p) == "[1,2,3]");
  CHECK(snip_arguments("not json", p) == "not json");
  CHECK(snip_arguments("{\"command\": \"ls -la\"}", p) == "{\"command\": \"ls -la\"}");
}

TEST_CASE("stale assistant text: never past the limit, never other roles, thinking, excluded tools or when off") {
  std::string args = args_of(heredoc_args());
  Conversation c;
  Message a = msg(Role::Assistant, {thinking_part(prose()), text_part(prose()), call_part("x", "write", args)});
  c.messages = {user_msg(prose()), a, tool_msg("x", prose()), assistant_msg(prose())};
  Profile p;
  p.exclude_tools = {"write"};
  auto st = stale_assistant_text(c, p, 3);
  CHECK(st.hits == 1);  // only the prose
  CHECK(c.messages[0].parts[0].text == prose());
  CHECK(c.messages[1].parts[0].text == prose());  // thinking
  CHECK(c.messages[1].parts[2].text == args);     // excluded tool
  CHECK(c.messages[2].parts[0].text == prose());  // tool output: not this strategy's
  CHECK(c.messages[3].parts[0].text == prose());  // past the limit
  Profile off;
  off.stale_assistant_text_prose = false;
  off.stale_assistant_text_tool_arguments = false;
  Conversation d;
  d.messages = {user_msg("q"), assistant_msg(prose()), user_msg("q")};
  CHECK(stale_assistant_text(d, off, 3).hits == 0);
  // The strategy's own switch, named as it is, turns both off.
  Profile named_off;
  named_off.stale_assistant_text = false;
  Conversation e;
  e.messages = {user_msg("q"), assistant_msg(prose()), user_msg("q")};
  CHECK(stale_assistant_text(e, named_off, 3).hits == 0);
  CHECK(e.messages[1].parts[0].text == prose());
}

// One paragraph of prose, one line (docs/design.md §Strategies): the cut
// falls between words, and the notice does not call a piece of a line a line.
TEST_CASE("stale assistant text: a long paragraph is cut between words, its pieces not called lines") {
  const std::string para =
      "I looked at the failing test and the traceback points to the settings parser, which rejects a list where it "
      "expects a mapping; the simplest fix is to accept a list and number its entries, then rerun the whole suite "
      "to make sure nothing else depended on the old behaviour of raising.";
  Conversation c;
  c.messages = {user_msg("task"), assistant_msg(para), user_msg("go on"), assistant_msg("ok")};
  Profile plain;
  plain.recall = false;  // the notice as it reads without its recall handle
  REQUIRE(stale_assistant_text(c, plain, 2).hits == 1);
  const std::string& t = c.messages[1].parts[0].text;
  const std::size_t notice = t.find("\n[… ");
  REQUIRE(notice != std::string::npos);
  const std::string head = t.substr(0, notice);
  const std::string tail = t.substr(t.find("hidden]\n") + 8);
  // The head ends at the end of a word, the tail starts at the start of one.
  CHECK(para.rfind(head, 0) == 0);
  CHECK(para[head.size()] == ' ');
  CHECK(para.substr(para.size() - tail.size()) == tail);
  CHECK(para[para.size() - tail.size() - 1] == ' ');
  CHECK(t.find("1 line") == std::string::npos);
  CHECK(t.find(" bytes hidden]") != std::string::npos);
}

TEST_CASE("stale assistant text: a cut that saves less than min_saving_bytes is not made") {
  Conversation c;
  c.messages = {user_msg("task"), assistant_msg(prose()), user_msg("go on"), assistant_msg("ok")};
  Profile p;
  const Conversation before = c;
  auto st = stale_assistant_text(c, p, 2);
  REQUIRE(st.hits == 1);
  const std::uint64_t saving = before.messages[1].parts[0].text.size() - c.messages[1].parts[0].text.size();
  p.stale_assistant_text_min_saving_bytes = saving + 1;
  Conversation d = before;
  CHECK(stale_assistant_text(d, p, 2).hits == 0);
  CHECK(d.messages[1].parts[0].text == prose());
  p.stale_assistant_text_min_saving_bytes = saving;
  CHECK(stale_assistant_text(d, p, 2).hits == 1);
}

TEST_CASE("stale assistant text: by default, a paragraph just over the threshold is not cut for a few bytes") {
  // 244 bytes, of which head and tail keep 160: the notice and the names of
  // the hidden middle would save less than 32 (issue 19: 280 -> 249 once).
  const std::string para =
      "Now I will run test_parse_section_17 in tests/test_parse.py with pytest 8.3.4, check that "
      "ValueError at src/settings/parser.py:104 is gone, then compare section_17 with section_18 and "
      "section_19 so the list handling in parse_section_17 matches.";
  REQUIRE(para.size() >= 240);
  Conversation c;
  c.messages = {user_msg("task"), assistant_msg(para), user_msg("go on"), assistant_msg("ok")};
  CHECK(stale_assistant_text(c, Profile{}, 2).hits == 0);
  Profile eager;
  eager.stale_assistant_text_min_saving_bytes = 0;
  CHECK(stale_assistant_text(c, eager, 2).hits == 1);
}
