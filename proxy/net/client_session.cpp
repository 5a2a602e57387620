// The loop over a connection's requests and what happens before routing:
// reading and checking the head, the proxy's own paths, the request body.
#include "proxy/net/client_session.hpp"

#include <boost/asio/post.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http/read.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "proxy/net/http_rules.hpp"
#include "proxy/net/local_reply.hpp"
#include "proxy/net/pause_wait.hpp"
#include "proxy/net/stream_io.hpp"
#include "proxy/net/filter_chain.hpp"
#include "proxy/phases/routing.hpp"
#include "proxy/reports/own_endpoint.hpp"
#include "proxy/telemetry/log.hpp"
#include "proxy/telemetry/process_state.hpp"

namespace td::proxy {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

asio::awaitable<void> run_session_impl(Worker& w, tcp::socket socket) {
  ClientSession s(w, std::move(socket));
  co_await s.run();
}

// Why the proxy will not forward a request with this head: {status, message},
// status 0 when it is acceptable. Puts the origin-form target into `ctx`.
std::pair<unsigned, std::string> check_head(const RequestParser& parser, RequestContext& ctx,
                                            const config::Limits& limits) {
  const auto& req = parser.get();
  RequestHeadFacts facts;
  for (auto it = req.begin(); it != req.end(); ++it) {
    ++facts.header_count;
    if (it->name() == http::field::content_length) facts.has_content_length = true;
    if (it->name() == http::field::transfer_encoding) facts.has_transfer_encoding = true;
  }
  if (facts.has_content_length && parser.content_length()) facts.content_length = *parser.content_length();
  unsigned refuse = check_request_head(facts, limits);
  std::string message;
  if (refuse == 431) message = limit_message(431, limits, true);
  if (refuse == 400) message = "both Content-Length and Transfer-Encoding: refused";
  if (refuse == 413) message = limit_message(413, limits);
  if (!refuse && facts.has_transfer_encoding && !parser.chunked()) {
    refuse = 400;
    message = "Transfer-Encoding other than chunked: refused";
  }
  auto origin = origin_form(ctx.target);
  if (!refuse && !origin) {
    refuse = 400;
    message = "request target must be a path";
  }
  if (origin) ctx.target = std::string(*origin);
  return {refuse, std::move(message)};
}

}  // namespace

asio::awaitable<void> run_session(Worker& worker, tcp::socket socket) {
  return run_session_impl(worker, std::move(socket));
}

ClientSession::ClientSession(Worker& w, tcp::socket socket) : w_(w), client_(std::move(socket)) {
  handle_.stream = &client_;
  handle_.session = this;
  handle_.register_watch = [](void* self) { static_cast<ClientSession*>(self)->register_watch(); };
  w_.sessions.insert(&handle_);
  w_.server.open_connections.fetch_add(1, std::memory_order_relaxed);
}

ClientSession::~ClientSession() {
  *alive_ = false;
  w_.sessions.erase(&handle_);
  w_.server.open_connections.fetch_sub(1, std::memory_order_relaxed);
}

asio::awaitable<void> ClientSession::run() {
  boost::system::error_code ec;
  client_.socket().set_option(tcp::no_delay(true), ec);
  // Read once: the dashboard is served to loopback clients (docs/design.md §Dashboard).
  const auto peer = client_.socket().remote_endpoint(ec);
  if (!ec) {
    const auto a = peer.address();
    client_loopback_ = a.is_loopback() || (a.is_v6() && a.to_v6().is_v4_mapped() &&
                                           asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6()).is_loopback());
  }
  client_.socket().non_blocking(true, ec);  // for send_now()
  bool first = true;
  Next next = Next::close;
  while (!w_.server.draining.load(std::memory_order_relaxed)) {
    const auto& limits = w_.current_runtime()->config.limits;
    if (buf_.size() == 0) {
      // Idle: wait for the first byte of the next request. A drain may
      // cancel this wait (handle_.idle).
      if (buf_.capacity() > 32 * 1024) buf_.shrink_to_fit();
      handle_.idle = true;
      boost::system::error_code rec;
      {
        Deadline deadline(handle_.client_io,
                          milliseconds(first ? limits.client_header_timeout_ms : limits.keepalive_timeout_ms));
        auto [e, n] = co_await client_.async_read_some(buf_.prepare(16 * 1024), nothrow);
        rec = e;
        if (!e) buf_.commit(n);
      }
      handle_.idle = false;
      if (rec) break;
    }
    handle_.idle = false;
    next = co_await serve_one(first);
    first = false;
    if (next != Next::keep_alive) break;
  }
  if (next == Next::linger_close) co_await linger_close();
  client_.socket().shutdown(tcp::socket::shutdown_send, ec);
  client_.close();
}

// After refusing a request whose body we did not read: stop sending, then
// read and drop what the client still sends for a moment, so closing does not
// reset the connection before the client has read our answer.
asio::awaitable<void> ClientSession::linger_close() {
  boost::system::error_code ec;
  client_.socket().shutdown(tcp::socket::shutdown_send, ec);
  auto until = steady_clock::now() + std::chrono::seconds(5);
  std::size_t dropped = 0;
  while (steady_clock::now() < until && dropped < (64u << 20)) {
    Deadline deadline(handle_.client_io, std::chrono::seconds(2));
    auto [rec, n] = co_await client_.async_read_some(buf_.prepare(16 * 1024), nothrow);
    if (rec) break;
    dropped += n;
  }
  buf_.clear();
}

asio::awaitable<ClientSession::Next> ClientSession::serve_one(bool first) {
  auto rt_hold = w_.current_runtime();  // this request's snapshot
  const Runtime& rt = *rt_hold;
  const auto& limits = rt.config.limits;

  // The request's share of its big body's claim (claim_big_body()) goes
  // when the request ends, after the body string went (recycle_body, below).
  struct ClaimRelease {
    std::shared_ptr<BodyClaim>& claim;
    ~ClaimRelease() { claim.reset(); }
  } release_claim{body_claim_};
  RequestParser parser;
  parser.header_limit(limits.max_header_bytes);
  parser.body_limit(limits.max_body_bytes);
  // A recycled body string (its capacity kept), given back when the request ends.
  parser.get().body() = w_.take_body();
  struct BodyRecycler {
    Worker& w;
    RequestParser& parser;
    ~BodyRecycler() { w.give_body(std::move(parser.get().body())); }
  } recycle_body{w_, parser};
  boost::system::error_code ec = parse_buffered(parser, buf_);
  if (!ec && !parser.is_header_done()) {
    Deadline deadline(handle_.client_io, milliseconds(limits.client_header_timeout_ms));
    auto [rec, rn] = co_await http::async_read_header(client_, buf_, parser, nothrow);
    ec = rec;
  }

  RequestContext ctx;
  ctx.request_id = w_.server.next_request_id.fetch_add(1, std::memory_order_relaxed);
  ctx.start = steady_clock::now();
  ctx.wall_start = std::chrono::system_clock::now();
  auto& req = parser.get();
  ctx.method = std::string(req.method_string());
  ctx.target = std::string(req.target());
  ctx.client_loopback = client_loopback_;

  if (ec) {
    // A connection closed or timed out between requests is not an error.
    if (ec == http::error::end_of_stream || ec == asio::error::eof || handle_.client_io.timed_out ||
        ec == asio::error::connection_reset || ec == asio::error::operation_aborted)
      co_return Next::close;
    co_return co_await refuse_bad_head(ctx, ec, rt);
  }

  const bool head_request = req.method() == http::verb::head;
  // Once stopping, every answer closes its connection: the client's next
  // request opens a new one, which a load balancer sends elsewhere.
  bool keep_alive = req.keep_alive() && !w_.server.stopping.load(std::memory_order_relaxed);
  const auto refusal = check_head(parser, ctx, limits);
  auto route = route_for_path(ctx.path(), rt.config);
  ctx.provider = route.provider;
  ctx.upstream = std::string(route.upstream);
  ctx.model = std::string(route.model);
  if (refusal.first) {
    ctx.error = refusal.second;
    co_return co_await refuse(ctx, refusal.first, refusal.second, "bad_request", head_request);
  }
  if (ctx.path() == "/healthz" || ctx.path() == "/readyz" || ctx.path() == "/metrics")
    co_return co_await serve_own_path(ctx, parser, keep_alive, head_request);
  co_return co_await proxy_request(rt, parser, ctx, keep_alive);
}

// A head Beast could not parse, or one over a limit.
asio::awaitable<ClientSession::Next> ClientSession::refuse_bad_head(RequestContext& ctx,
                                                                    const boost::system::error_code& ec,
                                                                    const Runtime& rt) {
  // Beast checks a declared Content-Length against the body limit while
  // parsing the head.
  const unsigned status = ec == http::error::header_limit ? 431 : ec == http::error::body_limit ? 413 : 400;
  ctx.error = "bad request head: " + ec.message();
  ctx.provider = route_for_path(ctx.path(), rt.config).provider;
  const std::string message =
      status == 400 ? "malformed request: " + ec.message() : limit_message(status, rt.config.limits);
  const std::string_view code = status == 413 ? "request_too_large" : "bad_request";
  co_return co_await refuse(ctx, status, message, code, false);
}

// An error answer to a request whose body is not read: the connection closes.
asio::awaitable<ClientSession::Next> ClientSession::refuse(RequestContext& ctx, unsigned status,
                                                           std::string_view message, std::string_view code,
                                                           bool head_request) {
  co_await send_error(io_, ctx, status, message, code, false, head_request);
  finish(nullptr, ctx, false);
  co_return Next::linger_close;
}

// /healthz (liveness), /readyz (readiness: 503 while stopping or applying a
// reload; docs/design.md §Network) and /metrics: answered here, without
// filters. Probes and scrapes are frequent and periodic: no access line for them.
asio::awaitable<ClientSession::Next> ClientSession::serve_own_path(RequestContext& ctx, const RequestParser& parser,
                                                                   bool keep_alive, bool head_request) {
  const bool own_keep_alive = keep_alive && parser.is_done();
  const bool metrics = ctx.path() == "/metrics";
  const std::string page = metrics ? process_state().metrics().render() : std::string();
  LocalReply reply;
  reply.content_type = metrics ? Metrics::kContentType : std::string_view("text/plain");
  reply.body = metrics ? std::string_view(page) : std::string_view("ok");
  if (ctx.path() == "/readyz" && !w_.server.ready()) {
    reply.status = 503;
    reply.body = w_.server.stopping.load(std::memory_order_relaxed) ? "stopping" : "reloading";
  }
  bool ok = co_await send_local(io_, ctx, reply, own_keep_alive, head_request);
  ctx.local_response = true;
  ctx.total_ms = ms_since(ctx.start);
  co_return ok&& own_keep_alive ? Next::keep_alive : Next::linger_close;
}

// Reads the rest of the request body. With a Content-Length, the bytes the
// read buffer holds go through the parser and the rest is read straight into
// the body string: one copy from the kernel, and the connection's read
// buffer stays small instead of growing to the body's size and shrinking
// again when the connection goes idle. A chunked body goes through the
// parser piece by piece; a framing line ended by a bare LF is refused at
// once (has_bare_line_feed()). Returns the error, or {} with the body whole.
asio::awaitable<boost::system::error_code> ClientSession::read_body(RequestParser& parser,
                                                                    const config::Limits& limits) {
  const auto timeout = milliseconds(limits.client_header_timeout_ms);
  boost::system::error_code ec = parse_buffered(parser, buf_);
  if (ec || parser.is_done()) co_return ec;
  if (!parser.chunked() && parser.content_length()) {
    std::string& body = parser.get().body();
    const auto want = static_cast<std::size_t>(*parser.content_length());
    std::size_t have = body.size();
    body.reserve(want);  // done already when the head was parsed (RequestBody::reader::init)
    while (have < want) {
      // The string grows as the bytes arrive, a step at a time: resized to
      // the whole Content-Length at once, it would zero-fill (and fault in)
      // up to max_body_bytes in one go on the I/O thread, while every other
      // connection of the thread waits (docs/design.md §Big bodies).
      if (body.size() == have) body.resize(std::min(want, have + kBodyReadStep));
      Deadline deadline(handle_.client_io, timeout);
      auto [rec, n] = co_await client_.async_read_some(asio::buffer(body.data() + have, body.size() - have), nothrow);
      have += n;
      if (rec) {
        ec = rec == asio::error::eof ? http::error::partial_message : rec;
        break;
      }
    }
    body.resize(have);
    co_return ec;
  }
  // Plain reads, each parsed and checked: Beast's http::async_read_some
  // would keep reading for as long as the parser wants more.
  if (buf_.capacity() < 64 * 1024) buf_.reserve(64 * 1024);
  while (!ec && !parser.is_done()) {
    // What the parser left is framing only (the body string takes all chunk
    // data): a chunk-size line or trailers, never longer than a header block.
    const std::string_view framing = unparsed(buf_);
    if (has_bare_line_feed(framing)) {
      ec = http::error::bad_line_ending;
      break;
    }
    if (framing.size() > limits.max_header_bytes) {
      ec = http::error::header_limit;
      break;
    }
    const auto room = buf_.prepare(boost::beast::read_size(buf_, 64 * 1024));
    Deadline deadline(handle_.client_io, timeout);
    auto [rec, n] = co_await client_.async_read_some(room, nothrow);
    if (rec) {
      ec = rec == asio::error::eof ? http::error::partial_message : rec;
      break;
    }
    buf_.commit(n);
    ec = parse_buffered(parser, buf_);
  }
  co_return ec;
}

// A body of limits.diet_offload_bytes or more takes its Content-Length from
// the budget of big bodies in flight (proxy/telemetry/body_budget.hpp)
// before it is read, waiting unread while the budget is spent (the client's
// bytes stay in its socket meanwhile). False when no room came within
// limits.big_body_wait_ms. A chunked body, whose length is unknown, takes
// nothing (docs/design.md §Big bodies).
asio::awaitable<bool> ClientSession::claim_big_body(const RequestParser& parser, const config::Limits& limits) {
  if (parser.chunked() || !parser.content_length() || limits.big_bodies_in_flight_bytes == 0) co_return true;
  const std::uint64_t bytes = *parser.content_length();
  if (bytes < limits.diet_offload_bytes || bytes == 0) co_return true;
  BodyBudget& budget = process_state().body_budget();
  auto waiter = std::make_shared<ResumeHandle>();
  if (!budget.take(bytes, limits.big_bodies_in_flight_bytes, waiter)) {
    const PauseOutcome o = co_await wait_for_resume(io_, waiter, milliseconds(limits.big_body_wait_ms));
    if (o.end != PauseOutcome::End::resumed) {
      if (budget.withdraw(waiter)) budget.give_back(bytes);  // admitted just as the wait ended
      co_return false;
    }
  }
  body_claim_ = std::make_shared<BodyClaim>(budget, bytes);
  co_return true;
}

// The logging phase and the access line.
void ClientSession::finish(const Runtime* rt, RequestContext& ctx, bool run_filters) {
  ctx.total_ms = ms_since(ctx.start);
  if (rt && run_filters) for_each_filter(*rt, ctx, "logging", [&](Filter& f) { f.logging(ctx); });
  // The dashboard's answers are no traffic (a page polls every 5 s): logged
  // at debug only; a refusal is always logged (docs/design.md §Dashboard).
  const bool own = ctx.objects.find<OwnEndpoint>() && ctx.status < 400;
  if (own && !(rt && rt->config.log_level == "debug")) return;
  LogLine line = access_line(ctx);
  if (own) line.str("level", "debug");
  if (ctx.retries) line.num("retries", ctx.retries);  // only then: the line stays as it was otherwise
  if (line.emit_batched()) asio::post(w_.ioc, [] { flush_thread_log(); });
}

}  // namespace td::proxy
