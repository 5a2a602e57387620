#include "providers/route.hpp"

namespace td::providers {

std::optional<ChatRoute> chat_route(std::string_view method, std::string_view target) {
  if (method != "POST") return std::nullopt;
  std::optional<Api> api = api_for_target(target);
  if (!api) return std::nullopt;
  ChatRoute r;
  r.api = *api;
  if (r.api == Api::gemini) {
    // .../models/{model}:generateContent or :streamGenerateContent
    std::string_view path = target.substr(0, target.find('?'));
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    std::string_view last = path.substr(path.rfind('/') + 1);  // npos + 1 == 0
    const std::size_t colon = last.rfind(':');
    r.model = std::string(last.substr(0, colon));
    r.stream = last.substr(colon + 1) == "streamGenerateContent";
  }
  return r;
}

ParseOutcome parse_request(const ChatRoute& route, std::string_view body, ParsedMessageMemo* memo) {
  ParseOutcome out = parse(route.api, body, memo);
  if (out.request && route.api == Api::gemini) {
    out.request->model = route.model;
    out.request->stream = route.stream;
    out.request->conversation.model = route.model;
  }
  return out;
}

}  // namespace td::providers
