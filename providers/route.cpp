#include "providers/route.hpp"

#include "providers/format_adapter.hpp"

namespace td::providers {

std::optional<ChatRoute> chat_route(std::string_view method, std::string_view target) {
  if (method != "POST") return std::nullopt;
  std::optional<Api> api = api_for_target(target);
  if (!api) return std::nullopt;
  ChatRoute r;
  r.api = *api;
  if (const auto from_path = adapter(r.api).route_from_path) from_path(request_path(target), r);
  return r;
}

ParseOutcome parse_request(const ChatRoute& route, std::string_view body, ParsedMessageMemo* memo) {
  ParseOutcome out = parse(route.api, body, memo);
  if (out.request && adapter(route.api).route_from_path) {  // the path names the model
    out.request->model = route.model;
    out.request->stream = route.stream;
    out.request->conversation.model = route.model;
  }
  return out;
}

}  // namespace td::providers
