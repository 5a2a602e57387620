#include "config/state_paths.hpp"

#include <cstdlib>

namespace td::config {
namespace {

std::optional<std::string_view> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string_view(v);
}

std::string join(std::string_view dir, std::string_view rest) {
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  return std::string(dir) + "/" + std::string(rest);
}

}  // namespace

std::optional<std::string> default_state_path(std::string_view name, std::optional<std::string_view> state_directory,
                                              std::optional<std::string_view> xdg_state_home,
                                              std::optional<std::string_view> home) {
  if (state_directory && !state_directory->empty()) {
    // systemd joins several StateDirectory= entries with ':'; ours is the first.
    std::string_view first = state_directory->substr(0, state_directory->find(':'));
    if (!first.empty()) return join(first, name);
  }
  if (xdg_state_home && !xdg_state_home->empty() && xdg_state_home->front() == '/')
    return join(*xdg_state_home, "tokendiet/" + std::string(name));
  if (home && !home->empty()) return join(*home, ".local/state/tokendiet/" + std::string(name));
  return std::nullopt;
}

std::optional<std::string> default_ledger_path(std::optional<std::string_view> state_directory,
                                               std::optional<std::string_view> xdg_state_home,
                                               std::optional<std::string_view> home) {
  return default_state_path("usage.db", state_directory, xdg_state_home, home);
}

std::optional<std::string> default_ledger_path_from_env() {
  return default_ledger_path(env("STATE_DIRECTORY"), env("XDG_STATE_HOME"), env("HOME"));
}

std::optional<std::string> ledger_file(const Ledger& ledger) {
  if (!ledger.path.empty()) return ledger.path;
  return default_ledger_path_from_env();
}

std::optional<std::string> archive_dir(const Archive& archive) {
  if (!archive.path.empty()) return archive.path;
  return default_state_path("archive", env("STATE_DIRECTORY"), env("XDG_STATE_HOME"), env("HOME"));
}

}  // namespace td::config
