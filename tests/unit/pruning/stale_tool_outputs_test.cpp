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
    out +=
        (i >= 20 && i < 60 ? "match in src/shared_module.py line " : "plain line here ") + std::string(30, 'x') + "\n";
  auto c = agent_loop(3, [&](int k) { return "header " + std::to_string(k) + "\n" + out + "footer\n"; });
  Profile p;
  stale_tool_outputs(c, p, 100);
  const std::string& first = c.messages[3].parts[0].text;
  const std::string& second = c.messages[5].parts[0].text;
  CHECK(first.find("[hidden names: src/shared_module.py]") != std::string::npos);
  CHECK(second.find("names in") == std::string::npos);
  CHECK(second.size() < first.size());
}

// Outputs the agent masked or truncated itself (docs/design.md §Strategies):
// the placeholders each CLI writes, as their bundled code writes them.
TEST_CASE("stale outputs: what an agent already masked or truncated is left alone") {
  const std::string lines = numbered_lines(60, "out");
  const std::vector<std::string> cut_by_agents = {
      // Gemini CLI 0.61: a masked output, and a truncated one.
      "<tool_output_masked>\n" + lines +
          "\nOutput too large. Full output available at: /tmp/gemini/tool-outputs/shell_1.txt\n</tool_output_masked>",
      "Output too large. Showing first 8,000 and last 32,000 characters. For full output see: /tmp/o.txt\n" + lines +
          "\n... [1,234 characters omitted] ...\n" + lines,
      // Claude Code 2.1: an output persisted to disk, with its preview.
      "<persisted-output>\nOutput too large (52.1KB). Full output saved to: /root/.claude/out.txt\n\nPreview (first "
      "2KB):\n" +
          lines + "</persisted-output>",
      // Codex 0.169: a middle cut.
      "Warning: truncated output (original token count: 45488)\nTotal output lines: 4378\n\n" + lines +
          "\xE2\x80\xA6"
          "33930 tokens truncated\xE2\x80\xA6" +
          lines,
  };
  for (const std::string& out : cut_by_agents) {
    INFO(out.substr(0, 60));
    CHECK(cut_by_agent(out, Profile{}));
    auto c = agent_loop(2, [&](int) { return out; });
    CHECK(stale_tool_outputs(c, Profile{}, 100).hits == 0);
    CHECK(c.messages[3].parts[0].text == out);
  }
  // An output that only mentions truncation is cut as any other.
  const std::string plain = "see the truncated log below\n" + lines;
  CHECK_FALSE(cut_by_agent(plain, Profile{}));
  auto c = agent_loop(2, [&](int) { return plain; });
  CHECK(stale_tool_outputs(c, Profile{}, 100).hits == 2);
  // The markers are the profile's: none, and every output is cut.
  Profile p;
  p.stale_tool_outputs_skip_markers.clear();
  auto d = agent_loop(2, [&](int) { return cut_by_agents[0]; });
  CHECK(stale_tool_outputs(d, p, 100).hits == 2);
}

TEST_CASE("stale outputs: names come from decoded text, never escape debris") {
  // A tool that prints JSON: its strings hold \n escapes, not newlines.
  std::string out = "{\"entries\": [\n";
  for (int i = 0; i < 40; ++i)
    out += "  {\"msg\": \"start\\n2026-11-20T10:00:" + std::to_string(10 + i) + ".001Z worker_" + std::to_string(i) +
           " done\\t\\\"ok\\\"\"},\n";
  out += "]}\n";
  auto c = agent_loop(2, [&](int) { return out; });
  REQUIRE(stale_tool_outputs(c, Profile{}, 100).hits >= 1);
  const std::string& cut = c.messages[3].parts[0].text;
  const std::size_t at = cut.find("[hidden names: ");
  REQUIRE(at != std::string::npos);
  const std::string names = cut.substr(at, cut.find('\n', at) - at);
  CHECK(names.find(" 2026-11-20T10:00:") != std::string::npos);
  CHECK(names.find("n2026") == std::string::npos);
  CHECK(names.find("tok") == std::string::npos);
}

TEST_CASE("stale outputs: a cut that saves less than min_saving_bytes is not made") {
  const std::string out = numbered_lines(12, "out");  // 12 short lines: a cut saves little
  auto c = agent_loop(2, [&](int) { return out; });
  Profile p;
  p.stale_tool_outputs_threshold_bytes = 64;
  p.stale_tool_outputs_min_saving_bytes = 0;
  REQUIRE(stale_tool_outputs(c, p, 100).hits == 2);
  const std::uint64_t saving = out.size() - c.messages[3].parts[0].text.size();
  p.stale_tool_outputs_min_saving_bytes = saving + 1;
  auto d = agent_loop(2, [&](int) { return out; });
  CHECK(stale_tool_outputs(d, p, 100).hits == 0);
  CHECK(d.messages[3].parts[0].text == out);
}
