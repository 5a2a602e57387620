// The policy (decide() with a runway): a table of runway, counts and profile
// -> decision, the latch and the stickiness of survival's level, the
// thinking hysteresis, and that every Retry-After it gives is honoured.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "pruning/decision.hpp"

using namespace td::pruning;
using std::chrono::milliseconds;

namespace {

constexpr std::uint64_t kDiet = 10'000, kWindow = 6'000, kMiddle = 3'000;

std::uint32_t turns_in_history = 10;

LevelCut table_tokens(Level l) {
  switch (l) {
    case Level::Standard:
      return {kDiet, turns_in_history};
    case Level::Window:
      return {kWindow, turns_in_history};
    case Level::DropMiddle:
      return {kMiddle, turns_in_history};
  }
  return {};
}

// A combined (OpenAI-style) bucket of `limit` per minute holding `level`.
Runway combined(double limit, double level) {
  Runway r;
  r.combined = {limit, level, limit / 60'000.0};
  return r;
}

struct Case {
  const char* name;
  Runway runway;
  Mode mode;
  Level level;
  SurvivalOutcome outcome;
  Admission::Kind admission;
};

PolicyInput input(const Counted& counted, const Profile& p, const Runway& rw) {
  PolicyInput in;
  in.counted = &counted;
  in.profile = &p;
  in.runway = rw;
  in.messages = 40;
  return in;
}

}  // namespace

TEST_CASE("policy: runway and counts -> mode, level, admission") {
  const Counted counted{.total = 12'000, .fixed = 0, .messages = {}};
  const Profile p;  // margin 1.2, max_wait 20 s
  const Case table[] = {
      {"unknown runway: the profile alone", Runway{}, Mode::Standard, Level::Standard, SurvivalOutcome::None,
       Admission::Kind::Send},
      {"room to spare", combined(1e6, 1e6), Mode::Standard, Level::Standard, SurvivalOutcome::None,
       Admission::Kind::Send},
      {"the diet fits exactly with the margin", combined(1e6, 12'000), Mode::Standard, Level::Standard,
       SurvivalOutcome::None, Admission::Kind::Send},
      {"the diet does not fit: the window does", combined(1e6, 11'999), Mode::Survival, Level::Window,
       SurvivalOutcome::Compressed, Admission::Kind::Send},
      {"only the middle dropped fits", combined(1e6, 5'000), Mode::Survival, Level::DropMiddle,
       SurvivalOutcome::Compressed, Admission::Kind::Send},
      {"nothing fits now: held", combined(200'000, 1'000), Mode::Survival, Level::DropMiddle, SurvivalOutcome::Waited,
       Admission::Kind::Wait},
      {"nothing fits within max_wait: 429", combined(200'000, -200'000), Mode::Survival, Level::DropMiddle,
       SurvivalOutcome::Rejected, Admission::Kind::Reject},
      {"over a whole window even at the hardest level", combined(2'000, 2'000), Mode::Survival, Level::Standard,
       SurvivalOutcome::TooLarge, Admission::Kind::Send},
  };
  for (const Case& c : table) {
    INFO(c.name);
    const Decision d = decide(input(counted, p, c.runway), table_tokens);
    CHECK(d.mode == c.mode);
    CHECK(d.settings.level == c.level);
    CHECK(d.outcome == c.outcome);
    CHECK(d.admission.kind == c.admission);
    CHECK(d.settings.write);
  }
}

TEST_CASE("policy: waits and Retry-Afters are the time the runway takes to hold the request") {
  const Counted counted{.total = 12'000};
  const Profile p;
  // 3,000 tokens x 1.2 needed, 1,000 held, 200,000 per minute: 2,600 / (200,000 / 60,000 per ms).
  Decision held = decide(input(counted, p, combined(200'000, 1'000)), table_tokens);
  CHECK(held.admission.wait == milliseconds(780));
  CHECK(held.ask.input == doctest::Approx(3'000));
  CHECK(held.left.tokens == doctest::Approx(600));  // at the time it goes
  Decision rejected = decide(input(counted, p, combined(200'000, -200'000)), table_tokens);
  CHECK(rejected.admission.wait == milliseconds(61'080));
  CHECK(rejected.ask.input == 0);  // nothing taken for a request that does not go
}

TEST_CASE("policy: shadow, disabled, survival off and too few turns never hold or compress") {
  const Counted counted{.total = 12'000};
  const Runway short_runway = combined(200'000, -200'000);
  Profile shadow;
  shadow.shadow = true;
  Decision d = decide(input(counted, shadow, short_runway), table_tokens);
  CHECK(d.mode == Mode::Standard);
  CHECK_FALSE(d.settings.write);
  CHECK(d.admission.kind == Admission::Kind::Send);
  CHECK_FALSE(d.lower_thinking);

  Profile disabled;
  disabled.enabled = false;
  CHECK(decide(input(counted, disabled, short_runway), table_tokens).mode == Mode::None);

  Profile off;
  off.survival = false;
  d = decide(input(counted, off, short_runway), table_tokens);
  CHECK(d.mode == Mode::Standard);
  CHECK(d.admission.kind == Admission::Kind::Send);
  CHECK(d.ask.input == doctest::Approx(kDiet));  // still counted against the runway

  Profile patient;
  patient.min_turns = 20;  // the history has 10
  d = decide(input(counted, patient, short_runway), table_tokens);
  CHECK(d.mode == Mode::Standard);
  CHECK(d.admission.kind == Admission::Kind::Send);
}

TEST_CASE("policy: survival's level stays while the pressure lasts, and a retry is decided at its level") {
  const Counted counted{.total = 12'000};
  const Profile p;
  PolicyInput in = input(counted, p, combined(1e6, 15'000));  // the diet fits once, not twice over
  in.memory.level = Level::Window;
  in.memory.latched_messages = 30;  // the history has grown since (40 messages)
  Decision d = decide(in, table_tokens);
  CHECK(d.settings.level == Level::Window);
  CHECK(d.mode == Mode::Survival);

  in.runway = combined(1e6, 30'000);  // twice over: the pressure is gone
  d = decide(in, table_tokens);
  CHECK(d.settings.level == Level::Standard);
  CHECK(d.mode == Mode::Standard);
  CHECK(d.memory.level == Level::Standard);

  // The latch: the same history again (a retry) goes at the level it set,
  // even with room for a lighter one.
  in.memory = {Level::DropMiddle, 40, false};
  in.runway = combined(1e6, 1e6);
  d = decide(in, table_tokens);
  CHECK(d.settings.level == Level::DropMiddle);
  CHECK(d.memory.latched_messages == 40);

  // A level that rises records the history's length.
  in.memory = {};
  in.runway = combined(1e6, 5'000);
  d = decide(in, table_tokens);
  CHECK(d.memory.level == Level::DropMiddle);
  CHECK(d.memory.latched_messages == 40);
}

TEST_CASE("policy: thinking is lowered under the threshold and restored only over twice it") {
  const Counted counted{.total = 12'000};
  const Profile p;  // 200,000 tokens, at most half the limit
  struct Row {
    double level;
    bool was_lowered, lowered;
  };
  const Row rows[] = {
      {150'000, false, true}, {250'000, false, false}, {300'000, true, true},
      {399'999, true, true},  {400'000, true, false},  {1e6, true, false},
  };
  for (const Row& r : rows) {
    CAPTURE(r.level);
    CAPTURE(r.was_lowered);
    PolicyInput in = input(counted, p, combined(1e6, r.level));
    in.memory.thinking_lowered = r.was_lowered;
    const Decision d = decide(in, table_tokens);
    CHECK(d.lower_thinking == r.lowered);
    CHECK(d.memory.thinking_lowered == r.lowered);
  }
  // A 200,000 TPM limit: the threshold is half of it, not all of it.
  CHECK_FALSE(decide(input(counted, p, combined(200'000, 150'000)), table_tokens).lower_thinking);
  CHECK(decide(input(counted, p, combined(200'000, 90'000)), table_tokens).lower_thinking);
  Profile fraction;
  fraction.thinking_budget_runway_fraction = 0.8;
  CHECK(decide(input(counted, fraction, combined(200'000, 150'000)), table_tokens).lower_thinking);
  Profile off;
  off.thinking_budget = false;
  CHECK_FALSE(decide(input(counted, off, combined(1e6, 10)), table_tokens).lower_thinking);
}

TEST_CASE("policy: Anthropic's buckets: cache reads are not asked for, reserved output is") {
  const Counted counted{.total = 12'000};
  const Profile p;
  Runway rw;
  rw.input = {30'000, 5'000, 0.5};
  rw.output = {8'000, 8'000, 8'000 / 60'000.0};
  PolicyInput in = input(counted, p, rw);
  in.reserved_output = 4'000;
  in.cached_prefix = 8'000;  // read from the cache at the session's level (the diet's)
  Decision d = decide(in, table_tokens);
  CHECK(d.settings.level == Level::Standard);
  CHECK(d.ask.input == doctest::Approx(2'000));
  CHECK(d.ask.output == doctest::Approx(4'000));

  in.cached_prefix = 0;  // a cold cache: the whole prompt counts
  d = decide(in, table_tokens);
  CHECK(d.settings.level == Level::DropMiddle);

  in.reserved_output = 7'000;  // 8,400 with the margin: over the output bucket's limit, capped at it
  rw.output.level = 7'000;
  in.runway = rw;
  d = decide(in, table_tokens);
  CHECK(d.outcome == SurvivalOutcome::Waited);
  CHECK(d.admission.wait == milliseconds(7'500));  // 1,000 output tokens at 8,000 per minute
}

TEST_CASE("policy: a request answered 429 is admitted once its Retry-After has passed") {
  std::mt19937_64 rng(20261126);
  const Profile p;
  int rejected = 0;
  for (int i = 0; i < 20'000; ++i) {
    const double limit = std::uniform_real_distribution<double>(1'000, 2e6)(rng);
    const double level = std::uniform_real_distribution<double>(-3 * limit, limit)(rng);
    const std::uint64_t tokens = std::uniform_int_distribution<std::uint64_t>(1, std::uint64_t(limit))(rng);
    const Counted counted{.total = tokens};
    auto at = [&](Level l) { return LevelCut{tokens >> static_cast<int>(l), 10}; };
    PolicyInput in = input(counted, p, combined(limit, level));
    const Decision first = decide(in, at);
    if (first.admission.kind != Admission::Kind::Reject) continue;
    ++rejected;
    // The same request after Retry-After (whole seconds): the bucket refilled.
    const double seconds = double((first.admission.wait.count() + 999) / 1000);
    in.runway = combined(limit, std::min(limit, level + limit / 60'000.0 * seconds * 1000));
    in.memory = first.memory;
    const Decision retry = decide(in, at);
    CAPTURE(limit);
    CAPTURE(level);
    CAPTURE(tokens);
    REQUIRE(retry.admission.kind == Admission::Kind::Send);
    CHECK(retry.settings.level == first.settings.level);
  }
  CHECK(rejected > 1'000);
}

TEST_CASE("policy: a session that overflowed goes at the first level under what its retry fitted in") {
  const Counted counted{.total = kDiet, .fixed = 0, .messages = {kDiet}};
  Profile p;
  struct Row {
    std::uint64_t fit;
    Runway runway;
    Level level;
  };
  const Row rows[] = {
      {0, Runway{}, Level::Standard},          // never overflowed
      {kDiet, Runway{}, Level::Standard},      // the diet fits
      {kWindow + 1, Runway{}, Level::Window},  // unknown runway: the window level fits
      {kMiddle, Runway{}, Level::DropMiddle},
      {kMiddle - 1, Runway{}, Level::DropMiddle},    // none fits: the hardest
      {kWindow, combined(1e9, 1e9), Level::Window},  // a roomy runway does not undo it
  };
  for (const Row& row : rows) {
    CAPTURE(row.fit);
    PolicyInput in = input(counted, p, row.runway);
    in.memory.fit_tokens = row.fit;
    const Decision d = decide(in, table_tokens);
    CHECK(d.settings.level == row.level);
    CHECK(d.admission.kind == Admission::Kind::Send);
    CHECK(d.memory.fit_tokens == row.fit);  // remembered for the next request
  }
}
