// One client connection: the request lifecycle of docs/design.md ("life of a
// request"), phase by phase.
//
//   read head (limits, timeouts) → route by path → request_filter
//   → read body (≤ max_body_bytes) → request_body_filter
//   → upstream request (hop-by-hop removed, Host rewritten, identity encoding)
//   → upstream_request_filter → upstream exchange (pool, TLS; a typed failure
//     or a response head) → response_head_filter
//   → relay the body piece by piece through response_body_filter (one buffer
//     in flight: never read upstream faster than the client drains)
//   → logging phase + access line.
//
// The parts: the loop over requests and the request phases (client_session.cpp,
// proxy_request.cpp), the client watcher (client_watch.cpp), the upstream
// exchange (upstream_exchange.hpp), the relay (relay.hpp) and the answers the
// proxy makes itself (local_reply.hpp).
//
// While a request is upstream, a watcher notices the client going away and
// closes the upstream connection, which cancels the upstream request.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>

#include <memory>
#include <optional>
#include <string>

#include "proxy/net/request_body.hpp"
#include "proxy/phases/filter.hpp"
#include "proxy/net/worker.hpp"
#include "proxy/phases/request_context.hpp"
#include "proxy/phases/upstream_failure.hpp"
#include "proxy/telemetry/body_budget.hpp"

namespace td::proxy {

using RequestParser = boost::beast::http::request_parser<RequestBody>;
using Request = boost::beast::http::request<RequestBody>;
struct PauseOutcome;
struct PrefetchedBody;
class UpstreamExchange;

// What the parts of a session share about its client connection.
struct SessionIo {
  Worker& worker;
  boost::beast::tcp_stream& client;
  SessionHandle& handle;
  bool client_gone = false;  // the watcher saw the client leave (see ClientSession::start_watch())
  boost::asio::steady_timer* hold_timer = nullptr;  // a wait to cut short when the client leaves
};

class ClientSession {
 public:
  ClientSession(Worker& w, boost::asio::ip::tcp::socket socket);
  ~ClientSession();
  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;

  boost::asio::awaitable<void> run();

 private:
  // Outcome of one request on this connection.
  enum class Next { keep_alive, close, linger_close };

  // client_session.cpp: the loop and what happens before routing.
  boost::asio::awaitable<Next> serve_one(bool first);
  boost::asio::awaitable<Next> refuse_bad_head(RequestContext& ctx, const boost::system::error_code& ec,
                                               const Runtime& rt);
  boost::asio::awaitable<Next> refuse(RequestContext& ctx, unsigned status, std::string_view message,
                                      std::string_view code, bool head_request);
  boost::asio::awaitable<Next> serve_own_path(RequestContext& ctx, const RequestParser& parser, bool keep_alive,
                                              bool head_request);
  // A body of known length is read straight into its string, which grows by
  // this much at a time (read_body()).
  static constexpr std::size_t kBodyReadStep = std::size_t{1} << 20;
  boost::asio::awaitable<boost::system::error_code> read_body(RequestParser& parser, const config::Limits& limits);
  boost::asio::awaitable<bool> claim_big_body(const RequestParser& parser, const config::Limits& limits);
  boost::asio::awaitable<void> linger_close();
  void finish(const Runtime* rt, RequestContext& ctx, bool run_filters);

  // proxy_request.cpp: the filter phases and the way upstream.
  boost::asio::awaitable<Next> proxy_request(const Runtime& rt, RequestParser& parser, RequestContext& ctx,
                                             bool keep_alive);
  boost::asio::awaitable<Next> answer_request(const Runtime& rt, RequestContext& ctx, const LocalResponse& answer,
                                              bool keep_alive, bool head_request, bool body_pending);
  boost::asio::awaitable<std::optional<Next>> read_request_body(RequestParser& parser, RequestContext& ctx,
                                                                const config::Limits& limits, bool head_request);
  boost::asio::awaitable<std::optional<Next>> finish_paused_phase(const Runtime& rt, RequestContext& ctx,
                                                                  RequestParser& parser, HeaderMap& headers,
                                                                  FilterResult& r, std::size_t next, bool body_phase,
                                                                  bool head_request);
  boost::asio::awaitable<PauseOutcome> hold_request(const Runtime& rt, RequestContext& ctx, const FilterResult& paused,
                                                    const Filter* filter, const char* phase,
                                                    PausedRequest request = {});
  void prepare_upstream_request(const Runtime& rt, RequestContext& ctx, Request& req, HeaderMap& headers,
                                const UpstreamTarget& target, bool had_body_framing);
  boost::asio::awaitable<bool> answer_failure(const Runtime& rt, RequestContext& ctx, const UpstreamFailure& failure,
                                              std::string_view upstream_name, std::string_view upstream_url,
                                              bool keep_alive, bool head_request);
  bool retry_requested(const Runtime& rt, RequestContext& ctx, Request& req, UpstreamExchange& exchange,
                       const UpstreamFailure* failure, PrefetchedBody& prefetched);
  boost::asio::awaitable<bool> forward(const Runtime& rt, const UpstreamTarget& target, Request& req,
                                       RequestContext& ctx, bool head_request, bool keep_alive);

  // client_watch.cpp: noticing a client that leaves while its request is upstream.
  void start_watch();
  void register_watch();
  void on_watch(const boost::system::error_code& ec);
  void stop_watch();
  void client_went_away();

  Worker& w_;
  boost::beast::tcp_stream client_;
  bool client_loopback_ = false;  // the peer's address is a loopback one
  boost::beast::flat_buffer buf_;
  SessionHandle handle_;
  SessionIo io_{w_, client_, handle_};
  // The client watcher: while a request is upstream, a wait for the client
  // socket to become readable notices it closing (see start_watch()).
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // outlives us in a pending handler
  bool watching_ = false;
  bool watch_pending_ = false;
  std::string last_key_, last_key_fingerprint_;  // see proxy_request()
  unsigned client_version_ = 11;                 // HTTP version of the current request (10 or 11)
  // The current request's big body's bytes in the budget of big bodies in
  // flight (claim_big_body()), given back when the request ends and no job
  // holds the body any more (BigBodyClaim).
  std::shared_ptr<BodyClaim> body_claim_;
};

}  // namespace td::proxy
