#include <doctest/doctest.h>

#include "pruning/strategies/file_reads.hpp"
#include "pruning/strategies/stale_tool_outputs.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

// system, user, then one (call, output) pair per command; outputs of 40 source lines.
Conversation session(const std::vector<std::string>& commands) {
  Conversation c = agent_loop(static_cast<int>(commands.size()), [&](int) { return numbered_lines(40, "    value = compute(x)"); });
  for (std::size_t i = 0; i < commands.size(); ++i) c.messages[2 + 2 * i].parts[1].text = "{\"command\":\"" + commands[i] + "\"}";
  return c;
}

}  // namespace

TEST_CASE("reads_a_file: reading commands and tools") {
  CHECK(reads_a_file("bash", R"({"command":"cat ./pvlib/iam.py | head -200"})"));
  CHECK(reads_a_file("bash", R"({"command":"sed -n 100,150p src/app.py"})"));
  CHECK(reads_a_file("Read", R"({"file_path":"/repo/src/lib.rs"})"));
  CHECK_FALSE(reads_a_file("bash", R"({"command":"python -m pytest tests/"})"));
}

TEST_CASE("a file read stays whole until a later call of its block names its path") {
  Profile p;
  p.frontier_step_turns = 4;
  // Turns: one per (call, output). Block 0: turns 0-3, block 1: turns 4-7.
  Conversation c = session({"cat src/app.py", "python run.py", "sed -i s/a/b/ src/app.py", "cat src/util.py",
                            "cat src/lib.py", "ls", "ls -la", "cat src/lib.py"});
  const auto keep = unsuperseded_reads(c, p, static_cast<std::uint32_t>(c.messages.size()));
  CHECK_FALSE(keep[3]);  // src/app.py: written later in the same block
  CHECK_FALSE(keep[5]);  // not a read
  CHECK(keep[9]);        // src/util.py: nothing names it again in its block
  CHECK_FALSE(keep[11]);  // src/lib.py: read again later in its block
  CHECK(keep[17]);        // the newer read of src/lib.py
  // Outside its block, a later mention does not count: the answer never changes once the block is whole.
  Conversation d = session({"cat src/util.py", "ls", "ls", "ls", "cat src/util.py"});
  CHECK(unsuperseded_reads(d, p, static_cast<std::uint32_t>(d.messages.size()))[3]);
}

TEST_CASE("stale_tool_outputs leaves unsuperseded reads up to keep_reads_bytes whole") {
  Profile p;
  p.frontier_step_turns = 4;
  Conversation c = session({"cat src/util.py", "ls", "ls", "ls"});
  const std::string read = c.messages[3].parts[0].text;
  Conversation cut = c;
  stale_tool_outputs(cut, p, static_cast<std::uint32_t>(cut.messages.size()));
  CHECK(cut.messages[3].parts[0].text != read);  // off by default: snipped
  p.stale_tool_outputs_keep_reads_bytes = 4096;
  Conversation kept = c;
  stale_tool_outputs(kept, p, static_cast<std::uint32_t>(kept.messages.size()));
  CHECK(kept.messages[3].parts[0].text == read);
  CHECK(kept.messages[5].parts[0].text != c.messages[5].parts[0].text);  // `ls` output: snipped as before
}
