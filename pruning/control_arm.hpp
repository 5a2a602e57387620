// The control arm (docs/design.md §Policy, The control arm): which sessions
// of a profile with `control_fraction` are forwarded untouched, the diet run
// in shadow, so `tokendiet usage --compare` measures the diet against no diet
// on the user's own traffic.
//
// The arm is a function of the session's key alone (the key the proxy keeps
// each session's memory under, proxy/filters/runway_account.cpp): no state,
// so a session is in the same arm on every request, on every replica and
// after a restart.
#pragma once

#include <cstdint>
#include <string_view>

namespace td::pruning {

enum class Arm : std::uint8_t {
  Treatment,  // the diet as decided
  Control,    // a control-arm session: forwarded untouched unless survival or recovery must cut
  Shadow,     // a shadow profile: the diet computed and reported, never sent
};

// "treatment", "control", "shadow": the names the ledger's arm column, the
// log line, /metrics and the x-tokendiet-arm header hold.
constexpr const char* arm_name(Arm a) {
  switch (a) {
    case Arm::Treatment:
      return "treatment";
    case Arm::Control:
      return "control";
    case Arm::Shadow:
      return "shadow";
  }
  return "treatment";
}

// Whether the session keyed `session` (0: none known) is in the control arm
// of a profile holding back `fraction` (0..1) of its sessions. The key is
// mixed (splitmix64's finaliser) and read as a number in [0, 1): a fraction
// of 0 takes no session, 1 every one.
bool in_control_arm(std::uint64_t session, double fraction);

}  // namespace td::pruning
