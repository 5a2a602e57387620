// The command line of every subcommand, parsed one way (CLI11): "--name value"
// and "--name=value" alike ("--name=" is an empty value), options repeated
// where a command binds a vector (each occurrence collected, in order; a
// single-value option given twice keeps the last), positional arguments
// anywhere ("--" ends the options), `--help`/`-h` per command. A usage error is
// "COMMAND: reason", a blank line and the command's help page, on stderr,
// with exit status 2; --help prints the page on stdout with exit status 0.
//
// A command builds its CLI::App with make_app, binds its options to its own
// Options struct, and calls parse (see count_command.cpp for the pattern).
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace td::cli {

// Why a command stops before running.
struct ParseStop {
  int status = 0;    // 0: --help, `text` is the help page (stdout); 2: a usage error (stderr)
  std::string text;  // what to print, ending in a newline
};

// A command's options as parsed, or why it stops instead.
template <class Options>
struct Parsed {
  Options options;
  std::optional<ParseStop> stop;
};

// A CLI::App in the house style. `name` starts each error message
// ("count: unknown option '--bogus'"). The help page is `synopsis` (usage
// lines and what the command does), then one line per option that has a
// description, in the order they were added (label, then the description from
// `column` on; a description's own newlines continue at that column), then
// `footer`. --help itself is not listed.
std::unique_ptr<CLI::App> make_app(const std::string& name, std::string synopsis, std::string footer = "",
                                   std::size_t column = 18);

// An option whose value lands in `slot` when given (nullopt: not given).
CLI::Option* add_optional(CLI::App& app, const std::string& name, std::optional<std::string>& slot,
                          const std::string& description);

// Parses `args` (the words after the command's name) into the options bound
// to `app`. nullopt: they are set and the command runs.
std::optional<ParseStop> parse(CLI::App& app, const std::vector<std::string>& args);

// A usage error the command finds after parsing (no FILE given), in the same
// form as the parser's own.
ParseStop usage_error(const CLI::App& app, const std::string& reason);
// Several at once, a line each (bad values the command checks together).
ParseStop usage_error(const CLI::App& app, const std::vector<std::string>& reasons);

// Prints the stop (help on `out`, an error on `err`); returns its exit status.
int finish(const ParseStop& stop, std::ostream& out, std::ostream& err);

// A check that the value is one of `names`:
// "--pricing: unknown pricing 'x' (openai or anthropic)".
CLI::Validator one_of(std::vector<std::string> names, std::string what);

// argv[0, argc) as strings.
std::vector<std::string> args_of(int argc, char** argv);

}  // namespace td::cli
