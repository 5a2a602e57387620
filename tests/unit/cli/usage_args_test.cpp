// `tokendiet usage`'s command line (cli/usage_command.hpp).
#include <doctest/doctest.h>

#include "cli/usage_command.hpp"

using namespace td::cli;

namespace {

UsageOptions parsed(const std::vector<std::string>& args) {
  auto p = parse_usage_args(args);
  INFO((p.stop ? p.stop->text : std::string()));
  REQUIRE_FALSE(p.stop);
  return p.options;
}

std::string error_of(const std::vector<std::string>& args) {
  auto p = parse_usage_args(args);
  REQUIRE(p.stop);
  CHECK(p.stop->status == 2);
  return p.stop->text.substr(0, p.stop->text.find('\n'));
}

}  // namespace

TEST_CASE("usage: --name value and --name=value give the same options") {
  UsageOptions spaced = parsed({"--since", "7d", "--by", "day", "--ledger", "u.db", "--config", "c.yaml", "--json"});
  UsageOptions joined = parsed({"--json", "--since=7d", "--by=day", "--ledger=u.db", "--config=c.yaml"});
  CHECK(spaced == joined);
  CHECK(spaced.since == "7d");
  CHECK(spaced.by == "day");
  CHECK(spaced.ledgers == std::vector<std::string>{"u.db"});
  CHECK(spaced.config == "c.yaml");
  CHECK(spaced.json);
  UsageOptions none = parsed({});
  CHECK_FALSE(none.since.has_value());
  CHECK(none.ledgers.empty());
  // Several ledgers: the option's words, or the option again.
  CHECK(parsed({"--ledger", "a.db", "b.db"}).ledgers == std::vector<std::string>{"a.db", "b.db"});
  CHECK(parsed({"--ledger", "a.db", "--json", "--ledger=b.db"}).ledgers == std::vector<std::string>{"a.db", "b.db"});
  CHECK(parsed({"--since="}).since == "");  // given, empty: the command says why it is bad
}

TEST_CASE("usage: usage errors") {
  CHECK(error_of({"--frobnicate"}) == "usage: unknown option '--frobnicate'");
  CHECK(error_of({"--ledger"}) == "usage: --ledger: missing value");
  CHECK(error_of({"extra"}) == "usage: unexpected argument 'extra'");
}

TEST_CASE("usage --help: every option and what it does") {
  auto p = parse_usage_args({"-h"});
  REQUIRE(p.stop);
  CHECK(p.stop->status == 0);
  const std::string& help = p.stop->text;
  CHECK(help.find("usage: tokendiet usage [--since WHEN]") == 0);
  for (const char* line : {"\noptions:\n  --since WHEN   only requests since WHEN", "  --by GROUP     model (default)",
                           "  --json         one JSON object", "  --ledger FILE  the ledger to read",
                           "\n                 ~/.local/state/tokendiet/usage.db.\n",
                           "  --config FILE  the config with the prices", "\nFor the systemd service"})
    CHECK_MESSAGE(help.find(line) != std::string::npos, line);
}
