// An in-process proxy for the session tests: one I/O thread (a Worker)
// serving client sessions with a filter chain the test builds, a fake
// upstream on a thread of its own, and a blocking client.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "proxy/net/server.hpp"
#include "proxy/phases/filter.hpp"

namespace td::proxy {
struct Worker;
}

namespace td::net_test {

namespace http = boost::beast::http;
using UpstreamRequest = http::request<http::string_body>;
using UpstreamResponse = http::response<http::string_body>;

// Answers the n-th request (from 0) with what `respond` returns, keeping
// connections alive; records every request it read.
class FakeUpstream {
 public:
  using Responder = std::function<UpstreamResponse(const UpstreamRequest&, std::size_t n)>;
  explicit FakeUpstream(Responder respond);
  ~FakeUpstream();
  unsigned short port() const { return port_; }
  std::vector<UpstreamRequest> requests() const;

 private:
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  Responder respond_;
  mutable std::mutex mutex_;
  std::vector<UpstreamRequest> requests_;
  std::thread thread_;
};

// A JSON answer with `status` and `body`.
UpstreamResponse json_response(unsigned status, std::string body);

// The proxy: every provider's upstream is `upstream_port` on 127.0.0.1.
class TestProxy {
 public:
  TestProxy(std::vector<std::unique_ptr<proxy::Filter>> filters, unsigned short upstream_port);
  ~TestProxy();
  unsigned short port() const { return port_; }
  long open_connections() const;

 private:
  std::unique_ptr<proxy::Server> server_;
  std::unique_ptr<proxy::Worker> worker_;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
  unsigned short port_ = 0;
  std::thread thread_;
};

struct ClientReply {
  unsigned status = 0;  // 0: no response (error says why)
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string error;
  std::chrono::milliseconds took{0};
  // The first value of header `name` (as sent: lower case), "" if absent;
  // count() of how many there are.
  std::string header(std::string_view name) const {
    for (const auto& [n, v] : headers)
      if (n == name) return v;
    return {};
  }
  std::size_t count(std::string_view name) const {
    std::size_t c = 0;
    for (const auto& [n, v] : headers) c += n == name;
    return c;
  }
};

// POSTs `body` to `target` on a new connection and reads the answer (at
// most `timeout`).
ClientReply post(unsigned short port, const std::string& target, const std::string& body,
                 const std::vector<std::pair<std::string, std::string>>& headers = {},
                 std::chrono::milliseconds timeout = std::chrono::seconds(10));

// Polls `done` every 5 ms for at most `timeout`; its last answer.
bool eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout = std::chrono::seconds(3));

}  // namespace td::net_test
