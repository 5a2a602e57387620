// The diet threads' pool: order, failures, and the release after big bodies.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "proxy/telemetry/work_pool.hpp"

using namespace td::proxy;
using namespace std::chrono_literals;

TEST_CASE("work pool: jobs run in order; after an idle spell the wanted release runs once") {
  std::atomic<int> releases{0};
  WorkPool pool(1, [&] { ++releases; });
  std::vector<int> order;
  std::promise<void> done;
  for (int i = 0; i < 3; ++i) pool.post([&order, i] { order.push_back(i); });
  pool.post([&] { done.set_value(); });
  REQUIRE(done.get_future().wait_for(10s) == std::future_status::ready);
  CHECK(order == std::vector<int>{0, 1, 2});
  CHECK(releases == 0);  // nobody asked
  pool.want_release();
  for (int i = 0; i < 100 && releases == 0; ++i) std::this_thread::sleep_for(50ms);
  CHECK(releases == 1);
  CHECK(pool.releases() == 1);
  std::this_thread::sleep_for(WorkPool::kReleaseAfterIdle + 200ms);
  CHECK(releases == 1);  // once per want_release()
}

TEST_CASE("work pool: a job that throws is logged and the pool goes on") {
  WorkPool pool(1, [] {});
  std::promise<void> done;
  pool.post([] { throw std::runtime_error("boom"); });
  pool.post([&] { done.set_value(); });
  CHECK(done.get_future().wait_for(10s) == std::future_status::ready);
}

TEST_CASE("work pool: a nice value lowers its threads' priority, not the caller's") {
  const int before = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  WorkPool pool(
      1, [] {}, kDietThreadNice);
  std::promise<int> seen;
  pool.post([&] { seen.set_value(getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()))); });
  auto f = seen.get_future();
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  CHECK(f.get() == std::min(before + kDietThreadNice, 19));
  CHECK(getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())) == before);
}

TEST_CASE("work pool: a name names its threads, for top -H and the benchmarks that read their CPU apart") {
  WorkPool pool(1, nullptr, 0, "td-test-pool");
  std::promise<std::string> name;
  pool.post([&] {
    char buf[16] = {};
    pthread_getname_np(pthread_self(), buf, sizeof buf);
    name.set_value(buf);
  });
  auto got = name.get_future();
  REQUIRE(got.wait_for(10s) == std::future_status::ready);
  CHECK(got.get() == "td-test-pool");
}
