// The proxy server: one io_context per I/O thread (each with its own upstream
// pool, so the hot path takes no lock), one acceptor that hands connections
// round-robin to the threads, signal handling (SIGTERM/SIGINT grace and
// drain, SIGHUP reload hook), what it tells its supervisor, and the current
// Runtime snapshot.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config/config.hpp"
#include "proxy/net/runtime.hpp"

namespace td::proxy {

struct Worker;

// A SIGHUP's reload: the new configuration, or why the file was rejected
// (the first error, FILE:LINE:COL: reason, already logged).
struct ReloadResult {
  std::optional<config::Config> config;
  std::string rejected;
};

// The server's state as its supervisor sees it (systemd's notify protocol,
// service/systemd_notify; docs/design.md §Network).
enum class ServingState { ready, reloading, stopping };

struct ServerHooks {
  // Called on SIGHUP, on a thread of its own (it may read files).
  std::function<ReloadResult()> reload;
  // Each change of state, with a line for a person (systemctl status):
  // ready once the listener is up and after each reload, applied or
  // rejected; reloading when a SIGHUP's reload begins; stopping when
  // SIGTERM/SIGINT arrives and again when the drain begins. Called on the
  // first I/O thread or the reload thread.
  std::function<void(ServingState, const std::string& status)> state;
  // Called every alive_every on the first I/O thread, only while every I/O
  // thread has run what was posted to it since the previous call: a wedged
  // loop stops the calls (systemd's watchdog). 0: never.
  std::function<void()> alive;
  std::chrono::microseconds alive_every{0};
};

class Server {
 public:
  Server(std::shared_ptr<const Runtime> runtime, ServerHooks hooks = {});
  ~Server();

  // Binds, serves until SIGTERM/SIGINT, drains, returns the exit code.
  int run();

  // Swaps in a new snapshot; requests in flight keep theirs. Thread-safe.
  void set_runtime(std::shared_ptr<const Runtime> runtime);
  std::shared_ptr<const Runtime> runtime() const;

  // Shared state the sessions read. stopping: a SIGTERM/SIGINT arrived
  // (/readyz answers 503, answers close their connection); draining: the
  // grace is over, the listener closed, idle connections closed.
  std::atomic<bool> stopping{false};
  std::atomic<bool> draining{false};
  std::atomic<bool> reloading{false};
  // GET /readyz: serving, neither stopping nor applying a reload.
  bool ready() const { return !stopping.load(std::memory_order_relaxed) && !reloading.load(std::memory_order_relaxed); }
  std::atomic<long> open_connections{0};
  std::atomic<std::uint64_t> runtime_generation{0};
  std::atomic<std::uint64_t> next_request_id{first_request_id(std::chrono::system_clock::now())};

 private:
  void begin_drain(int signal_number);
  void stop_all();
  void tell(ServingState state, const std::string& status);
  void start_reload();
  boost::asio::awaitable<void> watchdog();

  std::string serving_;  // "serving on HOST:PORT with N I/O threads", for status lines
  std::thread reload_thread_;
  mutable std::mutex runtime_mutex_;
  std::shared_ptr<const Runtime> runtime_;
  ServerHooks hooks_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

// Raises RLIMIT_NOFILE's soft limit to the hard limit; returns the new soft limit.
unsigned long raise_open_file_limit();

}  // namespace td::proxy
