// One client connection: the request lifecycle of DESIGN.md, phase by phase.
//
//   read head (limits, timeouts) → route by path → request_filter
//   → read body (≤ max_body_bytes) → request_body_filter
//   → upstream request (hop-by-hop removed, Host rewritten, identity encoding)
//   → upstream_request_filter → upstream (pool, TLS) → upstream_response_filter
//   → relay body piece by piece through response_body_filter (one buffer in
//     flight: never read upstream faster than the client drains)
//   → logging phase + access line.
//
// While a request is upstream, a watcher notices the client going away and
// closes the upstream connection, which cancels the upstream request.
#include <sys/socket.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>

#include <charconv>
#include <chrono>
#include <optional>
#include <span>
#include <string>

#include "proxy/net/beast_header_map.hpp"
#include "proxy/phases/body_peek.hpp"
#include "proxy/phases/errors.hpp"
#include "proxy/net/head_text.hpp"
#include "proxy/net/http_rules.hpp"
#include "proxy/telemetry/log.hpp"
#include "proxy/net/request_body.hpp"
#include "proxy/net/response_framer.hpp"
#include "proxy/phases/routing.hpp"
#include "proxy/telemetry/telemetry.hpp"
#include "proxy/net/worker.hpp"

namespace td::proxy {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);

using RequestParser = http::request_parser<RequestBody>;
using Request = http::request<RequestBody>;
using ResponseParser = http::response_parser<http::buffer_body>;

double ms_since(steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(steady_clock::now() - t).count();
}

// Runs one phase over every filter; an exception is a filter bug: the request
// continues fail-open (the filter's change, if any, may be partial, so the
// body filter is given a copy it can spoil).
template <class Fn>
void for_each_filter(const Runtime& rt, RequestContext& ctx, const char* phase, Fn&& fn) {
  for (auto& f : rt.filters) {
    try {
      fn(*f);
    } catch (const std::exception& e) {
      ctx.fail_open = true;
      ctx.fail_open_reason = std::string(f->name()) + " " + phase + ": " + e.what();
      log_error("filter_error", ctx.fail_open_reason);
    } catch (...) {
      ctx.fail_open = true;
      ctx.fail_open_reason = std::string(f->name()) + " " + phase + ": unknown exception";
      log_error("filter_error", ctx.fail_open_reason);
    }
  }
}

// Feeds bytes already in `buffer` to the parser, without any I/O: a request
// (or response) that arrived whole is parsed with no further async operation,
// each of which would cost a trip through the scheduler. Stops at the end of
// the header when the header is not complete yet (the caller acts on it
// first), at the end of the message, or when more bytes are needed.
// Returns the parse error, or {} (need_more is not an error).
template <class Parser>
boost::system::error_code parse_buffered(Parser& parser, beast::flat_buffer& buffer) {
  boost::system::error_code ec;
  const bool header_pending = !parser.is_header_done();
  while (buffer.size() > 0 && !parser.is_done()) {
    auto n = parser.put(buffer.data(), ec);
    buffer.consume(n);
    if (ec == http::error::need_more) return {};
    if (ec) return ec;
    if (header_pending && parser.is_header_done()) break;
    if (n == 0) break;
  }
  return {};
}

// Writes what the socket takes at once with one non-blocking gather write,
// and only the rest (if any) asynchronously: a write that completes
// immediately then costs no trip through the scheduler. The socket must be
// in non-blocking mode.
asio::awaitable<boost::system::error_code> send_now(beast::tcp_stream& stream,
                                                    std::span<const asio::const_buffer> bufs) {
  boost::system::error_code ec;
  if (bufs.empty()) co_return ec;
  std::size_t n = stream.socket().write_some(bufs, ec);
  if (!ec && n == asio::buffer_size(bufs)) co_return ec;
  if (ec && ec != asio::error::would_block && ec != asio::error::try_again) co_return ec;
  if (ec) n = 0;
  beast::buffers_suffix<std::span<const asio::const_buffer>> rest(bufs);
  rest.consume(n);
  auto [aec, written] = co_await asio::async_write(stream, rest, nothrow);
  co_return aec;
}

bool has_body_status(unsigned status) { return !(status < 200 || status == 204 || status == 304); }

class ClientSession {
 public:
  ClientSession(Worker& w, tcp::socket socket) : w_(w), client_(std::move(socket)) {
    handle_.stream = &client_;
    handle_.session = this;
    handle_.register_watch = [](void* self) { static_cast<ClientSession*>(self)->register_watch(); };
    w_.sessions.insert(&handle_);
    w_.server.open_connections.fetch_add(1, std::memory_order_relaxed);
  }
  ~ClientSession() {
    *alive_ = false;
    w_.sessions.erase(&handle_);
    w_.server.open_connections.fetch_sub(1, std::memory_order_relaxed);
  }

  asio::awaitable<void> run();

 private:
  // Outcome of one request on this connection.
  enum class Next { keep_alive, close, linger_close };

  asio::awaitable<Next> serve_one(bool first);
  asio::awaitable<Next> proxy_request(const Runtime& rt, RequestParser& parser, RequestContext& ctx,
                                      bool keep_alive);
  asio::awaitable<void> exchange(const Runtime& rt, const UpstreamTarget& target, Request& req,
                                 RequestContext& ctx, bool head_request, bool& keep_alive);
  asio::awaitable<boost::system::error_code> read_body(RequestParser& parser, const config::Limits& limits);
  void start_watch();
  void register_watch();
  void on_watch(const boost::system::error_code& ec);
  void stop_watch();
  void client_went_away();
  asio::awaitable<bool> send_local(RequestContext& ctx, unsigned status, std::string_view content_type,
                                   std::string_view body, bool keep_alive, bool head_request,
                                   const std::vector<std::pair<std::string, std::string>>& extra);
  asio::awaitable<bool> send_error(RequestContext& ctx, unsigned status, std::string_view message,
                                   std::string_view code, bool keep_alive, bool head_request);
  asio::awaitable<void> linger_close();
  void finish(const Runtime* rt, RequestContext& ctx, bool run_filters);

  Worker& w_;
  beast::tcp_stream client_;
  beast::flat_buffer buf_;
  SessionHandle handle_;
  // The client watcher: while a request is upstream, a wait for the client
  // socket to become readable notices it closing (see start_watch()).
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // outlives us in a pending handler
  bool watching_ = false;
  bool watch_pending_ = false;
  bool client_gone_ = false;
  asio::steady_timer* hold_timer_ = nullptr;  // the delay_upstream wait, if running
  std::string last_key_, last_key_fingerprint_;  // see proxy_request()
  unsigned client_version_ = 11;  // HTTP version of the current request (10 or 11)
};

asio::awaitable<void> run_session_impl(Worker& w, tcp::socket socket) {
  ClientSession s(w, std::move(socket));
  co_await s.run();
}

asio::awaitable<void> ClientSession::run() {
  boost::system::error_code ec;
  client_.socket().set_option(tcp::no_delay(true), ec);
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
      handle_.client_timeout(milliseconds(first ? limits.client_header_timeout_ms : limits.keepalive_timeout_ms));
      auto [rec, n] = co_await client_.async_read_some(buf_.prepare(16 * 1024), nothrow);
      handle_.idle = false;
      handle_.no_client_timeout();
      if (rec) break;
      buf_.commit(n);
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
    handle_.client_timeout(std::chrono::seconds(2));
    auto [rec, n] = co_await client_.async_read_some(buf_.prepare(16 * 1024), nothrow);
    if (rec) break;
    dropped += n;
  }
  handle_.no_client_timeout();
  buf_.clear();
}

asio::awaitable<ClientSession::Next> ClientSession::serve_one(bool first) {
  auto rt_hold = w_.current_runtime();  // this request's snapshot
  const Runtime& rt = *rt_hold;
  const auto& limits = rt.config.limits;

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
    handle_.client_timeout(milliseconds(limits.client_header_timeout_ms));
    auto [rec, rn] = co_await http::async_read_header(client_, buf_, parser, nothrow);
    handle_.no_client_timeout();
    ec = rec;
  }

  RequestContext ctx;
  ctx.request_id = w_.server.next_request_id.fetch_add(1, std::memory_order_relaxed);
  ctx.start = steady_clock::now();
  ctx.wall_start = std::chrono::system_clock::now();
  auto& req = parser.get();

  if (ec) {
    // A connection closed or timed out between requests is not an error.
    if (ec == http::error::end_of_stream || ec == asio::error::eof || handle_.client_timed_out ||
        ec == asio::error::connection_reset || ec == asio::error::operation_aborted)
      co_return Next::close;
    ctx.method = std::string(req.method_string());
    ctx.target = std::string(req.target());
    // Beast checks a declared Content-Length against the body limit while
    // parsing the head.
    unsigned status = ec == http::error::header_limit ? 431 : ec == http::error::body_limit ? 413 : 400;
    ctx.error = "bad request head: " + ec.message();
    auto route = route_for_path(ctx.path(), rt.config);
    ctx.provider = route.provider;
    std::string message =
        status == 431   ? std::string("request header block too large")
        : status == 413 ? "request body larger than the limit of " + std::to_string(limits.max_body_bytes) + " bytes"
                        : "malformed request: " + ec.message();
    co_await send_error(ctx, status, message, status == 413 ? "request_too_large" : "bad_request", false, false);
    finish(nullptr, ctx, false);
    co_return Next::linger_close;
  }

  ctx.method = std::string(req.method_string());
  ctx.target = std::string(req.target());
  const bool head_request = req.method() == http::verb::head;
  bool keep_alive = req.keep_alive() && !w_.server.draining.load(std::memory_order_relaxed);

  // Limits and framing rules on the head.
  RequestHeadFacts facts;
  for (auto it = req.begin(); it != req.end(); ++it) {
    ++facts.header_count;
    if (it->name() == http::field::content_length) facts.has_content_length = true;
    if (it->name() == http::field::transfer_encoding) facts.has_transfer_encoding = true;
  }
  if (facts.has_content_length && parser.content_length()) facts.content_length = *parser.content_length();
  unsigned refuse = check_request_head(facts, limits);
  std::string refuse_message;
  if (refuse == 431) refuse_message = "too many request header fields";
  if (refuse == 400) refuse_message = "both Content-Length and Transfer-Encoding: refused";
  if (refuse == 413) refuse_message = "request body larger than the limit of " + std::to_string(limits.max_body_bytes) + " bytes";
  if (!refuse && facts.has_transfer_encoding && !parser.chunked()) {
    refuse = 400;
    refuse_message = "Transfer-Encoding other than chunked: refused";
  }
  auto origin = origin_form(ctx.target);
  if (!refuse && !origin) {
    refuse = 400;
    refuse_message = "request target must be a path";
  }
  if (origin) ctx.target = std::string(*origin);

  auto route = route_for_path(ctx.path(), rt.config);
  ctx.provider = route.provider;
  ctx.upstream = std::string(route.upstream);
  ctx.model = std::string(route.model);

  if (refuse) {
    ctx.error = refuse_message;
    co_await send_error(ctx, refuse, refuse_message, "bad_request", false, head_request);
    finish(nullptr, ctx, false);
    co_return Next::linger_close;
  }

  if (ctx.path() == "/healthz") {
    const bool healthz_keep_alive = keep_alive && parser.is_done();
    static const std::vector<std::pair<std::string, std::string>> kNoExtra;
    bool ok = co_await send_local(ctx, 200, "text/plain", "ok", healthz_keep_alive, head_request, kNoExtra);
    ctx.local_response = true;
    ctx.total_ms = ms_since(ctx.start);
    // Health probes are frequent: no access line for them.
    co_return ok && keep_alive && parser.is_done() ? Next::keep_alive : Next::linger_close;
  }

  if (ctx.path() == "/metrics") {
    const bool metrics_keep_alive = keep_alive && parser.is_done();
    static const std::vector<std::pair<std::string, std::string>> kNoExtra;
    const std::string page = telemetry().metrics().render();
    bool ok = co_await send_local(ctx, 200, Metrics::kContentType, page, metrics_keep_alive, head_request,
                                  kNoExtra);
    ctx.local_response = true;
    ctx.total_ms = ms_since(ctx.start);
    // Scrapes are periodic: no access line for them either.
    co_return ok && metrics_keep_alive ? Next::keep_alive : Next::linger_close;
  }

  co_return co_await proxy_request(rt, parser, ctx, keep_alive);
}

asio::awaitable<ClientSession::Next> ClientSession::proxy_request(const Runtime& rt, RequestParser& parser, RequestContext& ctx,
                                                   bool keep_alive) {
  const auto& limits = rt.config.limits;
  auto& req = parser.get();
  const bool head_request = req.method() == http::verb::head;
  BeastHeaderMap headers(req);
  ctx.session_id = std::string(req["x-tokendiet-session"]);
  // The key's fingerprint, remembered for the connection: an agent sends the
  // same key on every request of a keep-alive connection.
  if (auto key = find_api_key(headers, ctx.query()); key != last_key_) {
    last_key_ = key;
    last_key_fingerprint_ = key_fingerprint(key);
  }
  ctx.key_fingerprint = last_key_fingerprint_;

  // Phase 1: request_filter (body not read yet).
  std::optional<LocalResponse> answer;
  for_each_filter(rt, ctx, "request_filter", [&](Filter& f) {
    if (!answer) answer = f.request_filter(ctx, headers);
  });
  if (answer) {
    ctx.local_response = true;
    bool body_pending = !parser.is_done();
    const bool answer_keep_alive = keep_alive && !body_pending;
    co_await send_local(ctx, answer->status, answer->content_type, answer->body, answer_keep_alive, head_request,
                        answer->headers);
    finish(&rt, ctx, true);
    co_return body_pending ? Next::linger_close : (keep_alive ? Next::keep_alive : Next::close);
  }

  // The body, whole, within the limit.
  if (!parser.is_done()) {
    if (req.version() == 11 && iequals(req[http::field::expect], "100-continue")) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      handle_.client_timeout(milliseconds(limits.idle_timeout_ms));
      auto [cec, cn] = co_await asio::async_write(client_, asio::buffer(kContinue), nothrow);
      handle_.no_client_timeout();
      if (cec) co_return Next::close;
    }
    boost::system::error_code bec = co_await read_body(parser, limits);
    if (bec == http::error::body_limit) {
      ctx.error = "request body over the limit";
      std::string message = "request body larger than the limit of " + std::to_string(limits.max_body_bytes) + " bytes";
      co_await send_error(ctx, 413, message, "request_too_large", false, head_request);
      finish(nullptr, ctx, false);
      co_return Next::linger_close;
    }
    if (bec) {
      // The client went away or sent a broken body: nothing to answer.
      if (bec != http::error::partial_message && bec != asio::error::eof &&
          bec != asio::error::connection_reset && !handle_.client_timed_out &&
          bec != asio::error::operation_aborted) {
        ctx.error = "bad request body: " + bec.message();
        std::string message = "malformed request body: " + bec.message();
        co_await send_error(ctx, 400, message, "bad_request", false, head_request);
        finish(nullptr, ctx, false);
        co_return Next::linger_close;
      }
      co_return Next::close;
    }
  }
  const bool had_body_framing = req.find(http::field::content_length) != req.end() || parser.chunked();
  std::string& body = req.body();
  ctx.bytes_in = body.size();
  if (ctx.provider == Provider::gemini && ctx.path().ends_with(":streamGenerateContent")) ctx.stream = true;

  // Phase 2: request_body_filter.
  for_each_filter(rt, ctx, "request_body_filter", [&](Filter& f) {
    if (!answer) answer = f.request_body_filter(ctx, headers, body);
  });
  // The log line's model and stream flag when no filter read them.
  if (ctx.model.empty() && !body.empty()) {
    auto peek = peek_body(body);
    ctx.model = std::string(peek.model);
    ctx.stream = ctx.stream || peek.stream;
  }
  if (answer) {
    ctx.local_response = true;
    co_await send_local(ctx, answer->status, answer->content_type, answer->body, keep_alive, head_request,
                        answer->headers);
    finish(&rt, ctx, true);
    co_return keep_alive ? Next::keep_alive : Next::close;
  }

  const UpstreamTarget* target = rt.upstream(ctx.upstream);
  if (!target) {
    ctx.error = "no upstream configured for '" + ctx.upstream + "'";
    std::string message = "tokendiet: " + ctx.error;
    co_await send_error(ctx, 502, message, "upstream_unreachable", keep_alive, head_request);
    finish(&rt, ctx, true);
    co_return keep_alive ? Next::keep_alive : Next::close;
  }

  // The upstream request: the client's, minus hop-by-hop fields and our own
  // x-tokendiet-* ones, with the upstream's Host and identity encoding.
  strip_dropped_fields(req, true);
  req.erase(http::field::expect);  // we hold the whole body: nothing to wait for
  req.set(http::field::host, target->host_header);
  req.set(http::field::accept_encoding, "identity");
  if (!target->cfg.path_prefix.empty()) req.target(target->cfg.path_prefix + ctx.target);
  else if (req.target() != ctx.target) req.target(ctx.target);
  client_version_ = req.version() == 10 ? 10 : 11;
  req.version(11);

  // Phase 3: upstream_request_filter.
  for_each_filter(rt, ctx, "upstream_request_filter", [&](Filter& f) { f.upstream_request_filter(ctx, headers); });
  if (!body.empty() || had_body_framing) req.content_length(body.size());
  ctx.bytes_upstream = body.size();

  // From here on the request is upstream's: watch the client for going away.
  start_watch();
  if (ctx.delay_upstream.count() > 0) {
    asio::steady_timer hold(co_await asio::this_coro::executor, ctx.delay_upstream);
    hold_timer_ = &hold;
    co_await hold.async_wait(nothrow);
    hold_timer_ = nullptr;
    if (client_gone_) {
      stop_watch();
      ctx.client_aborted = true;
      ctx.error = "client went away while the request was held";
      finish(&rt, ctx, true);
      co_return Next::close;
    }
  }

  // Phases 4-5: upstream.
  co_await exchange(rt, *target, req, ctx, head_request, keep_alive);
  stop_watch();
  if (client_gone_) {
    ctx.client_aborted = true;
    if (ctx.error.empty()) ctx.error = "client closed the connection";
    keep_alive = false;
  }
  finish(&rt, ctx, true);
  co_return keep_alive ? Next::keep_alive : Next::close;
}

// Reads the rest of the request body. With a Content-Length, the bytes the
// read buffer holds go through the parser and the rest is read straight into
// the body string: one copy from the kernel, and the connection's read
// buffer stays small instead of growing to the body's size and shrinking
// again when the connection goes idle. A chunked body goes through the
// parser piece by piece. Returns the error, or {} with the body whole.
asio::awaitable<boost::system::error_code> ClientSession::read_body(RequestParser& parser,
                                                                    const config::Limits& limits) {
  const auto timeout = milliseconds(limits.client_header_timeout_ms);
  boost::system::error_code ec = parse_buffered(parser, buf_);
  if (ec || parser.is_done()) co_return ec;
  if (!parser.chunked() && parser.content_length()) {
    std::string& body = parser.get().body();
    const auto want = static_cast<std::size_t>(*parser.content_length());
    std::size_t have = body.size();
    body.resize(want);
    while (have < want) {
      handle_.client_timeout(timeout);
      auto [rec, n] = co_await client_.async_read_some(asio::buffer(body.data() + have, want - have), nothrow);
      handle_.no_client_timeout();
      have += n;
      if (rec) {
        ec = rec == asio::error::eof ? http::error::partial_message : rec;
        break;
      }
    }
    body.resize(have);
    co_return ec;
  }
  if (buf_.capacity() < 64 * 1024) buf_.reserve(64 * 1024);
  while (!ec && !parser.is_done()) {
    handle_.client_timeout(timeout);
    auto [rec, rn] = co_await http::async_read_some(client_, buf_, parser, nothrow);
    handle_.no_client_timeout();
    ec = rec;
    if (!ec) ec = parse_buffered(parser, buf_);
  }
  co_return ec;
}

// The client watcher. A wait for readability on the client socket: the
// request was read whole, so readable means the client closed (EOF or an
// error: it went away, and the upstream request is cancelled by closing its
// connection) or pipelined its next request (then stop watching). A plain
// handler, not a coroutine. The worker's sweep registers it
// (SessionHandle::watch_due), so a request answered before the next sweep
// registers nothing.
void ClientSession::start_watch() {
  client_gone_ = false;
  watching_ = true;
  handle_.watch_due = !watch_pending_;
}

void ClientSession::register_watch() {
  if (!watching_ || watch_pending_) return;
  watch_pending_ = true;
  client_.socket().async_wait(tcp::socket::wait_read, [this, alive = alive_](const boost::system::error_code& ec) {
    if (*alive) on_watch(ec);
  });
}

void ClientSession::on_watch(const boost::system::error_code& ec) {
  watch_pending_ = false;
  if (!watching_) return;
  if (ec == asio::error::operation_aborted) {
    // The cancel of an earlier request's watch, run after this request
    // started watching: the sweep registers a new one.
    handle_.watch_due = true;
    return;
  }
  if (!ec) {
    char byte;
    ssize_t n = ::recv(client_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      register_watch();  // not really readable: keep watching
      return;
    }
    if (n > 0) return;  // a pipelined request: the client is still there
  }
  client_went_away();
}

void ClientSession::client_went_away() {
  client_gone_ = true;
  watching_ = false;
  if (handle_.upstream) handle_.upstream->close();
  if (hold_timer_) hold_timer_->cancel();
}

void ClientSession::stop_watch() {
  watching_ = false;
  handle_.watch_due = false;
  if (watch_pending_) {
    boost::system::error_code ignored;
    client_.socket().cancel(ignored);  // the handler runs with operation_aborted
  }
}

asio::awaitable<void> ClientSession::exchange(const Runtime& rt, const UpstreamTarget& target, Request& req,
                                              RequestContext& ctx, bool head_request, bool& keep_alive) {
  const auto& limits = rt.config.limits;
  const auto idle = milliseconds(limits.idle_timeout_ms);
  std::unique_ptr<UpstreamConn> conn;
  std::optional<ResponseParser> rp;
  auto on = [&](auto&& op) { return conn->tls ? op(*conn->tls) : op(*conn->plain); };

  // A failure before any response byte went to the client becomes a
  // provider-shaped error. (GCC 12 coroutines mishandle non-trivial
  // temporaries inside a co_await expression, hence named locals throughout.)
  unsigned fail_status = 0;
  std::string fail_message;
  std::string request_head;  // the request's head as sent, kept for a retry
  for (int attempt = 0;; ++attempt) {
    conn = w_.pool.take(target.pool_key);
    if (conn) {
      handle_.upstream = conn.get();
    } else {
      ConnectError ce;
      conn = co_await connect_upstream(target, milliseconds(limits.connect_timeout_ms), ce, handle_.upstream);
      handle_.upstream = conn.get();
      if (client_gone_) co_return;
      if (!conn) {
        log_error("upstream_connect", ce.message);
        fail_status = ce.timeout ? 504 : 502;
        fail_message = ce.message;
        break;
      }
    }
    handle_.upstream_timeout(idle);
    boost::system::error_code wec;
    if (request_head.empty()) request_head = head_text(req);
    const std::array<asio::const_buffer, 2> request_bytes{asio::buffer(request_head), asio::buffer(req.body())};
    const std::span<const asio::const_buffer> request_bufs(request_bytes.data(), req.body().empty() ? 1 : 2);
    if (conn->tls) {
      auto [e, wn] = co_await asio::async_write(*conn->tls, request_bufs, nothrow);
      wec = e;
    } else {
      wec = co_await send_now(*conn->plain, request_bufs);
    }
    handle_.no_upstream_timeout();
    if (client_gone_) co_return;
    if (wec) {
      bool timeout = handle_.upstream_timed_out;
      // A pooled connection the upstream closed while we took it: retry once
      // on a fresh one (the request did not get through).
      if (conn->reused && attempt == 0 && !timeout) {
        conn->close();
        handle_.upstream = nullptr;
        continue;
      }
      fail_status = timeout ? 504 : 502;
      fail_message = timeout ? "cannot send the request within " + std::to_string(limits.idle_timeout_ms) + " ms"
                             : "cannot send the request: " + wec.message();
      break;
    }
    // Response head; interim 1xx answers are skipped. Beast reads into the
    // free capacity of the buffer: give it room for large pieces.
    if (conn->buffer.capacity() < Worker::kRelayBufferSize) conn->buffer.reserve(Worker::kRelayBufferSize);
    handle_.upstream_timeout(milliseconds(limits.header_timeout_ms));
    boost::system::error_code hec;
    for (;;) {
      rp.emplace();
      rp->body_limit(boost::none);
      rp->header_limit(std::max<std::uint32_t>(limits.max_header_bytes, 64 * 1024));
      if (head_request) rp->skip(true);
      auto [e, hn] = co_await on([&](auto& s) { return http::async_read_header(s, conn->buffer, *rp, nothrow); });
      hec = e;
      if (hec || rp->get().result_int() >= 200 || rp->get().result_int() == 101) break;
    }
    handle_.no_upstream_timeout();
    if (client_gone_) co_return;
    if (hec) {
      bool timeout = handle_.upstream_timed_out;
      fail_status = timeout ? 504 : 502;
      fail_message = timeout ? "no response headers within " + std::to_string(limits.header_timeout_ms) + " ms"
                             : "no response: " + hec.message();
    }
    break;
  }
  if (fail_status) {
    ctx.upstream_error = true;
    ctx.error = fail_message;
    if (conn) conn->close();
    handle_.upstream = nullptr;
    if (client_gone_) co_return;
    std::string code = fail_status == 504 ? "upstream_timeout" : "upstream_unreachable";
    std::string message = "tokendiet: upstream " + target.name + " (" + target.cfg.url + "): " + fail_message;
    bool ok = co_await send_error(ctx, fail_status, message, code, keep_alive, head_request);
    if (!ok) keep_alive = false;
    co_return;
  }

  // Phase 4: the response head, relayed as sent minus hop-by-hop fields.
  auto& res = rp->get();
  ctx.status = res.result_int();
  const bool upstream_keep_alive = rp->keep_alive();
  BeastHeaderMap rh(res);
  strip_dropped_fields(res, false);
  for_each_filter(rt, ctx, "upstream_response_filter", [&](Filter& f) { f.upstream_response_filter(ctx, rh); });

  // Framing towards the client.
  const bool no_body = head_request || !has_body_status(ctx.status);
  std::optional<std::uint64_t> declared_length;
  if (auto cl = res.find(http::field::content_length); cl != res.end() && !no_body) {
    std::uint64_t v = 0;
    auto text = cl->value();
    auto [p, perr] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (perr == std::errc{} && p == text.data() + text.size()) declared_length = v;
    else res.erase(http::field::content_length);
  }
  if (no_body) {
    res.chunked(false);
  } else if (!declared_length) {
    if (client_version_ == 11) res.chunked(true);
    else keep_alive = false;  // HTTP/1.0 client: the end of the body is the end of the connection
  }
  if (w_.server.draining.load(std::memory_order_relaxed)) keep_alive = false;
  res.version(11);
  res.keep_alive(keep_alive);

  // Phase 5: the body, piece by piece, one buffer in flight: the next piece
  // is read from upstream only after the previous one was written.
  ResponseFramer framer(res, res.chunked());
  auto buffer = w_.take_buffer();
  char* buf = buffer.get();
  constexpr std::size_t kBuf = Worker::kRelayBufferSize;
  const bool filtering = !rt.filters.empty();
  std::string chunk;
  bool done = rp->is_done();
  bool broken = false;
  auto& body = res.body();
  while (true) {
    std::size_t n = 0;
    if (!done) {
      body.data = buf;
      body.size = kBuf;
      // Bytes that came with the head (or a previous read) first, no I/O.
      boost::system::error_code ec;
      while (conn->buffer.size() > 0 && body.size > 0 && !rp->is_done()) {
        auto used = rp->put(conn->buffer.data(), ec);
        conn->buffer.consume(used);
        if (ec == http::error::need_buffer || ec == http::error::need_more) ec = {};
        if (ec || used == 0) break;
      }
      if (!ec && body.size == kBuf && !rp->is_done()) {
        if (!framer.head_sent()) {
          // Nothing of the body has arrived yet (a model thinking before its
          // first event): the client gets the head now, not with that event.
          handle_.client_timeout(idle);
          auto wec = co_await send_now(client_, framer.head_only());
          handle_.no_client_timeout();
          if (wec || client_gone_) {
            if (handle_.client_timed_out) ctx.error = "client did not read for " + std::to_string(limits.idle_timeout_ms) + " ms";
            client_gone_ = true;
            broken = true;
            break;
          }
          framer.sent();
          ctx.ttfb_ms = ms_since(ctx.start);
        }
        handle_.upstream_timeout(idle);
        auto [rec, rn] = co_await on([&](auto& s) { return http::async_read_some(s, conn->buffer, *rp, nothrow); });
        handle_.no_upstream_timeout();
        ec = rec == http::error::need_buffer ? boost::system::error_code{} : rec;
      }
      if (client_gone_) {
        broken = true;
        break;
      }
      if (ec) {
        ctx.upstream_error = true;
        ctx.error = handle_.upstream_timed_out
                        ? "upstream idle for " + std::to_string(limits.idle_timeout_ms) + " ms mid-body"
                        : "upstream broke mid-body: " + ec.message();
        broken = true;
        break;
      }
      n = kBuf - body.size;
      done = rp->is_done();
    }
    const char* data = buf;
    std::size_t size = n;
    if (filtering) {
      chunk.assign(buf, n);
      for_each_filter(rt, ctx, "response_body_filter",
                      [&](Filter& f) { f.response_body_filter(ctx, chunk, done); });
      data = chunk.data();
      size = chunk.size();
    }
    if (size == 0 && !done) continue;
    handle_.client_timeout(idle);
    auto wec = co_await send_now(client_, framer.frame(data, size, done));
    handle_.no_client_timeout();
    if (wec || client_gone_) {
      if (handle_.client_timed_out) ctx.error = "client did not read for " + std::to_string(limits.idle_timeout_ms) + " ms";
      client_gone_ = true;
      broken = true;
      break;
    }
    if (!framer.head_sent()) ctx.ttfb_ms = ms_since(ctx.start);
    framer.sent();
    ctx.bytes_out += size;
    if (done) break;
  }
  w_.give_buffer(std::move(buffer));
  handle_.upstream = nullptr;

  if (declared_length && !broken && ctx.bytes_out != *declared_length) {
    // A filter changed the length without dropping Content-Length: the
    // client's framing is off, so this connection cannot be reused.
    log_error("framing", "response body length " + std::to_string(ctx.bytes_out) + " != Content-Length " +
                             std::to_string(*declared_length) + " for request " + std::to_string(ctx.request_id));
    keep_alive = false;
  }
  if (broken) keep_alive = false;
  if (!broken && done && upstream_keep_alive && conn->buffer.size() == 0)
    w_.pool.put(std::move(conn), limits.pool_max_idle_per_upstream);
  else
    conn->close();
}

asio::awaitable<bool> ClientSession::send_local(RequestContext& ctx, unsigned status, std::string_view content_type,
                                                std::string_view body, bool keep_alive, bool head_request,
                                                const std::vector<std::pair<std::string, std::string>>& extra) {
  http::response<http::empty_body> res;
  res.version(11);
  res.result(status);
  res.set(http::field::content_type, content_type);
  for (auto& [name, value] : extra) res.insert(name, value);
  ctx.status = status;
  if (head_request || has_body_status(status)) res.content_length(body.size());
  res.keep_alive(keep_alive);
  const bool send_body = !head_request && has_body_status(status) && !body.empty();
  if (send_body) ctx.bytes_out = body.size();
  const std::string head = head_text(res);
  const std::array<asio::const_buffer, 2> bytes{asio::buffer(head), asio::buffer(body.data(), body.size())};
  handle_.client_timeout(std::chrono::seconds(30));
  auto ec = co_await send_now(client_, std::span<const asio::const_buffer>(bytes.data(), send_body ? 2 : 1));
  handle_.no_client_timeout();
  ctx.ttfb_ms = ms_since(ctx.start);
  co_return !ec;
}

asio::awaitable<bool> ClientSession::send_error(RequestContext& ctx, unsigned status, std::string_view message,
                                                std::string_view code, bool keep_alive, bool head_request) {
  std::vector<std::pair<std::string, std::string>> extra = {{"x-tokendiet-error", std::string(code)}};
  std::string body = provider_error_body(ctx.provider, status, message);
  bool ok = co_await send_local(ctx, status, "application/json", body, keep_alive, head_request, extra);
  co_return ok;
}

// The logging phase and the access line.
void ClientSession::finish(const Runtime* rt, RequestContext& ctx, bool run_filters) {
  ctx.total_ms = ms_since(ctx.start);
  if (rt && run_filters)
    for_each_filter(*rt, ctx, "logging", [&](Filter& f) { f.logging(ctx); });
  if (access_line(ctx).emit_batched()) asio::post(w_.ioc, [] { flush_thread_log(); });
}

}  // namespace

asio::awaitable<void> run_session(Worker& worker, tcp::socket socket) {
  return run_session_impl(worker, std::move(socket));
}

}  // namespace td::proxy
