// Where state lives when the config does not say: the usage ledger's file
// and the archive's directory.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "config/config.hpp"

namespace td::config {

// The default ledger file, from the environment's values (pass nullopt for an
// unset variable):
//   $STATE_DIRECTORY/usage.db            (systemd's StateDirectory=; first entry)
//   $XDG_STATE_HOME/tokendiet/usage.db   (only if absolute, as the XDG spec says)
//   $HOME/.local/state/tokendiet/usage.db
// nullopt when none of them is usable.
std::optional<std::string> default_ledger_path(std::optional<std::string_view> state_directory,
                                               std::optional<std::string_view> xdg_state_home,
                                               std::optional<std::string_view> home);

// The same, reading the process environment.
std::optional<std::string> default_ledger_path_from_env();

// `name` in the state directory chosen the same way ($STATE_DIRECTORY/name,
// $XDG_STATE_HOME/tokendiet/name, $HOME/.local/state/tokendiet/name).
std::optional<std::string> default_state_path(std::string_view name, std::optional<std::string_view> state_directory,
                                              std::optional<std::string_view> xdg_state_home,
                                              std::optional<std::string_view> home);

// The file the ledger writes: ledger.path if set, else the default above.
std::optional<std::string> ledger_file(const Ledger& ledger);

// The archive's directory: archive.path if set, else `archive` in the state
// directory (default_state_path).
std::optional<std::string> archive_dir(const Archive& archive);

}  // namespace td::config
