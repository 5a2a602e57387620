// A request that goes upstream: the request phases of the filters (1-3),
// the upstream request, the exchange and the relay, the logging phase.
#include <boost/asio/write.hpp>

#include <array>
#include <chrono>
#include <optional>
#include <string>

#include "proxy/net/beast_header_map.hpp"
#include "proxy/net/client_session.hpp"
#include "proxy/net/filter_chain.hpp"
#include "proxy/net/http_rules.hpp"
#include "proxy/net/local_reply.hpp"
#include "proxy/net/pause_wait.hpp"
#include "proxy/net/relay.hpp"
#include "proxy/net/stream_io.hpp"
#include "proxy/net/upstream_exchange.hpp"
#include "proxy/phases/agent_session.hpp"
#include "proxy/phases/body_peek.hpp"
#include "proxy/phases/errors.hpp"
#include "proxy/phases/failure_response.hpp"

namespace td::proxy {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using std::chrono::milliseconds;

namespace {

// The request as it goes upstream: the client's, minus hop-by-hop fields and
// our own x-tokendiet-* ones, with the upstream's Host and identity encoding.
void make_upstream_request(Request& req, const UpstreamTarget& target, const RequestContext& ctx) {
  strip_dropped_fields(req, true);
  req.erase(http::field::expect);  // we hold the whole body: nothing to wait for
  req.set(http::field::host, target.host_header);
  req.set(http::field::accept_encoding, "identity");
  if (!target.cfg.path_prefix.empty())
    req.target(target.cfg.path_prefix + ctx.target);
  else if (req.target() != ctx.target)
    req.target(ctx.target);
  req.version(11);
}

constexpr const char* kRequestFilter = "request_filter";
constexpr const char* kRequestBodyFilter = "request_body_filter";

}  // namespace

asio::awaitable<ClientSession::Next> ClientSession::proxy_request(const Runtime& rt, RequestParser& parser,
                                                                  RequestContext& ctx, bool keep_alive) {
  auto& req = parser.get();
  const bool head_request = req.method() == http::verb::head;
  BeastHeaderMap headers(req);
  // The session: the client's header, else the agent's own id (docs/design.md §Client identity).
  ctx.session_id = session_from_head(headers);
  // Who the client is: its credential's fingerprint, "" for an anonymous
  // client (docs/design.md §Client identity). Remembered for the
  // connection: an agent sends the same key on every request of a keep-alive
  // connection.
  if (std::string key = find_api_key(headers, ctx.query()); key != last_key_) {
    last_key_fingerprint_ = key_fingerprint(key);
    last_key_ = std::move(key);
  }
  ctx.key_fingerprint = last_key_fingerprint_;

  // Phase 1: request_filter (body not read yet).
  std::size_t next = 0;
  FilterResult r =
      run_request_phase(rt, ctx, kRequestFilter, next, [&](Filter& f) { return f.request_filter(ctx, headers); });
  if (r.pauses()) {
    std::optional<Next> stop = co_await finish_paused_phase(rt, ctx, parser, headers, r, next, false, head_request);
    if (stop) co_return *stop;
  }
  if (r.answers()) co_return co_await answer_request(rt, ctx, r.answer(), keep_alive, head_request, !parser.is_done());

  if (!parser.is_done()) {
    std::optional<Next> stop = co_await read_request_body(parser, ctx, rt.config.limits, head_request);
    if (stop) co_return *stop;
  }
  const bool had_body_framing = req.find(http::field::content_length) != req.end() || parser.chunked();
  std::string& body = req.body();
  ctx.bytes_in = body.size();
  if (ctx.session_id.empty() && ctx.provider == Provider::anthropic) ctx.session_id = session_from_body(body);
  if (ctx.provider == Provider::gemini && ctx.path().ends_with(":streamGenerateContent")) ctx.stream = true;

  // Phase 2: request_body_filter.
  next = 0;
  r = run_request_phase(rt, ctx, kRequestBodyFilter, next,
                        [&](Filter& f) { return f.request_body_filter(ctx, headers, body); });
  if (r.pauses()) {
    std::optional<Next> stop = co_await finish_paused_phase(rt, ctx, parser, headers, r, next, true, head_request);
    if (stop) co_return *stop;
  }
  // The log line's model and stream flag when no filter read them.
  if (ctx.model.empty() && !body.empty()) {
    auto peek = peek_body(body);
    ctx.model = std::string(peek.model);
    ctx.stream = ctx.stream || peek.stream;
  }
  if (r.answers()) co_return co_await answer_request(rt, ctx, r.answer(), keep_alive, head_request, false);

  const UpstreamTarget* target = rt.upstream(ctx.upstream);
  if (!target) {
    const UpstreamFailure none{UpstreamFailure::Kind::no_upstream, ctx.upstream};
    co_await answer_failure(rt, ctx, none, "", "", keep_alive, head_request);
    finish(&rt, ctx, true);
    co_return keep_alive ? Next::keep_alive : Next::close;
  }
  prepare_upstream_request(rt, ctx, req, headers, *target, had_body_framing);

  // From here on the request is upstream's: watch the client for going away.
  start_watch();
  if (ctx.delay_upstream.count() > 0) {
    const FilterResult held = FilterResult::hold(ctx.delay_upstream);
    PauseOutcome o = co_await hold_request(rt, ctx, held, nullptr, "delay_upstream");
    if (o.end == PauseOutcome::End::client_gone) {
      stop_watch();
      co_return Next::close;
    }
  }

  // Phases 4-5: upstream.
  keep_alive = co_await forward(rt, *target, req, ctx, head_request, keep_alive);
  stop_watch();
  if (io_.client_gone) {
    ctx.client_aborted = true;
    if (ctx.error.empty()) ctx.error = "client closed the connection";
    keep_alive = false;
  }
  finish(&rt, ctx, true);
  co_return keep_alive ? Next::keep_alive : Next::close;
}

// The request as it goes upstream, and phase 3 on it.
void ClientSession::prepare_upstream_request(const Runtime& rt, RequestContext& ctx, Request& req, HeaderMap& headers,
                                             const UpstreamTarget& target, bool had_body_framing) {
  client_version_ = req.version() == 10 ? 10 : 11;
  make_upstream_request(req, target, ctx);
  // Phase 3: upstream_request_filter.
  for_each_filter(rt, ctx, "upstream_request_filter", [&](Filter& f) { f.upstream_request_filter(ctx, headers); });
  if (!req.body().empty() || had_body_framing) req.content_length(req.body().size());
  ctx.bytes_upstream = req.body().size();
}

// The rest of phase 1 or 2 once a filter paused it (`r`): each pause waited
// out (the client watched meanwhile), then the filters after the one that
// paused. A value when the request ended meanwhile; else `r` says how the
// phase ended (it proceeds or answers).
asio::awaitable<std::optional<ClientSession::Next>> ClientSession::finish_paused_phase(
    const Runtime& rt, RequestContext& ctx, RequestParser& parser, HeaderMap& headers, FilterResult& r,
    std::size_t next, bool body_phase, bool head_request) {
  auto& req = parser.get();
  const char* phase = body_phase ? kRequestBodyFilter : kRequestFilter;
  const bool waits_for_continue = req.version() == 11 && iequals(req[http::field::expect], "100-continue");
  while (r.pauses()) {
    // In phase 1 a body on its way is read first: until then the client's
    // socket is readable anyway, and the watcher could not tell a client
    // that leaves. Not when the client waits for 100 Continue: the filters
    // decide whether it gets one. (In phase 2 the body is in: one read past
    // the parser when its length was known, so the parser cannot tell.)
    if (!body_phase && !parser.is_done() && !waits_for_continue) {
      std::optional<Next> stop = co_await read_request_body(parser, ctx, rt.config.limits, head_request);
      if (stop) {
        if (r.handle()) r.handle()->cancel(PausedRequest{&ctx, nullptr});
        co_return stop;
      }
    }
    start_watch();
    PauseOutcome o = co_await hold_request(rt, ctx, r, rt.filters[next - 1].get(), phase,
                                           PausedRequest{&ctx, body_phase ? &req.body() : nullptr});
    stop_watch();
    if (o.end == PauseOutcome::End::client_gone) co_return Next::close;
    if (o.answer) {
      r = FilterResult::respond(std::move(*o.answer));
      co_return std::nullopt;
    }
    r = run_request_phase(rt, ctx, phase, next, [&](Filter& f) {
      return body_phase ? f.request_body_filter(ctx, headers, req.body()) : f.request_filter(ctx, headers);
    });
  }
  co_return std::nullopt;
}

// Waits out a pause; the caller watches the client. A client that left ends
// the request here; a filter that did not resume in time is a fail-open.
asio::awaitable<PauseOutcome> ClientSession::hold_request(const Runtime& rt, RequestContext& ctx,
                                                          const FilterResult& paused, const Filter* filter,
                                                          const char* phase, PausedRequest request) {
  PauseOutcome o = co_await wait_for_resume(io_, paused.handle(), paused.pause_for(), request);
  if (o.end == PauseOutcome::End::client_gone) {
    ctx.client_aborted = true;
    ctx.error = "client went away while the request was held";
    finish(&rt, ctx, true);
  } else if (o.end == PauseOutcome::End::timed_out && paused.handle() && filter && !o.answer) {
    const std::string what = "not resumed within " + std::to_string(paused.pause_for().count()) + " ms";
    filter_failed(ctx, *filter, phase, what.c_str());
  }
  co_return o;
}

// A filter's answer instead of going upstream. With the body still unread
// the connection closes after it.
asio::awaitable<ClientSession::Next> ClientSession::answer_request(const Runtime& rt, RequestContext& ctx,
                                                                   const LocalResponse& answer, bool keep_alive,
                                                                   bool head_request, bool body_pending) {
  const LocalReply reply{answer.status, answer.content_type, answer.body, answer.headers};
  co_await send_local(io_, ctx, reply, keep_alive && !body_pending, head_request, &rt);
  finish(&rt, ctx, true);
  co_return body_pending ? Next::linger_close : (keep_alive ? Next::keep_alive : Next::close);
}

// The body, whole, within the limit (after a 100 Continue when the client
// waits for one). A value when the request ends here.
asio::awaitable<std::optional<ClientSession::Next>> ClientSession::read_request_body(RequestParser& parser,
                                                                                     RequestContext& ctx,
                                                                                     const config::Limits& limits,
                                                                                     bool head_request) {
  auto& req = parser.get();
  if (!co_await claim_big_body(parser, limits)) {
    // The budget of big bodies in flight stayed spent: the client may try
    // again later (an SDK retries a 503 after Retry-After).
    ctx.error = "big body: no room among the big bodies in flight";
    ctx.local_response = true;
    const std::string message = "tokendiet: too many large request bodies in flight; retry shortly";
    const std::string body = provider_error_body(ctx.provider, 503, message, "big_bodies_busy");
    const std::array<std::pair<std::string, std::string>, 2> extra{
        {{"x-tokendiet-error", "big_bodies_busy"}, {"retry-after", "5"}}};
    co_await send_local(io_, ctx, LocalReply{503, "application/json", body, extra}, false, head_request);
    finish(nullptr, ctx, false);
    co_return Next::linger_close;
  }
  if (body_claim_) ctx.objects.get<BigBodyClaim>().claim = body_claim_;  // shared with a job that reads the body
  if (req.version() == 11 && iequals(req[http::field::expect], "100-continue")) {
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    Deadline deadline(handle_.client_io, milliseconds(limits.idle_timeout_ms));
    auto [cec, cn] = co_await asio::async_write(client_, asio::buffer(kContinue), nothrow);
    if (cec) co_return Next::close;
  }
  boost::system::error_code bec = co_await read_body(parser, limits);
  if (bec == http::error::body_limit) {
    ctx.error = "request body over the limit";
    co_return co_await refuse(ctx, 413, limit_message(413, limits), "request_too_large", head_request);
  }
  if (!bec) co_return std::nullopt;
  // The client went away or sent a broken body: nothing to answer.
  if (bec == http::error::partial_message || bec == asio::error::eof || bec == asio::error::connection_reset ||
      handle_.client_io.timed_out || bec == asio::error::operation_aborted)
    co_return Next::close;
  ctx.error = "bad request body: " + bec.message();
  std::string message = "malformed request body: " + bec.message();
  co_return co_await refuse(ctx, 400, message, "bad_request", head_request);
}

// Phases 4-5 and the failure phase between them: the exchange with the
// upstream, once more when the phase's own rule or a filter asks for it
// (nothing has reached the client then), and the relay of the final answer,
// or an error answer when that broke before the client got any of it.
// Returns whether the client's connection can serve another request.
asio::awaitable<bool> ClientSession::forward(const Runtime& rt, const UpstreamTarget& target, Request& req,
                                             RequestContext& ctx, bool head_request, bool keep_alive) {
  UpstreamExchange exchange(io_, target, rt.config.limits, req, head_request);
  bool reconnect_left = true;                    // the stale-connection rule: once per filter's attempt
  bool filter_retry_left = !rt.filters.empty();  // once per request
  for (;;) {
    std::optional<UpstreamFailure> failure = co_await exchange.attempt();
    if (failure && failure->kind == UpstreamFailure::Kind::client_gone) break;
    if (failure && reconnect_left && stale_connection_retry(*failure)) {
      reconnect_left = false;
      continue;
    }
    PrefetchedBody prefetched;
    if (filter_retry_left && (failure || exchange.response().get().result_int() >= 400)) {
      if (!failure) {
        prefetched = co_await prefetch_body(io_, exchange, rt.config.limits);
        if (io_.client_gone) {
          io_.worker.give_buffer(std::move(prefetched.buffer));
          break;
        }
      }
      if (retry_requested(rt, ctx, req, exchange, failure ? &*failure : nullptr, prefetched)) {
        filter_retry_left = false;
        reconnect_left = true;
        ++ctx.retries;
        continue;
      }
    }
    if (failure) {
      exchange.release(false);
      ctx.upstream_error = true;
      bool ok = co_await answer_failure(rt, ctx, *failure, target.name, target.cfg.url, keep_alive, head_request);
      co_return ok&& keep_alive;
    }
    Relay relay(io_, rt, ctx, exchange);
    const bool relay_keep_alive = co_await relay.run(head_request, client_version_, keep_alive, prefetched);
    if (!relay.unanswered()) co_return relay_keep_alive;
    // Broken before the client got a byte: answered like a failed attempt,
    // but not retried (the failure phase had this response already if its
    // status was an error; a 2xx never enters it).
    bool ok =
        co_await answer_failure(rt, ctx, *relay.unanswered(), target.name, target.cfg.url, keep_alive, head_request);
    co_return ok&& keep_alive;
  }
  exchange.release(false);  // the client left
  co_return keep_alive;
}

// The failure phase on an attempt that failed (`failure`) or got an error
// response (the start of its body in `prefetched`). When a filter asks for
// another attempt the request is made ready for it: the old connection
// released, the body's new length set.
bool ClientSession::retry_requested(const Runtime& rt, RequestContext& ctx, Request& req, UpstreamExchange& exchange,
                                    const UpstreamFailure* failure, PrefetchedBody& prefetched) {
  UpstreamOutcome outcome;
  std::optional<BeastHeaderMap> headers;
  outcome.failure = failure;
  if (!failure) {
    auto& rp = exchange.response();
    headers.emplace(rp.get());
    outcome.status = rp.get().result_int();
    outcome.headers = &*headers;
    outcome.body = std::string_view(prefetched.buffer.get(), prefetched.size);
    outcome.body_complete = rp.is_done() && !prefetched.error;
  }
  if (!run_failure_phase(rt, ctx, outcome, req.body())) return false;

  const bool reusable = outcome.body_complete && exchange.response().keep_alive() && exchange.conn().buffer.size() == 0;
  exchange.release(reusable);
  io_.worker.give_buffer(std::move(prefetched.buffer));
  if (!req.body().empty() || req.has_content_length()) req.content_length(req.body().size());
  ctx.bytes_upstream = req.body().size();
  exchange.request_changed();
  return true;
}

// The error answer for an upstream failure (proxy/phases/failure_response.hpp).
asio::awaitable<bool> ClientSession::answer_failure(const Runtime& rt, RequestContext& ctx,
                                                    const UpstreamFailure& failure, std::string_view upstream_name,
                                                    std::string_view upstream_url, bool keep_alive, bool head_request) {
  const FailureAnswer a = client_answer(failure, upstream_name, upstream_url);
  ctx.error = a.error;
  bool ok = co_await send_error(io_, ctx, a.status, a.message, a.code, keep_alive, head_request, &rt);
  co_return ok;
}

}  // namespace td::proxy
