// One attempt at the upstream: a connection (pooled or new), the request
// written, the response head read (interim 1xx answers skipped; a 101 is a
// bad_response). It ends with the head in response(), ready for the relay
// (relay.hpp), or with a typed UpstreamFailure the failure phase decides on
// (proxy_request.cpp).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>

#include <memory>
#include <optional>
#include <string>

#include "proxy/net/client_session.hpp"
#include "proxy/net/upstream.hpp"
#include "proxy/phases/upstream_failure.hpp"

namespace td::proxy {

using ResponseParser = boost::beast::http::response_parser<boost::beast::http::buffer_body>;

class UpstreamExchange {
 public:
  // `req` is the request as it goes upstream (final head fields and body).
  UpstreamExchange(SessionIo& io, const UpstreamTarget& target, const config::Limits& limits, Request& req,
                   bool head_request);
  ~UpstreamExchange();
  UpstreamExchange(const UpstreamExchange&) = delete;
  UpstreamExchange& operator=(const UpstreamExchange&) = delete;

  // Makes one attempt (closing the previous attempt's connection, if any).
  // nullopt: the response head is in response(), its connection in conn().
  boost::asio::awaitable<std::optional<UpstreamFailure>> attempt();

  // The request's head or body changed since the last attempt.
  void request_changed() { request_head_.clear(); }

  ResponseParser& response() { return *parser_; }
  Request& request() { return req_; }
  UpstreamConn& conn() { return *conn_; }
  // After the response: back to the pool when it can serve another request
  // (`reusable`), closed otherwise.
  void release(bool reusable);

 private:
  UpstreamFailure failed(UpstreamFailure::Kind kind, std::string detail = {}, std::uint32_t limit_ms = 0) const;

  SessionIo& io_;
  const UpstreamTarget& target_;
  const config::Limits& limits_;
  Request& req_;
  bool head_request_;
  std::string request_head_;  // the head as sent, kept for another attempt
  std::unique_ptr<UpstreamConn> conn_;
  std::optional<ResponseParser> parser_;
};

}  // namespace td::proxy
