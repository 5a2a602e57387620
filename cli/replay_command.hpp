// `tokendiet replay`: recorded trajectories through the diet, measured
// (cli/replay.hpp). Its command line, parsed (cli/options.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "cli/replay.hpp"

namespace td::cli {

struct ReplayOptions {
  std::vector<std::string> inputs;  // FILE... or DIR, in command-line order
  std::string profile, config_file;
  Pricing pricing = Pricing::OpenAI;
  bool json = false;
  bool requests = false;
  std::optional<std::uint64_t> token_threshold;  // --token-threshold: every profile's recap threshold
  bool semantic = false;                         // also each trajectory with completed_tasks off, reported beside
  RecallMode recall = RecallMode::FromStart;     // --recall: which cuts a charged loss can recall
  std::uint32_t recall_margin = ChargeRules{}.margin_lines;  // --recall-margin: lines a call asks around a needed one

  bool operator==(const ReplayOptions&) const = default;
};

// A usage error too when no FILE or DIR is given.
Parsed<ReplayOptions> parse_replay_args(const std::vector<std::string>& args);

}  // namespace td::cli
