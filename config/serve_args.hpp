// The command line of `tokendiet serve`, applied on top of the config:
//   --config FILE          load FILE instead of the embedded default
//   --listen HOST:PORT     overrides `listen`
//   --threads N            overrides `threads` (0: one per core)
//   --upstream P=URL       overrides upstreams.P (P: openai, gemini, anthropic;
//                          repeatable; a ca_file/verify_tls from the file stays)
// The words are parsed by cli/serve_command.hpp (CLI11, as every subcommand);
// here the values are checked and applied. The command line wins over the
// file, also after a SIGHUP reload (see reload.hpp).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/address.hpp"
#include "config/config.hpp"
#include "config/load.hpp"

namespace td::config {

struct ServeArgs {
  std::string config_file;  // "" : the embedded default
  std::optional<ListenAddress> listen;
  std::optional<unsigned> threads;
  std::vector<std::pair<std::string, Upstream>> upstreams;  // in command-line order
};

// The options' values as typed (an option not given: nullopt).
struct ServeArgsText {
  std::optional<std::string> config_file, listen, threads;
  std::vector<std::string> upstreams;  // "PROVIDER=URL", in command-line order
};

struct ParsedServeArgs {
  ServeArgs args;
  std::vector<ConfigError> errors;  // file "tokendiet serve", no line: one per bad value
};

// Checks and converts every value (not the file); each bad one is an error,
// all of them reported.
ParsedServeArgs check_serve_args(const ServeArgsText& text);

// The config `serve` runs with: --config FILE (or the embedded default),
// then the command-line overrides. Also what a SIGHUP reload runs.
LoadResult load_for_serve(const ServeArgs& args);

// The overrides alone (listen, threads, upstreams), on an existing config.
void apply_overrides(Config& cfg, const ServeArgs& args);

}  // namespace td::config
