// The config a command runs with (usage, archive, replay): the file given on
// its command line, else the embedded default.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "config/config.hpp"

namespace td::cli {

// `path` loaded (none: the embedded default). A file that does not load (a
// path that does not exist or is a directory included): each error (file,
// line, reason; control characters shown as text) on `err`, and nullopt.
std::optional<config::Config> command_config(const std::optional<std::string>& path, std::ostream& err);

}  // namespace td::cli
