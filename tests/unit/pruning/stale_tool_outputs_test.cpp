#include <doctest/doctest.h>

#include "pruning/strategies/stale_tool_outputs.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

TEST_CASE("stale outputs: only big tool outputs before the limit, never other roles") {
  std::string big = numbered_lines(300, "out");
  auto c = agent_loop(4, [&](int k) { return k == 2 ? std::string("small") : big; });
  c.messages.push_back(user_msg(big));
  c.messages.push_back(assistant_msg(big));
  auto st = stale_tool_outputs(c, Profile{}, 8);  // messages 3, 5, 7 are results before 8
  CHECK(st.hits == 2);
  CHECK(c.messages[3].parts[0].text.size() < big.size());
  CHECK(c.messages[5].parts[0].text.size() < big.size());
  CHECK(c.messages[7].parts[0].text == "small");
  CHECK(c.messages[9].parts[0].text == big);   // past the limit
  CHECK(c.messages[10].parts[0].text == big);  // user text
  CHECK(c.messages[11].parts[0].text == big);  // assistant text
  CHECK(c.messages[3].parts[0].id == "call_0");
  CHECK(st.bytes_saved == 2 * big.size() - c.messages[3].parts[0].text.size() - c.messages[5].parts[0].text.size());
}

TEST_CASE("stale outputs: excluded tools, non-editable parts and a disabled profile are untouched") {
  std::string big = numbered_lines(300, "out");
  Profile p;
  p.exclude_tools = {"bash"};
  auto c = agent_loop(3, [&](int) { return big; });
  CHECK(stale_tool_outputs(c, p, 100).hits == 0);
  p.exclude_tools.clear();
  c.messages[3].parts[0].editable = false;
  CHECK(stale_tool_outputs(c, p, 100).hits == 2);
  CHECK(c.messages[3].parts[0].text == big);
  p.stale_tool_outputs = false;
  auto d = agent_loop(3, [&](int) { return big; });
  CHECK(stale_tool_outputs(d, p, 100).hits == 0);
}

TEST_CASE("stale outputs: a name listed by an earlier output is not listed again") {
  std::string out;
  for (int i = 0; i < 80; ++i)
    out += (i >= 20 && i < 60 ? "match in src/shared_module.py line " : "plain line here ") + std::string(30, 'x') + "\n";
  auto c = agent_loop(3, [&](int k) { return "header " + std::to_string(k) + "\n" + out + "footer\n"; });
  Profile p;
  stale_tool_outputs(c, p, 100);
  const std::string& first = c.messages[3].parts[0].text;
  const std::string& second = c.messages[5].parts[0].text;
  CHECK(first.find("[names in the hidden lines: src/shared_module.py]") != std::string::npos);
  CHECK(second.find("names in") == std::string::npos);
  CHECK(second.size() < first.size());
}
