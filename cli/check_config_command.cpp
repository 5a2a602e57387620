#include "cli/check_config_command.hpp"

#include <iostream>

#include "config/load.hpp"
#include "cli/commands.hpp"

namespace td::cli {
namespace {

constexpr const char* kSynopsis =
    "usage: tokendiet check-config FILE...\n\n"
    "Validates tokendiet config files (YAML) without starting the proxy.\n"
    "Prints \"FILE: ok\" for a valid file, or FILE:LINE:COLUMN: reason for\n"
    "each error (unknown keys, wrong types, out-of-range values, bad URLs\n"
    "or globs). Exit status: 0 all valid, 1 errors found, 2 usage error.\n"
    "Run it before `systemctl reload tokendiet`: a reload with errors keeps\n"
    "the old config.\n";

}  // namespace

Parsed<CheckConfigOptions> parse_check_config_args(const std::vector<std::string>& args) {
  Parsed<CheckConfigOptions> parsed;
  auto app = make_app("check-config", kSynopsis);
  app->add_option("FILE", parsed.options.files);  // described in the synopsis
  parsed.stop = parse(*app, args);
  if (!parsed.stop && parsed.options.files.empty()) parsed.stop = usage_error(*app, "no FILE given");
  return parsed;
}

int check_config_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto parsed = parse_check_config_args(args);
  if (parsed.stop) return finish(*parsed.stop, out, err);
  const std::vector<std::string>& files = parsed.options.files;
  int status = 0;
  for (const auto& file : files) {
    config::LoadResult r = config::load_file(file);
    for (const auto& w : r.warnings) {
      config::ConfigError shown = w;
      shown.reason = "warning: " + w.reason;
      err << config::format_error(shown) << "\n";
    }
    if (r.ok()) {
      out << file << ": ok\n";
      continue;
    }
    status = 1;
    for (const auto& e : r.errors) err << config::format_error(e) << "\n";
  }
  return status;
}

int check_config(int argc, char** argv) {
  return check_config_run(args_of(argc, argv), std::cout, std::cerr);
}

}  // namespace td::cli
