// count_rereads(): the file reads of the newest assistant message whose
// path an earlier read named.
#include <doctest/doctest.h>

#include "pruning/rereads.hpp"
#include "pruning_support.hpp"
#include "replay_trajectory.hpp"

#include <algorithm>
#include <unordered_set>

using namespace td::pruning;
using namespace td::pruning::test;

TEST_CASE("rereads: reads of paths read before, in the newest assistant message only") {
  Conversation c;
  c.messages.push_back(system_msg("you are an agent"));
  c.messages.push_back(user_msg("fix the parser"));
  c.messages.push_back(assistant_call("1", R"({"command":"cat src/parser.py"})"));
  c.messages.push_back(tool_msg("1", "def parse(): ..."));
  c.messages.push_back(assistant_call("2", R"({"command":"ls src"})"));
  c.messages.push_back(tool_msg("2", "parser.py"));
  CHECK(count_rereads(c) == 0);  // the newest calls read nothing

  // Read, Claude Code's tool: its file_path read again, and a path never read.
  Message both = msg(Role::Assistant, {text_part("again"), call_part("3", "Read", R"({"file_path":"src/parser.py"})"),
                                       call_part("4", "Read", R"({"file_path":"src/lexer.py"})")});
  c.messages.push_back(both);
  c.messages.push_back(tool_msg("3", "def parse(): ..."));
  c.messages.push_back(tool_msg("4", "def lex(): ..."));
  CHECK(count_rereads(c) == 1);

  // The next request: the same reads are history, a new read of the lexer is one.
  c.messages.push_back(assistant_call("5", R"({"command":"sed -n 1,40p src/lexer.py"})"));
  c.messages.push_back(tool_msg("5", "def lex(): ..."));
  CHECK(count_rereads(c) == 1);

  // A write is no read; a user turn after the answer: no newest calls.
  c.messages.push_back(assistant_call("6", R"({"command":"cat > src/lexer.py <<EOF\nx\nEOF"})"));
  c.messages.push_back(tool_msg("6", ""));
  CHECK(count_rereads(c) == 0);
  c.messages.push_back(assistant_msg("done"));
  c.messages.push_back(user_msg("thanks"));
  CHECK(count_rereads(c) == 0);

  // Two reads of one new path in one message: the second is a re-read.
  Conversation twice;
  twice.messages.push_back(user_msg("look"));
  twice.messages.push_back(msg(Role::Assistant, {call_part("a", "Read", R"({"file_path":"/w/a.go"})"),
                                                 call_part("b", "Read", R"({"file_path":"/w/a.go"})")}));
  CHECK(count_rereads(twice) == 1);
}

namespace {

// The count as the definition reads: every path an earlier read named, then
// the newest message's reads in order (each call's facts through `calls`,
// a memo of its own).
std::uint32_t plain_rereads(const Conversation& c, Memo<CallReads>& calls) {
  std::size_t newest = c.messages.size();
  while (newest > 0 && c.messages[newest - 1].role != Role::Assistant) --newest;
  if (newest == 0) return 0;
  std::unordered_set<std::string_view> read;
  for (std::size_t i = 0; i + 1 < newest; ++i)
    if (c.messages[i].role == Role::Assistant)
      for (const Part& p : c.messages[i].parts)
        if (p.kind == PartKind::ToolCall)
          if (auto [reads, paths] = call_reads(p, &calls); reads) read.insert(paths.begin(), paths.end());
  std::uint32_t count = 0;
  for (const Part& p : c.messages[newest - 1].parts) {
    if (p.kind != PartKind::ToolCall) continue;
    auto [reads, paths] = call_reads(p, &calls);
    if (!reads) continue;
    count += std::any_of(paths.begin(), paths.end(), [&](std::string_view path) { return read.contains(path); });
    read.insert(paths.begin(), paths.end());
  }
  return count;
}

}  // namespace

TEST_CASE("rereads: the count of every request of recorded sessions is the plain walk's") {
  // The count looks the history's reads up only for the newest message's paths.
  std::uint32_t total = 0;
  Memo<CallReads> calls(8u << 20), plain_calls(8u << 20);
  for (const char* name : {"claude-code-codemie-1", "codex-openprintkit-1", "mini-swe-agent-9"}) {
    const Conversation whole = trajectory(name);
    Conversation c;  // grown a message at a time: each request's history
    for (std::size_t end = 1; end <= whole.messages.size(); ++end) {
      c.messages.push_back(whole.messages[end - 1]);
      const std::uint32_t n = count_rereads(c, &calls);
      if (!c.messages.back().parts.empty() && c.messages.back().role == Role::Assistant) {
        INFO(name << " request ending at message " << end);
        REQUIRE(n == plain_rereads(c, plain_calls));  // the walk only where a newest message was added
      }
      total += n;
    }
  }
  CHECK(total > 10);
}
