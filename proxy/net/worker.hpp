// One I/O thread: its io_context, its upstream pool, the client sessions it
// runs (so a drain can close the idle ones) and a few reusable relay buffers.
// Everything here is touched only from the worker's own thread.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "proxy/net/deadline.hpp"
#include "proxy/net/server.hpp"
#include "proxy/net/upstream.hpp"

namespace td::proxy {

class UpstreamConn;

// What the worker's drain and timeout sweep need to know about a client
// connection. Timeouts: see deadline.hpp.
struct SessionHandle {
  using clock = IoDeadline::clock;
  static constexpr clock::time_point kNever = IoDeadline::kNever;

  boost::beast::tcp_stream* stream = nullptr;
  bool idle = true;  // waiting for the next request (safe to close)

  IoDeadline client_io;              // for the pending client read/write
  IoDeadline upstream_io;            // for the pending upstream read/write
  UpstreamConn* upstream = nullptr;  // the connection in use, if any

  // The client watch (noticing a client that leaves while its request is
  // upstream) is registered by the sweep, not per request: a request
  // answered within a sweep period, the common case behind a fast upstream,
  // never costs the epoll_ctl a wait registration makes. A client leaving a
  // slow request is still noticed within about one sweep period.
  bool watch_due = false;
  void (*register_watch)(void* session) = nullptr;
  void* session = nullptr;
};

struct Worker {
  explicit Worker(Server& s) : server(s) {}

  Server& server;
  boost::asio::io_context ioc{1};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{ioc.get_executor()};
  UpstreamPool pool;
  std::unordered_set<SessionHandle*> sessions;
  std::thread thread;
  // The watchdog's round this thread last ran (Server::watchdog()).
  std::atomic<std::uint64_t> heartbeat{0};

  // The current configuration snapshot, refreshed when a reload bumped the
  // server's generation (a relaxed check per request, a lock only on change).
  const std::shared_ptr<const Runtime>& current_runtime() {
    auto g = server.runtime_generation.load(std::memory_order_acquire);
    if (g != generation_ || !runtime_) {
      runtime_ = server.runtime();
      generation_ = g;
    }
    return runtime_;
  }

  // Relay buffers: reused so a request allocates none in the steady state.
  static constexpr std::size_t kRelayBufferSize = 64 * 1024;
  std::unique_ptr<char[]> take_buffer() {
    if (free_buffers_.empty()) return std::make_unique<char[]>(kRelayBufferSize);
    auto b = std::move(free_buffers_.back());
    free_buffers_.pop_back();
    return b;
  }
  void give_buffer(std::unique_ptr<char[]> b) {
    if (b && free_buffers_.size() < 8) free_buffers_.push_back(std::move(b));
  }

  // Request body strings, likewise: an agent's 50 KB body would otherwise be
  // malloc'd and freed by every request (the allocator's large-chunk paths).
  // At most 8 are kept, none over 1 MiB.
  std::string take_body() {
    if (free_bodies_.empty()) return {};
    auto s = std::move(free_bodies_.back());
    free_bodies_.pop_back();
    return s;
  }
  void give_body(std::string s) {
    if (s.capacity() > (1u << 20) || free_bodies_.size() >= 8) return;
    s.clear();
    free_bodies_.push_back(std::move(s));
  }

 private:
  std::shared_ptr<const Runtime> runtime_;
  std::uint64_t generation_ = ~0ull;
  std::vector<std::unique_ptr<char[]>> free_buffers_;
  std::vector<std::string> free_bodies_;
};

// Cancels the operations whose deadline passed, every kSweepPeriod, until
// the worker stops (proxy/net/server.cpp).
inline constexpr std::chrono::milliseconds kSweepPeriod{250};
boost::asio::awaitable<void> sweep_timeouts(Worker& worker);

// Serves one client connection until it closes (proxy/net/client_session.hpp).
boost::asio::awaitable<void> run_session(Worker& worker, boost::asio::ip::tcp::socket socket);

}  // namespace td::proxy
