// The process's own policy store behind the PolicyStore interface: a take
// answers the wait the buckets needed, the session's memory and fit come
// back, and a cached prefix counts only within the cache's lifetime.
#include <doctest/doctest.h>

#include "quota/local_policy_store.hpp"

using namespace td;
using namespace std::chrono_literals;

TEST_CASE("LocalPolicyStore: take answers the wait, facts give the buckets and the session") {
  quota::RunwayStore runways;
  quota::SessionStore sessions;
  quota::LocalPolicyStore store(runways, sessions);
  const quota::RunwayRef ref{
      "openai\x1f"
      "k\x1f"
      "gpt",
      providers::Provider::openai,
      {6000, 0, 0, 60'000ms}};
  std::optional<std::chrono::milliseconds> first, second;
  store.take(ref, {5000, 0}, 1.2, [&](auto w) { first = w; });
  store.take(ref, {1000, 0}, 1.2, [&](auto w) { second = w; });
  REQUIRE(first);
  REQUIRE(second);
  CHECK(first->count() == 0);
  // 1,000 left, 1,200 needed, 0.1 token a millisecond: 2 s (less what refilled meanwhile).
  CHECK(second->count() > 1900);
  CHECK(second->count() <= 2000);
  auto facts = store.facts(ref, 9);
  REQUIRE(facts);
  CHECK(facts->runway.combined.level == doctest::Approx(0).epsilon(0.01).scale(6000));

  store.remember(9, pruning::SessionMemory{pruning::Level::Window, 12, true, 0});
  store.overflowed(9, 7000);
  store.overflowed(9, 8000);
  store.billed(9, 321);
  facts = store.facts(ref, 9);
  REQUIRE(facts);
  CHECK(facts->memory == pruning::SessionMemory{pruning::Level::Window, 12, true, 7000});
  CHECK(facts->cached_prefix == 321);
}
