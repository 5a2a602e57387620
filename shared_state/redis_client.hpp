// A Redis connection driven from Asio (docs/design.md §Shared state): hiredis'
// async API (Debian's libhiredis 0.14) with its socket in an Asio
// posix::stream_descriptor on a thread and io_context of the client's own, so
// no I/O thread of the proxy ever waits on Redis. Commands are pipelined on
// the one connection; each reply, or its failure, comes back to a callback on
// the client's thread.
//
//   time-out    a command not answered within `timeout` drops the connection:
//               every pending command fails at once ("slow" counts as "down")
//   reconnect   with backoff (50 ms doubling to 2 s); once connected, AUTH,
//               SELECT and SCRIPT LOAD of the scripts run before `ready`
//   scripts     evalsha(i, ...) runs script i by its SHA1 (loaded once per
//               connection), falling back to EVAL on NOSCRIPT
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace td::shared_state {

struct RedisReply {
  enum class Type { error, nil, integer, string, array, status };
  Type type = Type::error;
  std::string str;  // string, status, or the error's text
  long long integer = 0;
  std::vector<RedisReply> elements;

  bool failed() const { return type == Type::error; }
  static RedisReply error(std::string why) { return RedisReply{Type::error, std::move(why), 0, {}}; }
};
// Runs on the client's thread; keep it short.
using ReplyFn = std::function<void(const RedisReply&)>;

class RedisClient {
 public:
  struct Hooks {
    // The connection is ready (scripts loaded): the client's thread.
    std::function<void()> ready;
    // It was lost, or never came: why. The client's thread.
    std::function<void(const std::string& why)> down;
  };
  // `scripts`: the Lua sources evalsha() runs, by index.
  RedisClient(config::QuotaStore endpoint, std::vector<std::string> scripts, Hooks hooks);
  ~RedisClient();  // stops the thread; pending commands fail
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Connects (and keeps reconnecting) on the client's thread.
  void start();
  void stop();

  // From any thread. Not ready: `done` fails at once on the client's thread.
  void command(std::vector<std::string> argv, ReplyFn done);
  // EVALSHA of script `script` with its keys and arguments.
  void evalsha(std::size_t script, std::vector<std::string> keys, std::vector<std::string> args, ReplyFn done);

  // Connected with the scripts loaded.
  bool ready() const { return ready_.load(std::memory_order_acquire); }
  std::string describe() const;  // the endpoint, without the password

  static constexpr std::chrono::milliseconds kFirstBackoff{50};
  static constexpr std::chrono::milliseconds kMaxBackoff{2000};

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
  std::atomic<bool> ready_{false};
};

}  // namespace td::shared_state
