// Answers the proxy makes itself (/healthz, /metrics, refusals, a filter's
// LocalResponse, an unreachable upstream): a head and a body in one write.
// An answer to a request the filters saw passes their response-head phase
// (proxy/phases/filter.hpp), as an upstream's answer does.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "proxy/phases/request_context.hpp"

namespace td::proxy {

struct SessionIo;
struct Runtime;

struct LocalReply {
  unsigned status = 200;
  std::string_view content_type;
  std::string_view body;
  std::span<const std::pair<std::string, std::string>> headers;  // extra fields
};

// Sends `reply` (no body for HEAD or a status without one) and records
// status, bytes and TTFB in `ctx`; with `filters` (the request's runtime,
// when its filters saw it) its head passes their response-head phase first.
// False when the client could not take it.
boost::asio::awaitable<bool> send_local(SessionIo& io, RequestContext& ctx, const LocalReply& reply, bool keep_alive,
                                        bool head_request, const Runtime* filters = nullptr);

// An error in the calling provider's own shape (proxy/phases/errors.hpp),
// with x-tokendiet-error: `code`.
boost::asio::awaitable<bool> send_error(SessionIo& io, RequestContext& ctx, unsigned status, std::string_view message,
                                        std::string_view code, bool keep_alive, bool head_request,
                                        const Runtime* filters = nullptr);

}  // namespace td::proxy
