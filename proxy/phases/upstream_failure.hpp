// Why an attempt to reach the upstream ended without a response to relay:
// the typed outcome of the upstream exchange (proxy/net/upstream_exchange.hpp)
// or of a relay that broke before the client got anything (relay.hpp), which
// proxy/phases/failure_response.hpp maps to what the client is told.
// No Beast/Asio here: filters see it in the failure phase (filter.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

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
    bad_response,      // a head no request of ours asks for (101), or a response that
                       // broke before any byte of it reached the client
    client_gone,       // the client left meanwhile: nobody to answer
  };
  Kind kind = Kind::no_response;
  // The cause in its own words: the error's message ("Connection refused");
  // for connect_* and bad_response the whole sentence (upstream.hpp
  // ConnectError); for no_upstream the route's upstream name.
  std::string detail;
  std::uint32_t limit_ms = 0;      // the limit that ran out (the *_timeout kinds)
  bool reused_connection = false;  // the attempt was made on a pooled connection
};

class HeaderMap;

// What the failure phase (Filter::upstream_failure_filter, filter.hpp) looks
// at: an attempt that got no response, or an error response (status >= 400)
// of which nothing has gone to the client yet.
struct UpstreamOutcome {
  // At most this much of an error response's body is read before the phase
  // (one relay buffer); the rest stays upstream until the relay.
  static constexpr std::size_t kMaxBufferedBody = 64 * 1024;

  const UpstreamFailure* failure = nullptr;  // set: no response, this is why
  unsigned status = 0;                       // else the response's status
  const HeaderMap* headers = nullptr;        // and its header fields
  std::string_view body;                     // its body, up to kMaxBufferedBody bytes
  bool body_complete = false;                // `body` is all of it
};

enum class RetryDecision : unsigned char {
  no_retry,  // the client gets what happened: the error response, or the failure's answer
  retry,     // send the request once more (with the body as the filter left it)
};

// The phase's own rule, before any filter: a request written to a pooled
// connection the upstream had closed meanwhile did not get through, and goes
// once more on a fresh connection. Not a filter's retry.
inline bool stale_connection_retry(const UpstreamFailure& f) {
  return f.kind == UpstreamFailure::Kind::send_failed && f.reused_connection;
}

}  // namespace td::proxy
