#include <doctest/doctest.h>

#include "pruning/strategies/working_memory.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

TEST_CASE("working memory: a chat turn is a user message and the reply") {
  Conversation c;
  c.messages = {system_msg("s"), user_msg("q1"),      assistant_msg("a1"),
                user_msg("q2"),  assistant_msg("a2"), user_msg("q3")};
  auto wm = working_memory(c, Profile{});
  CHECK(wm.turn_start == std::vector<std::uint32_t>{1, 3, 5});
}

TEST_CASE("working memory: in an agent loop each step after a tool result is a turn") {
  Conversation c;
  c.messages = {system_msg("s"),           user_msg("task"),     assistant_call("a", "{}"), tool_msg("a", "out"),
                assistant_call("b", "{}"), tool_msg("b", "out"), assistant_msg("thinking"), assistant_call("c", "{}"),
                tool_msg("c", "x"),        user_msg("more"),     user_msg("and more"),      assistant_msg("ok")};
  auto wm = working_memory(c, Profile{});
  // [U A T] [A T] [A A T] [U U A]
  CHECK(wm.turn_start == std::vector<std::uint32_t>{1, 4, 6, 9});
}

TEST_CASE("working memory: Anthropic tool results in user messages do not start a turn") {
  Conversation c;
  c.messages = {user_msg("task"), assistant_call("a", "{}"),
                msg(Role::User, {result_part("a", "out"), text_part("note")}), assistant_msg("done")};
  auto wm = working_memory(c, Profile{});
  CHECK(wm.turn_start == std::vector<std::uint32_t>{0, 3});
  CHECK(is_tool_message(c.messages[2]));
  CHECK_FALSE(is_tool_message(c.messages[0]));
}

TEST_CASE("working memory: system messages belong to no turn, wherever they are") {
  Conversation c;
  c.messages = {system_msg("s"), user_msg("q"), system_msg("mid"), assistant_msg("a"), user_msg("q2")};
  auto wm = working_memory(c, Profile{});
  CHECK(wm.turn_start == std::vector<std::uint32_t>{1, 4});
}

TEST_CASE("working memory: grid points need `window` turns after them, in steps") {
  Profile p;
  p.window_turns = 4;
  p.frontier_step_turns = 8;
  p.keep_tool_uses = 3;
  // 1 turn [U A T] + 10 more [A T] turns = 11 turns: 8 + 4 > 11, no point yet.
  auto c = agent_loop(11, [](int) { return std::string("out"); });
  CHECK(working_memory(c, p).grid.empty());
  // 12 turns: grid point 8 allowed; the history that first allowed it ends
  // with the first message of turn 11.
  c = agent_loop(12, [](int) { return std::string("out"); });
  auto wm = working_memory(c, p);
  REQUIRE(wm.grid == std::vector<std::uint32_t>{8});
  CHECK(wm.grid_eligible_end[0] == wm.turn_start[11] + 1);
  // Far longer: every multiple of 8 up to turns - window.
  c = agent_loop(40, [](int) { return std::string("out"); });
  CHECK(working_memory(c, p).grid == std::vector<std::uint32_t>{8, 16, 24, 32});
}

TEST_CASE("working memory: the last keep_tool_uses tool results stay in working memory") {
  Profile p;
  p.window_turns = 1;
  p.frontier_step_turns = 1;
  p.keep_tool_uses = 3;
  // A chat with a single tool use at the start: turns pile up, tool uses don't.
  Conversation c;
  c.messages = {user_msg("q"), assistant_call("a", "{}"), tool_msg("a", "r"), assistant_msg("x")};
  for (int i = 0; i < 10; ++i) {
    c.messages.push_back(user_msg("q"));
    c.messages.push_back(assistant_msg("a"));
  }
  CHECK(working_memory(c, p).grid.empty());
  p.keep_tool_uses = 0;
  CHECK_FALSE(working_memory(c, p).grid.empty());
}
