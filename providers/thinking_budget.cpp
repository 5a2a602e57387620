#include "providers/thinking_budget.hpp"

#include <algorithm>
#include <optional>

#include "providers/format_adapter.hpp"
#include "providers/thinking_rules.hpp"

namespace td::providers {
namespace thinking {
namespace {

bool matches(std::string_view model, std::string_view prefix) {
  if (!model.starts_with(prefix)) return false;
  if (prefix.ends_with('-') || prefix.ends_with('.')) return model.size() > prefix.size();
  return model.size() == prefix.size() || model[prefix.size()] == '-';
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

}  // namespace

const Family* family_of(std::span<const Family> table, std::string_view model) {
  for (const Family& f : table)
    if (matches(model, f.prefix)) return &f;
  return nullptr;
}

ThinkingChange unchanged(std::string reason) { return {GenerationSettings{}, std::move(reason)}; }

std::string quoted(std::string_view model) { return "model \"" + std::string(model) + "\""; }

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
    if (s == Setting::reasoning_effort)
      c.want.reasoning_effort = std::move(value);
    else
      c.want.thinking_level = std::move(value);
    return c;
  }
  return unchanged(quoted(model) + " takes nothing between " + std::string(target) + " and " + std::string(current) +
                   "; left as sent");
}

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

}  // namespace thinking

namespace {

SettingsWrite nothing_written() {
  SettingsWrite w;
  w.ok = true;
  return w;
}

}  // namespace

ThinkingChange lower_thinking(Api api, std::string_view model, const GenerationSettings& current,
                              const LowerThinking& limits) {
  return adapter(api).lower_thinking(model, current, limits);
}

SettingsWrite apply_thinking_change(Api api, std::string_view body, const ThinkingChange& change) {
  if (change.empty()) return nothing_written();
  return write_generation_settings(api, body, change.want);
}

ThinkingEdits lower_thinking_edits(const ParsedRequest& request, const LowerThinking& limits) {
  ThinkingEdits out;
  out.change = lower_thinking(request.format, request.model, read_generation_settings(request).settings, limits);
  out.edits = out.change.empty() ? SettingsEdits{true, {}, {}} : generation_settings_edits(request, out.change.want);
  return out;
}

SettingsWrite lower_thinking_in(const ParsedRequest& request, const LowerThinking& limits, ThinkingChange* change) {
  ThinkingChange c = lower_thinking(request.format, request.model, read_generation_settings(request).settings, limits);
  SettingsWrite w = c.empty() ? nothing_written() : write_generation_settings(request, c.want);
  if (change) *change = std::move(c);
  return w;
}

}  // namespace td::providers
