#include <doctest/doctest.h>

#include "pruning/snip.hpp"

#include "pruning/strategies/file_reads.hpp"
#include "pruning/strategies/stale_tool_outputs.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

// system, user, then one (call, output) pair per command; outputs of 40
// source lines, or `outputs[k]` where given.
Conversation session(const std::vector<std::string>& commands, const std::vector<std::string>& outputs = {}) {
  Conversation c = agent_loop(static_cast<int>(commands.size()), [&](int k) {
    return k < static_cast<int>(outputs.size()) ? outputs[k] : numbered_lines(40, "    value = compute(x)");
  });
  for (std::size_t i = 0; i < commands.size(); ++i)
    c.messages[2 + 2 * i].parts[1].text = "{\"command\":\"" + commands[i] + "\"}";
  return c;
}

std::uint32_t all(const Conversation& c) { return static_cast<std::uint32_t>(c.messages.size()); }

}  // namespace

TEST_CASE("reads_a_file: reading commands and tools") {
  CHECK(reads_a_file("bash", R"({"command":"cat ./pvlib/iam.py | head -200"})"));
  CHECK(reads_a_file("bash", R"({"command":"sed -n 100,150p src/app.py"})"));
  CHECK(reads_a_file("bash", R"({"command":"nl -ba src/app.py"})"));
  CHECK(reads_a_file("Read", R"({"file_path":"/repo/src/lib.rs"})"));
  CHECK(reads_a_file("read_file", R"({"absolute_path":"/repo/src/lib.rs"})"));
  CHECK(reads_a_file("str_replace_editor", R"({"command": "view", "path": "/repo/src/lib.rs"})"));
  CHECK_FALSE(reads_a_file("bash", R"({"command":"python -m pytest tests/"})"));
  CHECK_FALSE(reads_a_file("bash", R"({"command":"sed -i s/a/b/ src/app.py"})"));
}

TEST_CASE("reads_a_file: the reading word must start a command") {
  CHECK(reads_a_file("bash", R"({"command":"cd /repo && cat src/app.py"})"));
  CHECK(reads_a_file("bash", R"({"command":"ls src; head -40 src/app.py"})"));
  CHECK(reads_a_file("bash", R"({"command":"ls src\ncat src/app.py"})"));  // a JSON-escaped newline
  CHECK(reads_a_file("shell", R"({"command":["bash","-lc","cat src/app.py"]})"));
  CHECK(reads_a_file("bash", R"({"command":"cat src/app.py 2>/dev/null"})"));  // stderr redirected, still a read
  // After a pipe, head and tail cut what a run or a search printed: not a file.
  CHECK_FALSE(reads_a_file("bash", R"({"command":"python reproduce.py 2>&1 | tail -30"})"));
  CHECK_FALSE(reads_a_file("bash", R"({"command":"grep -rn parse_args src/ | head -20"})"));
  CHECK_FALSE(reads_a_file("bash", R"({"command":"find . -name '*.py' | nl "})"));
  CHECK_FALSE(reads_a_file("bash", R"({"command":"echo concat src/app.py"})"));  // a word ending in "cat"
}

TEST_CASE("reads_a_file: grep with context lines is a read, a plain grep is not") {
  CHECK(reads_a_file("bash", R"({"command":"grep -B5 -A20 \"def get_module\" astroid/modutils.py"})"));
  CHECK(reads_a_file("bash", R"({"command":"grep -n -C 3 parse_args src/app.py"})"));
  CHECK(reads_a_file("bash", R"({"command":"grep -nA8 parse_args src/app.py"})"));
  CHECK(reads_a_file("bash", R"({"command":"grep --after-context=8 parse_args src/app.py"})"));
  CHECK_FALSE(reads_a_file("bash", R"({"command":"grep -rn parse_args src/app.py"})"));
  CHECK_FALSE(reads_a_file("bash", R"({"command":"grep -n5 parse_args src/app.py"})"));
}

TEST_CASE("reads_a_file: a cat that writes, a heredoc and its body read nothing") {
  CHECK_FALSE(reads_a_file("bash", R"({"command":"cat > src/app.py <<'EOF'\nimport os\nEOF"})"));
  CHECK_FALSE(reads_a_file("bash", R"({"command":"cat <<\"EOF\" > src/app.py\nimport os\nEOF\npython src/app.py"})"));
  CHECK_FALSE(reads_a_file("bash", R"({"command":"cat src/a.py > src/b.py"})"));
  // The body's lines are a file's text: "head -5 data.txt" there is no command.
  CHECK_FALSE(reads_a_file("bash", R"({"command":"cat > run.sh <<'EOF'\nhead -5 data.txt\nEOF\nbash run.sh"})"));
  CHECK_FALSE(reads_a_file("bash", "{\"command\":\"cat > run.sh <<-EOF\n\thead -5 data.txt\n\tEOF\nbash run.sh\"}"));
  // After the body ends, a read is a read again.
  CHECK(reads_a_file("bash", R"({"command":"cat > t.py <<'EOF'\nx = 1\nEOF\ncat t.py"})"));
  // A Read-like tool's key, not the word inside a command's code.
  CHECK_FALSE(reads_a_file("bash", R"({"command":"python -c \"file_path = 'a.py'; print(file_path)\""})"));
}

TEST_CASE("a file read stays whole until a later call of its block names its path") {
  Profile p;
  p.frontier_step_turns = 4;
  p.stale_tool_outputs_keep_reads_revisited = false;  // every read, first ones included
  // Turns: one per (call, output). Block 0: turns 0-3, block 1: turns 4-7.
  Conversation c = session({"cat src/app.py", "python run.py", "sed -i s/a/b/ src/app.py", "cat src/util.py",
                            "cat src/lib.py", "ls", "ls -la", "cat src/lib.py"});
  const auto keep = unsuperseded_reads(c, p, static_cast<std::uint32_t>(c.messages.size()));
  CHECK_FALSE(keep[3]);   // src/app.py: written later in the same block
  CHECK_FALSE(keep[5]);   // not a read
  CHECK(keep[9]);         // src/util.py: nothing names it again in its block
  CHECK_FALSE(keep[11]);  // src/lib.py: read again later in its block
  CHECK(keep[17]);        // the newer read of src/lib.py
  // Outside its block, a later mention does not count: the answer never changes once the block is whole.
  Conversation d = session({"cat src/util.py", "ls", "ls", "ls", "cat src/util.py"});
  CHECK(unsuperseded_reads(d, p, static_cast<std::uint32_t>(d.messages.size()))[3]);
}

TEST_CASE("a newer numbered read of other lines of the file does not supersede an older one") {
  Profile p;
  p.frontier_step_turns = 4;
  p.stale_tool_outputs_keep_reads_revisited = false;
  auto numbered = [](int from, int to) {
    std::string out;
    for (int n = from; n <= to; ++n) out += std::to_string(n) + (n == from ? ":" : "-") + "    value = compute(x)\n";
    return out;
  };
  // grep -n -A shows lines 100-140, then 130-170 (another function), then
  // 90-150 (all the first showed), then a whole-file cat with no numbers.
  Conversation c = session({"grep -n -A 40 'def a' src/app.py", "grep -n -A 40 'def b' src/app.py",
                            "grep -n -A 60 'def z' src/app.py", "ls"},
                           {numbered(100, 140), numbered(130, 170), numbered(90, 150), "ok"});
  const auto keep = unsuperseded_reads(c, p, all(c));
  CHECK_FALSE(keep[3]);  // lines 100-140: shown again by the third read
  CHECK(keep[5]);        // lines 130-170: no later read shows 151-170
  CHECK(keep[7]);
  // A read without line numbers, of the same path, supersedes as before.
  Conversation d = session({"grep -n -A 40 'def a' src/app.py", "cat src/app.py", "ls", "ls"},
                           {numbered(100, 140), "    value = compute(x)\n", "ok", "ok"});
  CHECK_FALSE(unsuperseded_reads(d, p, all(d))[3]);
  // So does a write, numbered reads or not.
  Conversation e = session({"grep -n -A 40 'def a' src/app.py", "sed -i s/a/b/ src/app.py", "ls", "ls"},
                           {numbered(100, 140), "", "ok", "ok"});
  CHECK_FALSE(unsuperseded_reads(e, p, all(e))[3]);
}

TEST_CASE("with keep_reads_revisited, only a read of a path an earlier call named is kept") {
  Profile p;
  p.frontier_step_turns = 4;
  CHECK(p.stale_tool_outputs_keep_reads_revisited);  // the default
  // Turns 0-3, 4-7: nothing later in a block names what it read.
  Conversation c =
      session({"cat src/util.py", "ls", "ls", "ls", "grep -n parse src/lib.py", "cat src/lib.py", "ls", "ls"});
  const auto keep = unsuperseded_reads(c, p, all(c));
  CHECK_FALSE(keep[3]);  // src/util.py: read once in passing
  CHECK(keep[13]);       // src/lib.py: searched first, then read
  p.stale_tool_outputs_keep_reads_revisited = false;
  CHECK(unsuperseded_reads(c, p, all(c))[3]);
}

TEST_CASE("stale_tool_outputs leaves unsuperseded reads up to keep_reads_bytes whole") {
  Profile p;
  p.frontier_step_turns = 4;
  Conversation c = session({"ls src/util.py", "cat src/util.py", "ls", "ls"});
  const std::string read = c.messages[5].parts[0].text;
  CHECK(p.stale_tool_outputs_keep_reads_bytes >= read.size());  // on by default
  Conversation kept = c;
  stale_tool_outputs(kept, p, all(kept));
  CHECK(kept.messages[5].parts[0].text == read);
  CHECK(kept.messages[7].parts[0].text != c.messages[7].parts[0].text);  // `ls` output: snipped as before
  p.stale_tool_outputs_keep_reads_bytes = 0;                             // off: snipped
  Conversation cut = c;
  stale_tool_outputs(cut, p, all(cut));
  CHECK(cut.messages[5].parts[0].text != read);
}

namespace {

std::string source_lines(const std::string& name, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "    " + name + "_" + std::to_string(i) + " = compute(" + std::to_string(i) + ")\n";
  return s;
}

// Two reads of files that share 12 lines, with their paths named first.
Conversation two_reads(const std::vector<std::string>& more = {}) {
  const std::string a = source_lines("alpha", 20), shared = source_lines("alpha", 12);
  const std::string b = source_lines("beta", 5) + shared + source_lines("gamma", 4);
  std::vector<std::string> commands = {"ls src/a.py src/b.py", "cat src/a.py", "ls", "ls",
                                       "cat src/b.py",         "ls",           "ls", "ls"};
  commands.insert(commands.end(), more.begin(), more.end());
  std::vector<std::string> outputs = {"src/a.py\nsrc/b.py\n", a, "", "", b, "", "", ""};
  for (std::size_t i = 0; i < more.size(); ++i) outputs.push_back(a + b);
  return session(commands, outputs);
}

}  // namespace

TEST_CASE("with keep_reads_dedupe, a kept read's lines an earlier kept read holds become one line") {
  Profile p;
  p.frontier_step_turns = 4;
  CHECK(p.stale_tool_outputs_keep_reads_dedupe);  // the default
  Conversation c = two_reads();
  const std::string first = c.messages[5].parts[0].text;
  const std::string read = c.messages[11].parts[0].text;
  stale_tool_outputs(c, p, all(c));
  CHECK(c.messages[5].parts[0].text == first);  // the earlier read: whole
  // The notice names the read's lines it hid (lines 6-17), for tokendiet_recall.
  CHECK(c.messages[11].parts[0].text == source_lines("beta", 5) + "[" + recall_handle(read) +
                                            ":6-17 as in an earlier output]\n" + source_lines("gamma", 4));
  p.stale_tool_outputs_keep_reads_dedupe = false;
  Conversation whole = two_reads();
  const std::string second = whole.messages[11].parts[0].text;
  stale_tool_outputs(whole, p, all(whole));
  CHECK(whole.messages[11].parts[0].text == second);
}

TEST_CASE("keep_reads_dedupe: runs up to run_bytes and short lines stay as they are") {
  Profile p;
  p.frontier_step_turns = 4;
  p.stale_tool_outputs_keep_reads_dedupe_run_bytes = 100000;
  Conversation c = two_reads();
  const std::string second = c.messages[11].parts[0].text;
  stale_tool_outputs(c, p, all(c));
  CHECK(c.messages[11].parts[0].text == second);
  p.stale_tool_outputs_keep_reads_dedupe_run_bytes = 48;
  p.stale_tool_outputs_keep_reads_dedupe_line_chars = 1000;  // no line long enough to compare
  Conversation d = two_reads();
  stale_tool_outputs(d, p, all(d));
  CHECK(d.messages[11].parts[0].text == second);
}

TEST_CASE("keep_reads_dedupe is stable: a kept read's text never changes as the history grows") {
  Profile p;
  p.frontier_step_turns = 4;
  Conversation shorter = two_reads();
  // Four more turns (a whole block), reading both files again (superseding nothing of earlier blocks).
  Conversation longer = two_reads({"ls src/a.py", "cat src/a.py", "ls", "ls"});
  stale_tool_outputs(shorter, p, all(shorter));
  stale_tool_outputs(longer, p, all(longer));
  for (std::uint32_t i = 0; i < all(shorter); ++i)
    for (std::size_t j = 0; j < shorter.messages[i].parts.size(); ++j)
      CHECK(longer.messages[i].parts[j].text == shorter.messages[i].parts[j].text);
  // The new read repeats both: one notice for the whole of it.
  const std::string repeat = two_reads({"ls src/a.py", "cat src/a.py", "ls", "ls"}).messages[21].parts[0].text;
  CHECK(longer.messages[21].parts[0].text == "[" + recall_handle(repeat) + ":1-41 as in an earlier output]\n");
}
