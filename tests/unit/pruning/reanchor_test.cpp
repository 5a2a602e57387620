// Re-anchoring (pruning/reanchor.hpp, F22): the anchor restated after the
// newest message, every message before it untouched; when it is due; never
// twice; the anchor's text.
#include <doctest/doctest.h>

#include "pruning/reanchor.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

Conversation session() {
  Conversation c;
  c.messages = {system_msg("You are a coding agent."), user_msg("Fix the failing test in src/parse.cpp"),
                assistant_call("c1", R"({"cmd":"make test"})"), tool_msg("c1", "FAIL parse_test: expected 3, got 4")};
  return c;
}

}  // namespace

TEST_CASE("reanchor: the task restated in a new user message after the newest one; the rest untouched") {
  const Profile profile;
  Conversation c = session();
  const std::vector<std::string> before = dump(c);
  const std::string restated = reanchor(c, profile);
  CHECK(restated == std::string(kReanchorMarker) + "\nFix the failing test in src/parse.cpp");
  REQUIRE(c.messages.size() == before.size() + 1);
  const std::vector<std::string> after = dump(c);
  CHECK(std::vector<std::string>(after.begin(), after.end() - 1) == before);  // every earlier message as it was
  const Message& added = c.messages.back();
  CHECK(added.role == Role::User);
  CHECK(added.origin == kNewOrigin);
  CHECK(added.parts.size() == 1);
  CHECK(added.parts[0].text == restated);
  // Never twice: the request already carries it.
  CHECK(reanchor(c, profile).empty());
  CHECK(c.messages.size() == before.size() + 1);
}

TEST_CASE("reanchor: a trailing assistant prefill stays last; the profile's anchor, cut on a character boundary") {
  Profile profile;
  profile.anchor = "Keep the public API stable. \xC3\xA9\xC3\xA9";
  profile.reanchor_max_bytes = 30;  // inside the second "é"
  Conversation c = session();
  c.messages.push_back(assistant_msg("Next I will"));
  const std::string restated = reanchor(c, profile);
  CHECK(restated == std::string(kReanchorMarker) + "\nKeep the public API stable. \xC3\xA9 [...]");
  CHECK(c.messages.back().parts[0].text == "Next I will");
  CHECK(c.messages[c.messages.size() - 2].parts[0].text == restated);
  // No user message and no anchor: nothing to restate.
  Conversation none;
  none.messages = {system_msg("sys"), assistant_msg("hello")};
  CHECK(reanchor(none, Profile{}).empty());
  CHECK(anchor_text(none, Profile{}).empty());
}

TEST_CASE("reanchor: due after a compression (unless switched off) and on every N-th turn") {
  Profile p;
  CHECK(reanchor_due(p, 7, true));
  CHECK_FALSE(reanchor_due(p, 7, false));
  p.reanchor_after_compression = false;
  CHECK_FALSE(reanchor_due(p, 7, true));
  p.reanchor_every_turns = 5;
  CHECK(reanchor_due(p, 10, false));
  CHECK_FALSE(reanchor_due(p, 11, false));
  CHECK_FALSE(reanchor_due(p, 0, false));
}
