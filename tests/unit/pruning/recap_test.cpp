// The standard mode's recap (pruning/strategies/recap.hpp) on recorded
// trajectories (tests/fixtures/replay) and a small built session:
// deterministic, within its budget, naming the files, commands and errors of
// the turns it replaces, placed where they were, and stable while the
// history grows.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "pruning/pipeline.hpp"
#include "pruning/snip.hpp"
#include "pruning/strategies/recap.hpp"
#include "pruning_support.hpp"
#include "recap_support.hpp"
#include "replay_trajectory.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

RecapPlan plan_of(const Conversation& c, const Profile& p, std::uint64_t window = 0) {
  const QuarterCounter counter;
  const Counted counted = count_tokens(c, counter);
  return recap_plan(c, p, counted.messages, counted.fixed, window, Tally(counter, nullptr));
}

}  // namespace

TEST_CASE("recap: over the threshold the turns before the window become one message, the task kept") {
  for (const char* name : kLongest) {
    CAPTURE(name);
    Conversation c = trajectory(name);
    const Conversation sent = c;
    const Profile p = recap_profile(kThreshold);
    const QuarterCounter counter;
    const PipelineResult r = prune(c, p, counter);
    REQUIRE(std::find(r.fired.begin(), r.fired.end(), std::string_view("recap")) != r.fired.end());
    CHECK(r.tokens_after < r.tokens_before);
    const std::vector<std::string> out = render(c);
    // System prompt and task verbatim, then the recap.
    CHECK(out[0] == render(sent.messages[0]));
    CHECK(out[1] == render(sent.messages[1]));
    CHECK(out[2].find(kRecapMarker) != std::string::npos);
    // The working-memory window is not in it: the newest messages go as sent.
    CHECK(std::find(out.begin(), out.end(), render(sent.messages.back())) != out.end());
  }
}

TEST_CASE("recap: under the threshold, or switched off, nothing happens") {
  Conversation c = trajectory("mini-swe-agent-12");
  const QuarterCounter counter;
  const Counted counted = count_tokens(c, counter);
  CHECK(plan_of(c, recap_profile(counted.total + 1)).end == 0);
  Profile off = recap_profile(1000);
  off.recap = false;
  CHECK(plan_of(c, off).end == 0);
  Profile p = recap_profile(counted.total + 1);
  const PipelineResult r = prune(c, p, counter);
  CHECK(std::find(r.fired.begin(), r.fired.end(), std::string_view("recap")) == r.fired.end());
}

TEST_CASE("recap: weighed on the requests as the stale cuts sent them, not as the client did") {
  // Over the threshold as the client sent it, under it as the diet sends it:
  // the stale cuts already keep the request small, so no turn is summarized
  // away (docs/design.md §Policy, Standard's recap).
  for (const char* name : kLongest) {
    CAPTURE(name);
    Conversation c = trajectory(name);
    const QuarterCounter counter;
    Profile no_recap = recap_profile(1000);
    no_recap.recap = false;
    Conversation dieted = c;
    const PipelineResult r = prune(dieted, no_recap, counter);
    REQUIRE(r.tokens_after * 3 < r.tokens_before * 2);
    // Every earlier request was sent smaller than the largest one: a threshold
    // a tenth over the last request as sent is over every one of them.
    std::uint64_t largest = 0;
    for (std::size_t end : request_ends(c)) {
      Conversation part = prefix(c, end);
      largest = std::max(largest, prune(part, no_recap, counter).tokens_after);
    }
    const std::uint64_t threshold = largest + largest / 10;
    REQUIRE(threshold < r.tokens_before);
    Conversation kept = c;
    const PipelineResult under = prune(kept, recap_profile(threshold), counter);
    CHECK(std::find(under.fired.begin(), under.fired.end(), std::string_view("recap")) == under.fired.end());
    // Under the largest request as sent, the recap comes.
    Conversation recapped = c;
    const PipelineResult over = prune(recapped, recap_profile(largest / 2), counter);
    CHECK(std::find(over.fired.begin(), over.fired.end(), std::string_view("recap")) != over.fired.end());
  }
}

TEST_CASE("recap: deterministic and within its budget") {
  for (const char* name : kLongest) {
    CAPTURE(name);
    const Conversation c = trajectory(name);
    for (std::uint64_t budget : {500u, 3000u}) {
      Profile p = recap_profile(kThreshold);
      p.recap_budget_tokens = budget;
      const RecapPlan a = plan_of(c, p), b = plan_of(c, p);
      REQUIRE(a.end > 0);
      CHECK(a.text == b.text);
      CHECK(a.start == b.start);
      CHECK(a.end == b.end);
      CHECK(QuarterCounter().count(a.text) <= budget);
      if (budget == 500) CHECK(a.text.find("left out for length") != std::string::npos);
    }
  }
}

TEST_CASE("recap: the paths it lists and the errors it quotes are in the turns it replaces") {
  for (const char* name : kLongest) {
    CAPTURE(name);
    const Conversation c = trajectory(name);
    const RecapPlan plan = plan_of(c, recap_profile(kThreshold));
    REQUIRE(plan.end > 0);
    std::string replaced;
    for (std::uint32_t i = plan.start; i < plan.end; ++i)
      for (const Part& part : c.messages[i].parts) replaced += part.text + "\n";
    std::size_t paths = 0, exits = 0;
    for (std::string_view n : names_in(plan.text)) {
      if (!is_path_name(n) || n.find("...") != std::string_view::npos) continue;
      ++paths;
      CHECK_MESSAGE(replaced.find(n) != std::string::npos, n);
    }
    for (std::size_t at = plan.text.find("(exit "); at != std::string::npos; at = plan.text.find("(exit ", at + 1))
      ++exits;
    CHECK(paths > 5);
    CHECK(exits > 5);
  }
}

TEST_CASE("recap: names what was asked, concluded, read, written, run and failed") {
  Conversation c;
  c.messages.push_back(system_msg("You are an agent."));
  c.messages.push_back(user_msg("Fix the crash in src/parser.py"));
  c.messages.push_back(assistant_call("c1", R"({"file_path":"src/parser.py"})", "Reading the parser.", "Read"));
  c.messages.push_back(tool_msg("c1", std::string(4000, 'x') + "\n"));
  c.messages.push_back(
      assistant_call("c2", R"({"command":"python -m pytest tests/test_parser.py"})", "Running the tests.", "Bash"));
  c.messages.push_back(tool_msg("c2",
                                "collected 3 items\nE   KeyError: 'token'\nFAILED tests/test_parser.py::test_a\n"
                                "Process exited with code 1\n" +
                                    std::string(4000, 'y')));
  c.messages.push_back(user_msg("Also keep the old API working."));
  c.messages.push_back(assistant_call("c3", R"({"file_path":"src/parser.py","old_string":"a","new_string":"b"})",
                                      "The KeyError comes from the missing default; patching it.", "Edit"));
  c.messages.push_back(tool_msg("c3", "ok"));
  for (int k = 0; k < 12; ++k) {
    const std::string id = "s" + std::to_string(k);
    c.messages.push_back(assistant_call(id, R"({"command":"ls"})", "step " + std::to_string(k), "Bash"));
    c.messages.push_back(tool_msg(id, std::string(3000, 'z')));
  }
  Profile p = recap_profile(1000);
  p.frontier_step_turns = 4;
  p.cache_write_price = 0;
  const RecapPlan plan = plan_of(c, p);
  REQUIRE(plan.end > 0);
  CHECK(plan.start == 2);
  const std::string& t = plan.text;
  INFO(t);
  CHECK(t.find("read: src/parser.py") != std::string::npos);
  CHECK(t.find("wrote: src/parser.py") != std::string::npos);
  CHECK(t.find("`python -m pytest tests/test_parser.py` (exit 1)") != std::string::npos);
  CHECK(t.find("E KeyError: 'token'") != std::string::npos);
  CHECK(t.find("asked: Also keep the old API working.") != std::string::npos);
  CHECK(t.find("concluded: The KeyError comes from the missing default; patching it.") != std::string::npos);
  CHECK(t.find("Fix the crash") == std::string::npos);  // the task stays verbatim, not recapped
}

TEST_CASE("recap: the same prefix renders the same bytes, and the recap moves only in a few steps") {
  for (const char* name : kLongest) {
    CAPTURE(name);
    const Conversation full = trajectory(name);
    const Profile p = recap_profile(kThreshold);
    std::string last_text;
    std::uint32_t last_end = 0, steps = 0, requests = 0;
    for (std::size_t n : request_ends(full)) {
      const RecapPlan plan = plan_of(prefix(full, n), p);
      if (plan.end == 0) {
        CHECK(last_end == 0);  // once recapped, a longer history stays recapped
        continue;
      }
      ++requests;
      CHECK(plan.end >= last_end);
      CHECK(plan.stepped == (plan.end != last_end));  // what re-anchoring follows
      if (plan.end == last_end) {
        CHECK(plan.text == last_text);  // grown by a turn: the same recap, byte for byte
      } else {
        ++steps;
      }
      last_end = plan.end;
      last_text = plan.text;
    }
    CHECK(requests > 10);
    CHECK(steps >= 1);
    CHECK(steps * 4 < requests);  // large steps, not turn by turn
  }
}

TEST_CASE("recap: a request that would not fit the model's window is recapped below the threshold too") {
  const Conversation c = trajectory("mini-swe-agent-12");
  const QuarterCounter counter;
  const Counted counted = count_tokens(c, counter);
  Profile p = recap_profile(counted.total * 10);
  p.cache_write_price = 100;  // no step would ever pay
  CHECK(plan_of(c, p).end == 0);
  CHECK(plan_of(c, p, counted.total - 1000).end > 0);
}

TEST_CASE("recap: the same bytes at every survival level that does not trim the middle") {
  Conversation diet = trajectory("mini-swe-agent-11"), window = diet;
  const Profile p = recap_profile(kThreshold);
  const QuarterCounter counter;
  const Counted counted = count_tokens(diet, counter);
  run_pipeline(diet, counted, Decision{Mode::Standard, {&p, true, Level::Standard}, {}}, counter);
  run_pipeline(window, counted, Decision{Mode::Survival, {&p, true, Level::Window}, {}}, counter);
  auto recap_of = [](const Conversation& c) {
    for (const std::string& m : render(c))
      if (m.find(kRecapMarker) != std::string::npos) return m;
    return std::string();
  };
  CHECK(!recap_of(diet).empty());
  CHECK(recap_of(diet) == recap_of(window));
}

TEST_CASE("recap: a summary found for the prefix hash is used, else the extractive lines; the bytes stay put") {
  const Conversation full = trajectory("mini-swe-agent-11");
  const Profile p = recap_profile(kThreshold);
  const QuarterCounter counter;
  auto run = [&](const Conversation& sent, const RecapSummaries* summaries, PipelineResult* out = nullptr) {
    Conversation c = sent;
    Decision d{Mode::Standard, {&p, true, Level::Standard}, {}};
    d.settings.recap_summaries = summaries;
    const PipelineResult r = run_pipeline(c, count_tokens(c, counter), d, counter);
    if (out) *out = r;
    for (const std::string& m : render(c))
      if (m.find(kRecapMarker) != std::string::npos) return m;
    return std::string();
  };
  // Nothing known: the extractive recap, and the prefix reported missing.
  std::vector<std::uint64_t> asked;
  const RecapSummaries none = [&](std::uint64_t h) -> std::optional<std::string> {
    asked.push_back(h);
    return std::nullopt;
  };
  PipelineResult r;
  const std::string extractive = run(full, &none, &r);
  REQUIRE(!extractive.empty());
  CHECK(extractive == run(full, nullptr));
  CHECK(r.recap_summary_missing);
  REQUIRE(asked.size() == 1);
  CHECK(r.recap_prefix_hash == asked[0]);
  CHECK(r.recap_extractive.starts_with(kRecapMarker));
  CHECK(extractive.find(r.recap_extractive.substr(r.recap_extractive.find('\n') + 1)) != std::string::npos);

  // A summary for that hash: the header, then the summary.
  const RecapSummaries known = [&](std::uint64_t h) -> std::optional<std::string> {
    if (h == asked[0]) return std::string("The agent fixed the parser; tests pass.");
    return std::nullopt;
  };
  const std::string summarized = run(full, &known, &r);
  CHECK(!r.recap_summary_missing);
  CHECK(r.recap_extractive.empty());
  CHECK(summarized.find("The agent fixed the parser; tests pass.") != std::string::npos);
  CHECK(summarized.find(kRecapMarker) != std::string::npos);
  CHECK(summarized.find("turn 2: ") == std::string::npos);
  CHECK(summarized == run(full, &known));  // byte for byte on the next request

  // A failure cached as "": the extractive recap, not missing (nobody asks again).
  const RecapSummaries failed = [](std::uint64_t) -> std::optional<std::string> { return std::string(); };
  CHECK(run(full, &failed, &r) == extractive);
  CHECK(!r.recap_summary_missing);

  // The key is the prefix: the same cut in a history one turn longer has the
  // same hash; another history has another.
  const std::size_t n = full.messages.size();
  Conversation shorter = prefix(full, n - 2);
  PipelineResult rs;
  run(shorter, &none, &rs);
  REQUIRE(rs.recap_prefix_hash != 0);
  REQUIRE(plan_of(shorter, p).end == plan_of(full, p).end);  // the same cut
  CHECK(rs.recap_prefix_hash == asked[0]);
  CHECK(recap_prefix_hash(full, 5) != recap_prefix_hash(full, 6));
  CHECK(recap_prefix_hash(full, 5) == recap_prefix_hash(prefix(full, 7), 5));
}

TEST_CASE(
    "recap: its header names the span it replaced (recall), as the client sent it, the same on the next request") {
  Conversation c = trajectory(kLongest[0]);
  const Conversation sent = c;
  const Profile p = recap_profile(kThreshold);
  const PipelineResult r = prune(c, p, QuarterCounter{});
  REQUIRE(std::find(r.fired.begin(), r.fired.end(), std::string_view("recap")) != r.fired.end());
  const Message* note = nullptr;
  for (const Message& m : c.messages)
    if (!m.removed && !m.parts.empty() && m.parts[0].text.rfind(kRecapMarker, 0) == 0) note = &m;
  REQUIRE(note != nullptr);
  const std::string& t = note->parts[0].text;
  std::smatch m;
  REQUIRE(std::regex_search(t, m, std::regex(R"(details\. (t[0-9a-f]{8})\]\n)")));
  const std::string handle = m[1];
  const std::string* span = nullptr;
  for (const auto& h : r.hidden)
    if (recall_handle(*h) == handle) span = h.get();
  REQUIRE(span != nullptr);
  // Every replaced tool output as sent, whole, under its call id.
  std::size_t outputs = 0;
  // The range its header names (the pipeline weighs the recap on the
  // requests as sent, so plan_of(), on the client's history, may reach further).
  REQUIRE(std::regex_search(t, m, std::regex(R"(\(messages ([0-9]+)-([0-9]+)\))")));
  const std::size_t first = std::stoul(m[1]) - 1, end = std::stoul(m[2]);
  for (std::size_t i = first; i < end; ++i)
    for (const Part& part : sent.messages[i].parts)
      if (part.kind == PartKind::ToolResult) {
        CHECK(span->find("[result " + part.id + "]\n" + part.text) != std::string::npos);
        ++outputs;
      }
  CHECK(outputs > 0);
  // Without recall: no handle, nothing kept.
  Profile off = p;
  off.recall = false;
  Conversation d = sent;
  const PipelineResult r2 = prune(d, off, QuarterCounter{});
  CHECK(r2.hidden.empty());
  for (const Message& dm : d.messages)
    if (!dm.removed && !dm.parts.empty() && dm.parts[0].text.rfind(kRecapMarker, 0) == 0)
      CHECK(dm.parts[0].text.find("details.]\n") != std::string::npos);
}
