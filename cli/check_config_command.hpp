// `tokendiet check-config FILE...`: validates config files without starting
// anything. Exit 0 and "FILE: ok" per good file; else one
// "FILE:LINE:COLUMN: reason" line per error (on err) and exit 1; 2 on usage
// errors. Warnings are printed as "FILE:LINE:COLUMN: warning: reason".
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/options.hpp"

namespace td::cli {

struct CheckConfigOptions {
  std::vector<std::string> files;

  bool operator==(const CheckConfigOptions&) const = default;
};

// A usage error too when no FILE is given.
Parsed<CheckConfigOptions> parse_check_config_args(const std::vector<std::string>& args);

// The command with its streams passed in, so tests can read what it prints.
int check_config_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace td::cli
