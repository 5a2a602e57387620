// The control arm: in_control_arm() is a function of the session's key (the
// same answer every time, a fraction's share of keys), and decide() sends a
// control session's request untouched unless survival or recovery's memory
// must cut it.
#include <doctest/doctest.h>

#include <cstdint>

#include "pruning/control_arm.hpp"
#include "pruning/decision.hpp"

using namespace td::pruning;

namespace {

constexpr std::uint64_t kSent = 20'000, kDiet = 10'000, kWindow = 6'000, kMiddle = 3'000;

LevelCut levels(Level l) {
  switch (l) {
    case Level::Standard:
      return {kDiet, 10};
    case Level::Window:
      return {kWindow, 10};
    case Level::DropMiddle:
      return {kMiddle, 10};
  }
  return {};
}

Runway combined(double limit, double level) {
  Runway r;
  r.combined = {limit, level, limit / 60'000.0};
  return r;
}

}  // namespace

TEST_CASE("control arm: a fraction's share of session keys, the same for a key every time") {
  for (const double fraction : {0.0, 0.1, 0.5, 0.9, 1.0}) {
    CAPTURE(fraction);
    int in = 0;
    const int n = 20'000;
    // Consecutive keys: the mix spreads them however the keys are made.
    for (std::uint64_t key = 1; key <= n; ++key) in += in_control_arm(key * 0x10001, fraction);
    CHECK(double(in) / n == doctest::Approx(fraction).epsilon(0.02));
  }
  CHECK_FALSE(in_control_arm(0, 1.0));  // no session known: the treatment
  CHECK(in_control_arm(0x1234567890abcdefull, 0.5) == in_control_arm(0x1234567890abcdefull, 0.5));
  CHECK(std::string(arm_name(Arm::Control)) == "control");
}

TEST_CASE("control arm: untouched with room; cut by survival when the request as sent does not fit") {
  const Counted counted{.total = kSent};
  const Profile p;  // margin 1.2
  PolicyInput in;
  in.counted = &counted;
  in.profile = &p;
  in.messages = 40;
  in.control = true;

  SUBCASE("no runway known: sent as it came, the diet computed") {
    const Decision d = decide(in, levels);
    CHECK(d.arm == Arm::Control);
    CHECK(d.mode == Mode::Standard);
    CHECK_FALSE(d.settings.write);
    CHECK(d.settings.level == Level::Standard);
  }
  SUBCASE("room for the request as sent: untouched, and the runway asked for all of it") {
    in.runway = combined(1e6, 1e6);
    const Decision d = decide(in, levels);
    CHECK(d.arm == Arm::Control);
    CHECK_FALSE(d.settings.write);
    CHECK(d.outcome == SurvivalOutcome::None);
    CHECK(d.ask.input == doctest::Approx(double(kSent)));
  }
  SUBCASE("the treatment's diet would fit, the request as sent does not: survival cuts it, written") {
    in.runway = combined(1e6, 20'000);  // 10,000 x 1.2 fits, 20,000 x 1.2 does not
    const Decision d = decide(in, levels);
    CHECK(d.arm == Arm::Control);
    CHECK(d.settings.write);
    CHECK(d.mode == Mode::Survival);
    CHECK(d.outcome == SurvivalOutcome::Compressed);
    CHECK(d.settings.level == Level::Window);
    in.control = false;
    const Decision t = decide(in, levels);
    CHECK(t.arm == Arm::Treatment);
    CHECK(t.outcome == SurvivalOutcome::None);
  }
  SUBCASE("thinking is never lowered in the control arm") {
    in.runway = combined(1e6, 150'000);  // under the 200,000 threshold
    const Decision d = decide(in, levels);
    CHECK_FALSE(d.lower_thinking);
    CHECK_FALSE(d.memory.thinking_lowered);
    in.control = false;
    CHECK(decide(in, levels).lower_thinking);
  }
  SUBCASE("recovery's memory: a session that overflowed is sent under what its retry fitted in") {
    in.memory.fit_tokens = 8'000;
    const Decision d = decide(in, levels);
    CHECK(d.settings.write);
    CHECK(d.settings.level == Level::Window);
  }
  SUBCASE("a shadow profile is the shadow arm, whatever the session's arm") {
    Profile shadow;
    shadow.shadow = true;
    in.profile = &shadow;
    const Decision d = decide(in, levels);
    CHECK(d.arm == Arm::Shadow);
    CHECK_FALSE(d.settings.write);
  }
}
