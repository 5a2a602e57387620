#include <doctest/doctest.h>

#include <string_view>
#include <vector>

#include "pruning/line_diff.hpp"
#include "pruning/snip.hpp"
#include "pruning/strategies/similar_tool_outputs.hpp"
#include "pruning/text.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

std::vector<std::string_view> split(std::string_view s) {
  auto out = text::lines(s);
  for (auto& l : out) l = text::chomp(l);
  return out;
}

// `b` rebuilt from `a` and the runs: what a reader of the reference can do.
std::vector<std::string_view> apply(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b,
                                    const std::vector<DiffRun>& runs) {
  std::vector<std::string_view> out;
  for (const DiffRun& r : runs)
    for (std::uint32_t i = r.b_begin; i < r.b_end; ++i) out.push_back(r.same ? a[r.a_begin + (i - r.b_begin)] : b[i]);
  return out;
}

// A Codex unified exec output: its wrapper, then the body.
std::string codex(const std::string& chunk, int total, const std::string& body) {
  return "Chunk ID: " + chunk +
         "\nWall time: 0.0120 seconds\nProcess exited with code 0\nOriginal token count: 4051\n" +
         "Output:\nTotal output lines: " + std::to_string(total) + "\n\n" + body;
}

// The default profile with the strategy on (it is off by default).
Profile on() {
  Profile p;
  p.similar_tool_outputs = true;
  return p;
}

}  // namespace

TEST_CASE("line diff: the runs rebuild the new text, and the work is bounded") {
  const std::string a = "a\nb\nc\nd\ne\nf\ng\n", b = "a\nB\nc\nd\nf\ng\nh\n";
  const auto la = split(a), lb = split(b);
  const auto runs = line_diff(la, lb, 10);
  REQUIRE(runs);
  CHECK(apply(la, lb, *runs) == lb);
  // Same and changed runs alternate; the changes are b -> B, e left out, h added.
  std::size_t changed = 0;
  for (std::size_t i = 0; i < runs->size(); ++i) {
    if (i > 0) CHECK((*runs)[i].same != (*runs)[i - 1].same);
    changed += !(*runs)[i].same;
  }
  CHECK(changed == 3);
  // Four deleted and inserted lines: a cap of 3 gives up.
  CHECK_FALSE(line_diff(la, lb, 3));
  CHECK(line_diff(la, lb, 4));
  // Two unrelated texts of 5,000 lines each: given up, not searched.
  std::string x, y;
  for (int i = 0; i < 5000; ++i) x += "x" + std::to_string(i) + "\n", y += "y" + std::to_string(i) + "\n";
  CHECK_FALSE(line_diff(split(x), split(y), 256));
  // Identical and empty texts.
  const auto same = line_diff(la, la, 0);
  REQUIRE(same);
  CHECK(same->size() == 1);
  CHECK(line_diff(std::vector<std::string_view>{}, lb, 7));
}

TEST_CASE(
    "similar outputs: the same command's output under another wrapper and line count -> a reference and the diff") {
  const std::string body = numbered_lines(60, "src/app.py:");
  std::string changed = body;
  changed.replace(changed.find("src/app.py: 30 "), 15, "src/app.py: 30 NEW ");
  changed += "src/app.py: 60 one more line\n";
  auto c = agent_loop(3, [&](int k) {
    return k == 0 ? codex("a21e41", 60, body) : k == 1 ? std::string("short") : codex("0f0d17", 61, changed);
  });
  const std::string before = c.messages[7].parts[0].text;
  auto st = similar_tool_outputs(c, on(), 100);
  CHECK(st.hits == 1);
  CHECK(c.messages[3].parts[0].text == codex("a21e41", 60, body));  // the earlier one is untouched
  const std::string& ref = c.messages[7].parts[0].text;
  // Its own wrapper stays; the body is the reference and what differs.
  CHECK(ref.rfind("Chunk ID: 0f0d17\n", 0) == 0);
  CHECK(ref.find("Total output lines: 61\n") != std::string::npos);
  CHECK(ref.find("[same output as tool call call_0, but for the lines below: 59 lines (") != std::string::npos);
  CHECK(ref.find("\n[its line 31 instead:]\nsrc/app.py: 30 NEW ") != std::string::npos);
  CHECK(ref.find("\n[after its line 60:]\nsrc/app.py: 60 one more line") != std::string::npos);
  CHECK(ref.size() < before.size() / 3);
  CHECK(st.bytes_saved == before.size() - ref.size());
  CHECK(c.messages[7].changed);
  // The reference names this output's own body for tokendiet_recall, and the
  // diet keeps that body to answer it (docs/design.md §Recall).
  const std::string own = changed.substr(0, changed.size() - 1);  // the body: blank space at its ends is wrapper
  CHECK(ref.find("bytes) omitted" + recall_ref(recall_handle(own)) + "]") != std::string::npos);
  REQUIRE(c.messages[7].parts[0].hidden.size() == 1);
  CHECK(*c.messages[7].parts[0].hidden[0] == own);
  // With recall off, no handle and nothing kept.
  Profile off = on();
  off.recall = false;
  auto d = agent_loop(3, [&](int k) {
    return k == 0 ? codex("a21e41", 60, body) : k == 1 ? std::string("short") : codex("0f0d17", 61, changed);
  });
  similar_tool_outputs(d, off, 100);
  CHECK(d.messages[7].parts[0].text.find("bytes) omitted]") != std::string::npos);
  CHECK(d.messages[7].parts[0].hidden.empty());
}

TEST_CASE("similar outputs: mostly other lines, small savings, the limit and exclusions leave an output alone") {
  const std::string body = numbered_lines(40, "log");
  auto other = [&](int k) { return k == 1 ? numbered_lines(40, "other") + body.substr(0, 200) : body; };
  auto c = agent_loop(2, other);
  CHECK(similar_tool_outputs(c, on(), 100).hits == 0);  // shares too little

  auto edited = [&](int k) { return k == 0 ? body : "new first line\n" + body; };
  auto d = agent_loop(2, edited);
  CHECK(similar_tool_outputs(d, on(), 5).hits == 0);  // the repeat is past the limit
  CHECK(similar_tool_outputs(d, on(), 100).hits == 1);
  CHECK(d.messages[5].parts[0].text.find("[before its line 1:]\nnew first line") != std::string::npos);

  Profile p = on();
  p.similar_tool_outputs_min_saving_bytes = body.size();
  auto e = agent_loop(2, edited);
  CHECK(similar_tool_outputs(e, p, 100).hits == 0);
  p = on();
  p.exclude_tools = {"bash"};
  auto f = agent_loop(2, edited);
  CHECK(similar_tool_outputs(f, p, 100).hits == 0);
  p = on();
  p.similar_tool_outputs = false;
  auto g = agent_loop(2, edited);
  CHECK(similar_tool_outputs(g, p, 100).hits == 0);
  // Identical bodies are identical_tool_outputs' case.
  auto h = agent_loop(2, [&](int) { return body; });
  CHECK(similar_tool_outputs(h, on(), 100).hits == 0);
}

TEST_CASE("similar outputs: a reference is never referred to, and its bytes do not change as the history grows") {
  const std::string body = numbered_lines(50, "test_case");
  auto out = [&](int k) { return body + "summary: " + std::to_string(k) + " failed\n"; };
  auto c = agent_loop(3, out);
  similar_tool_outputs(c, on(), 100);
  CHECK(c.messages[5].parts[0].text.find("tool call call_0") != std::string::npos);
  CHECK(c.messages[7].parts[0].text.find("tool call call_0") != std::string::npos);  // not call_1's reference
  auto d = agent_loop(6, out);
  similar_tool_outputs(d, on(), 100);
  for (int i : {3, 5, 7}) CHECK(d.messages[i].parts[0].text == c.messages[i].parts[0].text);
  // Deleted lines are named by their range.
  auto e = agent_loop(2, [&](int k) { return k == 0 ? body : numbered_lines(25, "test_case"); });
  similar_tool_outputs(e, on(), 100);
  CHECK(e.messages[5].parts[0].text.find("[its lines 26-50 left out]") != std::string::npos);
}
