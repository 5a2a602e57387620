// Randomised agent conversations (fixed seeds) through the pipeline at
// aggressive settings: never a crash, never an orphan either way, system and
// the last turns untouched, deterministic, and stable turn after turn.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "pruning/pipeline.hpp"
#include "pruning/tokenizer/hash.hpp"
#include "pruning/strategies/working_memory.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

std::string random_text(std::mt19937& rng, std::size_t max_lines) {
  static const char* words[] = {
      "error", "src/app.py:12", "parse_args",           "ok", "retrying", "0.91506", "Traceback", "the",
      "value", "é€😀",           "AAAAQUJDZGv5QUJDZGv5", "--", "\r50%",    "x_y.z"};
  std::uniform_int_distribution<std::size_t> lines(0, max_lines), per(1, 12), w(0, std::size(words) - 1);
  std::string s;
  std::size_t n = lines(rng);
  bool repeat = rng() % 4 == 0;
  std::string last;
  for (std::size_t i = 0; i < n; ++i) {
    if (repeat && !last.empty() && rng() % 2) {
      s += last;
      continue;
    }
    std::string line;
    for (std::size_t k = per(rng); k-- > 0;) line += std::string(words[w(rng)]) + " ";
    line += "\n";
    s += line;
    last = line;
  }
  return s;
}

// A well-paired agent conversation: OpenAI-style or Anthropic-style results,
// parallel calls, reused ids, thinking with and without signatures.
Conversation random_conversation(std::mt19937& rng, int steps) {
  Conversation c;
  c.messages.push_back(system_msg("You are an agent."));
  c.messages.push_back(user_msg("task: " + random_text(rng, 5)));
  const bool anthropic = rng() % 2;
  int next_id = 0;
  for (int s = 0; s < steps; ++s) {
    if (rng() % 10 == 0) c.messages.push_back(user_msg(random_text(rng, 3)));
    Message a;
    a.role = Role::Assistant;
    // Every draw in its own statement: argument order is unspecified, and the
    // same seed must give the same conversation under every compiler (the
    // order below is clang's, which found trim_middle's growing cut).
    if (rng() % 3 == 0) {
      std::string thought = random_text(rng, 20);
      const bool signed_thought = rng() % 2;
      a.parts.push_back(thinking_part(thought, signed_thought ? "SIG" : ""));
    }
    if (rng() % 2) a.parts.push_back(text_part(random_text(rng, 30)));
    const int calls = static_cast<int>(rng() % 3);  // 0: a plain answer
    std::vector<std::string> ids;
    for (int k = 0; k < calls; ++k) {
      std::string id = rng() % 5 == 0 && next_id > 0 ? "call_reused" : "call_" + std::to_string(next_id++);
      if (std::find(ids.begin(), ids.end(), id) != ids.end()) id += "_b";
      ids.push_back(id);
      const char* tool = rng() % 2 ? "bash" : "read";
      const auto step = rng() % 7;
      const auto padding = rng() % 200;
      a.parts.push_back(
          call_part(id, tool, "{\"command\":\"" + std::to_string(step) + std::string(padding, 'c') + "\"}"));
    }
    if (a.parts.empty()) a.parts.push_back(text_part("ok"));
    c.messages.push_back(std::move(a));
    if (calls == 0) {
      c.messages.push_back(user_msg("go on"));
      continue;
    }
    if (anthropic) {
      Message u;
      u.role = Role::Tool;
      for (const auto& id : ids) u.parts.push_back(result_part(id, random_text(rng, 80)));
      c.messages.push_back(std::move(u));
    } else {
      for (const auto& id : ids) c.messages.push_back(tool_msg(id, random_text(rng, 80)));
    }
  }
  for (std::size_t i = 0; i < c.messages.size(); ++i) {
    c.messages[i].origin = static_cast<std::uint32_t>(i);
    for (std::size_t j = 0; j < c.messages[i].parts.size(); ++j)
      c.messages[i].parts[j].origin = static_cast<std::uint32_t>(j);
  }
  return c;
}

// Every call answered in its block, no result without a call.
bool well_paired(const Conversation& c) {
  std::vector<std::string> open;
  for (const Message& m : c.messages) {
    if (m.removed) continue;
    if (m.role == Role::Assistant) {
      if (!open.empty()) return false;
      for (const Part& p : m.parts)
        if (p.kind == PartKind::ToolCall) open.push_back(p.id);
      continue;
    }
    for (const Part& p : m.parts) {
      if (p.kind != PartKind::ToolResult) continue;
      auto it = std::find(open.begin(), open.end(), p.id);
      if (it == open.end()) return false;
      open.erase(it);
    }
  }
  return true;  // the last calls may wait for their results
}

Profile aggressive() {
  Profile p = stepping_profile();
  p.identical_tool_calls = true;
  p.identical_tool_calls_min_bytes = 16;
  p.trim_middle = true;
  p.trim_middle_budget_tokens = 3000;
  p.stale_assistant_text_threshold_bytes = 32;
  p.stale_assistant_text_head_bytes = 8;
  p.stale_assistant_text_tail_bytes = 8;
  p.low_entropy_min_run = 3;
  p.low_entropy_blob_min_bytes = 16;
  p.old_thinking_keep_last_messages = 2;
  return p;
}

}  // namespace

TEST_CASE("random conversations: paired, system and last turns intact, deterministic, stable" *
          doctest::test_suite("property")) {
  const Profile p = aggressive();
  for (unsigned seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    const Conversation full = random_conversation(rng, 20 + static_cast<int>(seed % 25));
    REQUIRE(well_paired(full));
    std::vector<std::string> prev;
    std::uint32_t prev_stale = 0, prev_trim = 0;
    for (std::size_t n = 2; n <= full.messages.size(); ++n) {
      if (n < full.messages.size() && full.messages[n].role != Role::Assistant) continue;
      INFO("seed " << seed << " request of " << n << " messages");
      Conversation a = full, b = full;
      a.messages.resize(n);
      b.messages.resize(n);
      const Conversation original = a;
      PipelineResult r = prune(a, p, QuarterCounter{});
      prune(b, p, QuarterCounter{});
      const auto out = render(a);
      CHECK(out == render(b));
      // With a count cache the plan comes from the memo (computed the first
      // time, looked up the second): the same request in every field.
      for (int pass = 0; pass < 2; ++pass) {
        Conversation c = original;
        PipelineCaches cache;
        const PipelineResult rc = prune(c, p, CachedQuarterCounter{}, &cache);
        CHECK(dump(rc) == dump(r));
        CHECK(dump(c) == dump(a));
      }
      CHECK(well_paired(a));
      CHECK(r.tokens_after <= r.tokens_before);
      // Every text hash a strategy stored is still that of the part's text
      // (set_text() is the only way they changed it).
      for (const Message& m : a.messages)
        for (const Part& part : m.parts)
          if (part.digest.valid) {
            const auto h = td::tok::hash128(part.text.data(), part.text.size());
            CHECK((part.digest.lo == h.lo && part.digest.hi == h.hi));
          }
      CHECK(render(a.messages[0]) == render(original.messages[0]));
      // The last window_turns turns, byte for byte at the end.
      auto wm = working_memory(original, p);
      std::size_t from = wm.turns() > p.window_turns ? wm.turn_start[wm.turns() - p.window_turns] : 0;
      std::vector<std::string> tail_in, tail_out;
      for (std::size_t i = from; i < original.messages.size(); ++i) tail_in.push_back(render(original.messages[i]));
      REQUIRE(out.size() >= tail_in.size());
      tail_out.assign(out.end() - static_cast<std::ptrdiff_t>(tail_in.size()), out.end());
      CHECK(tail_in == tail_out);
      if (!prev.empty() && r.stale_messages == prev_stale && r.trimmed_until == prev_trim)
        CHECK((prev.size() <= out.size() && std::equal(prev.begin(), prev.end(), out.begin())));
      prev = out;
      prev_stale = r.stale_messages;
      prev_trim = r.trimmed_until;
    }
  }
}

TEST_CASE("degenerate conversations: empty, only system, only opaque parts, no assistant") {
  Profile p = aggressive();
  Conversation empty;
  CHECK_FALSE(prune(empty, p, QuarterCounter{}).changed());
  Conversation sys;
  sys.messages = {system_msg("s")};
  CHECK_FALSE(prune(sys, p, QuarterCounter{}).changed());
  Conversation users;
  for (int i = 0; i < 30; ++i) users.messages.push_back(user_msg(std::string(500, 'u')));
  auto before = render(users);
  prune(users, p, QuarterCounter{});
  CHECK(render(users) == before);  // user text is never pruned
  Conversation opaque;
  Part img;
  img.kind = PartKind::Opaque;
  img.opaque_bytes = 5000;
  img.editable = false;
  for (int i = 0; i < 20; ++i) {
    opaque.messages.push_back(msg(Role::User, {img}));
    opaque.messages.push_back(assistant_msg("seen"));
  }
  prune(opaque, p, QuarterCounter{});
  for (const auto& m : opaque.messages)
    if (m.role == Role::User && !m.removed) CHECK(m.parts[0].kind == PartKind::Opaque);
}
