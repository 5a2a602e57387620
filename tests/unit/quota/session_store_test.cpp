#include <doctest/doctest.h>

#include "quota/session_store.hpp"

using namespace td::quota;

TEST_CASE("sessions: remembered, billed, forgotten when idle, bounded") {
  SessionStore s(32);
  const auto t0 = SessionStore::Clock::time_point{} + std::chrono::hours(100);
  CHECK(s.get(7, t0).memory == td::pruning::SessionMemory{});
  s.remember(7, {td::pruning::Level::Window, 12, true}, t0);
  s.billed(7, 5'000, t0 + std::chrono::seconds(1));
  SessionFacts f = s.get(7, t0 + std::chrono::seconds(2));
  CHECK(f.memory.level == td::pruning::Level::Window);
  CHECK(f.memory.latched_messages == 12);
  CHECK(f.memory.thinking_lowered);
  CHECK(f.cached_prefix == 5'000);
  CHECK(f.billed_at == t0 + std::chrono::seconds(1));
  CHECK(s.get(7, t0 + SessionStore::kIdleExpiry + std::chrono::seconds(2)).memory == td::pruning::SessionMemory{});
  for (std::uint64_t i = 0; i < 1'000; ++i) s.remember(i << 7, {}, t0 + std::chrono::milliseconds(i));
  CHECK(s.size() <= 16 * 3);
}

TEST_CASE("sessions: an overflow's fit is remembered, the lowest kept, and survives the next decision's memory") {
  SessionStore s(32);
  const auto t0 = SessionStore::Clock::time_point{} + std::chrono::hours(100);
  s.overflowed(9, 50'000, t0);
  CHECK(s.get(9, t0).memory.fit_tokens == 50'000);
  s.overflowed(9, 60'000, t0);
  CHECK(s.get(9, t0).memory.fit_tokens == 50'000);
  s.overflowed(9, 40'000, t0);
  CHECK(s.get(9, t0).memory.fit_tokens == 40'000);
  // The next decision carries the memory it was given.
  td::pruning::SessionMemory m = s.get(9, t0).memory;
  m.level = td::pruning::Level::Window;
  s.remember(9, m, t0);
  CHECK(s.get(9, t0).memory.fit_tokens == 40'000);
}

TEST_CASE("sessions: the lines a model recalled are kept in order, bounded, and survive the next decision's memory") {
  using Range = td::pruning::RecalledLines::Range;
  SessionStore s(32);
  const auto t0 = SessionStore::Clock::time_point{} + std::chrono::hours(100);
  CHECK_FALSE(s.get(5, t0).recalled);
  s.recalled(5, {{0xabcd, 41, 60, 4}}, t0);
  const auto before = s.get(5, t0).recalled;
  s.remember(5, {td::pruning::Level::Window, 3, false}, t0);
  s.recalled(5, {{0xabcd, 10, 20, 8}, {0x1234, 1, 1, 8}}, t0);
  const auto f = s.get(5, t0);
  REQUIRE(f.recalled);
  CHECK(f.recalled->adds() == 3);
  CHECK(f.recalled->of(0xabcd) == std::vector<std::pair<std::size_t, std::size_t>>{{10, 20}, {41, 60}});
  CHECK(f.memory.level == td::pruning::Level::Window);
  CHECK(before->adds() == 1);  // a request holding the older set keeps it as it was
  CHECK_FALSE(s.get(5, t0 + SessionStore::kIdleExpiry + std::chrono::seconds(1)).recalled);
}
