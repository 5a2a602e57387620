// Connections to upstreams: plain TCP or TLS (verified, with SNI), and a
// per-I/O-thread keep-alive pool. Each I/O thread has its own io_context and
// its own pool, so taking and returning a connection needs no lock.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "proxy/net/runtime.hpp"

namespace td::proxy {

class UpstreamConn {
 public:
  std::string pool_key;
  std::optional<boost::beast::tcp_stream> plain;                          // http
  std::optional<boost::beast::ssl_stream<boost::beast::tcp_stream>> tls;  // https
  boost::beast::flat_buffer buffer;                                       // response bytes read ahead of the parser
  std::chrono::steady_clock::time_point idle_since{};
  bool reused = false;  // came from the pool (may have gone stale)

  boost::beast::tcp_stream& tcp() { return tls ? boost::beast::get_lowest_layer(*tls) : *plain; }
  void close();
};

// Why connecting failed: decides 502 (refused, TLS) or 504 (timed out).
struct ConnectError {
  bool timeout = false;
  std::string message;  // for the log and the error body; never holds secrets
};

// Opens a new connection (DNS, TCP, TLS handshake with verification), all
// within limits.connect_timeout_ms except DNS, which has the resolver's own.
// `in_progress` points at the connection while it is being made, so a caller
// whose client went away can close it to abort the attempt.
boost::asio::awaitable<std::unique_ptr<UpstreamConn>> connect_upstream(const UpstreamTarget& target,
                                                                       std::chrono::milliseconds timeout,
                                                                       ConnectError& error, UpstreamConn*& in_progress);

class UpstreamPool {
 public:
  // An idle connection for `key` that still looks alive, or null.
  std::unique_ptr<UpstreamConn> take(const std::string& key);
  // Keeps `conn` for reuse (at most max_idle per key; the oldest go first).
  void put(std::unique_ptr<UpstreamConn> conn, unsigned max_idle);
  std::size_t idle_count() const;
  // Closes the idle connections the upstream closed meanwhile (else they sit
  // in CLOSE_WAIT until the next request for their upstream) and those idle
  // longer than kMaxIdle. The worker's sweep calls it about once a second.
  // Returns how many it closed.
  std::size_t close_dead();

  // Idle connections older than this are closed rather than reused: most
  // servers drop idle keep-alive connections after 5-120 s anyway.
  static constexpr std::chrono::seconds kMaxIdle{55};

 private:
  std::unordered_map<std::string, std::vector<std::unique_ptr<UpstreamConn>>> idle_;
};

}  // namespace td::proxy
