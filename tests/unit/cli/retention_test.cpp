#include <doctest/doctest.h>

#include "cli/replay_retention.hpp"

using namespace td::proxy::replay;

TEST_CASE("references: maximal runs of 6+ characters with a digit or _ . / :") {
  auto refs = extract_references("open src/foo.py:12 then run_tests, E1234 (too short: E12), 3.14159 and words; "
                                 "path-like-but-plain; http://x.io/a?b=1 again src/foo.py:12");
  CHECK(refs == std::vector<std::string>{"src/foo.py:12", "run_tests", "short:", "3.14159", "http://x.io/a"});
  CHECK(extract_references("plain words only, hyphen-ated-words too").empty());
  CHECK(extract_references("abc_d") .empty());                   // 5 characters
  CHECK(extract_references("x/y.z_1") == std::vector<std::string>{"x/y.z_1"});
  CHECK(extract_references("order.") == std::vector<std::string>{"order."});  // trailing dot counts
}

TEST_CASE("references count when first seen in a tool output and never said by a user") {
  std::vector<MessageText> t = {
      {Speaker::System, "You are helpful. config.yaml is important."},
      {Speaker::User, "Fix the bug in src/app.py"},
      {Speaker::Assistant, "I will invent new_helper.py now"},
      {Speaker::Tool, "src/app.py:10: error in parse_args\nsee lib/util.py and new_helper.py"},
      {Speaker::Tool, "config.yaml loaded; value 0.91506"},
      {Speaker::Assistant, "parse_args fails; lib/util.py, src/app.py, config.yaml, new_helper.py, 0.91506, "
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
