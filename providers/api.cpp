#include "providers/api.hpp"

namespace td::providers {

std::string_view name(Api api) {
  switch (api) {
    case Api::openai_chat: return "openai_chat";
    case Api::openai_responses: return "openai_responses";
    case Api::gemini: return "gemini";
    case Api::anthropic: return "anthropic";
  }
  return "unknown";
}

std::optional<Api> api_for_target(std::string_view target) {
  std::string_view path = target.substr(0, target.find('?'));
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (path.ends_with("/chat/completions")) return Api::openai_chat;
  if (path.ends_with("/responses")) return Api::openai_responses;
  // "/v1/messages", not any ".../messages" (OpenAI threads have one too).
  if (path.ends_with("/v1/messages")) return Api::anthropic;
  if (path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent"))
    return Api::gemini;
  return std::nullopt;
}

}  // namespace td::providers
