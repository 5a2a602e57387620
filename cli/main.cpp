// tokendiet: one binary, several subcommands (serve, check-config, count, ...).
#include <cstdio>
#include <cstring>
#include <string_view>

#include "cli/commands.hpp"

namespace {

struct Command {
  const char* name;
  int (*run)(int argc, char** argv);
  const char* summary;
};

// Keep in the order a user meets them.
constexpr Command kCommands[] = {
    {"serve", td::cli::serve, "run the proxy"},
    {"check-config", td::cli::check_config, "validate config files (file:line:column errors)"},
    {"usage", td::cli::usage, "report tokens used and saved, and their cost, from the ledger"},
    {"count", td::cli::count, "count tokens (exact o200k/cl100k, or estimate); --request: a chat body"},
    {"replay", td::cli::replay, "replay recorded agent trajectories through the diet and measure it"},
    {"archive", td::cli::archive,
     "list or show the archived outputs semantic eviction took out (ls, show ID, id FILE)"},
    {"version", td::cli::version, "print the version"},
};

int usage(std::FILE* out) {
  std::fprintf(out,
               "usage: tokendiet <command> [options]\n\n"
               "A transparent LLM API proxy that puts agent context on a diet.\n\n"
               "commands:\n");
  for (const auto& c : kCommands) std::fprintf(out, "  %-14s %s\n", c.name, c.summary);
  std::fprintf(out, "\n`tokendiet <command> --help` describes each command.\n");
  return out == stdout ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage(stderr);
  std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") return usage(stdout);
  if (name == "--version") name = "version";
  for (const auto& c : kCommands)
    if (name == c.name) return c.run(argc - 2, argv + 2);
  std::fprintf(stderr, "tokendiet: unknown command '%s'\n\n", argv[1]);
  return usage(stderr);
}
