// The shared runways listed (the dashboard's, docs/design.md §Dashboard)
// against a real redis-server: every runway a replica wrote, the newest first
// and bounded, with the same tightest bucket, refill and headers' note as
// quota::RunwayStore::list() gives for the same operations.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "quota/runway_store.hpp"
#include "redis_server.hpp"
#include "replica.hpp"
#include "shared_state/shared_store.hpp"

using namespace td;
using namespace std::chrono_literals;
using quota::RunwayRef;
using quota::RunwayStatus;
using test::eventually;
using test::Replica;
using Clock = std::chrono::steady_clock;

namespace {

// The same operations on the replica's own store and on Redis.
void take(Replica& r, const RunwayRef& ref, pruning::RunwayAsk ask) {
  r.local.take(ref.key, ref.provider, ref.limits, ask, Clock::now());
  std::atomic<bool> done{false};
  r.store.take(ref, ask, 1.0, [&](auto) { done = true; });
  REQUIRE(eventually([&] { return done.load(); }));
}

const RunwayStatus* find(const std::vector<RunwayStatus>& list, std::string_view group) {
  auto it = std::find_if(list.begin(), list.end(), [&](const RunwayStatus& s) { return s.group == group; });
  return it == list.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("the shared runways listed: as the local store lists them, shared, the newest first, bounded") {
  test::RedisServer server;
  Replica replica(server.port());
  CHECK(replica.store.list_runways(10)->empty());

  const auto began = Clock::now();
  const RunwayRef gpt{
      "openai\x1f"
      "fp1\x1f"
      "gpt",
      providers::Provider::openai,
      {60'000, 0, 0, 60'000ms}};
  const RunwayRef claude{
      "anthropic\x1f"
      "fp2\x1f"
      "claude",
      providers::Provider::anthropic,
      {0, 30'000, 8'000, 60'000ms}};
  take(replica, gpt, {20'000, 10'000});
  take(replica, claude, {1'000, 4'000});
  // The headers of an answer: the limit learnt, the level re-based, the note kept.
  providers::RateLimits h;
  h.tokens.limit = 50'000;
  h.tokens.remaining = 21'000;
  h.tokens.reset = std::chrono::system_clock::now() + 30s;
  h.requests.limit = 500;
  h.requests.remaining = 498;
  h.requests.reset = std::chrono::system_clock::now() + 120ms;
  const auto received = std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
  const quota::ProviderFigures figures{&h, true, received};
  replica.local.settle(gpt.key, gpt.provider, gpt.limits, {20'000, 10'000}, {20'000, 8'000}, Clock::now(), figures);
  replica.store.settle(gpt, {20'000, 10'000}, {20'000, 8'000}, figures);
  // The settle is not waited for: its effect is.
  REQUIRE(eventually([&] {
    auto l = replica.store.list_runways(10);
    return l && find(*l, "gpt") && find(*l, "gpt")->headers.known();
  }));

  const auto shared = replica.store.list_runways(10);
  const auto local = replica.local.list(Clock::now(), 10);
  REQUIRE(shared);
  REQUIRE(shared->size() == 2);
  REQUIRE(local.size() == 2);
  const double elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - began).count();
  for (std::string_view group : {"gpt", "claude"}) {
    const RunwayStatus* s = find(*shared, group);
    const RunwayStatus* l = find(local, group);
    REQUIRE(s);
    REQUIRE(l);
    INFO(group << ": shared " << s->level << "/" << s->limit << ", local " << l->level << "/" << l->limit);
    CHECK(s->shared);
    CHECK_FALSE(l->shared);
    CHECK(s->provider == l->provider);
    CHECK(s->client == l->client);
    CHECK(s->limit == doctest::Approx(l->limit));
    // Both refill on their own clocks: within what refills while the test runs.
    CHECK(std::abs(s->level - l->level) <= s->limit / 60'000 * elapsed_ms + 0.01);
    CHECK(std::abs(double((s->full_in - l->full_in).count())) <= elapsed_ms + 1);
    CHECK(s->headers.known() == l->headers.known());
  }
  const RunwayStatus* g = find(*shared, "gpt");
  CHECK(g->limit == doctest::Approx(50'000));  // the headers' limit, under the profile's 60,000
  CHECK(g->level >= 21'000 + 2'000 - 0.01);    // re-based to what is left, the bill's 2,000 given back
  CHECK(g->headers.seen == received);
  CHECK(g->headers.requests_limit == 500);
  CHECK(g->headers.requests_remaining == 498);
  CHECK(g->headers.tokens_remaining == 21'000);
  CHECK(g->headers.tokens_reset == std::chrono::time_point_cast<std::chrono::milliseconds>(*h.tokens.reset));
  CHECK(g->headers.requests_reset == std::chrono::time_point_cast<std::chrono::milliseconds>(*h.requests.reset));
  const RunwayStatus* c = find(*shared, "claude");
  CHECK(c->limit == doctest::Approx(8'000));  // the output bucket is the tightest
  CHECK_FALSE(c->headers.known());

  // The newest first, at most `max`.
  for (int i = 0; i < 4; ++i)
    take(replica,
         {"openai\x1f"
          "fp3\x1fg" +
              std::to_string(i),
          providers::Provider::openai,
          {1'000, 0, 0, 60'000ms}},
         {1, 0});
  const auto newest = replica.store.list_runways(2);
  REQUIRE(newest);
  REQUIRE(newest->size() == 2);
  CHECK((*newest)[0].group == "g3");
  CHECK((*newest)[1].group == "g2");
  CHECK(replica.store.list_runways(100)->size() == 6);
}

TEST_CASE("the shared runways listed: Redis gone, no answer (the caller lists its own)") {
  test::RedisServer server;
  Replica replica(server.port());
  server.kill();
  REQUIRE(eventually([&] { return !replica.store.shared(); }));
  CHECK_FALSE(replica.store.list_runways(10));
}
