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

// Outputs the agent saved to a file, and outputs it truncated itself
// (docs/design.md §Strategies): the placeholders each CLI writes, as their
// bundled code writes them.
TEST_CASE("stale outputs: a placeholder of an output the agent saved to a file is left alone") {
  const std::string lines = numbered_lines(60, "out");
  const std::vector<std::string> saved = {
      // Gemini CLI 0.61: a masked output, and a truncated one.
      "<tool_output_masked>\n" + lines +
          "\nOutput too large. Full output available at: /tmp/gemini/tool-outputs/shell_1.txt\n</tool_output_masked>",
      "Output too large. Showing first 8,000 and last 32,000 characters. For full output see: /tmp/o.txt\n" + lines +
          "\n... [1,234 characters omitted] ...\n" + lines,
      // Claude Code 2.1: an output persisted to disk, with its preview.
      "<persisted-output>\nOutput too large (52.1KB). Full output saved to: /root/.claude/out.txt\n\nPreview (first "
      "2KB):\n" +
          lines + "</persisted-output>",
  };
  for (const std::string& out : saved) {
    INFO(out.substr(0, 60));
    CHECK(saved_by_agent(out, Profile{}));
    auto c = agent_loop(2, [&](int) { return out; });
    CHECK(stale_tool_outputs(c, Profile{}, 100).hits == 0);
    CHECK(c.messages[3].parts[0].text == out);
  }
  // An output that only mentions saving is cut as any other.
  const std::string plain = "the report was saved to disk\n" + lines;
  CHECK_FALSE(saved_by_agent(plain, Profile{}));
  auto c = agent_loop(2, [&](int) { return plain; });
  CHECK(stale_tool_outputs(c, Profile{}, 100).hits == 2);
  // The markers are the profile's: none, and every output is cut.
  Profile p;
  p.stale_tool_outputs_saved_markers.clear();
  auto d = agent_loop(2, [&](int) { return saved[0]; });
  CHECK(stale_tool_outputs(d, p, 100).hits == 2);
}

TEST_CASE("stale outputs: an output the agent truncated itself is cut further, its marker kept") {
  // Codex 0.169's unified exec output: its header, the line total, and the
  // middle marker inside a line, joining the head it kept to its tail.
  const std::string head = numbered_lines(200, "head");
  const std::string tail = numbered_lines(200, "tail");
  const std::string codex =
      "Chunk ID: 0f0d17\nWall time: 0.0076 seconds\nProcess exited with code 0\n"
      "Original token count: 262144\nOutput:\nTotal output lines: 410\n\n" +
      head + "partial line of the head \xE2\x80\xA6" + "252144 tokens truncated\xE2\x80\xA6" +
      "partial line of the tail\n" + tail;
  // Codex's older form: a warning heading the output.
  const std::string warned =
      "Warning: truncated output (original token count: 45488)\nTotal output lines: 4378\n\n" + head + tail;
  for (const std::string* each : {&codex, &warned}) {
    const std::string& out = *each;
    INFO(out.substr(0, 60));
    CHECK_FALSE(saved_by_agent(out, Profile{}));
    auto c = agent_loop(2, [&](int) { return out; });
    CHECK(stale_tool_outputs(c, Profile{}, 100).hits == 2);
    const std::string& cut = c.messages[3].parts[0].text;
    CHECK(cut.size() < out.size() / 4);
    CHECK(cut.find(" hidden") != std::string::npos);
    CHECK(cut.find("Total output lines: ") != std::string::npos);
    // The agent's own notice stays, with the count it gives.
    if (each == &codex) {
      CHECK(cut.find("\n\xE2\x80\xA6"
                     "252144 tokens truncated\xE2\x80\xA6\n") != std::string::npos);
      CHECK(cut.find("partial line of the head") == std::string::npos);
    } else {
      CHECK(cut.find("Warning: truncated output (original token count: 45488)") != std::string::npos);
    }
  }
  // The kept markers are the profile's: none, and the notice is cut as any line.
  Profile p;
  p.stale_tool_outputs_truncated_markers.clear();
  auto d = agent_loop(2, [&](int) { return codex; });
  CHECK(stale_tool_outputs(d, p, 100).hits == 2);
  CHECK(d.messages[3].parts[0].text.find("tokens truncated") == std::string::npos);
}

TEST_CASE("snip: a kept marker takes the word it qualifies, on character boundaries") {
  const std::vector<std::string> markers = {" tokens truncated\xE2\x80\xA6", "count: "};
  const std::string text =
      "abc||\xE2\x80\xA6"
      "768 tokens truncated\xE2\x80\xA6text and count: 42) more";
  const auto at = markers_in(text, markers);
  REQUIRE(at.size() == 2);
  CHECK(text.substr(at[0].first, at[0].second - at[0].first) ==
        "abc||\xE2\x80\xA6"
        "768 tokens truncated\xE2\x80\xA6");
  CHECK(text.substr(at[1].first, at[1].second - at[1].first) == "count: 42)");
  // At most 32 bytes of the word, and never from inside a character.
  const std::string before = std::string(40, 'x') + "\xC3\xA9" + std::string(31, 'y') + " tokens truncated\xE2\x80\xA6";
  const auto v = markers_in(before, markers);
  REQUIRE(v.size() == 1);
  CHECK(v[0].first == 42);  // 32 bytes back is inside the \xC3\xA9: moved past it
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
