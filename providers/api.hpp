// The upstream API a request speaks, decided from its path. Each has its own
// request body shape, usage spelling and stream framing.
#pragma once

#include <optional>
#include <string_view>

namespace td::providers {

enum class Api {
  openai_chat,       // POST /v1/chat/completions
  openai_responses,  // POST /v1/responses
  gemini,            // POST /v1beta/models/{model}:generateContent | :streamGenerateContent
  anthropic,         // POST /v1/messages
};
// Every Api, in the enum's order.
inline constexpr Api kApis[] = {Api::openai_chat, Api::openai_responses, Api::gemini, Api::anthropic};

std::string_view name(Api api);

// The API of a request target (path plus optional query), or nullopt for a path
// no adapter handles (those are relayed untouched). Matches on the path's
// ending so a prefix (e.g. "/openai/v1/chat/completions") still routes.
std::optional<Api> api_for_target(std::string_view target);

// A request target's path: no query, no trailing '/'.
std::string_view request_path(std::string_view target);

}  // namespace td::providers
