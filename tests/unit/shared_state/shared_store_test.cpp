// The shared state against a real redis-server: the scripts' arithmetic is
// quota::RunwayStore's (the same operations give the same buckets), the
// sessions' memory and the recaps are shared, and a Redis that goes away is
// fallen back from at once and reconciled with when it is back.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "quota/runway_store.hpp"
#include "redis_server.hpp"
#include "replica.hpp"
#include "shared_state/shared_recap.hpp"
#include "shared_state/shared_store.hpp"

using namespace td;
using namespace std::chrono_literals;
using quota::RunwayRef;
using shared_state::SharedStore;
using test::eventually;
using test::Replica;
using Clock = std::chrono::steady_clock;

namespace {

// The same buckets, within what refills in `elapsed_ms` (both stores refill
// on their own clocks).
void check_same(const pruning::Runway& shared, const pruning::Runway& local, double elapsed_ms) {
  auto one = [&](const pruning::RunwayBucket& s, const pruning::RunwayBucket& l, const char* name) {
    INFO(name << ": shared " << s.level << "/" << s.limit << ", local " << l.level << "/" << l.limit);
    CHECK(s.known() == l.known());
    CHECK(s.limit == doctest::Approx(l.limit));
    CHECK(std::abs(s.level - l.level) <= l.refill_per_ms * elapsed_ms + 0.01);
  };
  one(shared.combined, local.combined, "combined");
  one(shared.input, local.input, "input");
  one(shared.output, local.output, "output");
  CHECK(shared.combined_counts_output == local.combined_counts_output);
}

// One runway operated on both stores.
struct Both {
  Replica& r;
  RunwayRef ref;
  Clock::time_point began = Clock::now();

  void take(pruning::RunwayAsk ask) {
    r.local.take(ref.key, ref.provider, ref.limits, ask, Clock::now());
    std::atomic<bool> done{false};
    r.store.take(ref, ask, 1.2, [&](auto) { done = true; });
    REQUIRE(eventually([&] { return done.load(); }));
  }
  void settle(pruning::RunwayAsk taken, pruning::RunwayAsk billed, const providers::RateLimits* headers, bool counted,
              std::chrono::system_clock::time_point received = std::chrono::system_clock::now(), double age_ms = 0) {
    const quota::ProviderFigures figures{headers, counted, received, age_ms};
    r.local.settle(ref.key, ref.provider, ref.limits, taken, billed, Clock::now(), figures);
    r.store.settle(ref, taken, billed, figures);
  }
  void check() {
    auto shared = r.store.facts(ref, 1);
    REQUIRE(shared);
    const auto local = r.local.snapshot(ref.key, ref.provider, ref.limits, Clock::now());
    check_same(shared->runway, local, std::chrono::duration<double, std::milli>(Clock::now() - began).count() * 2);
  }
};

RunwayRef runway(std::string key, providers::Provider p, quota::QuotaLimits l) { return {std::move(key), p, l}; }

constexpr auto kLongWindow = std::chrono::milliseconds(1'000'000'000);  // refills nothing while a test runs

}  // namespace

TEST_CASE("the runway scripts compute what quota::RunwayStore computes") {
  test::RedisServer server;
  Replica replica(server.port());

  SUBCASE("OpenAI: a profile ceiling under the headers' limit keeps its own count") {
    Both b{replica, runway("openai\x1f"
                           "k1\x1f"
                           "gpt",
                           providers::Provider::openai, {10'000, 0, 0, kLongWindow})};
    b.take({1000, 500});
    b.check();
    providers::RateLimits h;
    h.tokens.limit = 50'000'000;
    h.tokens.remaining = 49'999'000;
    b.settle({1000, 500}, {900, 300}, &h, true);
    b.check();
    b.take({2000, 0});
    b.check();
  }
  SUBCASE("OpenAI: the headers' limit learnt and the level re-based, less what is in flight") {
    Both b{replica, runway("openai\x1f"
                           "k2\x1f"
                           "gpt",
                           providers::Provider::openai, {0, 0, 0, kLongWindow})};
    providers::RateLimits first;
    first.tokens.limit = 20'000;
    first.tokens.remaining = 20'000;
    b.settle({}, {}, &first, true);
    b.take({1000, 100});
    b.take({3000, 100});
    providers::RateLimits h;
    h.tokens.limit = 20'000;
    h.tokens.remaining = 15'000;
    b.settle({1000, 100}, {1000, 80}, &h, true);
    b.check();
  }
  SUBCASE("Anthropic: input and output buckets, the bill corrects the output") {
    Both b{replica, runway("anthropic\x1f"
                           "k3\x1f"
                           "claude",
                           providers::Provider::anthropic, {0, 30'000, 8'000, kLongWindow})};
    b.take({5000, 4000});
    b.check();
    providers::RateLimits h;
    h.input_tokens.limit = 40'000;
    h.input_tokens.remaining = 35'000;
    h.output_tokens.limit = 8'000;
    h.output_tokens.remaining = 7'000;
    b.settle({5000, 4000}, {4800, 1000}, &h, true);
    b.check();
  }
  SUBCASE("Gemini: one bucket on input") {
    Both b{replica, runway("gemini\x1f"
                           "k4\x1f"
                           "gemini",
                           providers::Provider::gemini, {1000, 0, 0, kLongWindow})};
    b.take({300, 200});
    b.check();
    b.settle({300, 200}, {250, 100}, nullptr, true);
    b.check();
  }
  SUBCASE("a 429's retry-after empties the buckets until then, and its ask is given back") {
    Both b{replica, runway("openai\x1f"
                           "k5\x1f"
                           "gpt",
                           providers::Provider::openai, {10'000, 0, 0, 60'000ms})};
    b.take({100, 0});
    providers::RateLimits h;
    const auto received = std::chrono::system_clock::now();
    h.retry_after = received + 2s;
    b.settle({100, 0}, {}, &h, false, received);
    b.check();
  }
  SUBCASE("a streamed answer: its headers' figures refilled while it streamed, its retry-after ran down") {
    Both b{replica, runway("anthropic\x1f"
                           "k6\x1f"
                           "claude",
                           providers::Provider::anthropic, {0, 0, 0, 60'000ms})};
    b.take({5000, 4000});
    providers::RateLimits h;
    h.input_tokens.limit = 40'000;
    h.input_tokens.remaining = 10'000;
    h.output_tokens.limit = 8'000;
    h.output_tokens.remaining = 1'000;
    b.settle({5000, 4000}, {5000, 2000}, &h, true, std::chrono::system_clock::now() - 20s, 20'000);
    b.check();
    b.take({100, 0});
    providers::RateLimits busy;
    const auto received = std::chrono::system_clock::now() - 1s;
    busy.retry_after = received + 3s;
    b.settle({100, 0}, {}, &busy, false, received, 1'000);
    b.check();
  }
}

TEST_CASE("a take that does not fit gets the wait the shared buckets need") {
  test::RedisServer server;
  Replica replica(server.port());
  const RunwayRef ref = runway(
      "openai\x1f"
      "w\x1f"
      "gpt",
      providers::Provider::openai, {6000, 0, 0, 60'000ms});
  std::optional<std::chrono::milliseconds> first, second;
  std::atomic<int> done{0};
  replica.store.take(ref, {5000, 0}, 1.2, [&](auto w) { first = w, ++done; });
  replica.store.take(ref, {1000, 0}, 1.2, [&](auto w) { second = w, ++done; });
  REQUIRE(eventually([&] { return done == 2; }));
  REQUIRE(first);
  REQUIRE(second);
  CHECK(first->count() == 0);
  // 1,000 left, 1,200 needed (the margin), refilling 0.1 token per ms: 2 s.
  CHECK(second->count() >= 1900);
  CHECK(second->count() <= 2000);
}

TEST_CASE("the sessions' memory is shared: level, latch, thinking, the lowest fit, the cached prefix") {
  test::RedisServer server;
  Replica a(server.port()), b(server.port());
  const RunwayRef ref = runway(
      "openai\x1f"
      "s\x1f"
      "gpt",
      providers::Provider::openai, {});
  a.store.remember(77, pruning::SessionMemory{pruning::Level::Window, 42, true, 0});
  a.store.overflowed(77, 12'000);
  a.store.overflowed(77, 9'000);
  a.store.overflowed(77, 11'000);
  a.store.billed(77, 1234.5);
  REQUIRE(a.store.facts(ref, 77));  // after a's writes on a's connection
  auto seen = b.store.facts(ref, 77);
  REQUIRE(seen);
  CHECK(seen->memory == pruning::SessionMemory{pruning::Level::Window, 42, true, 9'000});
  CHECK(seen->cached_prefix == doctest::Approx(1234.5));
  auto fresh = b.store.facts(ref, 78);
  REQUIRE(fresh);
  CHECK(fresh->memory == pruning::SessionMemory{});
}

TEST_CASE("the lines a session's model recalled are shared, in order, bounded like the local memory") {
  test::RedisServer server;
  Replica a(server.port()), b(server.port());
  const RunwayRef ref = runway(
      "openai\x1f"
      "s\x1f"
      "gpt",
      providers::Provider::openai, {});
  using Range = pruning::RecalledLines::Range;
  std::vector<Range> first{{0xabcd, 41, 60, 8}, {0x1234, 5, 9, 0}};
  a.store.recalled(79, first);
  REQUIRE(a.store.facts(ref, 79));  // after a's write on a's connection
  b.store.recalled(79, {{0xabcd, 61, 70, 12}});
  auto seen = b.store.facts(ref, 79);
  REQUIRE(seen);
  REQUIRE(seen->recalled);
  pruning::RecalledLines expected;
  for (const Range& r : first) expected.add(r);
  expected.add(Range{0xabcd, 61, 70, 12});
  CHECK(*seen->recalled == expected);
  CHECK(seen->recalled->applying(9).of(0xabcd) == std::vector<std::pair<std::size_t, std::size_t>>{{41, 60}});
  // At most kMaxAdds ranges, the first ones, as the local memory keeps them.
  std::vector<Range> many;
  for (std::uint32_t i = 0; i < pruning::RecalledLines::kMaxAdds + 5; ++i)
    many.push_back({7, 10 * i + 1, 10 * i + 2, 0});
  a.store.recalled(80, many);
  REQUIRE(a.store.facts(ref, 80));
  auto bounded = b.store.facts(ref, 80);
  REQUIRE(bounded);
  REQUIRE(bounded->recalled);
  CHECK(bounded->recalled->adds() == pruning::RecalledLines::kMaxAdds);
  CHECK(bounded->recalled->of(7).back().second == 10 * (pruning::RecalledLines::kMaxAdds - 1) + 2);
  auto none = b.store.facts(ref, 81);
  REQUIRE(none);
  CHECK_FALSE(none->recalled);
}

TEST_CASE("Redis gone: the replica falls back at once, counts it, and reconciles its spend when Redis is back") {
  test::RedisServer server;
  Replica replica(server.port());
  const RunwayRef ref = runway(
      "openai\x1f"
      "f\x1f"
      "gpt",
      providers::Provider::openai, {10'000, 0, 0, kLongWindow});
  server.kill();
  // The next round trip fails (or the connection's loss was seen first).
  const auto before = Clock::now();
  CHECK_FALSE(replica.store.facts(ref, 5));
  CHECK(Clock::now() - before < 1500ms);
  CHECK(replica.store.fallbacks() >= 1);
  REQUIRE(eventually([&] { return !replica.store.shared(); }));
  // Decided alone meanwhile.
  replica.local.take(ref.key, ref.provider, ref.limits, {3000, 0}, Clock::now());
  replica.store.decided_alone(ref);
  server.start();  // empty: no persistence
  REQUIRE(eventually([&] { return replica.store.shared(); }, 10s));
  auto shared = replica.store.facts(ref, 5);
  REQUIRE(shared);
  // The spend alone charged once to the shared bucket; the local runway forgotten.
  CHECK(shared->runway.combined.level == doctest::Approx(7000).epsilon(0.001));
  CHECK(replica.local.snapshot(ref.key, ref.provider, ref.limits, Clock::now()).combined.level ==
        doctest::Approx(10'000));
}

namespace {
struct CountingSummarizer : diet::RecapSummarizer {
  std::string text;
  mutable std::atomic<int> calls{0};
  explicit CountingSummarizer(std::string t) : text(std::move(t)) {}
  std::optional<std::string> summarize(const diet::SummaryCall&) const override {
    ++calls;
    return text;
  }
};
}  // namespace

TEST_CASE("a recap's summary is shared: the first text kept is what every replica renders") {
  test::RedisServer server;
  Replica a(server.port()), b(server.port());
  auto inner_a = std::make_shared<CountingSummarizer>("summary by a");
  auto inner_b = std::make_shared<CountingSummarizer>("summary by b");
  shared_state::SharedRecapSummarizer sa(inner_a, a.store), sb(inner_b, b.store);
  diet::SummaryCall call;
  call.provider = call.upstream = "openai";
  call.model = "gpt-4o-mini";
  call.prompt = "turn 1: ...";
  call.max_tokens = 300;
  CHECK(sa.summarize(call) == std::optional<std::string>("summary by a"));
  CHECK(sb.summarize(call) == std::optional<std::string>("summary by a"));
  CHECK(inner_a->calls == 1);
  CHECK(inner_b->calls == 0);
  // Two that raced: the second offered gets the first's text.
  CHECK(b.store.recap_put("td:recap:x", "first") == std::optional<std::string>("first"));
  CHECK(a.store.recap_put("td:recap:x", "second") == std::optional<std::string>("first"));
}
