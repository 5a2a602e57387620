// The runway store: buckets per provider, taken at admission, settled with
// the bill, re-based on the providers' headers, bounded.
#include <doctest/doctest.h>

#include "quota/runway_store.hpp"

using namespace td::quota;
using std::chrono::milliseconds;
using td::providers::Provider;
using td::providers::RateLimits;
using td::pruning::Runway;
using td::pruning::RunwayAsk;

namespace {

const Clock::time_point t0 = Clock::time_point{} + std::chrono::hours(1000);
const std::chrono::system_clock::time_point wall0 =
    std::chrono::system_clock::time_point{} + std::chrono::hours(500'000);

QuotaLimits tpm(std::uint64_t n) { return QuotaLimits{.tpm = n}; }

}  // namespace

TEST_CASE("runway: nothing configured and no headers: unknown") {
  RunwayStore s;
  const std::string k = runway_key(Provider::openai, "fp", "gpt-4o");
  CHECK_FALSE(s.snapshot(k, Provider::openai, {}, t0).known());
  s.take(k, Provider::openai, {}, {100, 10}, t0);  // harmless
  CHECK_FALSE(s.snapshot(k, Provider::openai, {}, t0).known());
}

TEST_CASE("runway: OpenAI's combined bucket takes prompt and output cap, refills per window, settles") {
  RunwayStore s;
  const std::string k = runway_key(Provider::openai, "fp", "gpt-4o");
  Runway r = s.snapshot(k, Provider::openai, tpm(60'000), t0);
  CHECK(r.combined.known());
  CHECK(r.combined.level == doctest::Approx(60'000));
  CHECK(r.combined.refill_per_ms == doctest::Approx(1.0));
  CHECK(r.combined_counts_output);
  s.take(k, Provider::openai, tpm(60'000), {20'000, 10'000}, t0);
  CHECK(s.snapshot(k, Provider::openai, tpm(60'000), t0).combined.level == doctest::Approx(30'000));
  CHECK(s.snapshot(k, Provider::openai, tpm(60'000), t0 + milliseconds(5'000)).combined.level ==
        doctest::Approx(35'000));
  // The bill: 18,000 in, 2,000 out instead of 20,000 + 10,000 reserved.
  s.settle(k, Provider::openai, tpm(60'000), {20'000, 10'000}, {18'000, 2'000}, t0 + milliseconds(5'000));
  CHECK(s.snapshot(k, Provider::openai, tpm(60'000), t0 + milliseconds(5'000)).combined.level ==
        doctest::Approx(45'000));
  // Never above the limit.
  CHECK(s.snapshot(k, Provider::openai, tpm(60'000), t0 + std::chrono::minutes(5)).combined.level ==
        doctest::Approx(60'000));
}

TEST_CASE("runway: Gemini counts input only; Anthropic input and output apart") {
  RunwayStore s;
  const std::string g = runway_key(Provider::gemini, "fp", "gemini-2.5-pro");
  s.take(g, Provider::gemini, tpm(100'000), {40'000, 30'000}, t0);
  const Runway rg = s.snapshot(g, Provider::gemini, tpm(100'000), t0);
  CHECK_FALSE(rg.combined_counts_output);
  CHECK(rg.combined.level == doctest::Approx(60'000));

  const std::string a = runway_key(Provider::anthropic, "fp", "claude");
  const QuotaLimits al{.tpm = 50'000, .otpm = 8'000};
  s.take(a, Provider::anthropic, al, {30'000, 4'000}, t0);
  Runway ra = s.snapshot(a, Provider::anthropic, al, t0);
  CHECK_FALSE(ra.combined.known());
  CHECK(ra.input.limit == doctest::Approx(50'000));  // itpm unset: tpm
  CHECK(ra.input.level == doctest::Approx(20'000));
  CHECK(ra.output.limit == doctest::Approx(8'000));
  CHECK(ra.output.level == doctest::Approx(4'000));
  // 3,000 of the 4,000 reserved output tokens were not written: given back.
  s.settle(a, Provider::anthropic, al, {30'000, 4'000}, {30'000, 1'000}, t0);
  CHECK(s.snapshot(a, Provider::anthropic, al, t0).output.level == doctest::Approx(7'000));
}

TEST_CASE("runway: the provider's headers teach the limit and re-base the level") {
  RunwayStore s;
  const std::string k = runway_key(Provider::openai, "fp", "gpt-5");
  RateLimits h;
  h.tokens.limit = 200'000;
  h.tokens.remaining = 150'000;
  // Two requests in flight; the first one's answer says 150,000 remain. Its
  // bill counted 3,000 more prompt tokens than predicted and 400 output
  // tokens: the figure holds the prompt already, so only the output counts.
  s.take(k, Provider::openai, {}, {1'000, 0}, t0);
  s.take(k, Provider::openai, {}, {5'000, 0}, t0);
  s.settle(k, Provider::openai, {}, {1'000, 0}, {4'000, 400}, t0, {&h, true, wall0});
  Runway r = s.snapshot(k, Provider::openai, {}, t0);
  CHECK(r.combined.limit == doctest::Approx(200'000));
  CHECK(r.combined.level == doctest::Approx(145'000 - 400));  // less the other one in flight, and the output

  // Without figures the bill corrects the prompt as well.
  s.settle(k, Provider::openai, {}, {5'000, 0}, {8'000, 0}, t0);
  CHECK(s.snapshot(k, Provider::openai, {}, t0).combined.level == doctest::Approx(145'000 - 400 - 3'000));

  // A header limit above the configured one does not lift it (the profile's
  // limit is a ceiling, tested below); unknown figures (-1 / 0) teach nothing.
  RateLimits unknown;
  unknown.tokens.limit = std::nullopt;
  s.settle(k, Provider::openai, tpm(1'000'000), {}, {}, t0, {&unknown, true, wall0});
  CHECK(s.snapshot(k, Provider::openai, tpm(1'000'000), t0).combined.limit == doctest::Approx(200'000));
}

TEST_CASE("runway: the profile's limit is a ceiling the provider's larger limit does not lift") {
  // A team's share of an organisation's quota: 40,000 a minute of 50,000,000.
  RunwayStore s;
  const std::string k = runway_key(Provider::openai, "fp", "gpt-5");
  const QuotaLimits share = tpm(40'000);
  RateLimits h;
  h.tokens.limit = 50'000'000;
  h.tokens.remaining = 49'999'998;
  s.take(k, Provider::openai, share, {10'000, 0}, t0);
  s.settle(k, Provider::openai, share, {10'000, 0}, {12'000, 100}, t0, {&h, true, wall0});
  Runway r = s.snapshot(k, Provider::openai, share, t0);
  CHECK(r.combined.limit == doctest::Approx(40'000));
  CHECK(r.combined.refill_per_ms == doctest::Approx(40'000.0 / 60'000));
  // Its own count of the share: the bill (12,100) taken, not the provider's level.
  CHECK(r.combined.level == doctest::Approx(40'000 - 12'100));

  // Never above what the provider says is left of the whole account.
  RateLimits low;
  low.tokens.limit = 50'000'000;
  low.tokens.remaining = 5'000;
  s.settle(k, Provider::openai, share, {}, {}, t0, {&low, true, wall0});
  CHECK(s.snapshot(k, Provider::openai, share, t0).combined.level == doctest::Approx(5'000));

  // A provider limit lower than the profile's is the one that holds.
  RunwayStore s2;
  RateLimits small;
  small.tokens.limit = 30'000;
  small.tokens.remaining = 29'000;
  s2.settle(k, Provider::openai, share, {}, {}, t0, {&small, true, wall0});
  CHECK(s2.snapshot(k, Provider::openai, share, t0).combined.limit == doctest::Approx(30'000));
  CHECK(s2.snapshot(k, Provider::openai, share, t0).combined.level == doctest::Approx(29'000));

  // Anthropic: the input and output buckets each under their own ceiling.
  RunwayStore s3;
  const std::string a = runway_key(Provider::anthropic, "fp", "claude");
  const QuotaLimits al{.tpm = 20'000, .otpm = 4'000};
  RateLimits ah;
  ah.input_tokens.limit = 2'000'000;
  ah.input_tokens.remaining = 1'990'000;
  ah.output_tokens.limit = 400'000;
  ah.output_tokens.remaining = 399'000;
  s3.settle(a, Provider::anthropic, al, {}, {}, t0, {&ah, true, wall0});
  const Runway ra = s3.snapshot(a, Provider::anthropic, al, t0);
  CHECK(ra.input.limit == doctest::Approx(20'000));
  CHECK(ra.output.limit == doctest::Approx(4'000));
  CHECK(ra.input.level == doctest::Approx(20'000));
  CHECK(ra.output.level == doctest::Approx(4'000));
}

TEST_CASE("runway: an upstream 429's retry-after: the same request fits exactly then") {
  RunwayStore s;
  const std::string k = runway_key(Provider::anthropic, "fp", "claude");
  const QuotaLimits l{.itpm = 60'000, .otpm = 60'000};
  const RunwayAsk ask{10'000, 1'000};
  s.take(k, Provider::anthropic, l, ask, t0);
  RateLimits h;
  h.retry_after = wall0 + std::chrono::seconds(20);
  s.settle(k, Provider::anthropic, l, ask, {}, t0, {&h, false, wall0});  // not counted by the provider
  CHECK_FALSE(s.snapshot(k, Provider::anthropic, l, t0 + milliseconds(19'000)).holds(ask, 1.0));
  CHECK(s.snapshot(k, Provider::anthropic, l, t0 + milliseconds(20'000)).holds(ask, 1.0));
}

TEST_CASE("runway: a streamed answer's headers: what they said was left has refilled while it streamed") {
  // 60,000 a minute refills a token a ms. The headers came 30 s before the
  // stream ended and was settled: the provider's bucket gained 30,000 since.
  const std::string k = runway_key(Provider::openai, "fp", "gpt-5");
  RateLimits h;
  h.tokens.limit = 60'000;
  h.tokens.remaining = 20'000;
  for (const double age_ms : {0.0, 30'000.0, 50'000.0}) {
    RunwayStore s;
    s.take(k, Provider::openai, {}, {10'000, 500}, t0);
    s.settle(k, Provider::openai, {}, {10'000, 500}, {10'000, 500}, t0, {&h, true, wall0, age_ms});
    INFO("age " << age_ms);
    CHECK(s.snapshot(k, Provider::openai, {}, t0).combined.level ==
          doctest::Approx(std::min(60'000.0, 20'000 + age_ms)));
  }
  // A retry-after ran down as well: 20 s from the headers, 5 s of it gone.
  RunwayStore s;
  const QuotaLimits l{.itpm = 60'000, .otpm = 60'000};
  const RunwayAsk ask{10'000, 1'000};
  RateLimits busy;
  busy.retry_after = wall0 + std::chrono::seconds(20);
  s.take(k, Provider::anthropic, l, ask, t0);
  s.settle(k, Provider::anthropic, l, ask, {}, t0, {&busy, false, wall0, 5'000});
  CHECK_FALSE(s.snapshot(k, Provider::anthropic, l, t0 + milliseconds(14'000)).holds(ask, 1.0));
  CHECK(s.snapshot(k, Provider::anthropic, l, t0 + milliseconds(15'000)).holds(ask, 1.0));
}

TEST_CASE("runway: bounded, idle keys dropped first") {
  RunwayStore s(32);  // 16 shards: 3 keys per shard
  for (int i = 0; i < 200; ++i)
    s.take(runway_key(Provider::openai, "fp" + std::to_string(i), "m"), Provider::openai, tpm(1'000), {1, 0},
           t0 + milliseconds(i));
  CHECK(s.size() <= 16 * 3);
  CHECK(s.size() >= 16);
}

TEST_CASE("runway client: a key is its fingerprint; an anonymous client is its conversation, unless shared") {
  CHECK(runway_client("0123456789abcdef", 7, false) == "0123456789abcdef");
  CHECK(runway_client("0123456789abcdef", 7, true) == "0123456789abcdef");
  const std::string a = runway_client("", 0x0123456789abcdefull, false);
  CHECK(a == "anon-0123456789abcdef");
  CHECK(a != runway_client("", 0x0123456789abcdeeull, false));
  CHECK(runway_client("", 1, true) == "");
  CHECK(runway_client("", 2, true) == "");
  // Two anonymous conversations draw on two runways; shared, on one.
  RunwayStore s;
  const auto key = [](std::uint64_t conversation, bool shared) {
    return runway_key(Provider::openai, runway_client("", conversation, shared), "gpt-4o");
  };
  s.take(key(1, false), Provider::openai, tpm(60'000), {20'000, 0}, t0);
  CHECK(s.snapshot(key(2, false), Provider::openai, tpm(60'000), t0).combined.level == doctest::Approx(60'000));
  s.take(key(1, true), Provider::openai, tpm(60'000), {20'000, 0}, t0);
  CHECK(s.snapshot(key(2, true), Provider::openai, tpm(60'000), t0).combined.level == doctest::Approx(40'000));
}
