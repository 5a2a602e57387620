#include "proxy/net/upstream.hpp"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>

namespace td::proxy {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

namespace {
constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);

// A readable idle connection is a dead one: the peer closed it (EOF, or a TLS
// close_notify) or sent something nobody asked for. Only "would block" means
// it is still idle and usable.
bool looks_alive(UpstreamConn& c) {
  auto& sock = c.tcp().socket();
  if (!sock.is_open() || c.buffer.size() != 0) return false;
  char byte;
  ssize_t n = ::recv(sock.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

// An idle connection worth reusing: young enough, and not closed by the upstream.
bool reusable(UpstreamConn& conn, std::chrono::steady_clock::time_point oldest_ok) {
  return conn.idle_since >= oldest_ok && looks_alive(conn);
}

std::string tls_error_text(const boost::system::error_code& ec, SSL* ssl) {
  std::string msg = ec.message();
  if (ssl) {
    long v = SSL_get_verify_result(ssl);
    if (v != X509_V_OK) msg += std::string(" (") + X509_verify_cert_error_string(v) + ")";
  }
  return msg;
}
}  // namespace

void UpstreamConn::close() {
  boost::system::error_code ec;
  tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
  tcp().socket().close(ec);
}

asio::awaitable<std::unique_ptr<UpstreamConn>> connect_upstream(const UpstreamTarget& target,
                                                                std::chrono::milliseconds timeout, ConnectError& error,
                                                                UpstreamConn*& in_progress) {
  auto ex = co_await asio::this_coro::executor;
  const auto& u = target.cfg;
  auto conn = std::make_unique<UpstreamConn>();
  conn->pool_key = target.pool_key;
  if (u.tls)
    conn->tls.emplace(ex, *target.tls);
  else
    conn->plain.emplace(ex);
  auto& stream = conn->tcp();
  in_progress = conn.get();

  tcp::resolver resolver(ex);
  auto [rec, endpoints] = co_await resolver.async_resolve(u.host, std::to_string(u.port), nothrow);
  if (rec) {
    error.message = "cannot resolve " + u.host + ": " + rec.message();
    co_return nullptr;
  }
  stream.expires_after(timeout);
  auto [cec, ep] = co_await stream.async_connect(endpoints, nothrow);
  if (cec) {
    error.timeout = cec == beast::error::timeout;
    error.message = "cannot connect to " + target.host_header + ": " +
                    (error.timeout ? std::string("connect timed out") : cec.message());
    co_return nullptr;
  }
  stream.socket().set_option(tcp::no_delay(true));
  if (!u.tls) stream.socket().non_blocking(true);  // for the session's send_now()

  if (u.tls) {
    SSL* ssl = conn->tls->native_handle();
    boost::system::error_code aec;
    auto ip = asio::ip::make_address(u.host, aec);
    if (aec) {
      // SNI only for names (RFC 6066 forbids IP literals there).
      SSL_set_tlsext_host_name(ssl, u.host.c_str());
      SSL_set1_host(ssl, u.host.c_str());
    } else {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), ip.to_string().c_str());
    }
    auto [hec] = co_await conn->tls->async_handshake(asio::ssl::stream_base::client, nothrow);
    if (hec) {
      error.timeout = hec == beast::error::timeout;
      error.message = "TLS handshake with " + target.host_header +
                      " failed: " + (error.timeout ? std::string("timed out") : tls_error_text(hec, ssl));
      co_return nullptr;
    }
  }
  stream.expires_never();
  co_return conn;
}

std::unique_ptr<UpstreamConn> UpstreamPool::take(const std::string& key) {
  auto it = idle_.find(key);
  if (it == idle_.end()) return nullptr;
  auto& stack = it->second;
  auto oldest_ok = std::chrono::steady_clock::now() - kMaxIdle;
  while (!stack.empty()) {
    auto conn = std::move(stack.back());  // most recently used first
    stack.pop_back();
    if (reusable(*conn, oldest_ok)) {
      conn->reused = true;
      return conn;
    }
    conn->close();
  }
  return nullptr;
}

void UpstreamPool::put(std::unique_ptr<UpstreamConn> conn, unsigned max_idle) {
  if (max_idle == 0) return;
  conn->idle_since = std::chrono::steady_clock::now();
  auto& stack = idle_[conn->pool_key];
  // Drop the stale ones at the bottom so their descriptors do not linger.
  auto oldest_ok = conn->idle_since - kMaxIdle;
  std::size_t stale = 0;
  while (stale < stack.size() && stack[stale]->idle_since < oldest_ok) ++stale;
  if (stack.size() - stale >= max_idle) stale = stack.size() - max_idle + 1;
  if (stale) stack.erase(stack.begin(), stack.begin() + static_cast<std::ptrdiff_t>(stale));
  stack.push_back(std::move(conn));
}

std::size_t UpstreamPool::close_dead() {
  const auto oldest_ok = std::chrono::steady_clock::now() - kMaxIdle;
  std::size_t closed = 0;
  for (auto& [key, stack] : idle_) {
    std::erase_if(stack, [&](std::unique_ptr<UpstreamConn>& conn) {
      if (reusable(*conn, oldest_ok)) return false;
      conn->close();
      ++closed;
      return true;
    });
  }
  return closed;
}

std::size_t UpstreamPool::idle_count() const {
  std::size_t n = 0;
  for (auto& [k, v] : idle_) n += v.size();
  return n;
}

}  // namespace td::proxy
