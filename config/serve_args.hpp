// The command line of `tokendiet serve`, applied on top of the config:
//   --config FILE          load FILE instead of the embedded default
//   --listen HOST:PORT     overrides `listen`
//   --threads N            overrides `threads` (0: one per core)
//   --upstream P=URL       overrides upstreams.P (P: openai, gemini, anthropic;
//                          repeatable; a ca_file/verify_tls from the file stays)
// Both "--opt value" and "--opt=value" are accepted. The command line wins
// over the file, also after a SIGHUP reload (see reload.hpp).
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
  std::string config_file;                 // "" : the embedded default
  std::optional<ListenAddress> listen;
  std::optional<unsigned> threads;
  std::vector<std::pair<std::string, Upstream>> upstreams;  // in command-line order
  bool help = false;                       // --help / -h
};

struct ParsedServeArgs {
  ServeArgs args;
  std::vector<ConfigError> errors;  // file "tokendiet serve", no line: one per bad option
};

// Parses and validates the options (not the file). Unknown options are errors.
ParsedServeArgs parse_serve_args(const std::vector<std::string>& argv);
ParsedServeArgs parse_serve_args(int argc, char** argv);

// The config `serve` runs with: --config FILE (or the embedded default),
// then the command-line overrides. Also what a SIGHUP reload runs.
LoadResult load_for_serve(const ServeArgs& args);

// The overrides alone (listen, threads, upstreams), on an existing config.
void apply_overrides(Config& cfg, const ServeArgs& args);

// Parse + load + overrides in one step: on success `cfg` is replaced by the
// file's config (when --config is given) with the overrides applied; on
// errors `cfg` is left as it was. Start `cfg` from default_config().
std::vector<ConfigError> apply_serve_args(Config& cfg, const std::vector<std::string>& argv);

// The option lines for `serve --help`.
const char* serve_options_help();

}  // namespace td::config
