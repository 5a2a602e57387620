#include "proxy/net/upstream_exchange.hpp"

#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>

#include <array>
#include <chrono>
#include <span>

#include "proxy/net/head_text.hpp"
#include "proxy/net/stream_io.hpp"
#include "proxy/telemetry/log.hpp"

namespace td::proxy {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using std::chrono::milliseconds;
using Kind = UpstreamFailure::Kind;

UpstreamExchange::UpstreamExchange(SessionIo& io, const UpstreamTarget& target, const config::Limits& limits,
                                   Request& req, bool head_request)
    : io_(io), target_(target), limits_(limits), req_(req), head_request_(head_request) {}

UpstreamExchange::~UpstreamExchange() {
  if (conn_) conn_->close();
  io_.handle.upstream = nullptr;
}

UpstreamFailure UpstreamExchange::failed(Kind kind, std::string detail, std::uint32_t limit_ms) const {
  UpstreamFailure f;
  f.kind = io_.client_gone ? Kind::client_gone : kind;
  f.detail = std::move(detail);
  f.limit_ms = limit_ms;
  f.reused_connection = conn_ && conn_->reused;
  return f;
}

// (GCC 12 coroutines mishandle non-trivial temporaries inside a co_await
// expression, hence named locals throughout.)
asio::awaitable<std::optional<UpstreamFailure>> UpstreamExchange::attempt() {
  if (conn_) conn_->close();
  io_.handle.upstream = nullptr;
  conn_ = io_.worker.pool.take(target_.pool_key);
  if (conn_) {
    io_.handle.upstream = conn_.get();
  } else {
    ConnectError ce;
    conn_ = co_await connect_upstream(target_, milliseconds(limits_.connect_timeout_ms), ce, io_.handle.upstream);
    io_.handle.upstream = conn_.get();
    if (io_.client_gone) co_return failed(Kind::client_gone);
    if (!conn_) {
      log_error("upstream_connect", ce.message);
      co_return failed(ce.timeout ? Kind::connect_timeout : Kind::connect_failed, ce.message);
    }
  }

  // The request, head and body in one gather write.
  if (request_head_.empty()) request_head_ = head_text(req_);
  const std::array<asio::const_buffer, 2> request_bytes{asio::buffer(request_head_), asio::buffer(req_.body())};
  const std::span<const asio::const_buffer> request_bufs(request_bytes.data(), req_.body().empty() ? 1 : 2);
  boost::system::error_code ec;
  {
    Deadline deadline(io_.handle.upstream_io, milliseconds(limits_.idle_timeout_ms));
    if (conn_->tls) {
      auto [e, n] = co_await asio::async_write(*conn_->tls, request_bufs, nothrow);
      ec = e;
    } else {
      ec = co_await send_now(*conn_->plain, request_bufs);
    }
  }
  if (io_.client_gone) co_return failed(Kind::client_gone);
  if (ec) {
    if (io_.handle.upstream_io.timed_out) co_return failed(Kind::send_timeout, {}, limits_.idle_timeout_ms);
    co_return failed(Kind::send_failed, ec.message());
  }

  // The response head; interim 1xx answers are skipped (RFC 9110 §15.2: a
  // client may ignore them). Beast reads into the free capacity of the
  // buffer: give it room for large pieces.
  if (conn_->buffer.capacity() < Worker::kRelayBufferSize) conn_->buffer.reserve(Worker::kRelayBufferSize);
  {
    Deadline deadline(io_.handle.upstream_io, milliseconds(limits_.header_timeout_ms));
    for (;;) {
      parser_.emplace();
      parser_->body_limit(boost::none);
      parser_->header_limit(std::max<std::uint32_t>(limits_.max_header_bytes, 64 * 1024));
      if (head_request_) parser_->skip(true);
      if (conn_->tls) {
        auto [e, n] = co_await http::async_read_header(*conn_->tls, conn_->buffer, *parser_, nothrow);
        ec = e;
      } else {
        auto [e, n] = co_await http::async_read_header(*conn_->plain, conn_->buffer, *parser_, nothrow);
        ec = e;
      }
      const unsigned status = parser_->get().result_int();
      if (ec || status >= 200 || status == 101) break;
    }
  }
  if (ec) {
    if (io_.handle.upstream_io.timed_out) co_return failed(Kind::response_timeout, {}, limits_.header_timeout_ms);
    co_return failed(Kind::no_response, ec.message());
  }
  if (io_.client_gone) co_return failed(Kind::client_gone);
  // Upgrade and Connection never go upstream (http_rules.cpp), so a switch of
  // protocols is nothing the client could follow: relayed, it would wait for
  // a body that never comes.
  if (parser_->get().result_int() == 101)
    co_return failed(Kind::bad_response, "101 Switching Protocols to a request that did not ask to upgrade");
  co_return std::nullopt;
}

void UpstreamExchange::release(bool reusable) {
  io_.handle.upstream = nullptr;
  if (!conn_) return;
  if (reusable)
    io_.worker.pool.put(std::move(conn_), limits_.pool_max_idle_per_upstream);
  else
    conn_->close();
  conn_.reset();
}

}  // namespace td::proxy
