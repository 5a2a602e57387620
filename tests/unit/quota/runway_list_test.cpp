// The runway store's list (the dashboard's runways, docs/design.md
// §Dashboard): every runway held, refilled to the time asked, its tightest
// bucket, the headers' note; nothing created or touched by listing.
#include <doctest/doctest.h>

#include <algorithm>

#include "quota/runway_store.hpp"

using namespace td::quota;
using std::chrono::milliseconds;
using td::providers::Provider;
using td::providers::RateLimits;

namespace {

const Clock::time_point t0 = Clock::time_point{} + std::chrono::hours(1000);
const std::chrono::system_clock::time_point wall0 =
    std::chrono::system_clock::time_point{} + std::chrono::hours(500'000);

const RunwayStatus* find(const std::vector<RunwayStatus>& list, std::string_view group) {
  auto it = std::find_if(list.begin(), list.end(), [&](const RunwayStatus& s) { return s.group == group; });
  return it == list.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("runway list: each runway at the time asked, recovering; its tightest bucket; nothing created") {
  RunwayStore s;
  CHECK(s.list(t0, 100).empty());
  const QuotaLimits openai{.tpm = 60'000};
  s.take(runway_key(Provider::openai, "fp1", "gpt"), Provider::openai, openai, {20'000, 10'000}, t0);
  const QuotaLimits claude{.itpm = 30'000, .otpm = 8'000};
  s.take(runway_key(Provider::anthropic, "fp2", "claude"), Provider::anthropic, claude, {1'000, 4'000}, t0);

  auto list = s.list(t0, 100);
  REQUIRE(list.size() == 2);
  const RunwayStatus* o = find(list, "gpt");
  REQUIRE(o);
  CHECK(o->provider == Provider::openai);
  CHECK(o->client == "fp1");
  CHECK(o->limit == doctest::Approx(60'000));
  CHECK(o->level == doctest::Approx(30'000));
  CHECK(o->full_in == milliseconds(30'000));  // 1 token a ms
  CHECK_FALSE(o->headers.known());
  CHECK_FALSE(o->shared);
  // Anthropic: the output bucket (4,000 of 8,000 left) is tighter than the input one (29,000).
  const RunwayStatus* a = find(list, "claude");
  REQUIRE(a);
  CHECK(a->limit == doctest::Approx(8'000));
  CHECK(a->level == doctest::Approx(4'000));

  // Ten seconds on, with no request: it has recovered, and a minute on it is full.
  list = s.list(t0 + milliseconds(10'000), 100);
  CHECK(find(list, "gpt")->level == doctest::Approx(40'000));
  CHECK(find(list, "gpt")->full_in == milliseconds(20'000));
  list = s.list(t0 + std::chrono::minutes(1), 100);
  CHECK(find(list, "gpt")->level == doctest::Approx(60'000));
  CHECK(find(list, "gpt")->full_in == milliseconds(0));
  // Listing read the buckets without moving them or creating any.
  CHECK(s.size() == 2);
  CHECK(s.snapshot(runway_key(Provider::openai, "fp1", "gpt"), Provider::openai, openai, t0 + milliseconds(10'000))
            .combined.level == doctest::Approx(40'000));
}

TEST_CASE("runway list: the headers' note; the most recently used first, at most `max`; idle ones left out") {
  RunwayStore s;
  const std::string k = runway_key(Provider::openai, "fp", "gpt");
  RateLimits h;
  h.tokens.limit = 100'000;
  h.tokens.remaining = 90'000;
  h.tokens.reset = wall0 + std::chrono::seconds(6);
  h.requests.limit = 500;
  h.requests.remaining = 499;
  h.requests.reset = wall0 + milliseconds(120);
  s.settle(k, Provider::openai, {}, {}, {}, t0, {&h, true, wall0});
  auto list = s.list(t0, 10);
  REQUIRE(list.size() == 1);
  CHECK(list[0].limit == doctest::Approx(100'000));
  CHECK(list[0].level == doctest::Approx(90'000));
  CHECK(list[0].headers.known());
  CHECK(list[0].headers.seen == wall0);
  CHECK(list[0].headers.requests_limit == 500);
  CHECK(list[0].headers.requests_remaining == 499);
  CHECK(list[0].headers.requests_reset == wall0 + milliseconds(120));
  CHECK(list[0].headers.tokens_remaining == 90'000);
  CHECK(list[0].headers.tokens_reset == wall0 + std::chrono::seconds(6));

  for (int i = 0; i < 5; ++i)
    s.take(runway_key(Provider::openai, "fp", "g" + std::to_string(i)), Provider::openai, {.tpm = 1'000}, {1, 0},
           t0 + milliseconds(1 + i));
  list = s.list(t0 + milliseconds(10), 3);
  REQUIRE(list.size() == 3);
  CHECK(list[0].group == "g4");
  CHECK(list[1].group == "g3");
  CHECK(list[2].group == "g2");
  // Idle past the store's expiry: not listed (full again, as the store treats it).
  CHECK(s.list(t0 + RunwayStore::kIdleExpiry + std::chrono::seconds(1), 10).empty());
}

TEST_CASE("runway list: Anthropic's note is its input window's, not its combined one") {
  RunwayStore s;
  const std::string k = runway_key(Provider::anthropic, "fp", "claude");
  RateLimits h;
  h.tokens.limit = 100'000;
  h.tokens.remaining = 70'000;
  h.input_tokens.limit = 80'000;
  h.input_tokens.remaining = 60'000;
  h.input_tokens.reset = wall0 + std::chrono::seconds(3);
  h.output_tokens.limit = 20'000;
  h.output_tokens.remaining = 15'000;
  s.settle(k, Provider::anthropic, {}, {}, {}, t0, {&h, true, wall0});
  const auto list = s.list(t0, 10);
  REQUIRE(list.size() == 1);
  CHECK(list[0].headers.tokens_remaining == 60'000);
  CHECK(list[0].headers.tokens_reset == wall0 + std::chrono::seconds(3));
  CHECK(list[0].limit == doctest::Approx(20'000));  // the output bucket: 15,000 left of it, the tightest
  CHECK(list[0].level == doctest::Approx(15'000));
}
