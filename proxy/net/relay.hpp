// Phases 4 and 5 towards the client: the upstream's response head, relayed as
// sent minus hop-by-hop fields after response_head_filter, then its body
// piece by piece through response_body_filter, one buffer in flight: the next
// piece is read from upstream only after the previous one was written.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "proxy/net/client_session.hpp"
#include "proxy/net/response_framer.hpp"
#include "proxy/net/upstream_exchange.hpp"

namespace td::proxy {

// The start of a response body read before the relay, for the failure phase.
struct PrefetchedBody {
  std::unique_ptr<char[]> buffer;  // a relay buffer holding `size` bytes; null: nothing read ahead
  std::size_t size = 0;
  boost::system::error_code error;  // reading on failed: the relay ends after these bytes
};

// Reads the body of the response whose head `exchange` holds into a relay
// buffer, until the body ends, the buffer is full or reading fails. Nothing
// goes to the client.
boost::asio::awaitable<PrefetchedBody> prefetch_body(SessionIo& io, UpstreamExchange& exchange,
                                                     const config::Limits& limits);

class Relay {
 public:
  // `exchange` holds the response head (UpstreamExchange::attempt() succeeded).
  Relay(SessionIo& io, const Runtime& rt, RequestContext& ctx, UpstreamExchange& exchange);

  // Relays the response (starting with `prefetched`, if any); `keep_alive`
  // is whether the client's connection may serve another request, and the
  // result whether it still can.
  boost::asio::awaitable<bool> run(bool head_request, unsigned client_version, bool keep_alive,
                                   PrefetchedBody& prefetched);

  // After run(): set when the upstream broke the response before any byte of
  // it went to the client, who is still there. The client is owed an answer
  // (a bad_response) on a connection nothing was written to.
  const std::optional<UpstreamFailure>& unanswered() const { return unanswered_; }

 private:
  void relay_head(bool head_request, unsigned client_version, bool& keep_alive);
  boost::asio::awaitable<bool> send_head_early(ResponseFramer& framer);
  std::string_view filter_piece(const char* data, std::size_t size, bool done);
  void client_failed();
  void upstream_failed(const boost::system::error_code& ec, const ResponseFramer& framer);
  bool finish(bool broken, bool done, bool upstream_keep_alive, bool keep_alive);
  boost::asio::awaitable<bool> send_piece(ResponseFramer& framer, std::string_view piece, bool last);
  boost::asio::awaitable<bool> continue_upstream(bool& upstream_keep_alive);

  SessionIo& io_;
  const Runtime& rt_;
  RequestContext& ctx_;
  UpstreamExchange& exchange_;
  const config::Limits& limits_;
  std::optional<std::uint64_t> declared_length_;  // the upstream's valid Content-Length, kept
  std::string chunk_;                             // a piece as the filters see it
  std::optional<UpstreamFailure> unanswered_;
};

}  // namespace td::proxy
