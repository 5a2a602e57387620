// The diet filter's report (proxy/filters/diet_filter.hpp): what it did to
// the request body. Published once the diet decided; absent when it never did
// (not a chat request, or a body it could not parse). The recovery filter
// updates the counts and strategies when it prunes harder for a retry.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pruning/control_arm.hpp"
#include "pruning/mode.hpp"

namespace td::proxy {

struct DietReport {
  pruning::Mode mode = pruning::Mode::None;
  std::string_view reason{};        // why an enabled diet left the request alone ("client_compaction"), "" none
  std::string profile{};            // the matched profile's name
  std::uint64_t tokens_before = 0;  // the request's tokens as the client sent them
  std::uint64_t tokens_after = 0;   // and as they go upstream (shadow, control: as sent)
  // Strategies that fired, in pipeline order (string literals:
  // pruning::StrategyStats::name).
  std::vector<std::string_view> strategies{};
  std::string thinking{};  // the thinking setting lowered ("reasoning_effort high -> low"), "" none
  // The arm (pruning/control_arm.hpp), and the tokens the diet would have
  // sent: tokens_after for the treatment; for shadow and control what the
  // diet computed and did not send (docs/design.md §Ledger and metrics).
  pruning::Arm arm = pruning::Arm::Treatment;
  std::uint64_t tokens_diet = 0;
  std::uint32_t rereads = 0;  // pruning/rereads.hpp
  // The key the proxy keeps the session's memory under, which picked the
  // arm (proxy/filters/runway_account.cpp; 0: none).
  std::uint64_t session_key = 0;
};

}  // namespace td::proxy
