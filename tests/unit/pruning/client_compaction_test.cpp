// A client's own compaction request (pruning/client_compaction.hpp, F29):
// the known agents' real prompts (tests/fixtures/compaction/, verbatim from
// their packages) are recognised as the newest user message, with or without
// tools; generic phrasings only without tools; nothing else is.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "pruning/client_compaction.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

std::string prompt(const std::string& name) {
  std::ifstream in(std::string(TD_FIXTURES) + "/compaction/" + name, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A working session: a task, a tool call and its result, an answer.
Conversation session(bool tools) {
  Conversation c;
  c.messages = {system_msg("You are a coding agent."), user_msg("Fix the failing test in src/parse.cpp"),
                assistant_call("c1", R"({"cmd":"make test"})"), tool_msg("c1", "FAIL parse_test: expected 3, got 4"),
                assistant_msg("The off-by-one is in split(); fixed.")};
  if (tools) c.fixed_overhead_text = R"([{"type":"function","name":"shell","parameters":{}}])";
  return c;
}

Conversation with_newest(Conversation c, Message m) {
  c.messages.push_back(std::move(m));
  return c;
}

}  // namespace

TEST_CASE("client compaction: each known agent's real prompt is recognised, tools or not") {
  const Profile profile;
  for (const char* name : {"codex.txt", "claude-code.txt", "gemini-cli.txt", "gemini-cli-verify.txt"}) {
    CAPTURE(name);
    for (bool tools : {true, false}) {
      CAPTURE(tools);
      const Conversation c = with_newest(session(tools), user_msg(prompt(name)));
      CHECK_FALSE(client_compaction(c, profile).empty());
    }
  }
  // Claude Code sends its prompt as one text block among others (reminders).
  Message blocks = msg(Role::User, {text_part("<system-reminder>todo list empty</system-reminder>"),
                                    text_part(prompt("claude-code.txt"))});
  CHECK(client_compaction(with_newest(session(true), blocks), profile) ==
        "Your task is to create a detailed summary of");
  CHECK(client_compaction(with_newest(session(true), user_msg(prompt("codex.txt"))), profile) ==
        "You are performing a CONTEXT CHECKPOINT COMPACTION");
}

TEST_CASE("client compaction: only the newest message counts, and only a user's") {
  const Profile profile;
  // The prompt earlier in the history (the compaction turn, then work went on).
  Conversation later = with_newest(session(true), user_msg(prompt("codex.txt")));
  later.messages.push_back(assistant_msg("Summary: parse fixed; next: docs."));
  CHECK(client_compaction(later, profile).empty());
  later.messages.push_back(user_msg("Now update the docs."));
  CHECK(client_compaction(later, profile).empty());
  // A tool result quoting the prompt is not the client asking.
  CHECK(client_compaction(with_newest(session(true), tool_msg("c1", prompt("codex.txt"))), profile).empty());
  // An assistant message quoting it neither.
  CHECK(client_compaction(with_newest(session(true), assistant_msg(prompt("claude-code.txt"))), profile).empty());
  // A removed newest message does not count; the one before it does.
  Conversation removed = with_newest(session(true), user_msg(prompt("codex.txt")));
  removed.messages.push_back(user_msg("plain question"));
  removed.messages.back().removed = true;
  CHECK_FALSE(client_compaction(removed, profile).empty());
  CHECK(client_compaction(Conversation{}, profile).empty());
}

TEST_CASE("client compaction: generic phrasings count only without tools; case is ignored") {
  const Profile profile;
  const Message ask = user_msg("Please SUMMARIZE THE CONVERSATION so far in five bullet points.");
  CHECK(client_compaction(with_newest(session(false), ask), profile) == "summarize the conversation");
  CHECK(client_compaction(with_newest(session(true), ask), profile).empty());
  // Empty tool lists are no tools.
  Conversation empty_tools = with_newest(session(false), ask);
  empty_tools.fixed_overhead_text = "[]\n[]";
  CHECK_FALSE(carries_tools(empty_tools));
  CHECK_FALSE(client_compaction(empty_tools, profile).empty());
  // An ordinary turn is not one.
  CHECK(client_compaction(with_newest(session(false), user_msg("Fix the next failing test.")), profile).empty());
}

TEST_CASE("client compaction: the profile's switch and patterns decide") {
  Profile off;
  off.client_compaction = false;
  CHECK(client_compaction(with_newest(session(true), user_msg(prompt("codex.txt"))), off).empty());
  Profile own;
  own.client_compaction_patterns = {"[[compact now]]"};
  own.client_compaction_patterns_without_tools.clear();
  CHECK(client_compaction(with_newest(session(true), user_msg("please [[COMPACT NOW]]")), own) == "[[compact now]]");
  CHECK(client_compaction(with_newest(session(true), user_msg(prompt("codex.txt"))), own).empty());
  Profile empty_pattern;
  empty_pattern.client_compaction_patterns = {""};
  CHECK(client_compaction(with_newest(session(true), user_msg("anything")), empty_pattern).empty());
}
