// One I/O thread: its io_context, its upstream pool, the client sessions it
// runs (so a drain can close the idle ones) and a few reusable relay buffers.
// Everything here is touched only from the worker's own thread.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <memory>
#include <thread>
#include <unordered_set>
#include <vector>

#include "proxy/server.hpp"
#include "proxy/upstream.hpp"

namespace td::proxy {

// What a drain needs to know about a client connection.
struct SessionHandle {
  boost::beast::tcp_stream* stream = nullptr;
  bool idle = true;  // waiting for the next request (safe to close)
};

struct Worker {
  explicit Worker(Server& s) : server(s) {}

  Server& server;
  boost::asio::io_context ioc{1};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{ioc.get_executor()};
  UpstreamPool pool;
  std::unordered_set<SessionHandle*> sessions;
  std::thread thread;

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
    if (free_buffers_.size() < 8) free_buffers_.push_back(std::move(b));
  }

 private:
  std::shared_ptr<const Runtime> runtime_;
  std::uint64_t generation_ = ~0ull;
  std::vector<std::unique_ptr<char[]>> free_buffers_;
};

// Serves one client connection until it closes (proxy/session.cpp).
boost::asio::awaitable<void> run_session(Worker& worker, boost::asio::ip::tcp::socket socket);

}  // namespace td::proxy
