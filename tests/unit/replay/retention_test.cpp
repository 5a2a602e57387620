#include <doctest/doctest.h>

#include "cli/replay_retention.hpp"

using namespace td::cli;

TEST_CASE("references: maximal runs of 6+ characters with a digit or _ . / :") {
  auto refs = extract_references(
      "open src/foo.py:12 then run_tests, E1234 (too short: E12), 3.14159 and words; "
      "path-like-but-plain; http://x.io/a?b=1 again src/foo.py:12");
  CHECK(refs == std::vector<std::string>{"src/foo.py:12", "run_tests", "3.14159", "http://x.io/a"});
  CHECK(extract_references("plain words only, hyphen-ated-words too").empty());
  CHECK(extract_references("abc_d").empty());  // 5 characters
  CHECK(extract_references("x/y.z_1") == std::vector<std::string>{"x/y.z_1"});
  // A sentence's full stop, a label's colon: not part of the reference.
  CHECK(extract_references("order.").empty());
  CHECK(extract_references("Claude: absent.").empty());
  CHECK(extract_references("see src/app.py.") == std::vector<std::string>{"src/app.py"});
}

TEST_CASE("references count when first seen in a tool output and never said by a user") {
  std::vector<MessageText> t = {
      {Speaker::System, "You are helpful. config.yaml is important."},
      {Speaker::User, "Fix the bug in src/app.py"},
      {Speaker::Assistant, "I will invent new_helper.py now"},
      {Speaker::Tool, "src/app.py:10: error in parse_args\nsee lib/util.py and new_helper.py"},
      {Speaker::Tool, "config.yaml loaded; value 0.91506"},
      {Speaker::Assistant,
       "parse_args fails; lib/util.py, src/app.py, config.yaml, new_helper.py, 0.91506, "
       "not_seen_anywhere.py"},
  };
  ReferenceIndex idx(t);
  // src/app.py: said by the user first; config.yaml: in the system prompt;
  // new_helper.py: the assistant said it before any tool; not_seen: nowhere.
  CHECK(idx.counted(5) == std::vector<std::string>{"parse_args", "lib/util.py", "0.91506"});
  CHECK(counted_references(t, 5) == idx.counted(5));
  CHECK(idx.counted(2).empty());  // nothing before it
  CHECK(idx.counted(3).empty());  // not an assistant message
}

TEST_CASE("a user message after the tool output still disqualifies a reference") {
  std::vector<MessageText> t = {
      {Speaker::Tool, "found token_abc1"},
      {Speaker::User, "yes, token_abc1 is the one"},
      {Speaker::Assistant, "using token_abc1"},
  };
  CHECK(counted_references(t, 2).empty());
  t[1].text = "ok";
  CHECK(counted_references(t, 2) == std::vector<std::string>{"token_abc1"});
}

TEST_CASE("retained: substring of what was sent") {
  RetentionCount r = retained({"lib/util.py", "parse_args", "0.91506"}, "x lib/util.py:3 y\nparse_argsz");
  CHECK(r.counted == 3);
  CHECK(r.retained == 2);
  CHECK(r.ratio() == doctest::Approx(2.0 / 3.0));
  CHECK(RetentionCount{}.ratio() == 1.0);
}

TEST_CASE("copy lines: stripped, at least 20 characters, once each") {
  auto lines = extract_copy_lines(
      "    def parse_args(argv):\r\nshort line\n\t  return parser.parse(argv)  \n"
      "    def parse_args(argv):\n" +
      std::string(19, 'x') + "\n" + std::string(20, 'y'));
  CHECK(lines == std::vector<std::string>{"def parse_args(argv):", "return parser.parse(argv)", std::string(20, 'y')});
}

TEST_CASE("copied lines count when first seen in a tool output and never said by a user") {
  std::vector<MessageText> t = {
      {Speaker::User, "please keep    config = load_config(path)  as is"},
      {Speaker::Assistant, "I will write    helper = make_helper(1, 2)"},
      {Speaker::Tool,
       "12:    result = compute_total(items)\n13:    config = load_config(path)\n"
       "helper = make_helper(1, 2)\n"},
      {Speaker::Assistant,
       "old_str:\n    result = compute_total(items)\nconfig = load_config(path)\n"
       "helper = make_helper(1, 2)\nnot_in_any_output_line = 1"},
  };
  ReferenceIndex idx(t);
  // load_config: the user said it first; make_helper: the assistant wrote it before the tool showed it.
  CHECK(idx.copied_lines(3) == std::vector<std::string>{"result = compute_total(items)"});
  CHECK(idx.copied_lines(2).empty());  // not an assistant message
  CHECK(retained(idx.copied_lines(3), "x\n[… 3 lines hidden]\n").retained == 0);
  CHECK(retained(idx.copied_lines(3), "12:    result = compute_total(items)\n").retained == 1);
}
