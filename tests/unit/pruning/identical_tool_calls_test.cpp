#include <doctest/doctest.h>

#include "pruning/snip.hpp"

#include "pruning/strategies/identical_tool_calls.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {
const std::string kArgs = "{\"command\": \"cd /testbed && python -m pytest tests/test_schema.py -x -q\"}";
Profile on() {
  Profile p;
  p.identical_tool_calls = true;
  return p;
}
}  // namespace

TEST_CASE("identical calls: off by default") {
  auto c = agent_loop(3, [](int) { return std::string("r"); });
  for (auto& m : c.messages)
    for (auto& p : m.parts)
      if (p.kind == PartKind::ToolCall) p.text = kArgs;
  CHECK(identical_tool_calls(c, Profile{}, 100).hits == 0);
}

TEST_CASE("identical calls: a later copy names the first call in valid JSON; id, name and result stay") {
  auto c = agent_loop(3, [](int) { return std::string("r"); });
  for (auto& m : c.messages)
    for (auto& p : m.parts)
      if (p.kind == PartKind::ToolCall) p.text = kArgs;
  auto st = identical_tool_calls(c, on(), 100);
  CHECK(st.hits == 2);
  CHECK(c.messages[2].parts[1].text == kArgs);
  const Part& later = c.messages[4].parts[1];
  CHECK(later.text == "{\"same_arguments_as_call\":\"call_0\",\"recall\":\"" + recall_handle(kArgs) + "\"}");
  REQUIRE(later.hidden.size() == 1);
  CHECK(*later.hidden[0] == kArgs);  // what the handle gives back
  CHECK(later.id == "call_1");
  CHECK(later.name == "bash");
  CHECK(c.messages[5].parts[0].text == "r");
  CHECK(c.messages[4].parts[0].text == "let me look");
}

TEST_CASE("identical calls: other names, small arguments and calls past the limit stay") {
  Conversation c;
  c.messages = {user_msg("q"),      assistant_call("a", kArgs, "t", "bash"),
                tool_msg("a", "r"), assistant_call("b", kArgs, "t", "python"),
                tool_msg("b", "r"), assistant_call("c", "{\"x\":1}"),
                tool_msg("c", "r"), assistant_call("d", "{\"x\":1}"),
                tool_msg("d", "r"), assistant_call("e", kArgs, "t", "bash"),
                tool_msg("e", "r")};
  CHECK(identical_tool_calls(c, on(), 9).hits == 0);
  CHECK(identical_tool_calls(c, on(), 11).hits == 1);
}
