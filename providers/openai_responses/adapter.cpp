// OpenAI Responses (POST .../responses): the format's adapter. It bills and
// lowers thinking as OpenAI chat does (openai_chat/openai_chat.hpp).
#include <memory>
#include <string>

#include "providers/openai_chat/openai_chat.hpp"
#include "providers/openai_chat/tools_text.hpp"
#include "providers/recall_merge_common.hpp"
#include "providers/usage_event.hpp"

namespace td::providers {

namespace {

using generation::Key;
using generation::Kind;
using usage_event::contains;
using usage_event::json_string;
using usage_event::kMaxCapture;
using usage_event::member;

// In the order new members are written.
constexpr generation::Field kSettings[] = {
    {Setting::reasoning_effort, Kind::String, 2, {Key{"reasoning"}, Key{"effort"}}, "reasoning.effort"},
    {Setting::max_output_tokens, Kind::Integer, 1, {Key{"max_output_tokens"}}, "max_output_tokens"},
};

bool serves_path(std::string_view path) { return path.ends_with("/responses"); }

RawUsage usage_counts(const UsageCounts& src) {
  RawUsage r;
  r.input = src.count("input_tokens");
  r.output = src.count("output_tokens");
  r.cache_read = src.nested_count("input_tokens_details", "cached_tokens");
  r.reasoning = src.nested_count("output_tokens_details", "reasoning_tokens");
  return r;
}

// response.completed / .incomplete / .failed: response.usage.
void read_usage_event(std::string_view, std::string_view d, UsageSeen seen) {
  bool want_model = seen.model.empty() && contains(d, "\"model\"");
  if (!want_model && !contains(d, "\"usage\"") && !contains(d, "\"error\"")) return;
  auto ms = json::top_level_members(d);
  if (auto e = member(ms, "error"); !e.empty() && !json::is_json_null(e)) seen.error.assign(e.substr(0, kMaxCapture));
  std::string_view resp = member(ms, "response");
  if (resp.empty()) return;
  auto rs = json::top_level_members(resp);
  if (auto u = member(rs, "usage"); !u.empty() && !json::is_json_null(u))
    if (auto r = read_usage_object(Api::openai_responses, u)) seen.raw = *r;
  if (auto m = member(rs, "model"); !m.empty()) seen.model = json_string(m);
  if (auto e = member(rs, "error"); !e.empty() && !json::is_json_null(e)) seen.error.assign(e.substr(0, kMaxCapture));
}

std::string recall_tool(std::string_view name_and_description, std::string_view schema) {
  return R"({"type":"function",)" + std::string(name_and_description) + ",\"parameters\":" + std::string(schema) + "}";
}

}  // namespace

const FormatAdapter& openai_responses_adapter() {
  static const FormatAdapter kAdapter{
      .api = Api::openai_responses,
      .name = "openai_responses",
      .serves_path = serves_path,
      .route_from_path = nullptr,
      .request = detail::kOpenAIResponsesOps,
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
      .recall_merge = make_responses_merge,
  };
  return kAdapter;
}

}  // namespace td::providers
