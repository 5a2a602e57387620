// Recall handles (docs/design.md §Recall, handles): every notice a cut leaves
// names what it hid by a handle and line range, and the texts the pipeline
// returns (PipelineResult::hidden) give back exactly the hidden bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <regex>

#include "pruning/archived_output.hpp"
#include "pruning/snip.hpp"
#include "pruning/strategies/file_reads.hpp"
#include "pruning/strategies/identical_tool_outputs.hpp"
#include "pruning/strategies/low_entropy.hpp"
#include "pruning/strategies/stale_assistant_text.hpp"
#include "pruning/strategies/stale_tool_outputs.hpp"
#include "pruning/text.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

using Texts = std::vector<std::shared_ptr<const std::string>>;

Texts hidden_of(const Conversation& c) {
  Texts out;
  for (const Message& m : c.messages)
    for (const Part& p : m.parts) out.insert(out.end(), p.hidden.begin(), p.hidden.end());
  return out;
}

// What tokendiet_recall answers for `handle`: the text named so, once.
std::optional<std::string> text_of(const Texts& texts, const std::string& handle) {
  std::optional<std::string> found;
  for (const auto& t : texts)
    if (recall_handle(*t) == handle) {
      if (found && *found != *t) return std::nullopt;
      found = *t;
    }
  return found;
}

// Lines first..last (1-based, inclusive) of `text`, as the recall answers them.
std::string lines_of(const std::string& text, std::size_t first, std::size_t last) {
  const auto ls = text::lines(text);
  std::string out;
  for (std::size_t i = first; i <= last && i <= ls.size(); ++i) out += ls[i - 1];
  return out;
}

// A notice's name for what it hid: "t1a2b3c4d:41-160", "t1a2b3c4d:7" or "t1a2b3c4d".
const std::regex kRef(R"((?:^|[ \[])(t[0-9a-f]{8})(?::(\d+)(?:-(\d+))?)?(?=[ \]]))");

// `pruned` with every notice line replaced by what its handle and lines
// recall, and the "[hidden names: ...]" lines dropped: the original when
// every notice names exactly what it hid.
std::string restore(const std::string& pruned, const Texts& texts) {
  std::string out;
  for (std::string_view line : text::lines(pruned)) {
    const std::string l(line);
    if (l.rfind("[hidden names: ", 0) == 0) continue;
    std::smatch m;
    if (l.rfind("[", 0) == 0 && std::regex_search(l, m, kRef)) {
      const auto text = text_of(texts, m[1]);
      REQUIRE(text.has_value());
      REQUIRE(m[2].matched);
      const std::size_t first = std::stoul(m[2]);
      const std::size_t last = m[3].matched ? std::stoul(m[3]) : first;
      out += lines_of(*text, first, last);
      continue;
    }
    out += l;
  }
  return out;
}

std::string varied_output(int k, int lines) {
  std::string s;
  for (int i = 0; i < lines; ++i)
    s += "step " + std::to_string(k) + " line " + std::to_string(i) + " value " + std::to_string(i * 7919 % 1000) +
         " of the listing\n";
  return s;
}

}  // namespace

TEST_CASE("recall handles: a function of the text alone, t and 8 hex digits of its archive id") {
  const std::string a = "some output\nline 2\n";
  CHECK(recall_handle(a) == recall_handle(std::string(a)));
  CHECK(recall_handle(a) != recall_handle(a + "x"));
  CHECK(recall_handle(a).size() == 9);
  CHECK(recall_handle(a) == "t" + archive_id(a).substr(3, 8));
  // Pinned: a handle must never change between builds, replicas or restarts.
  CHECK(recall_handle("") == "t" + archive_id("").substr(3, 8));
  CHECK(recall_ref("t0123abcd", 41, 160) == " t0123abcd:41-160");
  CHECK(recall_ref("t0123abcd", 7, 7) == " t0123abcd:7");
  CHECK(recall_ref("t0123abcd") == " t0123abcd");
}

TEST_CASE("recall handles: a stale output's snip names its hidden lines, which restore it exactly") {
  auto c = agent_loop(3, [](int k) { return varied_output(k, 200); });
  const std::string original = c.messages[3].parts[0].text;
  Profile p;
  REQUIRE(stale_tool_outputs(c, p, 6).hits == 2);
  const std::string& cut = c.messages[3].parts[0].text;
  CHECK(cut.find(" " + recall_handle(original) + ":") != std::string::npos);
  CHECK(restore(cut, hidden_of(c)) == original);
  CHECK(restore(c.messages[5].parts[0].text, hidden_of(c)) == c.messages[5].parts[0].hidden[0]->c_str());
}

TEST_CASE("recall handles: without recall the notices name nothing and nothing is kept") {
  auto c = agent_loop(3, [](int k) { return varied_output(k, 200); });
  Profile p;
  p.recall = false;
  REQUIRE(stale_tool_outputs(c, p, 6).hits == 2);
  CHECK_FALSE(std::regex_search(c.messages[3].parts[0].text.str(), std::regex(R"( t[0-9a-f]{8})")));
  CHECK(std::regex_search(c.messages[3].parts[0].text.str(), std::regex(R"(\[… \d+ lines hidden\])")));
  // With recall, the range stands for the count: "[… t1a2b3c4d:3-58 hidden]".
  auto d = agent_loop(3, [](int k) { return varied_output(k, 200); });
  stale_tool_outputs(d, Profile{}, 6);
  CHECK(std::regex_search(d.messages[3].parts[0].text.str(), std::regex(R"(\n\[… t[0-9a-f]{8}:\d+-\d+ hidden\]\n)")));
  CHECK(hidden_of(c).empty());
}

TEST_CASE("recall handles: the snip's notice bytes are the same on every request") {
  auto a = agent_loop(3, [](int k) { return varied_output(k, 200); });
  auto b = agent_loop(6, [](int k) { return varied_output(k, 200); });
  stale_tool_outputs(a, Profile{}, 6);
  stale_tool_outputs(b, Profile{}, 12);
  CHECK(a.messages[3].parts[0].text == b.messages[3].parts[0].text);
  CHECK(a.messages[5].parts[0].text == b.messages[5].parts[0].text);
}

TEST_CASE("recall handles: low_entropy's folds name the lines they hid") {
  std::string text = "start\n";
  for (int i = 0; i < 12; ++i) text += "retrying connection\n";
  for (int i = 0; i < 9; ++i) text += "downloaded " + std::to_string(i * 13) + " of 117 chunks\n";
  text += "done\n";
  const std::string folded = fold_text(text, 4, 256, 16, true);
  REQUIRE(folded.size() < text.size());
  const std::string h = recall_handle(text);
  CHECK(folded.find("[… previous line repeated 11 more times " + h + ":3-13]") != std::string::npos);
  CHECK(folded.find(" similar lines folded " + h + ":15-21]") != std::string::npos);
  CHECK(restore(folded, {std::make_shared<const std::string>(text)}) == text);
  // A blob fold names its line.
  const std::string blob = "key: " + std::string(300, 'a') + "0f\nnext\n";
  std::string hex;
  for (int i = 0; i < 300; ++i) hex += "0123456789abcdef"[i % 16];
  const std::string with_hex = "a line\nkey: " + hex + "\n";
  CHECK(fold_text(with_hex, 4, 256, 16, true).find("-byte hex blob folded " + recall_handle(with_hex) + ":2]") !=
        std::string::npos);
}

TEST_CASE("recall handles: an identical output's reference names the body it repeats") {
  const std::string body = varied_output(1, 40);
  auto c = agent_loop(3, [&](int k) { return k == 2 ? "Chunk ID: 9\n" + body : body; });
  REQUIRE(identical_tool_outputs(c, Profile{}, 8).hits == 2);
  const std::string& ref = c.messages[7].parts[0].text;
  CHECK(ref.find("omitted " + recall_handle(body.substr(0, body.size() - 1)) + "]") != std::string::npos);
  std::smatch m;
  REQUIRE(std::regex_search(ref, m, kRef));
  CHECK(text_of(hidden_of(c), m[1]) == body.substr(0, body.size() - 1));  // the body, its blank end left out
}

TEST_CASE("recall handles: a kept read's dedupe notice names the lines it hid") {
  StaleToolOutputsOptions opt{Profile{}};
  KeptReadLines kept(opt);
  const std::string first = varied_output(1, 10);
  kept.dedupe(first);
  const std::string second = "a new first line of the file\n" + first + "a new last line of the file\n";
  const std::string out = kept.dedupe(second);
  CHECK(out.find("[" + recall_handle(second) + ":2-11 as in an earlier output]") != std::string::npos);
  CHECK(restore(out, {std::make_shared<const std::string>(second)}) == second);
}

TEST_CASE("recall handles: stale assistant prose and long tool-call strings name what they hid") {
  std::string prose;
  for (int i = 0; i < 80; ++i)
    prose += "Paragraph " + std::to_string(i) + " explains step " + std::to_string(i) + ".\n";
  std::string code;
  for (int i = 0; i < 80; ++i) code += "    line_" + std::to_string(i) + " = compute(" + std::to_string(i) + ")\n";
  Conversation c;
  c.messages.push_back(user_msg("task"));
  c.messages.push_back(assistant_msg(prose));
  std::string args = R"({"path":"src/app.py","content":")";
  for (char ch : code) args += ch == '\n' ? std::string("\\n") : std::string(1, ch);
  args += "\"}";
  c.messages.push_back(msg(Role::Assistant, {call_part("c1", "write", args)}));
  c.messages.push_back(tool_msg("c1", "ok"));
  Profile p;
  stale_assistant_text(c, p, 3, nullptr, CopiedLines{});
  CHECK(restore(c.messages[1].parts[0].text, hidden_of(c)) == prose);
  std::smatch m;
  const std::string& call = c.messages[2].parts[0].text;
  REQUIRE(std::regex_search(call, m, std::regex(R"(\[… (t[0-9a-f]{8}):(\d+)-(\d+) hidden\])")));
  CHECK(m[1] == recall_handle(code));
  CHECK(text_of(hidden_of(c), m[1]) == code);  // the decoded string, not the arguments' JSON
}

TEST_CASE("recall handles: the pipeline returns every text its written notices name") {
  auto c = agent_loop(40, [](int k) { return k % 7 == 3 ? varied_output(3, 60) : varied_output(k, 150); });
  Profile p;
  p.trigger_tokens = 0;
  auto r = prune(c, p, QuarterCounter{});
  REQUIRE(r.changed());
  REQUIRE_FALSE(r.hidden.empty());
  std::size_t refs = 0;
  for (const Message& m : c.messages) {
    if (m.removed) continue;
    for (const Part& part : m.parts) {
      const std::string& t = part.text;
      for (auto it = std::sregex_iterator(t.begin(), t.end(), kRef); it != std::sregex_iterator(); ++it, ++refs)
        CHECK(text_of(r.hidden, (*it)[1]).has_value());
    }
  }
  CHECK(refs > 10);
  // A request not written keeps nothing.
  auto d = agent_loop(40, [](int k) { return varied_output(k, 150); });
  p.shadow = true;
  CHECK(prune(d, p, QuarterCounter{}).hidden.empty());
}

TEST_CASE("recall handles: trim-middle's notice names the span it replaced, rendered as text") {
  auto c = agent_loop(40, [](int k) { return varied_output(k, 30); });
  Profile p;
  p.trigger_tokens = 0;
  p.trim_middle = true;
  p.trim_middle_budget_tokens = 2000;
  const Conversation sent = c;
  auto r = prune(c, p, QuarterCounter{});
  REQUIRE(r.trimmed_until > 0);
  const Message* notice = nullptr;
  for (const Message& m : c.messages)
    if (!m.removed && m.origin == kNewOrigin && m.parts[0].text.rfind("[... ", 0) == 0) notice = &m;
  REQUIRE(notice != nullptr);
  std::smatch m;
  const std::string& t = notice->parts[0].text;
  REQUIRE(std::regex_search(t, m, std::regex(R"( (t[0-9a-f]{8})\]$)")));
  const auto span = text_of(r.hidden, m[1]);
  REQUIRE(span.has_value());
  // Role, calls and outputs of the messages it replaced; their own notices
  // (snips of stale outputs) are recallable in turn.
  CHECK(span->find("[call bash call_3]\n{\"command\":\"step 3\"}\n") != std::string::npos);
  CHECK(span->find("[result call_3]\n") != std::string::npos);
  std::size_t inner = 0;
  for (auto it = std::sregex_iterator(span->begin(), span->end(), kRef); it != std::sregex_iterator(); ++it, ++inner)
    CHECK(text_of(r.hidden, (*it)[1]).has_value());
  CHECK(inner > 0);
}
