#include "cli/config_file.hpp"

#include "config/load.hpp"

namespace td::cli {

std::optional<config::Config> command_config(const std::optional<std::string>& path, std::ostream& err) {
  if (!path) return config::default_config();
  config::LoadResult loaded = config::load_file(*path);
  if (!loaded.ok()) {
    for (const auto& e : loaded.errors) err << config::format_error(e) << "\n";
    return std::nullopt;
  }
  return std::move(loaded.config);
}

}  // namespace td::cli
