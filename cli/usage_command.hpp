// `tokendiet usage`: the usage ledger summed per model, day, session,
// provider or API key, with tokens saved and costs from the config's prices.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/options.hpp"

namespace td::cli {

// The command line as given; --since and --by are read against the clock
// and the report's groups when the command runs.
struct UsageOptions {
  std::optional<std::string> since, by, config, session;
  std::vector<std::string> ledgers;  // --ledger, once or more: one per replica
  bool json = false;
  bool compare = false;  // --compare: the control arm against the treatment (cli/usage_compare.hpp)

  bool operator==(const UsageOptions&) const = default;
};

Parsed<UsageOptions> parse_usage_args(const std::vector<std::string>& args);

// The command with its streams and clock passed in, so tests can check what
// it prints. Exit 0 on success, 1 when the ledger or config cannot be read,
// 2 on usage errors.
int usage_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, std::int64_t now_ms);

}  // namespace td::cli
