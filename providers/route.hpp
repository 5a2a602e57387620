// The request path's entry into providers/: is this a chat request, in which
// wire format, and (Gemini) which model and stream flag does its path name.
//
// The path alone decides, whatever the upstream (api_for_target() in
// providers/api.hpp): OpenAI-compatible vendors (DeepSeek, OpenRouter,
// Gemini's /v1beta/openai/) all serve .../chat/completions. Everything else
// (models lists, embeddings, count_tokens, files, GETs) is not a chat request
// and is forwarded untouched.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "providers/request.hpp"

namespace td::providers {

struct ChatRoute {
  Api api = Api::openai_chat;
  std::string model;    // Gemini: the model named in the path
  bool stream = false;  // Gemini: :streamGenerateContent
};

// `target` is the request target (path, optionally with ?query).
std::optional<ChatRoute> chat_route(std::string_view method, std::string_view target);

// parse() plus what the path says (Gemini's model and stream flag). Never
// throws: no request means forward the body untouched (error says why).
ParseOutcome parse_request(const ChatRoute& route, std::string_view body, ParsedMessageMemo* memo = nullptr);

}  // namespace td::providers
