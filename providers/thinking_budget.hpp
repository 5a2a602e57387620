// Lowering a request's thinking when the TPM runway is short (F17): from the
// model and the generation settings its body carries, the settings to write
// instead, each one a value that model accepts. When to lower is the
// policy's; this is the provider-specific part, pure (no clock, no config).
//
// The rules (docs/design.md §Thinking budget, with the model table's source):
//   - OpenAI reasoning_effort (chat) / reasoning.effort (Responses) and
//     Gemini 3's thinkingLevel go down to the target (`low`), or, where the
//     model does not accept it, to the lowest accepted value above it;
//   - Gemini 2.5's thinkingBudget and Anthropic's manual thinking.budget_tokens
//     are capped, within the model's range (Gemini: dynamic counts as above
//     the cap; Anthropic: not below the API's minimum, below max_tokens);
//   - Anthropic adaptive thinking's output_config.effort is left as sent, and
//     so is any model or value not in the table: their accepted values are
//     not documented in the reference the table comes from.
// Three guarantees the caller's hysteresis relies on: a field the body does
// not carry is never added; a value is never raised (nor lowered below the
// target); lowering a lowered body changes nothing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "providers/api.hpp"
#include "providers/generation_settings.hpp"
#include "providers/request.hpp"

namespace td::providers {

// How far to lower.
struct LowerThinking {
  // OpenAI reasoning effort and Gemini 3 thinking level: one of none,
  // minimal, low, medium, high, xhigh.
  std::string effort = "low";
  // Cap on Gemini 2.5's thinkingBudget (>= 0; clamped into each model's range).
  std::int64_t gemini_thinking_budget = 8192;
  // Cap on Anthropic's thinking.budget_tokens (raised to the API's minimum).
  std::int64_t anthropic_budget_tokens = 8192;
};

struct ThinkingChange {
  // Only the fields that change; all empty when nothing does.
  GenerationSettings want;
  // What was lowered ("reasoning_effort high -> low"), or why nothing was.
  std::string reason;

  bool empty() const { return want == GenerationSettings{}; }
};

// The thinking settings to write for a request of format `api` to `model`
// (as the body or, for Gemini, the path names it) whose body carries
// `current` (read_generation_settings()).
ThinkingChange lower_thinking(Api api, std::string_view model, const GenerationSettings& current,
                              const LowerThinking& limits = {});

// Writes `change` into `body` (write_generation_settings(); nothing to
// write: ok and unchanged).
SettingsWrite apply_thinking_change(Api api, std::string_view body, const ThinkingChange& change);

// Both steps on a parsed request (its bytes still alive): reads its settings,
// lowers them for its model, writes the change. `change` receives the
// decision (and its reason) when not null.
SettingsWrite lower_thinking_in(const ParsedRequest& request, const LowerThinking& limits = {},
                                ThinkingChange* change = nullptr);

// The same from the request's own parse, as edits not yet applied
// (generation_settings_edits()): what the diet splices in with its message
// edits, so a request's body is parsed once (docs/design.md §Thinking budget).
struct ThinkingEdits {
  ThinkingChange change;
  SettingsEdits edits;  // ok with no edits: nothing to write
};
ThinkingEdits lower_thinking_edits(const ParsedRequest& request, const LowerThinking& limits = {});

}  // namespace td::providers
