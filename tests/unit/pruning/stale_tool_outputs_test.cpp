#include <doctest/doctest.h>

#include "pruning/strategies/stale_tool_outputs.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {
bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += len;
  }
  return true;
}
}  // namespace

TEST_CASE("snip_text: whole lines from head and tail, the middle counted in a notice") {
  std::string text = numbered_lines(200, "line");  // 200 lines of ~29 bytes
  std::string out = snip_text(text, 1024, 1024, 8);
  CHECK(out.size() < text.size());
  CHECK(out.rfind("line 0 ", 0) == 0);
  CHECK(out.find("line 199 ") != std::string::npos);
  // Every kept line is a whole original line; the notice says what is missing.
  auto first_gap = out.find("[... ");
  REQUIRE(first_gap != std::string::npos);
  std::string head = out.substr(0, first_gap);
  CHECK(text.rfind(head, 0) == 0);
  CHECK(head.back() == '\n');
  std::size_t hidden_lines = 0, hidden_bytes = 0;
  REQUIRE(std::sscanf(out.c_str() + first_gap, "[... %zu lines (%zu bytes) hidden ...]", &hidden_lines,
                      &hidden_bytes) == 2);
  std::string tail = out.substr(out.find("hidden ...]\n") + 12);
  CHECK(head.size() + hidden_bytes + tail.size() == text.size());
  CHECK(text.substr(text.size() - tail.size()) == tail);
  CHECK(head.size() <= 1024);
  CHECK(tail.size() <= 1024);
}

TEST_CASE("snip_text: error lines of the middle are kept, in order") {
  std::string text = numbered_lines(100, "ok") + "src/app.py:12: error: name 'x' is not defined\n" +
                     numbered_lines(50, "ok") + "Traceback (most recent call last):\n" + numbered_lines(100, "ok");
  std::string out = snip_text(text, 512, 512, 8);
  auto e1 = out.find("src/app.py:12: error: name 'x' is not defined\n");
  auto e2 = out.find("Traceback (most recent call last):\n");
  REQUIRE(e1 != std::string::npos);
  REQUIRE(e2 != std::string::npos);
  CHECK(e1 < e2);
  CHECK(out.size() < text.size() / 2);
  // With no error lines allowed, they go too.
  CHECK(snip_text(text, 512, 512, 0).find("Traceback") == std::string::npos);
}

TEST_CASE("snip_text: one long line is cut inside, never inside a UTF-8 character") {
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "é€😀";  // 2, 3 and 4 bytes
  for (std::uint64_t head : {1000, 1001, 1002, 1003}) {
    std::string out = snip_text(text, head, head + 1, 8);
    CHECK(out.size() < text.size());
    CHECK(valid_utf8(out));
  }
}

TEST_CASE("snip_text: text the cut would not shrink is returned as is") {
  std::string small = numbered_lines(10, "x");
  CHECK(snip_text(small, 1024, 1024, 8) == small);
}

TEST_CASE("stale outputs: only big tool outputs before the limit, never other roles") {
  std::string big = numbered_lines(300, "out");
  auto c = agent_loop(4, [&](int k) { return k == 2 ? std::string("small") : big; });
  c.messages.push_back(user_msg(big));
  c.messages.push_back(assistant_msg(big));
  auto st = snip_stale_tool_outputs(c, Profile{}, 8);  // messages 3, 5, 7 are results before 8
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
  CHECK(snip_stale_tool_outputs(c, p, 100).hits == 0);
  p.exclude_tools.clear();
  c.messages[3].parts[0].editable = false;
  CHECK(snip_stale_tool_outputs(c, p, 100).hits == 2);
  CHECK(c.messages[3].parts[0].text == big);
  p.snip_stale_outputs = false;
  auto d = agent_loop(3, [&](int) { return big; });
  CHECK(snip_stale_tool_outputs(d, p, 100).hits == 0);
}
