// Loading and validating the YAML configuration.
//
// Every problem is collected, not just the first: a typo in one key and a bad
// port three lines below are both reported, each with file:line:column
// (1-based). Unknown keys are errors at every level, because a misspelt key
// that is silently ignored switches a feature off without anyone noticing.
//
// A file states only what differs from the defaults: absent keys keep the
// built-in values (those of the embedded default config), and upstreams not
// named in the file keep their default URLs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace td::config {

struct LoadResult {
  Config config;  // valid only when errors is empty
  std::vector<ConfigError> errors;
  std::vector<ConfigError> warnings;  // valid but risky (e.g. verify_tls: false)

  bool ok() const { return errors.empty(); }
};

// Reads and validates a file. Relative paths inside it (ca_file, ledger.path)
// are taken relative to the file's directory.
LoadResult load_file(const std::string& path);

// Validates YAML text; `source_name` is the file name errors carry and
// `base_dir` the directory relative paths are resolved against ("" : as is).
LoadResult load_string(std::string_view text, const std::string& source_name = "<string>",
                       const std::string& base_dir = "");

// The YAML text compiled into the binary: config/tokendiet.example.yaml.
std::string_view embedded_default_yaml();

// The embedded default, parsed (what `serve` runs with when given no file).
Config default_config();

// "file:line:column: reason", or "file: reason" when the error has no place.
std::string format_error(const ConfigError& e);

}  // namespace td::config
