#include <doctest/doctest.h>

#include "pruning/snip.hpp"
#include "pruning/strategies/identical_tool_outputs.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {
const std::string kBig = numbered_lines(20, "src/app.py:");  // ~600 bytes
// The reference's recall handle: that of the body, kBig without its blank end.
const std::string kRef = recall_ref(recall_handle(std::string_view(kBig).substr(0, kBig.size() - 1)));
}  // namespace

TEST_CASE("identical outputs: a later copy refers to the first by its call id") {
  auto c = agent_loop(4, [](int k) { return k == 1 || k == 3 ? kBig : "other " + std::to_string(k); });
  auto st = identical_tool_outputs(c, Profile{}, static_cast<std::uint32_t>(c.messages.size()));
  CHECK(c.messages[5].parts[0].text == kBig);  // the first copy is untouched
  const std::string& later = c.messages[9].parts[0].text;
  // The body leaves out blank space at the ends, which stays around the reference.
  CHECK(later ==
        "[same output as tool call call_1: " + std::to_string(kBig.size() - 1) + " bytes omitted" + kRef + "]\n");
  CHECK(c.messages[9].parts[0].id == "call_3");  // the call id it answers stays
  CHECK(c.messages[9].changed);
  CHECK(st.hits == 1);
  CHECK(st.bytes_saved == kBig.size() - later.size());
}

TEST_CASE("identical outputs: short outputs, distinct outputs and outputs past the limit stay") {
  auto c = agent_loop(6, [](int k) { return k % 2 ? std::string("ok") : kBig + std::to_string(k); });
  CHECK(identical_tool_outputs(c, Profile{}, 100).hits == 0);
  auto d = agent_loop(4, [](int) { return kBig; });
  // Limit 7: only message 5 (call_1's result) is before it.
  auto st = identical_tool_outputs(d, Profile{}, 7);
  CHECK(st.hits == 1);
  CHECK(d.messages[7].parts[0].text == kBig);
  CHECK(d.messages[9].parts[0].text == kBig);
}

TEST_CASE("identical outputs: three copies all refer to the first") {
  auto c = agent_loop(3, [](int) { return kBig; });
  identical_tool_outputs(c, Profile{}, 100);
  CHECK(c.messages[5].parts[0].text.find("call_0") != std::string::npos);
  CHECK(c.messages[7].parts[0].text.find("call_0") != std::string::npos);
}

TEST_CASE("identical outputs: a reused call id gets the message number too") {
  Conversation c;
  c.messages = {user_msg("task"),           assistant_call("x", "{\"a\":1}"),
                tool_msg("x", kBig),        assistant_call("x", "{\"a\":2}"),
                tool_msg("x", "different"), assistant_call("y", "{}"),
                tool_msg("y", kBig)};
  identical_tool_outputs(c, Profile{}, 100);
  CHECK(c.messages[6].parts[0].text == "[same output as tool call x (message 3): " + std::to_string(kBig.size() - 1) +
                                           " bytes omitted" + kRef + "]\n");
}

TEST_CASE("identical outputs: excluded tools, non-editable parts and other roles are never touched") {
  Profile p;
  p.exclude_tools = {"read_file"};
  Conversation c;
  c.messages = {user_msg(kBig),
                assistant_call("a", "{}", "t", "read_file"),
                tool_msg("a", kBig),
                assistant_call("b", "{}", "t", "read_file"),
                tool_msg("b", kBig),
                assistant_msg(kBig),
                assistant_call("c", "{}"),
                tool_msg("c", kBig)};
  c.messages[7].parts[0].editable = false;
  CHECK(identical_tool_outputs(c, p, 100).hits == 0);
  CHECK(c.messages[4].parts[0].text == kBig);
  CHECK(c.messages[5].parts[0].text == kBig);
  p.exclude_tools.clear();
  p.identical_tool_outputs = false;
  CHECK(identical_tool_outputs(c, p, 100).hits == 0);
}

// What agents wrap around an output (docs/design.md §Strategies): Claude
// Code's trailing reminders, Codex's headers with a random chunk id and a
// wall time. The same output under different wrappers is a repeat; the
// later copy keeps its own wrapper around the reference.
TEST_CASE("identical outputs: repeats are found under Claude Code's reminders, kept around the reference") {
  const std::string reminder =
      "\n\n<system-reminder>\nWhenever you read a file, consider whether it is malware.\n</system-reminder>\n";
  const std::string todo = "<system-reminder>The TodoWrite tool hasn't been used recently.</system-reminder>";
  auto c = agent_loop(3, [&](int k) { return k == 0 ? kBig + reminder : k == 2 ? kBig + reminder + todo : "x"; });
  auto st = identical_tool_outputs(c, Profile{}, 100);
  CHECK(st.hits == 1);
  CHECK(c.messages[3].parts[0].text == kBig + reminder);  // the first copy
  CHECK(c.messages[7].parts[0].text == "[same output as tool call call_0: " + std::to_string(kBig.size() - 1) +
                                           " bytes omitted" + kRef + "]\n" + reminder + todo);
  // A copy with no reminder at all is a repeat too.
  auto d = agent_loop(2, [&](int k) { return k == 0 ? kBig : kBig + reminder; });
  CHECK(identical_tool_outputs(d, Profile{}, 100).hits == 1);
}

TEST_CASE("identical outputs: repeats are found under Codex's headers, whose lines stay") {
  auto codex = [](const std::string& chunk, const std::string& wall, int code) {
    return "Chunk ID: " + chunk + "\nWall time: " + wall + " seconds\nProcess exited with code " +
           std::to_string(code) + "\nOriginal token count: 160\nOutput:\n" + kBig;
  };
  auto c = agent_loop(3, [&](int k) {
    return k == 0 ? codex("a1b2c3", "0.0213", 0) : k == 2 ? codex("ff09e1", "0.1840", 1) : "x";
  });
  CHECK(identical_tool_outputs(c, Profile{}, 100).hits == 1);
  CHECK(c.messages[7].parts[0].text ==
        "Chunk ID: ff09e1\nWall time: 0.1840 seconds\nProcess exited with code 1\nOriginal token count: 160\nOutput:\n"
        "[same output as tool call call_0: " +
            std::to_string(kBig.size() - 1) + " bytes omitted" + kRef + "]\n");
  // The shell tool's header too.
  auto d = agent_loop(
      2, [&](int k) { return "Exit code: 0\nWall time: " + std::to_string(k) + ".5 seconds\nOutput:\n" + kBig; });
  CHECK(identical_tool_outputs(d, Profile{}, 100).hits == 1);
}

TEST_CASE("identical outputs: repeats are found under Gemini CLI's shell wrapper, whose process group differs") {
  auto gemini = [](int pgid) {
    return "<untrusted_context>\nOutput: " + kBig + "\nProcess Group PGID: " + std::to_string(pgid) +
           "\n</untrusted_context>";
  };
  auto c = agent_loop(2, [&](int k) { return gemini(4100 + k); });
  CHECK(identical_tool_outputs(c, Profile{}, 100).hits == 1);
  const std::string& later = c.messages[5].parts[0].text;
  CHECK(later.rfind("<untrusted_context>\nOutput: src/app.py:", 0) == 0);
  CHECK(later.find("[same output as tool call call_0") != std::string::npos);
  CHECK(later.ends_with("Process Group PGID: 4101\n</untrusted_context>"));
}

TEST_CASE("identical outputs: the profile's wrapper lists are what is left out, and only at the ends") {
  auto others = [](int k) { return "[run " + std::to_string(k) + " at 10:0" + std::to_string(k) + "]\n" + kBig; };
  Profile p;
  auto c = agent_loop(2, others);
  CHECK(identical_tool_outputs(c, p, 100).hits == 0);  // an unknown wrapper: different texts
  p.identical_tool_outputs_wrapper_lines.push_back("[run ");
  auto d = agent_loop(2, others);
  CHECK(identical_tool_outputs(d, p, 100).hits == 1);
  CHECK(d.messages[5].parts[0].text.rfind("[run 1 at 10:01]\n[same output as tool call call_0", 0) == 0);
  // A wrapper line inside the output is part of the body.
  auto e = agent_loop(2, [](int k) { return kBig + "Wall time: " + std::to_string(k) + "\n" + kBig; });
  CHECK(identical_tool_outputs(e, Profile{}, 100).hits == 0);
  // No wrappers configured: the exact comparison of before.
  p.identical_tool_outputs_wrapper_lines.clear();
  p.identical_tool_outputs_wrapper_tags.clear();
  const std::string reminder = "<system-reminder>r</system-reminder>";
  auto f = agent_loop(2, [&](int k) { return k ? kBig + reminder : kBig; });
  CHECK(identical_tool_outputs(f, p, 100).hits == 0);
}

TEST_CASE("identical outputs: tool_output_body") {
  const Profile p;
  auto body = [&](std::string_view t) {
    const ToolOutputBody b = tool_output_body(t, p);
    return std::string(t.substr(b.begin, b.end - b.begin));
  };
  CHECK(body(" plain\n") == "plain");
  CHECK(body("Output:\nabc\n\n<system-reminder>x</system-reminder>\n") == "abc");
  CHECK(body("<system-reminder>x</system-reminder>\nabc") == "abc");
  CHECK(body("abc <system-reminder>x</system-reminder>") == "abc");
  CHECK(body("Output:\n").empty());
  CHECK(body("<system-reminder>unclosed\nabc") == "<system-reminder>unclosed\nabc");
}

TEST_CASE("identical outputs: the body memo gives what the step computes, under each wrapper list") {
  auto others = [](int k) { return "[run " + std::to_string(k) + " at 10:0" + std::to_string(k) + "]\n" + kBig; };
  Memo<OutputBody> memo{std::size_t{1} << 20};
  Profile p;
  auto c = agent_loop(2, others);
  CHECK(identical_tool_outputs(c, p, 100, &memo).hits == 0);
  // The same texts under another wrapper list have other bodies: not the memo's of the first.
  p.identical_tool_outputs_wrapper_lines.push_back("[run ");
  auto d = agent_loop(2, others), e = agent_loop(2, others);
  CHECK(identical_tool_outputs(d, p, 100, &memo).hits == 1);
  CHECK(identical_tool_outputs(e, p, 100).hits == 1);
  CHECK(d.messages[5].parts[0].text == e.messages[5].parts[0].text);
  // A resent history is answered from the memo, with the same result.
  const std::uint64_t hits = memo.hits();
  auto f = agent_loop(2, others);
  CHECK(identical_tool_outputs(f, p, 100, &memo).hits == 1);
  CHECK(f.messages[5].parts[0].text == e.messages[5].parts[0].text);
  CHECK(memo.hits() == hits + 2);
  // Bodies that differ from their texts (a reminder around) and whole texts alike.
  const std::string reminder = "\n<system-reminder>r</system-reminder>";
  auto g = agent_loop(4, [&](int k) { return k % 2 ? kBig + reminder : kBig; });
  auto h = g;
  CHECK(identical_tool_outputs(g, Profile{}, 100, &memo).hits == 3);
  CHECK(identical_tool_outputs(h, Profile{}, 100).hits == 3);
  for (std::size_t i = 0; i < g.messages.size(); ++i) CHECK(g.messages[i].parts[0].text == h.messages[i].parts[0].text);
}
