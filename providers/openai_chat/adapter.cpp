// OpenAI chat completions (POST .../chat/completions): the format's adapter.
#include <string>

#include "providers/openai_chat/openai_chat.hpp"
#include "providers/openai_chat/tools_text.hpp"
#include "providers/recall_merge_common.hpp"
#include "providers/thinking_rules.hpp"
#include "providers/usage_event.hpp"

namespace td::providers {

namespace openai {

namespace {

using thinking::accept;
using thinking::Family;
using thinking::Knob;

// The families whose accepted efforts are documented (docs/design.md
// §Thinking budget gives the source of each row). First match wins, so a
// narrower name comes before its prefix. A model matching no row is left as
// sent.
constexpr Family kFamilies[] = {
    {"gpt-5-pro", Knob::effort, accept({"high"})},
    {"gpt-5.1", Knob::effort, accept({"none", "low", "medium", "high"})},
    {"gpt-5", Knob::effort, accept({"minimal", "low", "medium", "high"})},
    {"o1", Knob::effort, accept({"low", "medium", "high"})},
    {"o3", Knob::effort, accept({"low", "medium", "high"})},
    {"o4", Knob::effort, accept({"low", "medium", "high"})},
};

}  // namespace

Usage normalise_usage(const RawUsage& r) {
  Usage u;
  u.prompt = as_count(term(r.input));
  u.completion = as_count(term(r.output));
  u.cached_read = as_count(term(r.cache_read));
  u.reasoning = as_count(term(r.reasoning));
  return u;
}

ThinkingChange lower_thinking(std::string_view model, const GenerationSettings& now, const LowerThinking& limits) {
  using thinking::quoted;
  using thinking::unchanged;
  if (!now.reasoning_effort) return unchanged("no reasoning effort in the body; none added");
  const Family* f = thinking::family_of(kFamilies, model);
  if (!f) return unchanged(quoted(model) + ": its accepted reasoning efforts are not known; left as sent");
  return thinking::lower_named(Setting::reasoning_effort, *now.reasoning_effort, *f, limits.effort, false, model);
}

}  // namespace openai

namespace {

using generation::Key;
using generation::Kind;
using usage_event::contains;
using usage_event::json_string;
using usage_event::kMaxCapture;

// In the order new members are written.
constexpr generation::Field kSettings[] = {
    {Setting::reasoning_effort, Kind::String, 1, {Key{"reasoning_effort"}}, "reasoning_effort"},
    {Setting::max_output_tokens, Kind::Integer, 1, {Key{"max_completion_tokens"}}, "max_completion_tokens"},
    {Setting::max_output_tokens, Kind::Integer, 1, {Key{"max_tokens"}}, "max_tokens", true},
};

bool serves_path(std::string_view path) { return path.ends_with("/chat/completions"); }

RawUsage usage_counts(const UsageCounts& src) {
  RawUsage r;
  r.input = src.count("prompt_tokens");
  r.output = src.count("completion_tokens");
  r.cache_read = src.nested_count("prompt_tokens_details", "cached_tokens");
  r.reasoning = src.nested_count("completion_tokens_details", "reasoning_tokens");
  // Some OpenAI-compatible servers answer chat requests in the Responses
  // spelling; accept it rather than report nothing.
  if (!r.input && !r.output) {
    r.input = src.count("input_tokens");
    r.output = src.count("output_tokens");
  }
  return r;
}

// The final chunk with a non-null "usage" (include_usage).
void read_usage_event(std::string_view, std::string_view d, UsageSeen seen) {
  bool want_model = seen.model.empty() && contains(d, "\"model\"");
  if (!want_model && !contains(d, "\"usage\"") && !contains(d, "\"error\"")) return;
  auto ms = json::top_level_members(d);
  for (const auto& m : ms) {
    if (m.key == "usage" && !json::is_json_null(m.value)) {
      if (auto r = read_usage_object(Api::openai_chat, m.value)) seen.raw = *r;
    } else if (m.key == "model" && want_model) {
      seen.model = json_string(m.value);
    } else if (m.key == "error") {
      seen.error.assign(m.value.substr(0, kMaxCapture));
    }
  }
}

std::string recall_tool(std::string_view name_and_description, std::string_view schema) {
  return R"({"type":"function","function":{)" + std::string(name_and_description) +
         ",\"parameters\":" + std::string(schema) + "}}";
}

}  // namespace

const FormatAdapter& openai_chat_adapter() {
  static const FormatAdapter kAdapter{
      .api = Api::openai_chat,
      .name = "openai_chat",
      .serves_path = serves_path,
      .route_from_path = nullptr,
      .request = detail::kOpenAIChatOps,
      .cache_anchors_free = nullptr,
      .cache_anchor_edit = nullptr,
      .render_tools = render_openai_tools_json,
      .usage_member = "usage",
      .model_member = "model",
      .usage_counts = usage_counts,
      .normalise_usage = openai::normalise_usage,
      .usage_event = read_usage_event,
      .settings = kSettings,
      .settings_values = nullptr,
      .settings_shape = nullptr,
      .lower_thinking = openai::lower_thinking,
      .recall_tool = recall_tool,
      .recall_merge = make_openai_chat_merge,
      .stream_usage_on_request = true,
  };
  return kAdapter;
}

}  // namespace td::providers
