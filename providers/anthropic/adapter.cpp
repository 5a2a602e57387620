// Anthropic Messages (POST /v1/messages): the format's adapter.
#include <limits>
#include <memory>
#include <string>

#include "providers/format_adapter.hpp"
#include "providers/recall_merge_common.hpp"
#include "providers/thinking_rules.hpp"
#include "providers/usage_event.hpp"

namespace td::providers {

namespace {

using generation::Found;
using generation::Key;
using generation::Kind;
using thinking::accept;
using thinking::BudgetRange;
using thinking::Family;
using thinking::Knob;
using thinking::quoted;
using thinking::scale_index;
using thinking::unchanged;
using usage_event::contains;
using usage_event::json_string;
using usage_event::kMaxCapture;
using usage_event::member;

// In the order new members are written.
constexpr generation::Field kSettings[] = {
    {Setting::thinking_type, Kind::String, 2, {Key{"thinking"}, Key{"type"}}, "thinking.type"},
    {Setting::thinking_budget, Kind::Integer, 2, {Key{"thinking"}, Key{"budget_tokens"}}, "thinking.budget_tokens"},
    {Setting::reasoning_effort, Kind::String, 2, {Key{"output_config"}, Key{"effort"}}, "output_config.effort"},
    {Setting::max_output_tokens, Kind::Integer, 1, {Key{"max_tokens"}}, "max_tokens"},
};

// "/v1/messages", not any ".../messages" (OpenAI threads have one too).
bool serves_path(std::string_view path) { return path.ends_with("/v1/messages"); }

RawUsage usage_counts(const UsageCounts& src) {
  RawUsage r;
  r.input = src.count("input_tokens");
  r.output = src.count("output_tokens");
  r.cache_read = src.count("cache_read_input_tokens");
  r.cache_write = src.count("cache_creation_input_tokens");
  return r;
}

// input_tokens excludes what the cache read and wrote: the prompt is all three.
Usage normalise_usage(const RawUsage& r) {
  Usage u;
  u.prompt = as_count(term(r.input) + term(r.cache_read) + term(r.cache_write));
  u.completion = as_count(term(r.output));
  u.cached_read = as_count(term(r.cache_read));
  u.cache_write = as_count(term(r.cache_write));
  return u;
}

// message_start message.usage, then message_delta usage (cumulative; each
// count it carries replaces the earlier one).
void read_usage_event(std::string_view name, std::string_view d, UsageSeen seen) {
  // The event name says what the data is; content deltas (the bulk of the
  // stream) are skipped without looking at their data.
  if (name.empty()) {
    if (contains(d, "message_start"))
      name = "message_start";
    else if (contains(d, "message_delta"))
      name = "message_delta";
    else if (contains(d, "\"error\""))
      name = "error";
    else
      return;
  }
  if (name == "message_start") {
    auto ms = json::top_level_members(d);
    std::string_view msg = member(ms, "message");
    if (msg.empty()) return;
    auto mm = json::top_level_members(msg);
    if (auto u = member(mm, "usage"); !u.empty())
      if (auto r = read_usage_object(Api::anthropic, u)) seen.raw = *r;
    if (auto m = member(mm, "model"); !m.empty()) seen.model = json_string(m);
  } else if (name == "message_delta") {
    std::string_view u = json::top_level_value(d, "usage");
    if (u.empty()) return;
    if (auto r = read_usage_object(Api::anthropic, u)) merge_into(seen.raw, *r);
  } else if (name == "error") {
    if (auto e = json::top_level_value(d, "error"); !e.empty()) seen.error.assign(e.substr(0, kMaxCapture));
  }
}

void settings_values(const GenerationSettings& want, std::string& err) {
  if (want.thinking_budget && *want.thinking_budget < 1024)
    err = "thinking.budget_tokens below Anthropic's minimum of 1024";
  if (want.thinking_type && *want.thinking_type != "enabled" && *want.thinking_type != "disabled" &&
      *want.thinking_type != "adaptive")
    err = "thinking.type must be enabled, disabled or adaptive";
}

// thinking.type is the tag of a union: "enabled" carries budget_tokens,
// "disabled" and "adaptive" carry none.
bool settings_shape(std::span<const generation::Field> fs, const std::vector<Found>& found,
                    const GenerationSettings& now, const GenerationSettings& want, std::size_t& drop,
                    std::string& err) {
  const bool type_written = want.thinking_type.has_value();
  const auto type = want.thinking_type ? want.thinking_type : now.thinking_type;
  const std::size_t budget = generation::index_of(fs, Setting::thinking_budget);
  if (type_written && *type != "enabled") {
    // The budget goes with the "enabled" variant; one we cannot locate
    // (a duplicated key) cannot be removed, so nothing is written.
    if (found[budget].state == Found::State::problem && found[budget].leaf == json::kNone) {
      err = found[budget].problem;
      return false;
    }
    if (found[budget].leaf != json::kNone) drop = budget;
  }
  if (want.thinking_budget && type != "enabled") {
    err = "thinking.budget_tokens needs thinking.type \"enabled\"";
    return false;
  }
  if (type_written && *type == "enabled" && !want.thinking_budget && !now.thinking_budget) {
    err = "thinking.type \"enabled\" needs thinking.budget_tokens";
    return false;
  }
  return true;
}

ThinkingChange lower_thinking(std::string_view model, const GenerationSettings& now, const LowerThinking& limits) {
  if (now.thinking_type == "enabled") {
    if (!now.thinking_budget) return unchanged("thinking enabled without budget_tokens; left as sent");
    // The API's minimum manual budget, and the budget stays below max_tokens.
    BudgetRange range{1024, std::numeric_limits<std::int64_t>::max(), false};
    if (now.max_output_tokens) range.highest = *now.max_output_tokens - 1;
    return thinking::cap_budget(*now.thinking_budget, limits.anthropic_budget_tokens, range, false, model);
  }
  if (now.thinking_type == "adaptive") {
    if (!now.reasoning_effort) return unchanged("adaptive thinking without an effort; none added");
    // Every model with adaptive thinking takes low, medium and high (max
    // and xhigh only some), so lowering within those is always accepted.
    static constexpr Family kAdaptive{"", Knob::effort, accept({"low", "medium", "high"})};
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
    return thinking::lower_named(Setting::reasoning_effort, effort, kAdaptive, limits.effort, false, model);
  }
  return unchanged("thinking not enabled; nothing to lower");
}

std::string recall_tool(std::string_view name_and_description, std::string_view schema) {
  return "{" + std::string(name_and_description) + ",\"input_schema\":" + std::string(schema) + "}";
}

}  // namespace

const FormatAdapter& anthropic_adapter() {
  static const FormatAdapter kAdapter{
      .api = Api::anthropic,
      .name = "anthropic",
      .serves_path = serves_path,
      .route_from_path = nullptr,
      .request = detail::kAnthropicOps,
      .cache_anchors_free = detail::anthropic_cache_anchors_free,
      .cache_anchor_edit = detail::anthropic_cache_anchor_edit,
      .render_tools = nullptr,
      .usage_member = "usage",
      .model_member = "model",
      .usage_counts = usage_counts,
      .normalise_usage = normalise_usage,
      .usage_event = read_usage_event,
      .settings = kSettings,
      .settings_values = settings_values,
      .settings_shape = settings_shape,
      .lower_thinking = lower_thinking,
      .recall_tool = recall_tool,
      .recall_merge = make_anthropic_merge,
  };
  return kAdapter;
}

}  // namespace td::providers
