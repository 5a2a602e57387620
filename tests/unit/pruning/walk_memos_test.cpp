// The memos of the walks over the whole history (pruning/pipeline_caches.hpp:
// a call's reads and paths, a part's copied-line keys, the recap's recalled
// span; docs/design.md §Memos and caches) change how fast the pipeline runs,
// never what it sends: a recorded session replayed request by request with
// one set of caches gives, at every request, what it gives with none, and
// the memos are answered from.
#include <doctest/doctest.h>

#include <string>

#include "pruning/pipeline.hpp"
#include "pruning/pipeline_caches.hpp"
#include "pruning/rereads.hpp"
#include "pruning/strategies/edited_files.hpp"
#include "pruning/strategies/recap.hpp"
#include "pruning_support.hpp"
#include "replay_trajectory.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

TEST_CASE("walk memos: a recorded session, request by request, sends with the caches what it sends without") {
  // Claude Code: Read and Bash reads, edits copying lines, long enough for a recap.
  const Conversation whole = trajectory("claude-code-codemie-1");
  Profile p = stepping_profile();
  p.token_threshold = 20000;  // the recap stands over the older turns
  REQUIRE(p.recall);          // its span is recallable: the span memo is used
  PipelineCaches caches;
  int requests = 0, recapped = 0, changed = 0;
  for (std::size_t end = 2; end <= whole.messages.size(); ++end) {
    const bool request_end = end == whole.messages.size() || (whole.messages[end].role == Role::Assistant &&
                                                              whole.messages[end - 1].role != Role::Assistant);
    if (!request_end) continue;
    Conversation with = whole, without = whole;
    with.messages.resize(end);
    without.messages.resize(end);
    const PipelineResult got = prune(with, p, CachedQuarterCounter{}, &caches);
    const PipelineResult ref = prune(without, p, CachedQuarterCounter{});
    INFO("request ending at message " << end);
    REQUIRE(dump(with) == dump(without));
    REQUIRE(dump(got) == dump(ref));
    ++requests;
    changed += got.changed() ? 1 : 0;
    for (std::string_view f : got.fired) recapped += f == "recap" ? 1 : 0;
  }
  CHECK(requests > 30);
  CHECK(changed > 10);
  CHECK(recapped > 5);
  // The plan was computed anew at each grid step, and the walks over the
  // history it had before were answered from the memos.
  CHECK(caches.calls.hits() > 0);
  CHECK(caches.line_keys.hits() > 0);
  CHECK(caches.spans.hits() > 0);
  CHECK(caches.bodies.hits() > 0);
}

TEST_CASE("turn-line memo: built a few turns a request from half the threshold on, the first recap finds it built") {
  // A long session; the first request over the threshold recaps many turns.
  const Conversation whole = trajectory("mini-swe-agent-12");
  const Profile p = [] {
    Profile p;
    p.token_threshold = 60000;
    return p;
  }();
  const QuarterCounter counter;
  const Tally tally(counter, nullptr);
  Memo<std::string> memo(16u << 20);
  std::size_t recapped_lines = 0, misses_then = 0;
  for (std::size_t end = 2; end <= whole.messages.size() && recapped_lines == 0; ++end) {
    if (end < whole.messages.size() &&
        !(whole.messages[end].role == Role::Assistant && whole.messages[end - 1].role != Role::Assistant))
      continue;
    Conversation c = whole;
    c.messages.resize(end);
    const Counted counted = count_tokens(c, counter);
    const std::uint64_t misses_before = memo.misses();
    const RecapPlan with = recap_plan(c, p, counted.messages, counted.fixed, 0, tally, &memo);
    const RecapPlan without = recap_plan(c, p, counted.messages, counted.fixed, 0, tally);
    INFO("request ending at message " << end);
    REQUIRE(with.text == without.text);
    if (with.end == 0) continue;
    for (std::size_t at = 0; (at = with.text.find("\nturn ", at)) != std::string::npos; ++at) ++recapped_lines;
    misses_then = memo.misses() - misses_before;
  }
  REQUIRE(recapped_lines >= 10);
  // Only the turn the last request ended was not built yet.
  CHECK(misses_then <= 1);
}

TEST_CASE("calls memo: re-reads counted through it, request by request, as without it") {
  // Claude Code: Read and Bash reads of files read before.
  const Conversation whole = trajectory("claude-code-codemie-1");
  Memo<CallReads> calls(8u << 20);
  std::uint32_t rereads = 0;
  for (std::size_t end = 2; end <= whole.messages.size(); ++end) {
    Conversation c = whole;
    c.messages.resize(end);
    INFO("request ending at message " << end);
    const std::uint32_t with = count_rereads(c, &calls);
    REQUIRE(with == count_rereads(c));
    rereads += with;
  }
  CHECK(rereads > 0);
  CHECK(calls.hits() > calls.misses());  // the history's calls were looked up, not read again
}

TEST_CASE("writes memo: whether a call writes a file, asked through it twice, as without it") {
  // Claude Code: Write and Edit calls among Bash and Read (semantic mode asks
  // it of every completed task's calls on every request).
  const Conversation whole = trajectory("claude-code-numwordify-1");
  Memo<CallWrites> writes(1u << 20);
  int calls = 0, writing = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (const Message& m : whole.messages)
      for (const Part& p : m.parts) {
        if (p.kind != PartKind::ToolCall) continue;
        const bool w = writes_a_file(p, &writes);
        REQUIRE(w == !edited_paths(p.name, p.text).empty());
        REQUIRE(w == writes_a_file(p, nullptr));
        if (pass == 0) {
          ++calls;
          writing += w ? 1 : 0;
        }
      }
  CHECK(writing > 0);
  CHECK(writing < calls);
  CHECK(writes.hits() >= static_cast<std::uint64_t>(calls));  // the second pass read none of them again
}
