// Gemini (POST .../models/{model}:generateContent | :streamGenerateContent):
// the format's adapter.
#include <memory>
#include <string>

#include "providers/format_adapter.hpp"
#include "providers/recall_merge_common.hpp"
#include "providers/route.hpp"
#include "providers/thinking_rules.hpp"
#include "providers/usage_event.hpp"

namespace td::providers {

namespace {

using generation::Key;
using generation::Kind;
using thinking::accept;
using thinking::Family;
using thinking::Knob;
using thinking::quoted;
using thinking::unchanged;
using usage_event::contains;
using usage_event::json_string;
using usage_event::kMaxCapture;

// In the order new members are written; both protobuf JSON spellings.
constexpr Key kGen{"generationConfig", "generation_config"};
constexpr Key kThink{"thinkingConfig", "thinking_config"};
constexpr generation::Field kSettings[] = {
    {Setting::max_output_tokens,
     Kind::Integer,
     2,
     {kGen, Key{"maxOutputTokens", "max_output_tokens"}},
     "generationConfig.maxOutputTokens"},
    {Setting::include_thoughts,
     Kind::Bool,
     3,
     {kGen, kThink, Key{"includeThoughts", "include_thoughts"}},
     "generationConfig.thinkingConfig.includeThoughts"},
    {Setting::thinking_budget,
     Kind::Integer,
     3,
     {kGen, kThink, Key{"thinkingBudget", "thinking_budget"}},
     "generationConfig.thinkingConfig.thinkingBudget"},
    {Setting::thinking_level,
     Kind::String,
     3,
     {kGen, kThink, Key{"thinkingLevel", "thinking_level"}},
     "generationConfig.thinkingConfig.thinkingLevel"},
};

// The families whose thinking settings are documented (docs/design.md
// §Thinking budget gives the source of each row). First match wins, so a
// narrower name comes before its prefix.
constexpr Family kFamilies[] = {
    {"gemini-3-pro", Knob::level, accept({"low", "high"})},
    {"gemini-3-flash", Knob::level, accept({"minimal", "low", "medium", "high"})},
    // Other Gemini 3 models (3.x included): the levels every documented one takes.
    {"gemini-3-", Knob::level, accept({"low", "high"})},
    {"gemini-3.", Knob::level, accept({"low", "high"})},
    {"gemini-2.5-pro", Knob::budget, 0, {128, 32768, false}},
    {"gemini-2.5-flash-lite", Knob::budget, 0, {512, 24576, true}},
    {"gemini-2.5-flash", Knob::budget, 0, {1, 24576, true}},
};

bool serves_path(std::string_view path) {
  return path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent");
}

// .../models/{model}:generateContent or :streamGenerateContent
void route_from_path(std::string_view path, ChatRoute& r) {
  std::string_view last = path.substr(path.rfind('/') + 1);  // npos + 1 == 0
  const std::size_t colon = last.rfind(':');
  r.model = std::string(last.substr(0, colon));
  r.stream = last.substr(colon + 1) == "streamGenerateContent";
}

RawUsage usage_counts(const UsageCounts& src) {
  RawUsage r;
  r.input = src.count("promptTokenCount");
  r.output = src.count("candidatesTokenCount");
  r.cache_read = src.count("cachedContentTokenCount");
  r.reasoning = src.count("thoughtsTokenCount");
  r.tool_prompt = src.count("toolUsePromptTokenCount");
  return r;
}

// The tool-use prompt is prompt; thoughts are billed as output.
Usage normalise_usage(const RawUsage& r) {
  Usage u;
  u.prompt = as_count(term(r.input) + term(r.tool_prompt));
  u.completion = as_count(term(r.output) + term(r.reasoning));
  u.cached_read = as_count(term(r.cache_read));
  u.reasoning = as_count(term(r.reasoning));
  return u;
}

// usageMetadata on every chunk; the last one with counts wins.
void read_usage_event(std::string_view, std::string_view d, UsageSeen seen) {
  bool want_model = seen.model.empty() && contains(d, "\"modelVersion\"");
  if (!want_model && !contains(d, "\"usageMetadata\"") && !contains(d, "\"error\"")) return;
  auto ms = json::top_level_members(d);
  for (const auto& m : ms) {
    if (m.key == "usageMetadata") {
      // Every chunk repeats the running totals; a chunk with no counts at all
      // (Vertex's first {"trafficType": ...}) does not erase earlier ones.
      if (auto r = read_usage_object(Api::gemini, m.value)) seen.raw = *r;
    } else if (m.key == "modelVersion" && want_model) {
      seen.model = json_string(m.value);
    } else if (m.key == "error") {
      seen.error.assign(m.value.substr(0, kMaxCapture));
    }
  }
}

void settings_values(const GenerationSettings& want, std::string& err) {
  if (want.thinking_budget && *want.thinking_budget < -1) err = "thinkingBudget below -1";
}

// thinkingLevel and thinkingBudget are never left together (the API answers 400).
bool settings_shape(std::span<const generation::Field> fs, const std::vector<generation::Found>& found,
                    const GenerationSettings&, const GenerationSettings& want, std::size_t&, std::string& err) {
  auto present = [&](Setting s) {
    return found[generation::index_of(fs, s)].state != generation::Found::State::absent;
  };
  if ((want.thinking_level || want.thinking_budget) && (want.thinking_level || present(Setting::thinking_level)) &&
      (want.thinking_budget || present(Setting::thinking_budget))) {
    err = "thinkingLevel and thinkingBudget cannot be sent together";
    return false;
  }
  return true;
}

ThinkingChange lower_thinking(std::string_view model, const GenerationSettings& now, const LowerThinking& limits) {
  if (now.thinking_level && now.thinking_budget)
    return unchanged("thinkingLevel and thinkingBudget together (the API refuses such a body); left as sent");
  if (!now.thinking_level && !now.thinking_budget)
    return unchanged("no thinking level or budget in the body; none added");
  const Family* f = thinking::family_of(kFamilies, model);
  if (!f) return unchanged(quoted(model) + ": its thinking settings are not known; left as sent");
  if (f->knob == Knob::level) {
    // Whether Gemini 3 takes a thinkingBudget, and in which range, is not
    // documented: such a body goes as the client sent it.
    if (!now.thinking_level)
      return unchanged(quoted(model) + " thinks by level; its budget range is not known; left as sent");
    return thinking::lower_named(Setting::thinking_level, *now.thinking_level, *f, limits.effort, true, model);
  }
  if (!now.thinking_budget)
    return unchanged(quoted(model) + " thinks by budget; its levels are not known; left as sent");
  return thinking::cap_budget(*now.thinking_budget, limits.gemini_thinking_budget, f->budget, true, model);
}

std::string recall_tool(std::string_view name_and_description, std::string_view schema) {
  return R"({"functionDeclarations":[{)" + std::string(name_and_description) +
         ",\"parameters\":" + std::string(schema) + "}]}";
}

}  // namespace

const FormatAdapter& gemini_adapter() {
  static const FormatAdapter kAdapter{
      .api = Api::gemini,
      .name = "gemini",
      .serves_path = serves_path,
      .route_from_path = route_from_path,
      .request = detail::kGeminiOps,
      .cache_anchors_free = nullptr,
      .cache_anchor_edit = nullptr,
      .render_tools = nullptr,
      .usage_member = "usageMetadata",
      .model_member = "modelVersion",
      .usage_counts = usage_counts,
      .normalise_usage = normalise_usage,
      .usage_event = read_usage_event,
      .settings = kSettings,
      .settings_values = settings_values,
      .settings_shape = settings_shape,
      .lower_thinking = lower_thinking,
      .recall_tool = recall_tool,
      .recall_merge = make_gemini_merge,
      .limits_count_output = false,
  };
  return kAdapter;
}

}  // namespace td::providers
