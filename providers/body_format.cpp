#include "providers/body_format.hpp"

#include <rapidjson/document.h>

#include <array>

#include "pruning/json_nesting.hpp"

namespace td::providers {
namespace {

bool has(const rapidjson::Value& o, const char* key) { return o.IsObject() && o.HasMember(key); }

std::string_view str(const rapidjson::Value& o, const char* key) {
  if (!o.IsObject()) return {};
  auto m = o.FindMember(key);
  return m != o.MemberEnd() && m->value.IsString() ? std::string_view(m->value.GetString(), m->value.GetStringLength())
                                                   : std::string_view();
}

// Content block types only Anthropic's Messages API has.
bool anthropic_block(std::string_view type) {
  static constexpr std::array<std::string_view, 8> kTypes = {
      "tool_use", "tool_result",  "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result",
      "document", "search_result"};
  for (std::string_view t : kTypes)
    if (type == t) return true;
  return false;
}

Api messages_format(const rapidjson::Value& body) {
  if (has(body, "system") || has(body, "anthropic_version")) return Api::anthropic;
  for (const auto& m : body["messages"].GetArray()) {
    if (!m.IsObject()) continue;
    const std::string_view role = str(m, "role");
    if (role == "system" || role == "developer" || role == "tool" || has(m, "tool_calls")) return Api::openai_chat;
    auto content = m.FindMember("content");
    if (content == m.MemberEnd() || !content->value.IsArray()) continue;
    for (const auto& block : content->value.GetArray())
      if (anthropic_block(str(block, "type")) || (str(block, "type") == "image" && has(block, "source")))
        return Api::anthropic;
  }
  return Api::openai_chat;
}

}  // namespace

std::optional<Api> detect_body_format(std::string_view text, std::string& why) {
  rapidjson::Document body;
  if (!pruning::json_nesting_within(text) || body.Parse(text.data(), text.size()).HasParseError() || !body.IsObject()) {
    why = "not a JSON object";
    return std::nullopt;
  }
  const bool messages = body.HasMember("messages") && body["messages"].IsArray();
  if (body.HasMember("contents") && body["contents"].IsArray()) return Api::gemini;
  if (!messages && body.HasMember("input")) return Api::openai_responses;
  if (messages) return messages_format(body);
  why = "no \"messages\", \"contents\" or \"input\": not a chat request body";
  return std::nullopt;
}

}  // namespace td::providers
