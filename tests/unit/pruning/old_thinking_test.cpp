#include <doctest/doctest.h>

#include <algorithm>

#include "pruning/strategies/old_thinking.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {
// As the pipeline runs it: `limit` clipped to where old thinking stops in the whole request.
StrategyStats prune_old_thinking(Conversation& c, const OldThinkingOptions& opt, std::uint32_t limit) {
  return old_thinking(c, opt, std::min(limit, old_thinking_end(c, opt)));
}

Conversation with_thinking() {
  Conversation c;
  c.messages = {
      system_msg("s"),
      user_msg("q"),
      msg(Role::Assistant, {thinking_part("long unsigned reasoning"), call_part("a", "bash", "{}")}),
      tool_msg("a", "r"),
      msg(Role::Assistant, {thinking_part("signed reasoning", "SIG1"), call_part("b", "bash", "{}")}),
      tool_msg("b", "r"),
      msg(Role::Assistant, {thinking_part("only signed thinking", "SIG2")}),
      user_msg("next"),
      msg(Role::Assistant, {thinking_part("recent", "SIG3"), call_part("c", "bash", "{}")}),
      tool_msg("c", "r"),
      msg(Role::Assistant, {thinking_part("last turn", "SIG4"), call_part("d", "bash", "{}")}),
      tool_msg("d", "r"),
  };
  return c;
}
}  // namespace

TEST_CASE("old thinking: unsigned reasoning is blanked, its field kept") {
  auto c = with_thinking();
  auto st = prune_old_thinking(c, Profile{}, 8);
  Part& p = c.messages[2].parts[0];
  CHECK(p.kind == PartKind::Thinking);
  CHECK(p.text.empty());
  CHECK(p.edited);
  CHECK(c.messages[2].changed);
  CHECK(c.messages[2].parts[1].text == "{}");  // the call stays
  CHECK(st.hits == 2);
  CHECK(st.bytes_saved == std::string("long unsigned reasoning").size() + std::string("signed reasoning").size() + 4);
}

TEST_CASE("old thinking: signed thinking is dropped whole, never edited") {
  auto c = with_thinking();
  prune_old_thinking(c, Profile{}, 8);
  REQUIRE(c.messages[4].parts.size() == 1);
  CHECK(c.messages[4].parts[0].kind == PartKind::ToolCall);
  CHECK(c.messages[4].changed);
  // A message of nothing but signed thinking keeps it: never emptied.
  REQUIRE(c.messages[6].parts.size() == 1);
  CHECK(c.messages[6].parts[0].text == "only signed thinking");
  CHECK(c.messages[6].parts[0].signature == "SIG2");
  CHECK_FALSE(c.messages[6].changed);
}

TEST_CASE("old thinking: never the last assistant turn nor the last messages, whatever the limit") {
  auto c = with_thinking();
  prune_old_thinking(c, Profile{}, 12);
  CHECK(c.messages[10].parts[0].text == "last turn");  // last assistant
  CHECK(c.messages[8].parts[0].text == "recent");      // within the last 4 messages
  CHECK(c.messages[8].parts[0].signature == "SIG3");
}

TEST_CASE("old thinking: beyond the limit, opaque parts, user messages and a disabled profile are untouched") {
  auto c = with_thinking();
  prune_old_thinking(c, Profile{}, 4);
  CHECK(c.messages[4].parts.size() == 2);  // past the limit
  Conversation o;
  Part opaque;
  opaque.kind = PartKind::Opaque;
  opaque.opaque_bytes = 100;
  o.messages = {user_msg("q"),     msg(Role::Assistant, {opaque, text_part("hi")}),
                user_msg("q"),     msg(Role::User, {thinking_part("user-side thinking?")}),
                user_msg("q"),     user_msg("q"),
                user_msg("q"),     user_msg("q"),
                assistant_msg("a")};
  auto st = prune_old_thinking(o, Profile{}, 9);
  CHECK(st.hits == 0);
  CHECK(o.messages[1].parts.size() == 2);
  CHECK(o.messages[3].parts[0].text == "user-side thinking?");
  Profile off;
  off.old_thinking = false;
  auto d = with_thinking();
  CHECK(prune_old_thinking(d, off, 12).hits == 0);
  CHECK(d.messages[2].parts[0].text == "long unsigned reasoning");
}

TEST_CASE("old thinking: a non-editable unsigned part is left alone") {
  auto c = with_thinking();
  c.messages[2].parts[0].editable = false;
  prune_old_thinking(c, Profile{}, 8);
  CHECK(c.messages[2].parts[0].text == "long unsigned reasoning");
}
