// Invariants on every request of every recorded trajectory, through the
// proxy's own diet (diet/diet.hpp), with the default profile and with every
// strategy on at aggressive settings. The test suites `trajectories` and
// `trajectories_memo` are ctest tests of their own (tests/CMakeLists.txt).
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "config/load.hpp"
#include "providers/request.hpp"
#include "../pruning/pruning_support.hpp"
#include "cli/replay.hpp"
#include "pruning/pipeline_caches.hpp"
#include "pruning/reanchor.hpp"
#include "pruning/snip.hpp"
#include "trajectory_budget.hpp"
#include "pruning/tally.hpp"
#include "pruning/text.hpp"
#include "pruning/strategies/working_memory.hpp"

using namespace td;
using namespace td::cli;

namespace {

std::vector<Trajectory> load_all() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(TD_FIXTURES "/replay"))
    if (e.path().extension() == ".json" && td::fixtures::trajectory_in_budget(e.path()))
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<Trajectory> out;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string error;
    auto t = parse_trajectory(ss.str(), error);
    INFO(f << ": " << error);
    REQUIRE(t);
    out.push_back(std::move(*t));
  }
  return out;
}

const std::vector<Trajectory>& trajectories() {
  static const std::vector<Trajectory> all = load_all();
  return all;
}

// The request's messages as raw JSON, and the pruning view of them.
struct View {
  std::vector<std::string> raw;
  pruning::Conversation conv;
};
View view(const std::string& body) {
  View v;
  auto p = providers::parse(providers::Api::openai_chat, body);
  REQUIRE(p.request);
  for (const auto& m : p.request->conversation.messages)
    v.raw.emplace_back(p.request->doc.raw(p.request->messages[m.origin].node));
  v.conv = p.request->conversation;
  return v;
}

// What OpenAI checks: valid JSON, roles it knows, string contents, argument
// strings that are JSON, and every assistant tool call answered by the tool
// messages right after it (each once), no tool message anywhere else.
std::string openai_problem(const std::string& body) {
  rapidjson::Document d;
  d.Parse(body.c_str(), body.size());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("messages") || !d["messages"].IsArray())
    return "not a chat body";
  const auto& msgs = d["messages"].GetArray();
  static const std::set<std::string> roles = {"system", "user", "assistant", "tool"};
  std::vector<std::string> open;  // calls still to be answered, in the current block
  for (rapidjson::SizeType i = 0; i < msgs.Size(); ++i) {
    const auto& m = msgs[i];
    if (!m.IsObject() || !m.HasMember("role") || !m["role"].IsString()) return "message without a role";
    std::string role = m["role"].GetString();
    if (!roles.count(role)) return "unknown role " + role;
    if (m.HasMember("content") && !m["content"].IsString() && !m["content"].IsNull()) return "content not a string";
    if (role == "tool") {
      if (!m.HasMember("tool_call_id") || !m["tool_call_id"].IsString()) return "tool message without an id";
      auto it = std::find(open.begin(), open.end(), m["tool_call_id"].GetString());
      if (it == open.end()) return "tool result answering no open call: " + std::string(m["tool_call_id"].GetString());
      open.erase(it);
      continue;
    }
    if (!open.empty()) return "call " + open.front() + " not answered before message " + std::to_string(i);
    if (role == "assistant" && m.HasMember("tool_calls")) {
      for (const auto& c : m["tool_calls"].GetArray()) {
        const auto& args = c["function"]["arguments"];
        rapidjson::Document a;
        a.Parse(args.GetString(), args.GetStringLength());
        if (a.HasParseError()) return "arguments not JSON";
        open.emplace_back(c["id"].GetString());
      }
    }
  }
  return open.empty() ? "" : "calls of the last message not answered";
}

// Returns how many requests held tombstones (semantic mode).
std::uint64_t check_all(const pruning::Profile* profile, std::uint32_t window_turns) {
  const config::Config cfg = config::default_config();
  std::uint64_t requests = 0, changed = 0, tombstoned = 0;
  for (const Trajectory& t : trajectories()) {
    auto sent = sent_requests(t, cfg, profile);
    std::vector<std::string> prev;
    std::uint32_t prev_stale = 0, prev_trim = 0;
    std::vector<std::string> prev_archived;
    for (std::size_t r = 0; r < sent.size(); ++r) {
      const SentRequest& s = sent[r];
      INFO(t.id << " request " << r + 1);
      ++requests;
      changed += s.sent != s.original;
      CHECK_FALSE(s.fail_open);
      REQUIRE(openai_problem(s.original) == "");
      CHECK(openai_problem(s.sent) == "");
      View a = view(s.original), b = view(s.sent);
      // The task restated after a compression step (F22) is a user message
      // of the request's own at its end, not part of the history it carries.
      if (!b.raw.empty() && b.raw.back().find(pruning::kReanchorMarker) != std::string::npos) {
        b.raw.pop_back();
        b.conv.messages.pop_back();
      }
      // System messages: all there, byte for byte, in order.
      std::vector<std::string> sys_a, sys_b;
      for (std::size_t i = 0; i < a.raw.size(); ++i)
        if (a.conv.messages[i].role == pruning::Role::System) sys_a.push_back(a.raw[i]);
      for (std::size_t i = 0; i < b.raw.size(); ++i)
        if (b.conv.messages[i].role == pruning::Role::System) sys_b.push_back(b.raw[i]);
      CHECK(sys_a == sys_b);
      // The last window_turns turns: byte for byte at the end.
      pruning::Profile p;
      p.window_turns = window_turns;
      auto wm = pruning::working_memory(a.conv, p);
      std::size_t from = wm.turns() > window_turns ? wm.turn_start[wm.turns() - window_turns] : 0;
      std::size_t keep = a.raw.size() - from;
      REQUIRE(b.raw.size() >= keep);
      CHECK(std::equal(a.raw.end() - keep, a.raw.end(), b.raw.end() - keep));
      // Stability: what was sent before is sent again, unless the frontier
      // or trim-middle's cut moved (the threshold rules, in whole steps).
      // Semantic mode: a tombstone once sent is sent on every later request
      // (unless trim-middle's cut moved over it).
      if (s.trimmed_until == prev_trim)
        for (const std::string& id : prev_archived)
          CHECK_MESSAGE(std::find(s.archived.begin(), s.archived.end(), id) != s.archived.end(),
                        id << " was taken back");
      if (r > 0 && s.stale_messages == prev_stale && s.trimmed_until == prev_trim &&
          s.archived.size() == prev_archived.size()) {
        bool prefix = prev.size() <= b.raw.size() && std::equal(prev.begin(), prev.end(), b.raw.begin());
        CHECK(prefix);
      }
      CHECK(s.stale_messages >= prev_stale);
      prev = b.raw;
      prev_stale = s.stale_messages;
      prev_trim = s.trimmed_until;
      prev_archived = s.archived;
      tombstoned += !s.archived.empty();
    }
  }
  CHECK(requests > 1000);
  CHECK(changed > requests / 4);  // the diet did act
  return tombstoned;
}

}  // namespace

TEST_CASE("every request of every trajectory, default profile: valid, paired, system and last turns intact, stable" *
          doctest::test_suite("trajectories")) {
  REQUIRE(trajectories().size() >= 20);
  check_all(nullptr, pruning::Profile{}.window_turns);
}

TEST_CASE("every request of every trajectory, every strategy on and eager: the same invariants" *
          doctest::test_suite("trajectories")) {
  pruning::Profile p;
  p.trigger_tokens = 0;
  p.payback_requests = 100000;
  p.payback_turn_fraction = 100;
  p.max_loss = 1000;  // no loss cap
  p.frontier_step_turns = 2;
  p.identical_tool_calls = true;
  p.trim_middle = true;
  p.trim_middle_budget_tokens = 4000;
  p.stale_tool_outputs_threshold_bytes = 128;
  p.stale_tool_outputs_head_bytes = 32;
  p.stale_tool_outputs_tail_bytes = 32;
  p.stale_assistant_text_threshold_bytes = 64;
  p.stale_assistant_text_head_bytes = 16;
  p.stale_assistant_text_tail_bytes = 16;
  p.window_turns = 2;
  p.stale_tool_outputs_keep_edited_turns = 4;  // reads of files being edited held, then cut at a step
  p.stale_tool_outputs_keep_edited_copies = true;
  p.semantic_threshold = 2000;  // semantic mode on every trajectory with task tools
  p.completed_tasks_min_output_bytes = 256;
  CHECK(check_all(&p, p.window_turns) > 0);
}

TEST_CASE("every request of every trajectory: the plan memo changes nothing, and a growing history hits it" *
          doctest::test_suite("trajectories_memo")) {
  using namespace td::pruning;
  for (const bool eager : {false, true}) {
    Profile p;
    if (eager) {
      p.trigger_tokens = 0;
      p.frontier_step_turns = 2;
      p.window_turns = 2;
      p.stale_tool_outputs_keep_edited_turns = 4;
      p.stale_tool_outputs_keep_edited_copies = true;
    }
    std::uint64_t planned = 0, answered = 0, ahead = 0;
    for (const Trajectory& t : trajectories()) {
      PipelineCaches caches;
      const test::CachedQuarterCounter counter;
      for (std::size_t k = 1; k < t.texts.size(); ++k) {
        if (t.texts[k].speaker != Speaker::Assistant) continue;
        INFO(t.id << " request of " << k << " messages, eager " << eager);
        auto parsed = providers::parse(providers::Api::openai_chat, request_body(t, k));
        REQUIRE(parsed.request);
        Conversation a = parsed.request->conversation, b = a;
        const PipelineResult ra = test::prune(a, p, test::QuarterCounter{});
        const std::uint64_t hits = caches.plans.hits(), looked_up = hits + caches.plans.misses();
        const PipelineResult rb = test::prune(b, p, counter, &caches);
        planned += caches.plans.hits() + caches.plans.misses() > looked_up;
        answered += caches.plans.hits() > hits;
        CHECK(test::dump(rb) == test::dump(ra));
        CHECK(test::dump(b) == test::dump(a));
        // The plan ahead, as the proxy's diet threads compute it before the
        // session's next request (pruning/lossy_plan.hpp).
        if (rb.ahead.due()) {
          ++ahead;
          plan_ahead(parsed.request->conversation, rb.ahead, Tally(counter, &caches.counts), caches);
        }
      }
    }
    MESSAGE("plan memo over the trajectories (eager " << eager << "): " << answered << " of " << planned
                                                      << " planned requests answered from it, " << ahead
                                                      << " plans ahead");
    CHECK(planned > 300);
    // An agent resends its history, and the plan of the grid's next point is
    // computed ahead: only a session's first plan, and a request that moves
    // past more than one point at once, plan while the client waits.
    CHECK(answered * 10 > planned * 9);
    CHECK(ahead > 0);
  }
}

namespace {

std::vector<std::string_view> lines_of(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::string_view l : pruning::text::lines(s)) out.push_back(pruning::text::chomp(l));
  return out;
}
bool informative(std::string_view line) { return !pruning::is_boilerplate_line(line); }
bool is_notice(std::string_view line) { return line.starts_with("[… ") || line.starts_with("[hidden names: "); }

}  // namespace

TEST_CASE("every trajectory, default profile: snips keep informative heads and tails, folds name what they hide" *
          doctest::test_suite("trajectories")) {
  const config::Config cfg = config::default_config();
  std::uint64_t snips = 0, folds = 0;
  for (const Trajectory& t : trajectories()) {
    const auto sent = sent_requests(t, cfg, nullptr);
    if (sent.empty()) continue;
    // Pruned forms never change once sent (stability): the last request holds them all.
    const View a = view(sent.back().original), b = view(sent.back().sent);
    REQUIRE(a.conv.messages.size() == b.conv.messages.size());
    for (std::size_t i = 0; i < a.conv.messages.size(); ++i) {
      const auto& ma = a.conv.messages[i];
      const auto& mb = b.conv.messages[i];
      if (ma.role != pruning::Role::Tool || ma.parts.empty() || mb.parts.empty()) continue;
      const std::string& before = ma.parts[0].text;
      const std::string& after = mb.parts[0].text;
      if (before == after) continue;
      INFO(t.id << " message " << i << "\n--- sent:\n" << after);
      const auto ls = lines_of(after);
      // A snip's notice ends "hidden]", or "hidden t1a2b3c4d:3-58]" naming what it hid.
      if (after.find(" hidden]") != std::string::npos || after.find(" hidden t") != std::string::npos) {
        ++snips;
        // Head: the first run of kept lines (a notice hiding only the
        // wrapper lines may come before it); tail: the last run.
        std::size_t head = 0, last = ls.size();
        while (head < ls.size() && is_notice(ls[head])) ++head;
        std::size_t first = head;
        while (first < ls.size() && !is_notice(ls[first])) ++first;
        while (last > 0 && is_notice(ls[last - 1])) --last;
        std::size_t tail = last;
        while (tail > 0 && !is_notice(ls[tail - 1])) --tail;
        bool kept_information = false;
        for (std::size_t k = 0; k < ls.size(); ++k)
          if (((k >= head && k < first) || (k >= tail && k < last)) && informative(ls[k])) kept_information = true;
        const auto orig = lines_of(before);
        const bool had_information = std::any_of(orig.begin(), orig.end(), informative);
        CHECK((kept_information || !had_information));
      } else if (after.find(" similar lines folded") != std::string::npos) {
        ++folds;
        for (std::string_view name : pruning::names_in(before))
          if (pruning::is_path_name(name)) CHECK_MESSAGE(after.find(name) != std::string::npos, name);
      }
    }
  }
  MESSAGE("checked " << snips << " snips and " << folds << " folds");
  CHECK(snips > 100);
}

namespace {
// Whether `body` holds a notice naming a recall handle (docs/design.md
// §Recall): "t" and 8 lowercase hex digits after "[… ", "[" or a space,
// followed by ':', ']' or a space.
bool names_a_handle(std::string_view body) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  for (std::size_t i = body.find('t', 1); i != std::string_view::npos && i + 9 < body.size();
       i = body.find('t', i + 1)) {
    if (body[i - 1] != ' ' && body[i - 1] != '[') continue;
    if (!std::all_of(body.begin() + i + 1, body.begin() + i + 9, hex)) continue;
    const char after = body[i + 9];
    if (after == ':' || after == ']' || after == ' ') return true;
  }
  return false;
}
}  // namespace

TEST_CASE("every trajectory, default profile: once a request names what a cut hid, every later one does" *
          doctest::test_suite("trajectories")) {
  // The recall tool goes with the notices (proxy/filters/recall_offer_filter),
  // so it never flips: cuts only accumulate as the frontier advances.
  const config::Config cfg = config::default_config();
  std::size_t sessions_with_cuts = 0;
  for (const Trajectory& t : trajectories()) {
    const auto sent = sent_requests(t, cfg, nullptr);
    bool seen = false;
    for (std::size_t r = 0; r < sent.size(); ++r) {
      INFO(t.id << " request " << r + 1);
      CHECK_FALSE(names_a_handle(sent[r].original));
      const bool names = names_a_handle(sent[r].sent);
      if (seen) CHECK(names);
      seen = seen || names;
    }
    sessions_with_cuts += seen;
  }
  MESSAGE(sessions_with_cuts << " trajectories reach a cut");
  CHECK(sessions_with_cuts > 10);
}
