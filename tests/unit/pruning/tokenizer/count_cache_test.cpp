#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "pruning/tokenizer/count_cache.hpp"

using td::tok::CountCache;

TEST_CASE("the count cache returns what was put, and misses otherwise") {
  CountCache c(1024);
  CHECK_FALSE(c.get(42).has_value());
  c.put(42, 7);
  CHECK(c.get(42) == 7u);
  c.put(42, 8);  // same key: replaced, not duplicated
  CHECK(c.get(42) == 8u);
  c.put(0, 5);  // key 0 is usable too
  CHECK(c.get(0) == 5u);
  auto s = c.stats();
  CHECK(s.hits == 3);
  CHECK(s.misses == 1);
}

TEST_CASE("the count cache is bounded and evicts the least recently used of a set") {
  CountCache c(256);
  CHECK(c.capacity() == 256);
  CHECK(c.memory_bytes() == 256 * 16);
  // Keys of one set: same shard (top bits) and same set index (low bits).
  auto key = [](std::uint64_t k) { return (k << 32) | 1; };
  for (std::uint64_t k = 1; k <= 8; ++k) c.put(key(k), k);
  CHECK(c.get(key(1)) == 1u);  // 1 is now the most recently used
  c.put(key(9), 9);            // evicts 2, the least recently used
  CHECK_FALSE(c.get(key(2)).has_value());
  CHECK(c.get(key(1)) == 1u);
  CHECK(c.get(key(9)) == 9u);
  CHECK(c.stats().evictions == 1);
  for (std::uint64_t k = 0; k < 100000; ++k) c.put(k * 0x9E3779B97F4A7C15ull, k);
  CHECK(c.stats().evictions >= 100000 - 256);
}

TEST_CASE("the count cache is safe under concurrent use") {
  CountCache c(4096);
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (std::uint64_t i = 0; i < 20000; ++i) {
        std::uint64_t k = (i % 3000) * 0x9E3779B97F4A7C15ull;
        c.put(k, i % 3000);
        if (auto v = c.get(k); v && *v != i % 3000) ++wrong[t];
      }
    });
  for (auto& th : threads) th.join();
  for (int w : wrong) CHECK(w == 0);
}
