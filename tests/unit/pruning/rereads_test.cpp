// count_rereads(): the file reads of the newest assistant message whose
// path an earlier read named.
#include <doctest/doctest.h>

#include "pruning/rereads.hpp"
#include "pruning_support.hpp"

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
