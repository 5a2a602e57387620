// Phases 4 and 5 towards the client: the upstream's response head, relayed as
// sent minus hop-by-hop fields after upstream_response_filter, then its body
// piece by piece through response_body_filter, one buffer in flight: the next
// piece is read from upstream only after the previous one was written.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "proxy/net/client_session.hpp"
#include "proxy/net/response_framer.hpp"
#include "proxy/net/upstream_exchange.hpp"

namespace td::proxy {

class Relay {
 public:
  // `exchange` holds the response head (UpstreamExchange::attempt() succeeded).
  Relay(SessionIo& io, const Runtime& rt, RequestContext& ctx, UpstreamExchange& exchange);

  // Relays the response; `keep_alive` is whether the client's connection may
  // serve another request, and the result whether it still can.
  boost::asio::awaitable<bool> run(bool head_request, unsigned client_version, bool keep_alive);

 private:
  void relay_head(bool head_request, unsigned client_version, bool& keep_alive);
  boost::system::error_code parse_buffered_body();
  boost::asio::awaitable<std::tuple<boost::system::error_code, std::size_t>> read_upstream();
  boost::asio::awaitable<bool> send_head_early(ResponseFramer& framer);
  std::string_view filter_piece(const char* data, std::size_t size, bool done);
  void client_failed();
  void upstream_failed(const boost::system::error_code& ec);

  SessionIo& io_;
  const Runtime& rt_;
  RequestContext& ctx_;
  UpstreamExchange& exchange_;
  const config::Limits& limits_;
  std::optional<std::uint64_t> declared_length_;  // the upstream's valid Content-Length, kept
  std::string chunk_;  // a piece as the filters see it
};

}  // namespace td::proxy
