#include "cli/config_file.hpp"

#include "cli/input_path.hpp"
#include "cli/terminal_text.hpp"
#include "config/load.hpp"

namespace td::cli {

std::optional<config::Config> command_config(const std::optional<std::string>& path, std::ostream& err) {
  if (!path) return config::default_config();
  if (auto problem = path_problem(*path, PathKind::file); !problem.empty()) {
    err << problem << "\n";
    return std::nullopt;
  }
  config::LoadResult loaded = config::load_file(*path);
  if (!loaded.ok()) {
    for (const auto& e : loaded.errors) err << terminal_text(config::format_error(e)) << "\n";
    return std::nullopt;
  }
  return std::move(loaded.config);
}

}  // namespace td::cli
