// `tokendiet serve`'s command line (cli/serve_command.hpp); the values'
// checks and the config they give are tests/unit/config/serve_args_test.cpp.
#include <doctest/doctest.h>

#include "cli/serve_command.hpp"

using namespace td::cli;
using td::config::ServeArgs;

namespace {

ServeArgs parsed(const std::vector<std::string>& args) {
  auto p = parse_serve_args(args);
  INFO((p.stop ? p.stop->text : std::string()));
  REQUIRE_FALSE(p.stop);
  return p.options;
}

// The lines before the help page.
std::string errors_of(const std::vector<std::string>& args) {
  auto p = parse_serve_args(args);
  REQUIRE(p.stop);
  CHECK(p.stop->status == 2);
  return p.stop->text.substr(0, p.stop->text.find("\n\n") + 1);
}

}  // namespace

TEST_CASE("serve: --name value and --name=value give the same options") {
  ServeArgs spaced = parsed({"--config", "c.yaml", "--listen", "127.0.0.1:18090", "--threads", "3", "--upstream",
                             "openai=http://127.0.0.1:18080", "--upstream", "anthropic=http://h:2/p"});
  ServeArgs joined = parsed({"--config=c.yaml", "--listen=127.0.0.1:18090", "--threads=3",
                             "--upstream=openai=http://127.0.0.1:18080", "--upstream=anthropic=http://h:2/p"});
  for (const ServeArgs* a : {&spaced, &joined}) {
    CHECK(a->config_file == "c.yaml");
    REQUIRE(a->listen.has_value());
    CHECK(a->listen->host == "127.0.0.1");
    CHECK(a->listen->port == 18090);
    CHECK(a->threads == 3u);
    REQUIRE(a->upstreams.size() == 2);  // repeatable, in command-line order
    CHECK(a->upstreams[0].first == "openai");
    CHECK(a->upstreams[0].second.port == 18080);
    CHECK(a->upstreams[1].first == "anthropic");
    CHECK(a->upstreams[1].second.path_prefix == "/p");
  }
  ServeArgs none = parsed({});
  CHECK(none.config_file.empty());
  CHECK_FALSE(none.listen.has_value());
  CHECK_FALSE(none.threads.has_value());
  CHECK(none.upstreams.empty());
}

TEST_CASE("serve: bad values all reported, each as 'tokendiet serve: reason'") {
  std::string errors = errors_of({"--listen", "nowhere", "--threads=-2", "--upstream", "mistral=http://x"});
  CHECK(errors.find("tokendiet serve: --listen: missing port") == 0);
  CHECK(errors.find("\ntokendiet serve: --threads: expected an integer from 0 to 1024, got '-2'\n") !=
        std::string::npos);
  CHECK(errors.find("\ntokendiet serve: --upstream: unknown provider 'mistral'") != std::string::npos);
  CHECK(errors_of({"--config="}) == "tokendiet serve: --config: empty file name\n");
}

TEST_CASE("serve: unknown option, missing value") {
  CHECK(errors_of({"--verbose"}) == "tokendiet serve: unknown option '--verbose'\n");
  CHECK(errors_of({"--listen", "127.0.0.1:1", "--config"}) == "tokendiet serve: --config: missing value\n");
  CHECK(errors_of({"extra"}) == "tokendiet serve: unexpected argument 'extra'\n");
}

TEST_CASE("serve --help: every option, what it does, and the signals") {
  auto p = parse_serve_args({"--threads", "2", "-h"});
  REQUIRE(p.stop);
  CHECK(p.stop->status == 0);
  const std::string& help = p.stop->text;
  CHECK(help.find("usage: tokendiet serve [--config FILE]") == 0);
  for (const char* line :
       {"  --config FILE         YAML config", "  --listen HOST:PORT    address to accept clients on",
        "  --threads N           I/O threads", "  --upstream P=URL      upstream for provider P",
        "\n                        repeatable, e.g. --upstream openai=", "\nsignals:\n  SIGTERM, SIGINT"})
    CHECK_MESSAGE(help.find(line) != std::string::npos, line);
}
