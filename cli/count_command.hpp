// `tokendiet count`: token counts of a file, of JSON lines, or of a request
// body as billed. Its command line, parsed (cli/options.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "providers/api.hpp"

namespace td::cli {

struct CountOptions {
  std::optional<providers::Api> format;  // nullopt: detected from the body (providers/body_format.hpp)
  std::string encoding;                  // "", o200k_base, cl100k_base, estimate
  std::string model;
  std::string request;
  std::string file = "-";
  bool jsonl = false, json = false;

  bool operator==(const CountOptions&) const = default;
};

Parsed<CountOptions> parse_count_args(const std::vector<std::string>& args);

}  // namespace td::cli
