#include <doctest/doctest.h>

#include <algorithm>

#include "pruning/pipeline.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {
std::string word(int i) {
  std::string w;
  do {
    w += char('a' + i % 26);
    i /= 26;
  } while (i > 0);
  return w;
}
// A loop whose outputs are big (snippable), repeated (dedup) and noisy.
Conversation busy_loop(int steps) {
  return agent_loop(steps, [](int k) {
    if (k % 5 == 3) return numbered_lines(20, "src/util.py:");  // the same listing again and again
    std::string out;                                            // 300 distinct lines (distinct words, not just numbers)
    for (int i = 0; i < 300; ++i)
      out += "step " + std::to_string(k) + " found " + word(i) + " in module " + word(i * 7) + "\n";
    for (int i = 0; i < 30; ++i) out += "retrying\n";
    return out;
  });
}
Profile eager() {
  Profile p;
  p.trigger_tokens = 0;
  return p;
}
Conversation prefix(const Conversation& c, std::size_t n) {
  Conversation p = c;
  p.messages.resize(n);
  return p;
}
}  // namespace

TEST_CASE("pipeline: a disabled profile runs nothing") {
  auto c = busy_loop(30);
  auto before = render(c);
  Profile p = eager();
  p.enabled = false;
  auto r = prune(c, p, QuarterCounter{});
  CHECK(r.strategies.empty());
  CHECK_FALSE(r.changed());
  CHECK(r.tokens_after == r.tokens_before);
  CHECK(r.tokens_before == count_tokens(c, QuarterCounter{}).total);
  CHECK(render(c) == before);
}

TEST_CASE("pipeline: a short history is left alone") {
  auto c = busy_loop(8);
  auto before = render(c);
  auto r = prune(c, eager(), QuarterCounter{});
  CHECK_FALSE(r.changed());
  CHECK(r.stale_turns == 0);
  CHECK(render(c) == before);
  for (const auto& m : c.messages) CHECK_FALSE(m.changed);
}

TEST_CASE("pipeline: below the trigger nothing is pruned") {
  auto c = busy_loop(40);
  Profile p;
  p.trigger_tokens = 10'000'000;
  auto r = prune(c, p, QuarterCounter{});
  CHECK_FALSE(r.changed());
}

TEST_CASE("pipeline: a long history is pruned; system, working memory and pairing intact") {
  auto c = busy_loop(40);
  const auto original = c;
  auto r = prune(c, eager(), QuarterCounter{});
  REQUIRE(r.changed());
  CHECK(r.tokens_after < r.tokens_before / 2);
  CHECK(r.stale_turns % Profile{}.frontier_step_turns == 0);
  CHECK(std::find(r.fired.begin(), r.fired.end(), "stale_tool_outputs") != r.fired.end());
  CHECK(std::find(r.fired.begin(), r.fired.end(), "identical_tool_outputs") != r.fired.end());
  CHECK(std::find(r.fired.begin(), r.fired.end(), "low_entropy") != r.fired.end());
  CHECK(std::find(r.fired.begin(), r.fired.end(), "pairing_repair") == r.fired.end());
  REQUIRE(c.messages.size() == original.messages.size());
  CHECK(render(c.messages[0]) == render(original.messages[0]));
  // The last window_turns (4) turns = the last 8 messages, byte for byte.
  for (std::size_t i = c.messages.size() - 8; i < c.messages.size(); ++i) {
    CHECK(render(c.messages[i]) == render(original.messages[i]));
    CHECK_FALSE(c.messages[i].changed);
  }
  // Every message before the frontier that changed is a tool result; calls intact.
  for (std::size_t i = 0; i < c.messages.size(); ++i) {
    if (!c.messages[i].changed) continue;
    CHECK(i < r.stale_messages);
    CHECK(c.messages[i].role == Role::Tool);
    CHECK(c.messages[i].parts[0].id == original.messages[i].parts[0].id);
  }
}

TEST_CASE("pipeline: shadow mode reports the savings and changes nothing") {
  auto c = busy_loop(40);
  auto before = render(c);
  Profile p = eager();
  p.shadow = true;
  auto r = prune(c, p, QuarterCounter{});
  CHECK(r.changed());
  CHECK(r.tokens_after < r.tokens_before);
  CHECK(render(c) == before);
  for (const auto& m : c.messages) CHECK_FALSE(m.changed);
}

TEST_CASE("pipeline: a step that cannot pay for the cache rewrite is not taken") {
  auto c = busy_loop(40);
  Profile p = eager();
  p.payback_requests = 0;
  CHECK_FALSE(prune(c, p, QuarterCounter{}).changed());
  // clear_at_least above anything a step saves: no step either.
  p = eager();
  p.clear_at_least_tokens = 1'000'000;
  CHECK_FALSE(prune(c, p, QuarterCounter{}).changed());
}

TEST_CASE("pipeline: deterministic, and stable turn after turn (prefix property)") {
  const auto full = busy_loop(60);
  const Profile p = eager();
  std::vector<std::string> prev;
  std::uint32_t prev_stale = 0;
  int jumps = 0;
  for (std::size_t n = 3; n <= full.messages.size(); ++n) {
    // Requests end where the model answers: right before an assistant message.
    if (n < full.messages.size() && full.messages[n].role != Role::Assistant) continue;
    auto a = prefix(full, n);
    auto b = prefix(full, n);
    auto ra = prune(a, p, QuarterCounter{});
    prune(b, p, QuarterCounter{});
    auto out = render(a);
    CHECK(out == render(b));
    if (ra.stale_messages != prev_stale) {
      ++jumps;
    } else if (!prev.empty()) {
      REQUIRE(out.size() >= prev.size());
      CHECK(std::equal(prev.begin(), prev.end(), out.begin()));
    }
    CHECK(ra.stale_messages >= prev_stale);  // the frontier never moves back
    prev = out;
    prev_stale = ra.stale_messages;
  }
  CHECK(jumps >= 3);
  CHECK(jumps <= 60 / Profile{}.frontier_step_turns);  // 60 turns, in whole steps
}

TEST_CASE("pipeline: the loss cap holds the frontier back where the payback rule alone would step") {
  auto c = busy_loop(12);
  Profile p = eager();
  p.cache_write_price = 1.25;
  p.max_loss = 1000;  // no cap: the payback rule (eager: always) decides
  auto loose = c;
  CHECK(prune(loose, p, QuarterCounter{}).changed());
  p.max_loss = 0;  // no loss at all: a step's rewrite is never allowed
  auto capped = c;
  CHECK_FALSE(prune(capped, p, QuarterCounter{}).changed());
}

TEST_CASE(
    "pipeline: the cache anchor is the last part before the frontier the previous request left (at the first step: "
    "this request's)") {
  const auto full = busy_loop(60);
  const Profile p = eager();
  std::uint32_t prev_stale = 0;
  int anchored = 0, on_steps = 0;
  for (std::size_t n = 3; n <= full.messages.size(); ++n) {
    if (n < full.messages.size() && full.messages[n].role != Role::Assistant) continue;
    auto c = prefix(full, n);
    const auto r = prune(c, p, QuarterCounter{});
    std::vector<std::pair<std::size_t, std::size_t>> marked;
    for (std::size_t i = 0; i < c.messages.size(); ++i)
      for (std::size_t k = 0; k < c.messages[i].parts.size(); ++k)
        if (c.messages[i].parts[k].cache_anchor) marked.emplace_back(i, k);
    INFO("request of " << n << " messages, frontier " << prev_stale << " -> " << r.stale_messages);
    if (prev_stale == 0 && r.stale_messages == 0) {
      CHECK(marked.empty());  // nothing pruned yet: no anchor
    } else if (prev_stale == 0) {
      // The first step: no earlier frontier, so the anchor is at this one,
      // where the next request's read of the pruned prefix ends.
      REQUIRE(marked.size() == 1);
      CHECK(marked[0].first == r.stale_messages - 1);
      CHECK(marked[0].second == c.messages[r.stale_messages - 1].parts.size() - 1);
    } else {
      // The message just before the previous frontier, its last part (a
      // tool result or a call with text: every message here has one).
      REQUIRE(marked.size() == 1);
      CHECK(marked[0].first == prev_stale - 1);
      CHECK(marked[0].second == c.messages[prev_stale - 1].parts.size() - 1);
      ++anchored;
      on_steps += r.stale_messages != prev_stale;  // a step: still at the old frontier
    }
    prev_stale = r.stale_messages;
  }
  CHECK(anchored > 10);
  CHECK(on_steps >= 2);
}
