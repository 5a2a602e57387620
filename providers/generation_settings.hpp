// Generation settings (thinking, reasoning effort, output cap) of a request
// body, read and written back like the messages are.
//
// read_generation_settings() gives the provider-neutral view of the fields
// below; write_generation_settings() takes a body of the format (the client's
// or the one providers::write() produced) and the wanted values, and returns
// the body with only those fields' bytes changed: a present value's span is
// replaced, an absent member is inserted after the last member of its object
// (the object, e.g. generationConfig, created when it is missing or null).
// Every other byte is copied as it came: the body is parsed with the
// span-keeping json::Document, and only spans are spliced.
//
// Wire fields per format (a dash: the format has none; writing it fails):
//
//   setting           openai_chat             openai_responses   anthropic               gemini (generationConfig.)
//   reasoning_effort  reasoning_effort        reasoning.effort   output_config.effort    -
//   thinking_type     -                       -                  thinking.type           -
//   thinking_budget   -                       -                  thinking.budget_tokens  thinkingConfig.thinkingBudget
//   thinking_level    -                       -                  -                       thinkingConfig.thinkingLevel
//   include_thoughts  -                       -                  -                       thinkingConfig.includeThoughts
//   max_output_tokens max_completion_tokens   max_output_tokens  max_tokens              maxOutputTokens
//                     (or max_tokens)
//
// A field already at the wanted value is not written (and the rules below
// apply only to what changes), so a body that already says what the caller
// wants goes out as it came. Rules the writer keeps so it never sends what
// the provider rejects for shape reasons (model-specific value sets are the
// caller's to respect):
//   - OpenAI chat: the output cap is written to whichever of
//     max_completion_tokens / max_tokens the body uses (both when it has
//     both: the server honours one of them); with neither, to
//     max_completion_tokens, the current name. Reading prefers
//     max_completion_tokens.
//   - Anthropic: thinking.type is the tag of a union: "enabled" carries
//     budget_tokens (at least 1024), "disabled" and "adaptive" carry none.
//     Writing "disabled"/"adaptive" removes a budget_tokens member; writing
//     "enabled" needs a budget (in the body or written with it); a budget is
//     written only where the type is (or becomes) "enabled". Other types are
//     refused on write (read as they are).
//   - Gemini: thinkingLevel and thinkingBudget are never left together (the
//     API answers 400); writing one where the body has the other fails. Both
//     protobuf JSON spellings are read (thinkingConfig / thinking_config ...);
//     a present member is written under its own spelling, a new one in
//     snake_case only when its object already uses snake_case keys.
//   - JSON null reads as absent and is overwritten by a write (null parents
//     become objects). A value of the wrong type, a duplicated key or both
//     spellings of one field is reported by the reader; writing that field
//     fails open. Integers must be plain JSON integers within int64.
//   - The output cap must be >= 1; a Gemini budget >= -1 (-1: dynamic, 0:
//     off); strings must be non-empty.
// Nothing here throws on bad input: a write that cannot be done leaves the
// body as it is (ok = false, the reason in error).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json/splice.hpp"
#include "providers/api.hpp"
#include "providers/request.hpp"

namespace td::providers {

// Provider-neutral settings: what the body carries (reading), or what to
// write (writing: an empty field leaves the body's value as it is).
struct GenerationSettings {
  std::optional<std::string> reasoning_effort;    // how hard to think: "low", "medium", "high", ...
  std::optional<std::string> thinking_type;       // Anthropic: "enabled", "disabled", "adaptive"
  std::optional<std::int64_t> thinking_budget;    // tokens the model may spend thinking
  std::optional<std::string> thinking_level;      // Gemini 3: "low", "high", ... (as sent, any case)
  std::optional<bool> include_thoughts;           // Gemini: thought summaries in the response
  std::optional<std::int64_t> max_output_tokens;  // cap on output tokens (thinking included)

  friend bool operator==(const GenerationSettings&, const GenerationSettings&) = default;
};

enum class Setting : std::uint8_t {
  reasoning_effort,
  thinking_type,
  thinking_budget,
  thinking_level,
  include_thoughts,
  max_output_tokens,
};
inline constexpr Setting kAllSettings[] = {Setting::reasoning_effort, Setting::thinking_type,
                                           Setting::thinking_budget,  Setting::thinking_level,
                                           Setting::include_thoughts, Setting::max_output_tokens};

std::string_view name(Setting s);
// The wire field of setting `s` in format `api` as a dotted path from the
// body's root ("generationConfig.thinkingConfig.thinkingBudget"); empty when
// the format has no such field. OpenAI chat's output cap: max_completion_tokens.
std::string_view wire_field(Api api, Setting s);

struct SettingsRead {
  GenerationSettings settings;
  // Present fields that could not be read, each "wire.path: why" (wrong
  // type, duplicated key, both spellings), and a body that does not parse.
  std::vector<std::string> problems;
};

SettingsRead read_generation_settings(Api api, std::string_view body);
// From a parsed request's document (no second parse).
SettingsRead read_generation_settings(const ParsedRequest& request);

// Whether the provider's quota and context window count the output a request
// reserves (false: input alone, Gemini).
bool limits_count_output(Api api);

// The output tokens the request reserves against the provider's quota and
// context window: its output cap, or 0 where none is set or the provider's
// limits count input alone (Gemini).
std::uint64_t reserved_output_tokens(const ParsedRequest& request);

struct SettingsWrite {
  bool ok = false;       // false: nothing written, forward the body as it was (error says why)
  bool changed = false;  // false: the body already had these settings
  std::string body;      // the new body when changed
  std::string error;

  // The bytes to forward: the new body, or `original` when nothing changed.
  std::string_view result(std::string_view original) const { return changed ? std::string_view(body) : original; }
};

// Writes the fields set in `want` into `body`, a request body of format `api`.
SettingsWrite write_generation_settings(Api api, std::string_view body, const GenerationSettings& want);
// The same on the bytes `request` was parsed from (they must still be alive),
// reusing its document.
SettingsWrite write_generation_settings(const ParsedRequest& request, const GenerationSettings& want);

// What write_generation_settings(request, want) would splice, not applied:
// edits of the bytes `request` was parsed from, never inside its message
// array or system field, for a caller that writes them in the same pass as
// the messages (providers::write()'s `extra`), so the body is parsed once.
struct SettingsEdits {
  bool ok = false;                // false: nothing to write (error says why)
  std::vector<json::Edit> edits;  // empty: the body already has these settings
  std::string error;
};
SettingsEdits generation_settings_edits(const ParsedRequest& request, const GenerationSettings& want);

}  // namespace td::providers
