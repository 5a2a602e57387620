#include "proxy/net/server.hpp"

#include <sys/resource.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <cstdlib>
#include <thread>

#include "proxy/telemetry/log.hpp"
#include "proxy/net/worker.hpp"

namespace td::proxy {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {
constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);

std::string endpoint_text(const tcp::endpoint& ep) {
  auto a = ep.address();
  return (a.is_v6() ? "[" + a.to_string() + "]" : a.to_string()) + ":" + std::to_string(ep.port());
}
}  // namespace

asio::awaitable<void> sweep_timeouts(Worker& w) {
  asio::steady_timer tick(w.ioc);
  for (unsigned n = 0;; ++n) {
    tick.expires_after(kSweepPeriod);
    auto [ec] = co_await tick.async_wait(nothrow);
    if (ec) co_return;
    flush_thread_log();
    if (n % 4 == 0) w.pool.close_dead();
    auto now = SessionHandle::clock::now();
    for (auto* s : w.sessions) {
      boost::system::error_code ignored;
      if (now >= s->client_io.at) {
        s->client_io.at = SessionHandle::kNever;
        s->client_io.timed_out = true;
        s->stream->socket().cancel(ignored);
      }
      if (now >= s->upstream_io.at) {
        s->upstream_io.at = SessionHandle::kNever;
        s->upstream_io.timed_out = true;
        if (s->upstream) s->upstream->tcp().socket().cancel(ignored);
      }
      if (s->watch_due) {
        s->watch_due = false;
        s->register_watch(s->session);
      }
    }
  }
}

unsigned long raise_open_file_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  if (rl.rlim_cur < rl.rlim_max) {
    rlimit want = rl;
    want.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &want) == 0) rl = want;
  }
  return static_cast<unsigned long>(rl.rlim_cur);
}

Server::Server(std::shared_ptr<const Runtime> runtime, ServerHooks hooks)
    : runtime_(std::move(runtime)), hooks_(std::move(hooks)) {}

Server::~Server() = default;

void Server::set_runtime(std::shared_ptr<const Runtime> runtime) {
  {
    std::lock_guard lock(runtime_mutex_);
    runtime_ = std::move(runtime);
  }
  runtime_generation.fetch_add(1, std::memory_order_release);
}

std::shared_ptr<const Runtime> Server::runtime() const {
  std::lock_guard lock(runtime_mutex_);
  return runtime_;
}

void Server::stop_all() {
  for (auto& w : workers_) {
    w->guard.reset();
    w->ioc.stop();
  }
}

int Server::run() {
  auto rt = runtime();
  const auto& cfg = rt->config;
  unsigned threads = cfg.threads ? cfg.threads : std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < threads; ++i) workers_.push_back(std::make_unique<Worker>(*this));
  auto& main = *workers_[0];

  // The listening socket, on the first worker; connections go round-robin.
  tcp::acceptor acceptor(main.ioc);
  std::string listen_text =
      (cfg.listen_host.find(':') != std::string::npos ? "[" + cfg.listen_host + "]" : cfg.listen_host) + ":" +
      std::to_string(cfg.listen_port);
  {
    boost::system::error_code ec;
    tcp::resolver resolver(main.ioc);
    auto results = resolver.resolve(cfg.listen_host, std::to_string(cfg.listen_port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
    if (ec || results.empty()) {
      log_error("listen", "cannot resolve listen address " + listen_text + ": " + ec.message());
      return 1;
    }
    tcp::endpoint ep = results.begin()->endpoint();
    acceptor.open(ep.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(ep, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      log_error("listen", "cannot listen on " + listen_text + ": " + ec.message());
      return 1;
    }
  }
  LogLine("listening")
      .str("level", "info")
      .str("listen", endpoint_text(acceptor.local_endpoint()))
      .num("threads", threads)
      .str("config", cfg.source)
      .emit();

  asio::co_spawn(
      main.ioc,
      [&]() -> asio::awaitable<void> {
        std::size_t next = 0;
        for (;;) {
          Worker& w = *workers_[next++ % workers_.size()];
          auto [ec, socket] = co_await acceptor.async_accept(w.ioc, nothrow);
          if (ec) {
            if (!acceptor.is_open() || ec == asio::error::operation_aborted) co_return;
            // Out of descriptors or a transient network error: do not spin.
            log_error("accept", ec.message());
            asio::steady_timer pause(main.ioc, std::chrono::milliseconds(50));
            co_await pause.async_wait(nothrow);
            continue;
          }
          asio::co_spawn(w.ioc, run_session(w, tcp::socket(std::move(socket))), asio::detached);
        }
      },
      asio::detached);

  // Signals: SIGTERM/SIGINT drain (a second one stops at once), SIGHUP reloads.
  std::signal(SIGPIPE, SIG_IGN);
  asio::signal_set signals(main.ioc, SIGTERM, SIGINT, SIGHUP);
  std::thread reload_thread;
  bool stopping = false;
  std::function<void()> wait_signal = [&] {
    signals.async_wait([&](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      if (sig == SIGHUP) {
        if (!hooks_.reload) {
          log_info("reload", "SIGHUP ignored: no reload hook");
        } else if (reload_thread.joinable() && !reload_done_.load()) {
          log_info("reload", "SIGHUP ignored: a reload is already running");
        } else {
          if (reload_thread.joinable()) reload_thread.join();
          reload_done_ = false;
          reload_thread = std::thread([this] {
            if (auto next = hooks_.reload()) {
              std::string error;
              if (auto r = build_runtime(std::move(*next), error)) {
                set_runtime(std::move(r));
                log_info("reload", "configuration reloaded");
              } else {
                log_error("reload", "reload failed, keeping the running config: " + error);
              }
            }
            reload_done_ = true;
          });
        }
        wait_signal();
        return;
      }
      if (stopping) {
        log_info("shutdown", "second signal: stopping now");
        stop_all();
        return;
      }
      stopping = true;
      boost::system::error_code ignored;
      acceptor.close(ignored);
      begin_drain(sig);
      wait_signal();
    });
  };
  wait_signal();

  for (auto& w : workers_) asio::co_spawn(w->ioc, sweep_timeouts(*w), asio::detached);
  for (std::size_t i = 1; i < workers_.size(); ++i)
    workers_[i]->thread = std::thread([w = workers_[i].get()] {
      w->ioc.run();
      flush_thread_log();
    });
  main.ioc.run();
  flush_thread_log();
  for (std::size_t i = 1; i < workers_.size(); ++i)
    if (workers_[i]->thread.joinable()) workers_[i]->thread.join();
  if (reload_thread.joinable()) reload_thread.join();
  log_info("shutdown", "stopped");
  return 0;
}

// Stop taking requests: idle keep-alive connections are closed now, busy ones
// after their current response; the process stops when none is left or after
// limits.drain_timeout_ms.
void Server::begin_drain(int signal_number) {
  draining = true;
  auto timeout = std::chrono::milliseconds(runtime()->config.limits.drain_timeout_ms);
  LogLine("draining")
      .str("level", "info")
      .str("signal", signal_number == SIGINT ? "SIGINT" : "SIGTERM")
      .num("open_connections", static_cast<std::uint64_t>(std::max(0L, open_connections.load())))
      .num("drain_timeout_ms", static_cast<std::uint64_t>(timeout.count()))
      .emit();
  for (auto& w : workers_) {
    asio::post(w->ioc, [w = w.get()] {
      for (auto* s : w->sessions)
        if (s->idle) s->stream->cancel();
    });
  }
  auto& main = *workers_[0];
  asio::co_spawn(
      main.ioc,
      [this, timeout, &main]() -> asio::awaitable<void> {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        asio::steady_timer tick(main.ioc);
        while (open_connections.load() > 0 && std::chrono::steady_clock::now() < deadline) {
          tick.expires_after(std::chrono::milliseconds(20));
          co_await tick.async_wait(nothrow);
        }
        if (open_connections.load() > 0)
          log_info("shutdown", "drain timeout: closing " + std::to_string(open_connections.load()) + " connections");
        stop_all();
      },
      asio::detached);
}

}  // namespace td::proxy
