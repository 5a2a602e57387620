// Which wire format a request uses, from its path: the proxy's entry point
// into providers/ on the request path.
//
// The path alone decides, whatever the upstream: OpenAI-compatible vendors
// (DeepSeek, OpenRouter, Gemini's /v1beta/openai/) all serve
// .../chat/completions, Anthropic-compatible ones /v1/messages. Everything
// else (models lists, embeddings, count_tokens, files, GETs) is not a chat
// request and is forwarded untouched.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "providers/request.hpp"

namespace td::providers {

struct Route {
  Format format = Format::OpenAIChat;
  std::string model;    // Gemini: the model named in the path
  bool stream = false;  // Gemini: :streamGenerateContent
};

// `target` is the request target (path, optionally with ?query).
std::optional<Route> chat_route(std::string_view method, std::string_view target);

// parse() plus what the path says (Gemini's model and stream flag). Never
// throws: no request means forward the body untouched (error says why).
ParseOutcome parse_request(const Route& route, std::string_view body);

}  // namespace td::providers
