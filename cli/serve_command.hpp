// `tokendiet serve`: the proxy. Its command line, parsed (cli/options.hpp)
// and checked (config/serve_args.hpp: every bad value is reported at once).
#pragma once

#include <string>
#include <vector>

#include "cli/options.hpp"
#include "config/serve_args.hpp"

namespace td::cli {

Parsed<config::ServeArgs> parse_serve_args(const std::vector<std::string>& args);

}  // namespace td::cli
