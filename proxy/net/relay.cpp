#include "proxy/net/relay.hpp"

#include <boost/beast/http/read.hpp>

#include <charconv>
#include <tuple>
#include <utility>
#include <chrono>

#include "proxy/net/beast_header_map.hpp"
#include "proxy/net/filter_chain.hpp"
#include "proxy/net/stream_io.hpp"
#include "proxy/telemetry/log.hpp"

namespace td::proxy {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using std::chrono::milliseconds;

namespace {

// Bytes that came with the head (or a previous read) into the body buffer, no I/O.
boost::system::error_code parse_buffered_body(ResponseParser& rp, boost::beast::flat_buffer& buffer) {
  auto& body = rp.get().body();
  boost::system::error_code ec;
  while (buffer.size() > 0 && body.size > 0 && !rp.is_done()) {
    auto used = rp.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == http::error::need_buffer || ec == http::error::need_more) ec = {};
    if (ec || used == 0) break;
  }
  return ec;
}

// The next bytes from upstream into the body buffer (no coroutine of its
// own: this runs for every piece of a stream).
asio::awaitable<std::tuple<boost::system::error_code, std::size_t>> read_body_some(UpstreamConn& conn,
                                                                                   ResponseParser& rp) {
  return conn.tls ? http::async_read_some(*conn.tls, conn.buffer, rp, nothrow)
                  : http::async_read_some(*conn.plain, conn.buffer, rp, nothrow);
}

}  // namespace

asio::awaitable<PrefetchedBody> prefetch_body(SessionIo& io, UpstreamExchange& exchange, const config::Limits& limits) {
  static_assert(Worker::kRelayBufferSize == UpstreamOutcome::kMaxBufferedBody);
  PrefetchedBody out;
  out.buffer = io.worker.take_buffer();
  auto& rp = exchange.response();
  auto& body = rp.get().body();
  body.data = out.buffer.get();
  body.size = Worker::kRelayBufferSize;
  boost::system::error_code ec;
  for (;;) {
    ec = parse_buffered_body(rp, exchange.conn().buffer);
    if (ec || rp.is_done() || body.size == 0) break;
    Deadline deadline(io.handle.upstream_io, milliseconds(limits.idle_timeout_ms));
    auto [rec, rn] = co_await read_body_some(exchange.conn(), rp);
    ec = rec == http::error::need_buffer ? boost::system::error_code{} : rec;
    if (ec || io.client_gone) break;
  }
  out.size = Worker::kRelayBufferSize - body.size;
  out.error = ec;
  co_return out;
}

Relay::Relay(SessionIo& io, const Runtime& rt, RequestContext& ctx, UpstreamExchange& exchange)
    : io_(io), rt_(rt), ctx_(ctx), exchange_(exchange), limits_(rt.config.limits) {}

// Phase 4 and the framing towards the client.
void Relay::relay_head(bool head_request, unsigned client_version, bool& keep_alive) {
  auto& res = exchange_.response().get();
  BeastHeaderMap rh(res);
  strip_dropped_fields(res, false);
  for_each_filter(rt_, ctx_, "response_head_filter", [&](Filter& f) { f.response_head_filter(ctx_, rh); });
  // The core's, on every response; after the phase, which need not read it.
  res.set("x-tokendiet-request-id", std::to_string(ctx_.request_id));

  const bool no_body = head_request || !has_body_status(ctx_.status);
  if (auto cl = res.find(http::field::content_length); cl != res.end() && !no_body) {
    std::uint64_t v = 0;
    auto text = cl->value();
    auto [p, perr] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (perr == std::errc{} && p == text.data() + text.size())
      declared_length_ = v;
    else
      res.erase(http::field::content_length);
  }
  if (no_body) {
    res.chunked(false);
  } else if (!declared_length_) {
    if (client_version == 11)
      res.chunked(true);
    else
      keep_alive = false;  // HTTP/1.0 client: the end of the body is the end of the connection
  }
  if (io_.worker.server.draining.load(std::memory_order_relaxed)) keep_alive = false;
  res.version(11);
  res.keep_alive(keep_alive);
}

// Nothing of the body has arrived yet (a model thinking before its first
// event): the client gets the head now, not with that event.
asio::awaitable<bool> Relay::send_head_early(ResponseFramer& framer) {
  boost::system::error_code ec;
  {
    Deadline deadline(io_.handle.client_io, milliseconds(limits_.idle_timeout_ms));
    ec = co_await send_now(io_.client, framer.head_only());
  }
  if (ec || io_.client_gone) co_return false;
  framer.sent();
  ctx_.ttfb_ms = ms_since(ctx_.start);
  co_return true;
}

// Phase 5 on one piece: what goes to the client. A filter that sets
// ctx.continuation on the last piece keeps the filters after it from seeing
// it as the last (§Continuations).
std::string_view Relay::filter_piece(const char* data, std::size_t size, bool done) {
  if (rt_.filters.empty()) return {data, size};
  chunk_.assign(data, size);
  bool end = done;
  for_each_filter(rt_, ctx_, "response_body_filter", [&](Filter& f) {
    f.response_body_filter(ctx_, chunk_, end);
    if (end && ctx_.continuation) end = false;
  });
  return chunk_;
}

// One piece to the client (with the head, if not sent yet); false when the
// client failed.
asio::awaitable<bool> Relay::send_piece(ResponseFramer& framer, std::string_view piece, bool last) {
  boost::system::error_code ec;
  {
    Deadline deadline(io_.handle.client_io, milliseconds(limits_.idle_timeout_ms));
    ec = co_await send_now(io_.client, framer.frame(piece.data(), piece.size(), last));
  }
  if (ec || io_.client_gone) {
    client_failed();
    co_return false;
  }
  if (!framer.head_sent()) ctx_.ttfb_ms = ms_since(ctx_.start);
  framer.sent();
  ctx_.bytes_out += piece.size();
  co_return true;
}

// The continuation phase (docs/design.md §Continuations), after the last
// piece of a response whose filters asked for one went to the client: the
// next round's request, its head read. False when there is none (no filter
// wrote one, or it failed or answered >= 400: its body is not relayed).
asio::awaitable<bool> Relay::continue_upstream(bool& upstream_keep_alive) {
  ctx_.continuation = false;
  exchange_.release(upstream_keep_alive && exchange_.conn().buffer.size() == 0);
  upstream_keep_alive = false;  // no connection until the next round has one
  Request& req = exchange_.request();
  if (!run_continuation_phase(rt_, ctx_, req.body())) co_return false;
  req.content_length(req.body().size());
  ctx_.bytes_upstream += req.body().size();
  exchange_.request_changed();
  std::optional<UpstreamFailure> failure = co_await exchange_.attempt();
  if (failure && stale_connection_retry(*failure)) failure = co_await exchange_.attempt();
  const unsigned status = failure ? 0 : exchange_.response().get().result_int();
  if (failure || status < 200 || status >= 300) {
    if (!failure || failure->kind != UpstreamFailure::Kind::client_gone)
      log_error("continuation", "request " + std::to_string(ctx_.request_id) + ": " +
                                    (failure ? failure->detail : "status " + std::to_string(status)));
    exchange_.release(false);
    co_return false;
  }
  upstream_keep_alive = exchange_.response().keep_alive();
  co_return true;
}

void Relay::client_failed() {
  if (io_.handle.client_io.timed_out)
    ctx_.error = "client did not read for " + std::to_string(limits_.idle_timeout_ms) + " ms";
  io_.client_gone = true;
}

void Relay::upstream_failed(const boost::system::error_code& ec, const ResponseFramer& framer) {
  ctx_.upstream_error = true;
  const bool idle = io_.handle.upstream_io.timed_out;
  if (framer.head_sent() || io_.client_gone) {
    ctx_.error = idle ? "upstream idle for " + std::to_string(limits_.idle_timeout_ms) + " ms mid-body"
                      : "upstream broke mid-body: " + ec.message();
    return;
  }
  // The client has nothing of this response yet: it can still be told so.
  UpstreamFailure f;
  f.kind = UpstreamFailure::Kind::bad_response;
  f.detail = "broke before any byte reached the client: ";
  f.detail += idle ? "idle for " + std::to_string(limits_.idle_timeout_ms) + " ms" : ec.message();
  unanswered_ = std::move(f);
}

asio::awaitable<bool> Relay::run(bool head_request, unsigned client_version, bool keep_alive,
                                 PrefetchedBody& prefetched) {
  auto& rp = exchange_.response();
  auto& res = rp.get();
  ctx_.status = res.result_int();
  bool upstream_keep_alive = rp.keep_alive();
  relay_head(head_request, client_version, keep_alive);

  ResponseFramer framer(res, res.chunked());
  auto buffer = prefetched.buffer ? std::move(prefetched.buffer) : io_.worker.take_buffer();
  char* buf = buffer.get();
  constexpr std::size_t kBuf = Worker::kRelayBufferSize;
  bool done = rp.is_done();
  bool broken = false;
  auto& body = res.body();
  std::size_t ahead = prefetched.size;  // read before the relay, not sent yet
  while (true) {
    std::size_t n = 0;
    if (ahead > 0 || prefetched.error) {
      n = std::exchange(ahead, 0);
    } else if (!done) {
      body.data = buf;
      body.size = kBuf;
      boost::system::error_code ec = parse_buffered_body(rp, exchange_.conn().buffer);
      if (!ec && body.size == kBuf && !rp.is_done()) {
        if (!framer.head_sent() && !co_await send_head_early(framer)) {
          client_failed();
          broken = true;
          break;
        }
        Deadline deadline(io_.handle.upstream_io, milliseconds(limits_.idle_timeout_ms));
        auto [rec, rn] = co_await read_body_some(exchange_.conn(), rp);
        ec = rec == http::error::need_buffer ? boost::system::error_code{} : rec;
      }
      if (io_.client_gone) {
        broken = true;
        break;
      }
      if (ec) {
        upstream_failed(ec, framer);
        broken = true;
        break;
      }
      n = kBuf - body.size;
      done = rp.is_done();
    }
    std::string_view piece = filter_piece(buf, n, done);
    if (piece.empty() && !done) {
      if (!prefetched.error) continue;
      upstream_failed(prefetched.error, framer);
      broken = true;
      break;
    }
    // Another round follows (§Continuations): the client's body stays open.
    const bool last = done && !ctx_.continuation;
    if ((!piece.empty() || last || !framer.head_sent()) && !co_await send_piece(framer, piece, last)) {
      broken = true;
      break;
    }
    if (prefetched.error) {
      upstream_failed(prefetched.error, framer);
      broken = true;
      break;
    }
    if (done && ctx_.continuation) {
      const bool next = co_await continue_upstream(upstream_keep_alive);
      if (io_.client_gone) {
        broken = true;
        break;
      }
      if (next) {
        done = rp.is_done();
        continue;
      }
      // No next round: the filters end the response on an empty last piece.
      piece = filter_piece(nullptr, 0, true);
      if (!co_await send_piece(framer, piece, true)) broken = true;
      break;
    }
    if (done) break;
  }
  io_.worker.give_buffer(std::move(buffer));
  co_return finish(broken, done, upstream_keep_alive, keep_alive);
}

// The upstream connection back to the pool or closed; whether the client's
// connection can serve another request.
bool Relay::finish(bool broken, bool done, bool upstream_keep_alive, bool keep_alive) {
  if (declared_length_ && !broken && ctx_.bytes_out != *declared_length_) {
    // A filter changed the length without dropping Content-Length: the
    // client's framing is off, so this connection cannot be reused.
    log_error("framing", "response body length " + std::to_string(ctx_.bytes_out) + " != Content-Length " +
                             std::to_string(*declared_length_) + " for request " + std::to_string(ctx_.request_id));
    keep_alive = false;
  }
  if (broken) keep_alive = false;
  exchange_.release(!broken && done && upstream_keep_alive && exchange_.conn().buffer.size() == 0);
  return keep_alive;
}

}  // namespace td::proxy
