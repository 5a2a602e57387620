#include <doctest/doctest.h>

#include "pruning/strategies/pairing_repair.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

TEST_CASE("pairing: a well-formed history is left exactly as it is") {
  auto c = agent_loop(5, [](int k) { return "out " + std::to_string(k); });
  auto before = render(c);
  auto st = pairing_repair(c);
  CHECK(st.hits == 0);
  CHECK(render(c) == before);
  for (const auto& m : c.messages) CHECK_FALSE(m.changed);
}

TEST_CASE("pairing: an unanswered call gets a result after the existing ones, with its id and name") {
  Conversation c;
  c.messages = {user_msg("q"), msg(Role::Assistant, {call_part("a", "bash", "{}"), call_part("b", "grep", "{}")}),
                tool_msg("a", "ra"), user_msg("next"), assistant_msg("done")};
  auto st = pairing_repair(c);
  CHECK(st.hits == 1);
  REQUIRE(c.messages.size() == 6);
  const Message& added = c.messages[3];
  CHECK(added.role == Role::Tool);
  CHECK(added.origin == kNewOrigin);
  CHECK(added.changed);
  REQUIRE(added.parts.size() == 1);
  CHECK(added.parts[0].kind == PartKind::ToolResult);
  CHECK(added.parts[0].id == "b");
  CHECK(added.parts[0].name == "grep");
  CHECK(added.parts[0].text == kUnavailableResult);
  CHECK(c.messages[4].parts[0].text == "next");
}

TEST_CASE("pairing: a call with no results at all is answered right after it") {
  Conversation c;
  c.messages = {user_msg("q"), assistant_call("a", "{}"), user_msg("hello?")};
  pairing_repair(c);
  REQUIRE(c.messages.size() == 4);
  CHECK(c.messages[2].role == Role::Tool);
  CHECK(c.messages[2].parts[0].id == "a");
}

TEST_CASE("pairing: a result answering nothing is removed, its message too when emptied") {
  Conversation c;
  c.messages = {tool_msg("early", "r"),    user_msg("q"),
                assistant_call("a", "{}"), tool_msg("a", "ra"),
                tool_msg("zzz", "orphan"), msg(Role::User, {result_part("yyy", "orphan"), text_part("note")}),
                assistant_msg("ok")};
  auto st = pairing_repair(c);
  CHECK(st.hits == 3);
  CHECK(c.messages[0].removed);
  CHECK_FALSE(c.messages[3].removed);
  CHECK(c.messages[4].removed);
  CHECK_FALSE(c.messages[5].removed);
  REQUIRE(c.messages[5].parts.size() == 1);
  CHECK(c.messages[5].parts[0].text == "note");
  CHECK(c.messages[5].changed);
}

TEST_CASE("pairing: reused ids pair within their own block") {
  Conversation c;
  c.messages = {user_msg("q"),
                assistant_call("x", "{\"a\":1}"),
                tool_msg("x", "r1"),
                assistant_call("x", "{\"a\":2}"),
                tool_msg("x", "r2"),
                tool_msg("x", "duplicate answer"),
                assistant_call("x", "{\"a\":3}"),
                user_msg("interrupt")};
  auto st = pairing_repair(c);
  CHECK(st.hits == 2);  // the duplicate answer goes, the last call is answered
  CHECK(c.messages[5].removed);
  REQUIRE(c.messages.size() == 9);
  CHECK(c.messages[7].parts[0].id == "x");
  CHECK(c.messages[7].parts[0].text == kUnavailableResult);
}

TEST_CASE("pairing: removed messages neither call nor answer") {
  Conversation c;
  c.messages = {user_msg("q"), assistant_call("a", "{}"), tool_msg("a", "r")};
  c.messages[1].removed = true;
  pairing_repair(c);
  CHECK(c.messages[2].removed);  // its call is gone, so is the result
}
