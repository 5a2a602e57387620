// Lowering thinking per model: a table of (format, model, settings the body
// carries -> the settings to write), written out from the rules in
// docs/design.md §Thinking budget; then, on random settings, the guarantees
// the caller relies on: nothing added, nothing raised, a second lowering
// changes nothing.
#include <doctest/doctest.h>

#include <cctype>
#include <limits>
#include <random>

#include "providers/thinking_budget.hpp"
#include "thinking_settings.hpp"

using namespace td::providers;
using namespace td::providers::thinking_test;

namespace {

GenerationSettings type(const char* t, const char* effort_value = nullptr) {
  GenerationSettings g;
  g.thinking_type = t;
  if (effort_value) g.reasoning_effort = effort_value;
  return g;
}
const GenerationSettings none{};

LowerThinking with_effort(const char* e) {
  LowerThinking l;
  l.effort = e;
  return l;
}
LowerThinking gemini_cap(std::int64_t cap) {
  LowerThinking l;
  l.gemini_thinking_budget = cap;
  return l;
}
LowerThinking effort_target(const char* effort_value) {
  LowerThinking l;
  l.effort = effort_value;
  return l;
}

LowerThinking anthropic_cap(std::int64_t cap) {
  LowerThinking l;
  l.anthropic_budget_tokens = cap;
  return l;
}

// `current` with `change` applied.
GenerationSettings merged(GenerationSettings current, const GenerationSettings& change) {
  if (change.reasoning_effort) current.reasoning_effort = change.reasoning_effort;
  if (change.thinking_type) current.thinking_type = change.thinking_type;
  if (change.thinking_budget) current.thinking_budget = change.thinking_budget;
  if (change.thinking_level) current.thinking_level = change.thinking_level;
  if (change.include_thoughts) current.include_thoughts = change.include_thoughts;
  if (change.max_output_tokens) current.max_output_tokens = change.max_output_tokens;
  return current;
}

struct Case {
  Api api;
  const char* model;
  GenerationSettings current;
  GenerationSettings want;  // empty: nothing changes
  LowerThinking limits = {};
};

}  // namespace

TEST_CASE("thinking budget: the settings to write, per format and model") {
  const Api chat = Api::openai_chat, responses = Api::openai_responses, gemini = Api::gemini,
            anthropic = Api::anthropic;
  const Case cases[] = {
      // OpenAI: lowered to low within what the model takes.
      {chat, "gpt-5.1", effort("high"), effort("low")},
      {chat, "gpt-5.1", effort("medium"), effort("low")},
      {chat, "gpt-5.1-2025-11-13", effort("high"), effort("low")},
      {chat, "gpt-5.1-codex-max", effort("xhigh"), effort("low")},
      {responses, "gpt-5.1", effort("high"), effort("low")},
      {chat, "gpt-5.1", effort("low"), none},
      {chat, "gpt-5.1", effort("none"), none},
      {chat, "gpt-5.1", effort("minimal"), none},  // lower already: never raised
      {chat, "gpt-5", effort("high"), effort("low")},
      {chat, "gpt-5-mini", effort("medium"), effort("low")},
      {responses, "gpt-5-nano", effort("minimal"), none},
      {chat, "gpt-5-pro", effort("high"), none},  // takes only high
      {responses, "gpt-5-pro-2025-10-06", effort("high"), none},
      {chat, "o3", effort("high"), effort("low")},
      {chat, "o3-mini", effort("medium"), effort("low")},
      {responses, "o4-mini", effort("high"), effort("low")},
      {chat, "o1", effort("low"), none},
      // Models and values not in the table: left as sent.
      {chat, "gpt-5.2", effort("high"), none},
      {chat, "gpt-4.1", effort("high"), none},
      {chat, "deepseek-reasoner", effort("high"), none},
      {chat, "gemini-2.5-flash", effort("high"), none},  // Gemini's OpenAI-compatible route
      {chat, "gpt-5.1", effort("HIGH"), none},
      {chat, "gpt-5.1", effort("max"), none},
      {chat, "gpt-5.1", none, none},  // never added
      // Another target: the nearest value the model takes, never below it.
      {chat, "gpt-5.1", effort("high"), effort("low"), with_effort("minimal")},
      {chat, "gpt-5", effort("high"), effort("minimal"), with_effort("minimal")},
      {chat, "gpt-5.1", effort("high"), effort("none"), with_effort("none")},
      {chat, "gpt-5", effort("high"), effort("minimal"), with_effort("none")},
      {chat, "o3", effort("high"), effort("medium"), with_effort("medium")},
      {chat, "o3", effort("low"), none, with_effort("medium")},
      {chat, "gpt-5.1", effort("high"), none, with_effort("lowest")},

      // Gemini 3: thinkingLevel low, in the client's case.
      {gemini, "gemini-3-pro-preview", level("high"), level("low")},
      {gemini, "gemini-3-pro-preview", level("HIGH"), level("LOW")},
      {gemini, "gemini-3-pro-preview", level("low"), none},
      {gemini, "gemini-3-pro-preview", level("LOW"), none},
      {gemini, "gemini-3-flash-preview", level("medium"), level("low")},
      {gemini, "gemini-3-flash-preview", level("minimal"), none},
      {gemini, "gemini-3.1-pro-preview", level("high"), level("low")},
      {gemini, "gemini-3-flash-preview", level("high"), level("minimal"), with_effort("minimal")},
      {gemini, "gemini-3-pro-preview", level("high"), level("low"), with_effort("minimal")},
      {gemini, "gemini-3-pro-preview", level("high"), none, with_effort("medium")},  // Pro: low or high
      {gemini, "gemini-3-flash-preview", level("HIGH"), level("MEDIUM"), with_effort("medium")},
      {gemini, "gemini-3-pro-preview", level("THINKING_LEVEL_UNSPECIFIED"), none},
      {gemini, "gemini-3-pro-preview", budget(4096), none},  // its budget range is not documented
      // Gemini 2.5: thinkingBudget capped at 8192 within the model's range.
      {gemini, "gemini-2.5-pro", budget(-1), budget(8192)},
      {gemini, "gemini-2.5-pro", budget(32768), budget(8192)},
      {gemini, "gemini-2.5-pro", budget(8192), none},
      {gemini, "gemini-2.5-pro", budget(128), none},
      {gemini, "gemini-2.5-pro", budget(24576), budget(128), gemini_cap(0)},  // cannot be turned off
      {gemini, "gemini-2.5-pro", budget(24576), budget(128), gemini_cap(100)},
      {gemini, "gemini-2.5-pro", budget(128), none, gemini_cap(0)},
      {gemini, "gemini-2.5-flash", budget(-1), budget(8192)},
      {gemini, "gemini-2.5-flash", budget(24576), budget(8192)},
      {gemini, "gemini-2.5-flash", budget(0), none},
      {gemini, "gemini-2.5-flash", budget(4096), budget(0), gemini_cap(0)},
      {gemini, "gemini-2.5-flash", budget(-1), budget(24576), gemini_cap(30000)},
      {gemini, "gemini-2.5-flash", budget(20000), none, gemini_cap(30000)},
      {gemini, "gemini-2.5-flash-preview-09-2025", budget(-1), budget(8192)},
      {gemini, "gemini-2.5-flash-lite", budget(-1), budget(8192)},
      {gemini, "gemini-2.5-flash-lite", budget(1024), budget(512), gemini_cap(300)},
      {gemini, "gemini-2.5-flash-lite", budget(1024), budget(0), gemini_cap(0)},
      {gemini, "gemini-2.5-flash-lite", budget(0), none, gemini_cap(300)},
      {gemini, "gemini-2.5-flash", budget(-1), none, gemini_cap(-5)},
      {gemini, "gemini-2.5-flash", level("high"), none},  // 2.5's levels are not documented
      {gemini, "gemini-2.0-flash", budget(-1), none},
      {gemini, "gemini-flash-latest", budget(-1), none},
      {gemini, "gemini-2.5-flash", none, none},
      [] {
        Case c{Api::gemini, "gemini-2.5-flash", budget(-1), none};
        c.current.thinking_level = "high";  // both: the API answers 400, nothing to fix here
        return c;
      }(),
      [] {
        Case c{Api::gemini, "gemini-3-pro-preview", none, none};
        c.current.include_thoughts = true;  // thoughts asked for, no level: none added
        return c;
      }(),

      // Anthropic manual thinking: budget_tokens capped, at least 1024, below max_tokens.
      {anthropic, "claude-sonnet-4-5", enabled(16000, 32000), budget(8192)},
      {anthropic, "claude-sonnet-4-5", enabled(16000, 0), budget(8192)},
      {anthropic, "claude-sonnet-4-5", enabled(8192, 32000), none},
      {anthropic, "claude-sonnet-4-5", enabled(2048, 4096), none},
      {anthropic, "claude-opus-4-1", enabled(16000, 4096), budget(4095)},
      {anthropic, "claude-opus-4-1", enabled(16000, 1000), budget(1024)},
      {anthropic, "claude-opus-4-1", enabled(1024, 1000), none},
      {anthropic, "claude-sonnet-4-5", enabled(16000, 32000), budget(1024), anthropic_cap(500)},
      {anthropic, "claude-sonnet-4-5", type("enabled"), none},  // no budget: not ours to fix
      // Adaptive thinking: output_config.effort lowered within low, medium,
      // high (every adaptive model takes them); max (Opus) goes to the target.
      {anthropic, "claude-opus-4-6", type("adaptive", "high"), effort("low")},
      {anthropic, "claude-sonnet-4-6", type("adaptive", "medium"), effort("low")},
      {anthropic, "claude-opus-4-6", type("adaptive", "max"), effort("low")},
      {anthropic, "claude-opus-4-6", type("adaptive", "low"), none},
      {anthropic, "claude-opus-4-6", type("adaptive", "turbo"), none},  // off the scale: left
      {anthropic, "claude-opus-4-6", type("adaptive", "high"), effort("medium"), effort_target("medium")},
      {anthropic, "claude-opus-4-6", type("adaptive", "high"), none, effort_target("minimal")},
      {anthropic, "claude-opus-4-6", type("adaptive"), none},
      {anthropic, "claude-sonnet-4-5", type("disabled"), none},
      {anthropic, "claude-opus-4-5", effort("high"), none},
      {anthropic, "claude-sonnet-4-5", none, none},
  };
  for (const Case& c : cases) {
    const ThinkingChange change = lower_thinking(c.api, c.model, c.current, c.limits);
    INFO(name(c.api) << " " << c.model << ": " << change.reason);
    CHECK(change.want == c.want);
    CHECK(change.empty() == (c.want == GenerationSettings{}));
    CHECK_FALSE(change.reason.empty());
    // Lowering what was lowered changes nothing.
    CHECK(lower_thinking(c.api, c.model, merged(c.current, change.want), c.limits).empty());
  }
}

namespace {

constexpr const char* kEfforts[] = {"none", "minimal", "low", "medium", "high", "xhigh", "max", "HIGH", "Low"};

int rank(const std::optional<std::string>& v) {
  static const char* scale[] = {"none", "minimal", "low", "medium", "high", "xhigh"};
  if (!v) return -1;
  std::string folded = *v;
  for (char& c : folded) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (int i = 0; i < 6; ++i)
    if (folded == scale[i]) return i;
  return 99;
}

// A budget's size, dynamic (-1) above any number.
std::int64_t size(std::int64_t b) { return b == -1 ? std::numeric_limits<std::int64_t>::max() : b; }

}  // namespace

TEST_CASE("thinking budget: never added, never raised, a second lowering changes nothing") {
  const char* models[] = {"gpt-5.1",
                          "gpt-5",
                          "gpt-5-pro",
                          "o3-mini",
                          "gpt-4.1",
                          "gemini-3-pro-preview",
                          "gemini-3-flash-preview",
                          "gemini-3.1-pro",
                          "gemini-2.5-pro",
                          "gemini-2.5-flash",
                          "gemini-2.5-flash-lite",
                          "claude-sonnet-4-5",
                          "claude-opus-4-6",
                          ""};
  const Api apis[] = {Api::openai_chat, Api::openai_responses, Api::gemini, Api::anthropic};
  const std::int64_t budgets[] = {-1, 0, 1, 128, 511, 512, 1023, 1024, 4096, 8191, 8192, 8193, 24576, 32768, 100000};
  const char* limits_effort[] = {"low", "minimal", "none", "medium", "high"};
  const std::int64_t caps[] = {0, 100, 1024, 8192, 40000};
  std::mt19937 rng(20250916);
  auto pick = [&](auto& array) -> decltype(auto) { return array[rng() % std::size(array)]; };
  std::size_t lowered = 0;
  for (int i = 0; i < 20000; ++i) {
    const Api api = pick(apis);
    const char* model = pick(models);
    GenerationSettings now;
    if (rng() % 2) now.reasoning_effort = pick(kEfforts);
    if (rng() % 2) now.thinking_level = pick(kEfforts);
    if (rng() % 2) now.thinking_budget = pick(budgets);
    if (rng() % 3) now.thinking_type = rng() % 2 ? "enabled" : (rng() % 2 ? "adaptive" : "disabled");
    if (rng() % 2) now.max_output_tokens = pick(budgets) + 1;
    if (rng() % 4 == 0) now.include_thoughts = true;
    LowerThinking limits;
    limits.effort = pick(limits_effort);
    limits.gemini_thinking_budget = pick(caps);
    limits.anthropic_budget_tokens = pick(caps);

    const ThinkingChange c = lower_thinking(api, model, now, limits);
    INFO(name(api) << " " << model << ": " << c.reason);
    CHECK_FALSE(c.reason.empty());
    if (c.empty()) continue;
    ++lowered;
    // Only thinking fields the body carries, and each one lower.
    CHECK_FALSE(c.want.thinking_type);
    CHECK_FALSE(c.want.include_thoughts);
    CHECK_FALSE(c.want.max_output_tokens);
    if (c.want.reasoning_effort) {
      REQUIRE(now.reasoning_effort);
      CHECK(rank(c.want.reasoning_effort) < rank(now.reasoning_effort));
      CHECK(rank(c.want.reasoning_effort) >= rank(limits.effort));
    }
    if (c.want.thinking_level) {
      REQUIRE(now.thinking_level);
      CHECK(rank(c.want.thinking_level) < rank(now.thinking_level));
      CHECK(rank(c.want.thinking_level) >= rank(limits.effort));
    }
    if (c.want.thinking_budget) {
      REQUIRE(now.thinking_budget);
      CHECK(size(*c.want.thinking_budget) < size(*now.thinking_budget));
      CHECK(*c.want.thinking_budget >= 0);
      if (api == Api::anthropic) CHECK(*c.want.thinking_budget >= 1024);
    }
    CHECK(lower_thinking(api, model, merged(now, c.want), limits).empty());
  }
  CHECK(lowered > 500);
}
