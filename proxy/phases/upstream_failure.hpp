// Why an attempt to reach the upstream ended without a response head: the
// typed outcome of the upstream exchange (proxy/net/upstream_exchange.hpp),
// which proxy/phases/failure_response.hpp maps to what the client is told.
// No Beast/Asio here: filters see it in the failure phase (filter.hpp).
#pragma once

#include <cstdint>
#include <string>

namespace td::proxy {

struct UpstreamFailure {
  enum class Kind : std::uint8_t {
    no_upstream,       // no upstream is configured for the request's route
    connect_failed,    // DNS, TCP or the TLS handshake failed
    connect_timeout,   // TCP + TLS not done within limits.connect_timeout_ms
    send_failed,       // the request could not be written
    send_timeout,      // the request was not taken within limits.idle_timeout_ms
    response_timeout,  // no response head within limits.header_timeout_ms
    no_response,       // the connection broke, or what came back is not HTTP
    client_gone,       // the client left meanwhile: nobody to answer
  };
  Kind kind = Kind::no_response;
  // The cause in its own words: the error's message ("Connection refused");
  // for connect_* the whole sentence (upstream.hpp ConnectError); for
  // no_upstream the route's upstream name.
  std::string detail;
  std::uint32_t limit_ms = 0;      // the limit that ran out (the *_timeout kinds)
  bool reused_connection = false;  // the attempt was made on a pooled connection
};

}  // namespace td::proxy
