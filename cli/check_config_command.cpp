#include "cli/check_config_command.hpp"

#include <iostream>

#include "config/load.hpp"
#include "cli/commands.hpp"
#include "cli/input_path.hpp"
#include "cli/terminal_text.hpp"

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
    // A directory would read as an empty file, which is valid: say what it is.
    if (auto problem = path_problem(file, PathKind::file); !problem.empty()) {
      err << problem << "\n";
      status = 1;
      continue;
    }
    config::LoadResult r = config::load_file(file);
    // The messages quote the file's content: shown with its control
    // characters visible (docs/design.md §Configuration, Command line).
    for (const auto& w : r.warnings) {
      config::ConfigError shown = w;
      shown.reason = "warning: " + w.reason;
      err << terminal_text(config::format_error(shown)) << "\n";
    }
    if (r.ok()) {
      out << terminal_text(file) << ": ok\n";
      continue;
    }
    status = 1;
    for (const auto& e : r.errors) err << terminal_text(config::format_error(e)) << "\n";
  }
  return status;
}

int check_config(int argc, char** argv) { return check_config_run(args_of(argc, argv), std::cout, std::cerr); }

}  // namespace td::cli
