// The dashboard's runway lists (docs/design.md §Dashboard, "runways"): the
// time to list the runways now from the process's store at its bound
// (65,536 runways, quota::RunwayStore::list(), the 200 most recently used),
// and from Redis (shared_state::SharedStore::list_runways(), one round trip)
// holding RUNWAYS runways; and the take script's round trip, which now also
// keeps the index the list reads (the proxy's path, on the shared store).
//
//   cmake --build build --target runway_list_bench && build/scripts/bench/runway_list_bench [RUNWAYS] [ROUNDS]
//
// Redis is a real redis-server on a free port (tests/unit/shared_state's).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "quota/runway_store.hpp"
#include "redis_server.hpp"
#include "shared_state/shared_store.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using td::providers::Provider;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

struct Stats {
  double median, p90;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v[v.size() * 9 / 10]};
}

std::string key(int i) { return td::quota::runway_key(Provider::openai, "fp" + std::to_string(i), "gpt"); }

}  // namespace

int main(int argc, char** argv) {
  const int runways = argc > 1 ? std::atoi(argv[1]) : 10'000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 50;
  const td::quota::QuotaLimits limits{.tpm = 1'000'000};

  // The process's store at its bound.
  td::quota::RunwayStore local;
  const auto t0 = Clock::now();
  for (int i = 0; i < 65'536; ++i) local.take(key(i), Provider::openai, limits, {1000, 100}, t0);
  std::vector<double> times;
  for (int r = 0; r < rounds; ++r) {
    const auto t = Clock::now();
    const auto list = local.list(Clock::now(), 200);
    times.push_back(ms_since(t));
    if (list.size() != 200) return 1;
  }
  Stats s = stats(times);
  std::printf("local store, %zu runways: list of 200 %.2f ms median, %.2f ms p90\n", local.size(), s.median, s.p90);

  // Redis.
  td::test::RedisServer server;
  td::config::QuotaStore e;
  e.url = "redis://127.0.0.1:" + std::to_string(server.port());
  e.host = "127.0.0.1";
  e.port = static_cast<std::uint16_t>(server.port());
  e.timeout_ms = 1000;
  td::quota::RunwayStore fallback;
  td::shared_state::SharedStore shared(e, fallback, [](bool, const std::string&) {});
  shared.start();
  while (!shared.shared()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  times.clear();
  for (int i = 0; i < runways; ++i) {
    std::promise<void> done;
    const auto t = Clock::now();
    shared.take({key(i), Provider::openai, limits}, {1000, 100}, 1.0, [&](auto) { done.set_value(); });
    done.get_future().wait();
    times.push_back(ms_since(t));
  }
  s = stats(times);
  std::printf("redis take (with the index), %d runways: %.3f ms median, %.3f ms p90\n", runways, s.median, s.p90);
  times.clear();
  for (int r = 0; r < rounds; ++r) {
    const auto t = Clock::now();
    const auto list = shared.list_runways(200);
    times.push_back(ms_since(t));
    if (!list || list->size() != std::min<std::size_t>(200, runways)) return 1;
  }
  s = stats(times);
  std::printf("redis, %d runways: list of 200 %.2f ms median, %.2f ms p90\n", runways, s.median, s.p90);
  shared.stop();
  return 0;
}
