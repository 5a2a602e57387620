#include "proxy_harness.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "proxy/net/runtime.hpp"
#include "proxy/net/worker.hpp"

namespace td::net_test {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);

FakeUpstream::FakeUpstream(Responder respond)
    : acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)), respond_(std::move(respond)) {
  port_ = acceptor_.local_endpoint().port();
  auto serve = [this](tcp::socket s) -> asio::awaitable<void> {
    boost::beast::flat_buffer buf;
    for (;;) {
      UpstreamRequest req;
      auto [ec, n] = co_await http::async_read(s, buf, req, nothrow);
      if (ec) co_return;
      std::size_t index;
      {
        std::lock_guard lock(mutex_);
        index = requests_.size();
        requests_.push_back(req);
      }
      UpstreamResponse res = respond_(req, index);
      res.prepare_payload();
      auto [wec, wn] = co_await http::async_write(s, res, nothrow);
      if (wec || !res.keep_alive()) co_return;
    }
  };
  asio::co_spawn(
      ioc_,
      [this, serve]() -> asio::awaitable<void> {
        for (;;) {
          auto [ec, s] = co_await acceptor_.async_accept(nothrow);
          if (ec) co_return;
          asio::co_spawn(ioc_, serve(std::move(s)), asio::detached);
        }
      },
      asio::detached);
  thread_ = std::thread([this] { ioc_.run(); });
}

FakeUpstream::~FakeUpstream() {
  ioc_.stop();
  thread_.join();
}

std::vector<UpstreamRequest> FakeUpstream::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

UpstreamResponse json_response(unsigned status, std::string body) {
  UpstreamResponse res{static_cast<http::status>(status), 11};
  res.set(http::field::content_type, "application/json");
  res.body() = std::move(body);
  return res;
}

TestProxy::TestProxy(std::vector<std::unique_ptr<proxy::Filter>> filters, unsigned short upstream_port) {
  config::Config cfg;
  cfg.threads = 1;
  // Short enough that an exchange a broken test leaves stuck ends soon.
  cfg.limits.header_timeout_ms = 5000;
  cfg.limits.idle_timeout_ms = 5000;
  for (auto name : config::kProviders) {
    config::Upstream u;
    u.url = "http://127.0.0.1:" + std::to_string(upstream_port);
    u.host = "127.0.0.1";
    u.port = upstream_port;
    cfg.upstreams[std::string(name)] = u;
  }
  std::string error;
  auto rt = proxy::build_runtime(cfg, std::move(filters), error);
  if (!rt) throw std::runtime_error(error);
  server_ = std::make_unique<proxy::Server>(rt);
  worker_ = std::make_unique<proxy::Worker>(*server_);
  acceptor_ = std::make_unique<tcp::acceptor>(worker_->ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  port_ = acceptor_->local_endpoint().port();
  proxy::Worker& w = *worker_;
  asio::co_spawn(
      w.ioc,
      [this, &w]() -> asio::awaitable<void> {
        for (;;) {
          auto [ec, s] = co_await acceptor_->async_accept(nothrow);
          if (ec) co_return;
          asio::co_spawn(w.ioc, proxy::run_session(w, std::move(s)), asio::detached);
        }
      },
      asio::detached);
  asio::co_spawn(w.ioc, proxy::sweep_timeouts(w), asio::detached);
  thread_ = std::thread([&w] { w.ioc.run(); });
}

TestProxy::~TestProxy() {
  // Sessions end when their clients close; the worker may stop only then
  // (a session left suspended would outlive the worker's session set).
  eventually([this] { return open_connections() == 0; }, 5s);
  asio::post(worker_->ioc, [this] { acceptor_->close(); });
  worker_->guard.reset();
  worker_->ioc.stop();
  thread_.join();
}

long TestProxy::open_connections() const { return server_->open_connections.load(); }

ClientReply post(unsigned short port, const std::string& target, const std::string& body,
                 const std::vector<std::pair<std::string, std::string>>& headers, std::chrono::milliseconds timeout) {
  ClientReply out;
  const auto t0 = std::chrono::steady_clock::now();
  http::request<http::string_body> req{http::verb::post, target, 11};
  req.set(http::field::host, "proxy");
  req.set(http::field::content_type, "application/json");
  for (auto& [k, v] : headers) req.set(k, v);
  req.body() = body;
  req.prepare_payload();
  // Asynchronous, so that `timeout` bounds it (a blocking read would not be).
  asio::io_context ioc;
  tcp::socket s(ioc);
  boost::beast::flat_buffer buf;
  http::response<http::string_body> res;
  bool finished = false;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        auto [cec] = co_await s.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), nothrow);
        if (cec) {
          out.error = "connect: " + cec.message();
          co_return;
        }
        auto [wec, wn] = co_await http::async_write(s, req, nothrow);
        if (wec) {
          out.error = "write: " + wec.message();
          co_return;
        }
        auto [rec, rn] = co_await http::async_read(s, buf, res, nothrow);
        if (rec) {
          out.error = "read: " + rec.message();
          co_return;
        }
        out.status = res.result_int();
        out.body = res.body();
        for (const auto& field : res) out.headers.emplace_back(field.name_string(), field.value());
        finished = true;
      },
      asio::detached);
  ioc.run_for(timeout);
  if (!finished && out.error.empty()) out.error = "no answer within the timeout";
  boost::system::error_code ignored;
  s.close(ignored);
  out.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  return out;
}

bool eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return done();
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

}  // namespace td::net_test
