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
  serving_ = "serving on " + endpoint_text(acceptor.local_endpoint()) + " with " + std::to_string(threads) +
             " I/O thread" + (threads == 1 ? "" : "s");
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

  // Signals: SIGTERM/SIGINT withdraw readiness, then after limits.drain_grace_ms
  // drain (a second one stops at once); SIGHUP reloads.
  std::signal(SIGPIPE, SIG_IGN);
  asio::signal_set signals(main.ioc, SIGTERM, SIGINT, SIGHUP);
  asio::steady_timer grace(main.ioc);
  std::function<void()> wait_signal = [&] {
    signals.async_wait([&](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      if (sig == SIGHUP) {
        start_reload();
        wait_signal();
        return;
      }
      if (stopping.exchange(true)) {
        log_info("shutdown", "second signal: stopping now");
        stop_all();
        return;
      }
      const auto grace_ms = std::chrono::milliseconds(runtime()->config.limits.drain_grace_ms);
      auto drain = [this, &acceptor, sig] {
        boost::system::error_code ignored;
        acceptor.close(ignored);
        begin_drain(sig);
      };
      if (grace_ms.count() == 0) {
        drain();
      } else {
        LogLine("stopping")
            .str("level", "info")
            .str("signal", sig == SIGINT ? "SIGINT" : "SIGTERM")
            .num("drain_grace_ms", static_cast<std::uint64_t>(grace_ms.count()))
            .emit();
        tell(ServingState::stopping,
             "stopping: not ready, still serving for " + std::to_string(grace_ms.count()) + " ms, then draining");
        grace.expires_after(grace_ms);
        grace.async_wait([drain](const boost::system::error_code& e) {
          if (!e) drain();
        });
      }
      wait_signal();
    });
  };
  wait_signal();

  // READY=1 from the loop itself: the listener is up and its loop runs.
  asio::post(main.ioc, [this] { tell(ServingState::ready, serving_); });
  if (hooks_.alive && hooks_.alive_every.count() > 0) asio::co_spawn(main.ioc, watchdog(), asio::detached);
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
  if (reload_thread_.joinable()) reload_thread_.join();
  log_info("shutdown", "stopped");
  return 0;
}

void Server::tell(ServingState state, const std::string& status) {
  if (hooks_.state) hooks_.state(state, status);
}

// SIGHUP: the reload hook on a thread of its own (it reads files); /readyz
// answers 503 until the new runtime is in place or the file is rejected.
void Server::start_reload() {
  if (!hooks_.reload) {
    log_info("reload", "SIGHUP ignored: no reload hook");
    return;
  }
  if (reloading.load()) {
    log_info("reload", "SIGHUP ignored: a reload is already running");
    return;
  }
  if (reload_thread_.joinable()) reload_thread_.join();
  reloading = true;
  const std::string source = runtime()->config.source;
  tell(ServingState::reloading, "reloading " + (source.empty() ? std::string("the configuration") : source));
  reload_thread_ = std::thread([this] {
    ReloadResult next = hooks_.reload();
    std::string status = serving_;
    if (next.config) {
      std::string error;
      if (auto r = build_runtime(std::move(*next.config), error)) {
        set_runtime(std::move(r));
        log_info("reload", "configuration reloaded");
        status += "; configuration reloaded";
      } else {
        log_error("reload", "reload failed, keeping the running config: " + error);
        status += "; reload rejected, running config kept: " + error;
      }
    } else {
      status += "; reload rejected, running config kept: " + next.rejected;
    }
    flush_thread_log();  // the outcome in the journal before READY=1 ends `systemctl reload`
    reloading = false;
    tell(ServingState::ready, status);
  });
}

// Every alive_every: if every I/O thread ran the previous round's post, the
// hook is called and a new round posted; a thread that has not leaves the
// hook uncalled (logged once per stall) until it catches up.
asio::awaitable<void> Server::watchdog() {
  auto& main = *workers_[0];
  asio::steady_timer tick(main.ioc);
  std::uint64_t round = 0;
  bool stalled = false;
  for (;;) {
    std::size_t late = workers_.size();
    for (std::size_t i = 0; i < workers_.size() && late == workers_.size(); ++i)
      if (workers_[i]->heartbeat.load(std::memory_order_acquire) != round) late = i;
    if (late == workers_.size()) {
      stalled = false;
      hooks_.alive();
      ++round;
      for (auto& w : workers_)
        asio::post(w->ioc, [w = w.get(), round] { w->heartbeat.store(round, std::memory_order_release); });
    } else if (!stalled) {
      stalled = true;
      log_error("watchdog", "I/O thread " + std::to_string(late) + " has not run what was posted to it " +
                                std::to_string(hooks_.alive_every.count() / 1000) +
                                " ms ago: withholding the watchdog ping");
    }
    tick.expires_after(hooks_.alive_every);
    auto [ec] = co_await tick.async_wait(nothrow);
    if (ec) co_return;
  }
}

// Stop taking requests: idle keep-alive connections are closed now, busy ones
// after their current response; the process stops when none is left or after
// limits.drain_timeout_ms.
void Server::begin_drain(int signal_number) {
  draining = true;
  auto timeout = std::chrono::milliseconds(runtime()->config.limits.drain_timeout_ms);
  tell(ServingState::stopping, "draining: " + std::to_string(std::max(0L, open_connections.load())) +
                                   " open connections, at most " + std::to_string(timeout.count()) + " ms");
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
