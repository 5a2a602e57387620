#include <doctest/doctest.h>

#include "pruning/conversation.hpp"

using namespace td::pruning;

TEST_CASE("set_text marks the part edited and the message changed") {
  Message m;
  m.parts.push_back(Part{.kind = PartKind::ToolResult, .text = "long output", .id = "call_1"});
  CHECK_FALSE(m.changed);
  set_text(m, m.parts[0], "short");
  CHECK(m.changed);
  CHECK(m.parts[0].edited);
  CHECK(m.parts[0].text == "short");
  CHECK(m.parts[0].id == "call_1");
}

TEST_CASE("remove_message marks it removed and changed") {
  Message m;
  remove_message(m);
  CHECK(m.removed);
  CHECK(m.changed);
}
