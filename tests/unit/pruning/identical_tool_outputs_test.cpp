#include <doctest/doctest.h>

#include "pruning/strategies/identical_tool_outputs.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {
const std::string kBig = numbered_lines(20, "src/app.py:");  // ~600 bytes
}

TEST_CASE("identical outputs: a later copy refers to the first by its call id") {
  auto c = agent_loop(4, [](int k) { return k == 1 || k == 3 ? kBig : "other " + std::to_string(k); });
  auto st = identical_tool_outputs(c, Profile{}, static_cast<std::uint32_t>(c.messages.size()));
  CHECK(c.messages[5].parts[0].text == kBig);  // the first copy is untouched
  const std::string& later = c.messages[9].parts[0].text;
  CHECK(later == "[same output as tool call call_1: " + std::to_string(kBig.size()) + " bytes omitted]");
  CHECK(c.messages[9].parts[0].id == "call_3");  // the call id it answers stays
  CHECK(c.messages[9].changed);
  CHECK(st.hits == 1);
  CHECK(st.bytes_saved == kBig.size() - later.size());
}

TEST_CASE("identical outputs: short outputs, distinct outputs and outputs past the limit stay") {
  auto c = agent_loop(6, [](int k) { return k % 2 ? std::string("ok") : kBig + std::to_string(k); });
  CHECK(identical_tool_outputs(c, Profile{}, 100).hits == 0);
  auto d = agent_loop(4, [](int) { return kBig; });
  // Limit 7: only message 5 (call_1's result) is before it.
  auto st = identical_tool_outputs(d, Profile{}, 7);
  CHECK(st.hits == 1);
  CHECK(d.messages[7].parts[0].text == kBig);
  CHECK(d.messages[9].parts[0].text == kBig);
}

TEST_CASE("identical outputs: three copies all refer to the first") {
  auto c = agent_loop(3, [](int) { return kBig; });
  identical_tool_outputs(c, Profile{}, 100);
  CHECK(c.messages[5].parts[0].text.find("call_0") != std::string::npos);
  CHECK(c.messages[7].parts[0].text.find("call_0") != std::string::npos);
}

TEST_CASE("identical outputs: a reused call id gets the message number too") {
  Conversation c;
  c.messages = {user_msg("task"),      assistant_call("x", "{\"a\":1}"), tool_msg("x", kBig),
                assistant_call("x", "{\"a\":2}"), tool_msg("x", "different"), assistant_call("y", "{}"),
                tool_msg("y", kBig)};
  identical_tool_outputs(c, Profile{}, 100);
  CHECK(c.messages[6].parts[0].text ==
        "[same output as tool call x (message 3): " + std::to_string(kBig.size()) + " bytes omitted]");
}

TEST_CASE("identical outputs: excluded tools, non-editable parts and other roles are never touched") {
  Profile p;
  p.exclude_tools = {"read_file"};
  Conversation c;
  c.messages = {user_msg(kBig), assistant_call("a", "{}", "t", "read_file"), tool_msg("a", kBig),
                assistant_call("b", "{}", "t", "read_file"), tool_msg("b", kBig), assistant_msg(kBig),
                assistant_call("c", "{}"), tool_msg("c", kBig)};
  c.messages[7].parts[0].editable = false;
  CHECK(identical_tool_outputs(c, p, 100).hits == 0);
  CHECK(c.messages[4].parts[0].text == kBig);
  CHECK(c.messages[5].parts[0].text == kBig);
  p.exclude_tools.clear();
  p.identical_tool_outputs = false;
  CHECK(identical_tool_outputs(c, p, 100).hits == 0);
}
