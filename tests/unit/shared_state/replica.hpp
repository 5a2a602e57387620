// A replica's policy state for the shared state's tests: its own runway
// store and a SharedStore on a test's redis-server, connected before use.
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "config/config.hpp"
#include "quota/runway_store.hpp"
#include "shared_state/shared_store.hpp"

namespace td::test {

inline config::QuotaStore endpoint(int port) {
  config::QuotaStore e;
  e.url = "redis://127.0.0.1:" + std::to_string(port);
  e.host = "127.0.0.1";
  e.port = static_cast<std::uint16_t>(port);
  e.timeout_ms = 500;  // a loaded test machine; the arithmetic is what is tested
  return e;
}

// Polls `f` until it holds or `within` passed (a condition on another
// thread's work, not a timing assertion).
inline bool eventually(const std::function<bool()>& f,
                       std::chrono::milliseconds within = std::chrono::milliseconds(5000)) {
  const auto end = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return f();
}

struct Replica {
  quota::RunwayStore local;
  shared_state::SharedStore store;
  explicit Replica(int port) : store(endpoint(port), local, [](bool, const std::string&) {}) {
    store.start();
    REQUIRE(eventually([&] { return store.shared(); }));
  }
};

}  // namespace td::test
