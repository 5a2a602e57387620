#include "proxy/net/local_reply.hpp"

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>

#include <array>
#include <chrono>

#include "proxy/net/beast_header_map.hpp"
#include "proxy/net/client_session.hpp"
#include "proxy/net/filter_chain.hpp"
#include "proxy/net/head_text.hpp"
#include "proxy/net/stream_io.hpp"
#include "proxy/phases/errors.hpp"

namespace td::proxy {

namespace asio = boost::asio;
namespace http = boost::beast::http;

asio::awaitable<bool> send_local(SessionIo& io, RequestContext& ctx, const LocalReply& reply, bool keep_alive,
                                 bool head_request, const Runtime* filters) {
  http::response<http::empty_body> res;
  res.version(11);
  res.result(reply.status);
  res.set(http::field::content_type, reply.content_type);
  for (auto& [name, value] : reply.headers) res.insert(name, value);
  ctx.status = reply.status;
  ctx.local_response = true;
  if (filters) {
    BeastHeaderMap headers(res);
    for_each_filter(*filters, ctx, "response_head_filter", [&](Filter& f) { f.response_head_filter(ctx, headers); });
  }
  if (ctx.request_id) res.set("x-tokendiet-request-id", std::to_string(ctx.request_id));
  const bool has_body = has_body_status(reply.status);
  if (head_request || has_body) res.content_length(reply.body.size());
  res.keep_alive(keep_alive);
  const bool send_body = !head_request && has_body && !reply.body.empty();
  if (send_body) ctx.bytes_out = reply.body.size();
  const std::string head = head_text(res);
  const std::array<asio::const_buffer, 2> bytes{asio::buffer(head), asio::buffer(reply.body.data(), reply.body.size())};
  const std::span<const asio::const_buffer> bufs(bytes.data(), send_body ? 2 : 1);
  boost::system::error_code ec;
  {
    Deadline deadline(io.handle.client_io, std::chrono::seconds(30));
    ec = co_await send_now(io.client, bufs);
  }
  ctx.ttfb_ms = ms_since(ctx.start);
  co_return !ec;
}

asio::awaitable<bool> send_error(SessionIo& io, RequestContext& ctx, unsigned status, std::string_view message,
                                 std::string_view code, bool keep_alive, bool head_request, const Runtime* filters) {
  const std::array<std::pair<std::string, std::string>, 1> extra{{{"x-tokendiet-error", std::string(code)}}};
  const std::string body = provider_error_body(ctx.provider, status, message, code);
  const LocalReply reply{status, "application/json", body, extra};
  bool ok = co_await send_local(io, ctx, reply, keep_alive, head_request, filters);
  co_return ok;
}

}  // namespace td::proxy
