#include "providers/route.hpp"

namespace td::providers {

namespace {
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
}  // namespace

std::optional<Route> chat_route(std::string_view method, std::string_view target) {
  if (method != "POST") return std::nullopt;
  std::string_view path = target.substr(0, target.find('?'));
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  Route r;
  if (ends_with(path, "/chat/completions")) {
    r.format = Format::OpenAIChat;
    return r;
  }
  if (ends_with(path, "/v1/responses") || path == "/responses") {
    r.format = Format::OpenAIResponses;
    return r;
  }
  if (ends_with(path, "/v1/messages") || path == "/messages") {
    r.format = Format::Anthropic;
    return r;
  }
  // .../models/{model}:generateContent or :streamGenerateContent
  const std::size_t slash = path.rfind('/');
  std::string_view last = path.substr(slash == std::string_view::npos ? 0 : slash + 1);
  const std::size_t colon = last.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view verb = last.substr(colon + 1);
  if (verb != "generateContent" && verb != "streamGenerateContent") return std::nullopt;
  if (path.substr(0, slash + 1).find("/models/") == std::string_view::npos &&
      !ends_with(path.substr(0, slash + 1), "models/"))
    return std::nullopt;
  r.format = Format::Gemini;
  r.model = std::string(last.substr(0, colon));
  r.stream = verb == "streamGenerateContent";
  return r;
}

ParseOutcome parse_request(const Route& route, std::string_view body) {
  ParseOutcome out = parse(route.format, body);
  if (out.request && route.format == Format::Gemini) {
    out.request->model = route.model;
    out.request->stream = route.stream;
    out.request->conversation.model = route.model;
  }
  return out;
}

}  // namespace td::providers
