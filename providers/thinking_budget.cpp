#include "providers/thinking_budget.hpp"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <optional>

namespace td::providers {
namespace {

// The effort scale OpenAI's reasoning effort and Gemini 3's thinking level
// share, lowest first (Gemini uses four of its names).
constexpr std::string_view kScale[] = {"none", "minimal", "low", "medium", "high", "xhigh"};
constexpr int kScaleSize = static_cast<int>(std::size(kScale));

using Accepted = std::uint8_t;  // bit i: kScale[i] accepted

constexpr int scale_index(std::string_view v) {
  for (int i = 0; i < kScaleSize; ++i)
    if (kScale[i] == v) return i;
  return -1;
}

constexpr Accepted accept(std::initializer_list<std::string_view> names) {
  Accepted a = 0;
  for (std::string_view n : names) a = static_cast<Accepted>(a | 1u << scale_index(n));
  return a;
}

// The thinkingBudget values a model takes: 0 (off) when off_allowed, or
// lowest_on..highest.
struct BudgetRange {
  std::int64_t lowest_on = 1;
  std::int64_t highest = std::numeric_limits<std::int64_t>::max();
  bool off_allowed = false;
};

// Which setting a model family thinks with.
enum class Knob : std::uint8_t { effort, level, budget };

struct Family {
  Api api;                  // openai_chat rows serve both OpenAI formats
  std::string_view prefix;  // the model name, or the start of it (see matches())
  Knob knob;
  Accepted accepted = 0;    // effort, level: the values the family takes
  BudgetRange budget = {};  // budget: its range
};

// The families whose accepted values are documented (docs/design.md
// §Thinking budget gives the source of each row). First match wins, so a
// narrower name comes before its prefix. A model matching no row is left as
// sent.
constexpr Family kFamilies[] = {
    {Api::openai_chat, "gpt-5-pro", Knob::effort, accept({"high"})},
    {Api::openai_chat, "gpt-5.1", Knob::effort, accept({"none", "low", "medium", "high"})},
    {Api::openai_chat, "gpt-5", Knob::effort, accept({"minimal", "low", "medium", "high"})},
    {Api::openai_chat, "o1", Knob::effort, accept({"low", "medium", "high"})},
    {Api::openai_chat, "o3", Knob::effort, accept({"low", "medium", "high"})},
    {Api::openai_chat, "o4", Knob::effort, accept({"low", "medium", "high"})},
    {Api::gemini, "gemini-3-pro", Knob::level, accept({"low", "high"})},
    {Api::gemini, "gemini-3-flash", Knob::level, accept({"minimal", "low", "medium", "high"})},
    // Other Gemini 3 models (3.x included): the levels every documented one takes.
    {Api::gemini, "gemini-3-", Knob::level, accept({"low", "high"})},
    {Api::gemini, "gemini-3.", Knob::level, accept({"low", "high"})},
    {Api::gemini, "gemini-2.5-pro", Knob::budget, 0, {128, 32768, false}},
    {Api::gemini, "gemini-2.5-flash-lite", Knob::budget, 0, {512, 24576, true}},
    {Api::gemini, "gemini-2.5-flash", Knob::budget, 0, {1, 24576, true}},
};

// `model` is the family `prefix` or a variant of it: the prefix followed by
// '-' (gpt-5-mini, o3-2025-04-16) unless it ends in a separator itself. So
// "gpt-5" does not take gpt-5.1, whose values differ.
bool matches(std::string_view model, std::string_view prefix) {
  if (!model.starts_with(prefix)) return false;
  if (prefix.ends_with('-') || prefix.ends_with('.')) return model.size() > prefix.size();
  return model.size() == prefix.size() || model[prefix.size()] == '-';
}

const Family* family_of(Api api, std::string_view model) {
  const Api table = api == Api::openai_responses ? Api::openai_chat : api;
  for (const Family& f : kFamilies)
    if (f.api == table && matches(model, f.prefix)) return &f;
  return nullptr;
}

char lower_ascii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
char upper_ascii(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

// Gemini reads its enum values in either case ("LOW", "low"); a value written
// back keeps the case the client used.
std::string folded(std::string_view v) {
  std::string out(v);
  std::transform(out.begin(), out.end(), out.begin(), lower_ascii);
  return out;
}

std::string spelled_like(std::string_view value, std::string_view client) {
  std::string out(value);
  if (std::any_of(client.begin(), client.end(), [](char c) { return c >= 'A' && c <= 'Z'; }))
    std::transform(out.begin(), out.end(), out.begin(), upper_ascii);
  return out;
}

ThinkingChange unchanged(std::string reason) { return {GenerationSettings{}, std::move(reason)}; }

std::string quoted(std::string_view model) { return "model \"" + std::string(model) + "\""; }

// An effort or level `current` lowered to `target`, or, when the family does
// not take `target`, to the lowest value it takes between the two. Never
// below the target, never up, and a value off the scale is left alone.
ThinkingChange lower_named(Setting s, std::string_view current, const Family& family, std::string_view target,
                           bool any_case, std::string_view model) {
  const std::string setting(name(s));
  const int to = scale_index(target);
  if (to < 0) return unchanged("target effort \"" + std::string(target) + "\" is not on the scale; left as sent");
  const int from = scale_index(any_case ? std::string_view(folded(current)) : current);
  if (from < 0) return unchanged(setting + " \"" + std::string(current) + "\" is not on the scale; left as sent");
  if (from <= to)
    return unchanged(setting + " " + std::string(current) + " is already at or below " + std::string(target));
  for (int i = to; i < from; ++i) {
    if (!(family.accepted & 1u << i)) continue;
    std::string value = any_case ? spelled_like(kScale[i], current) : std::string(kScale[i]);
    ThinkingChange c{{}, setting + " " + std::string(current) + " -> " + value + " (" + quoted(model) + ")"};
    if (s == Setting::reasoning_effort) c.want.reasoning_effort = std::move(value);
    else c.want.thinking_level = std::move(value);
    return c;
  }
  return unchanged(quoted(model) + " takes nothing between " + std::string(target) + " and " +
                   std::string(current) + "; left as sent");
}

// A thinking budget capped at `cap` moved into `range`; -1 (dynamic, where
// `dynamic` counts it) is above any cap. Never raised.
ThinkingChange cap_budget(std::int64_t current, std::int64_t cap, const BudgetRange& range, bool dynamic,
                          std::string_view model) {
  if (cap < 0) return unchanged("budget cap below 0; left as sent");
  std::int64_t target = std::min(cap, range.highest);
  if (target < range.lowest_on && !(target == 0 && range.off_allowed)) target = range.lowest_on;
  const bool above = current > target || (dynamic && current == -1);
  const std::string now = std::to_string(current);
  if (!above) return unchanged("thinking_budget " + now + " is already at or below " + std::to_string(target));
  ThinkingChange c{{}, "thinking_budget " + now + " -> " + std::to_string(target) + " (" + quoted(model) + ")"};
  c.want.thinking_budget = target;
  return c;
}

ThinkingChange lower_openai(std::string_view model, const GenerationSettings& now, const LowerThinking& limits) {
  if (!now.reasoning_effort) return unchanged("no reasoning effort in the body; none added");
  const Family* f = family_of(Api::openai_chat, model);
  if (!f) return unchanged(quoted(model) + ": its accepted reasoning efforts are not known; left as sent");
  return lower_named(Setting::reasoning_effort, *now.reasoning_effort, *f, limits.effort, false, model);
}

ThinkingChange lower_gemini(std::string_view model, const GenerationSettings& now, const LowerThinking& limits) {
  if (now.thinking_level && now.thinking_budget)
    return unchanged("thinkingLevel and thinkingBudget together (the API refuses such a body); left as sent");
  if (!now.thinking_level && !now.thinking_budget)
    return unchanged("no thinking level or budget in the body; none added");
  const Family* f = family_of(Api::gemini, model);
  if (!f) return unchanged(quoted(model) + ": its thinking settings are not known; left as sent");
  if (f->knob == Knob::level) {
    // Whether Gemini 3 takes a thinkingBudget, and in which range, is not
    // documented: such a body goes as the client sent it.
    if (!now.thinking_level)
      return unchanged(quoted(model) + " thinks by level; its budget range is not known; left as sent");
    return lower_named(Setting::thinking_level, *now.thinking_level, *f, limits.effort, true, model);
  }
  if (!now.thinking_budget)
    return unchanged(quoted(model) + " thinks by budget; its levels are not known; left as sent");
  return cap_budget(*now.thinking_budget, limits.gemini_thinking_budget, f->budget, true, model);
}

ThinkingChange lower_anthropic(std::string_view model, const GenerationSettings& now, const LowerThinking& limits) {
  if (now.thinking_type == "enabled") {
    if (!now.thinking_budget) return unchanged("thinking enabled without budget_tokens; left as sent");
    // The API's minimum manual budget, and the budget stays below max_tokens.
    BudgetRange range{1024, std::numeric_limits<std::int64_t>::max(), false};
    if (now.max_output_tokens) range.highest = *now.max_output_tokens - 1;
    return cap_budget(*now.thinking_budget, limits.anthropic_budget_tokens, range, false, model);
  }
  if (now.thinking_type == "adaptive") {
    if (!now.reasoning_effort) return unchanged("adaptive thinking without an effort; none added");
    // Every model with adaptive thinking takes low, medium and high (max
    // and xhigh only some), so lowering within those is always accepted.
    static constexpr Family kAdaptive{Api::anthropic, "", Knob::effort, accept({"low", "medium", "high"})};
    const std::string& effort = *now.reasoning_effort;
    if (effort != "medium" && effort != "high" && effort != "max" && effort != "xhigh")
      return unchanged("output_config.effort \"" + effort + "\" is not one adaptive thinking lowers; left as sent");
    if (scale_index(limits.effort) > scale_index("high") || scale_index(limits.effort) < scale_index("low"))
      return unchanged("target effort \"" + limits.effort + "\" is not one adaptive thinking takes; left as sent");
    if (effort == "max") {  // above every value of the scale, where "max" is not
      ThinkingChange c{{}, "output_config.effort max -> " + limits.effort + " (" + quoted(model) + ")"};
      c.want.reasoning_effort = limits.effort;
      return c;
    }
    return lower_named(Setting::reasoning_effort, effort, kAdaptive, limits.effort, false, model);
  }
  return unchanged("thinking not enabled; nothing to lower");
}

SettingsWrite nothing_written() {
  SettingsWrite w;
  w.ok = true;
  return w;
}

}  // namespace

ThinkingChange lower_thinking(Api api, std::string_view model, const GenerationSettings& current,
                              const LowerThinking& limits) {
  switch (api) {
    case Api::openai_chat:
    case Api::openai_responses: return lower_openai(model, current, limits);
    case Api::gemini: return lower_gemini(model, current, limits);
    case Api::anthropic: return lower_anthropic(model, current, limits);
  }
  return unchanged("unknown format");
}

SettingsWrite apply_thinking_change(Api api, std::string_view body, const ThinkingChange& change) {
  if (change.empty()) return nothing_written();
  return write_generation_settings(api, body, change.want);
}

SettingsWrite lower_thinking_in(const ParsedRequest& request, const LowerThinking& limits, ThinkingChange* change) {
  ThinkingChange c = lower_thinking(request.format, request.model, read_generation_settings(request).settings, limits);
  SettingsWrite w = c.empty() ? nothing_written() : write_generation_settings(request, c.want);
  if (change) *change = std::move(c);
  return w;
}

}  // namespace td::providers
