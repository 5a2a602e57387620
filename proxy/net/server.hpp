// The proxy server: one io_context per I/O thread (each with its own upstream
// pool, so the hot path takes no lock), one acceptor that hands connections
// round-robin to the threads, signal handling (SIGTERM/SIGINT drain, SIGHUP
// reload hook) and the current Runtime snapshot.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "proxy/net/runtime.hpp"

namespace td::proxy {

struct Worker;

struct ServerHooks {
  // Called on SIGHUP, on a thread of its own (it may read files). Returns the
  // new configuration, or nullopt to keep the running one (having logged why).
  std::function<std::optional<config::Config>()> reload;
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

  // Shared state the sessions read.
  std::atomic<bool> draining{false};
  std::atomic<long> open_connections{0};
  std::atomic<std::uint64_t> runtime_generation{0};
  std::atomic<std::uint64_t> next_request_id{first_request_id(std::chrono::system_clock::now())};

 private:
  void begin_drain(int signal_number);
  void stop_all();

  std::atomic<bool> reload_done_{true};
  mutable std::mutex runtime_mutex_;
  std::shared_ptr<const Runtime> runtime_;
  ServerHooks hooks_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

// Raises RLIMIT_NOFILE's soft limit to the hard limit; returns the new soft limit.
unsigned long raise_open_file_limit();

}  // namespace td::proxy
