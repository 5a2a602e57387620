// `tokendiet replay`'s command line (cli/replay_command.hpp).
#include <doctest/doctest.h>

#include "cli/replay_command.hpp"

using namespace td::cli;
using td::cli::Pricing;

namespace {

ReplayOptions parsed(const std::vector<std::string>& args) {
  auto p = parse_replay_args(args);
  INFO((p.stop ? p.stop->text : std::string()));
  REQUIRE_FALSE(p.stop);
  return p.options;
}

std::string error_of(const std::vector<std::string>& args) {
  auto p = parse_replay_args(args);
  REQUIRE(p.stop);
  CHECK(p.stop->status == 2);
  return p.stop->text.substr(0, p.stop->text.find('\n'));
}

}  // namespace

TEST_CASE("replay: --name value and --name=value give the same options") {
  ReplayOptions spaced = parsed(
      {"a.json", "--pricing", "anthropic", "--profile", "p", "--config", "c.yaml", "--json", "--requests", "dir"});
  ReplayOptions joined =
      parsed({"--pricing=anthropic", "a.json", "--profile=p", "--config=c.yaml", "dir", "--json", "--requests"});
  CHECK(spaced == joined);
  CHECK(spaced.pricing == Pricing::Anthropic);
  CHECK(spaced.profile == "p");
  CHECK(spaced.config_file == "c.yaml");
  CHECK(spaced.inputs == std::vector<std::string>{"a.json", "dir"});
  CHECK(spaced.json);
  CHECK(spaced.requests);
}

TEST_CASE("replay: defaults, and the last --pricing wins") {
  ReplayOptions o = parsed({"t.json"});
  CHECK(o.pricing == Pricing::OpenAI);
  CHECK(o.profile.empty());
  CHECK_FALSE(o.json);
  CHECK(parsed({"t.json", "--pricing=anthropic", "--pricing", "openai"}).pricing == Pricing::OpenAI);
  CHECK_FALSE(o.semantic);
  CHECK(parsed({"t.json", "--semantic"}).semantic);
}

TEST_CASE("replay: --recall says which cuts a charged loss can recall (default: every)") {
  CHECK(parsed({"t.json"}).recall == RecallMode::FromStart);  // as the proxy offers the tool
  CHECK(parsed({"t.json", "--recall", "off"}).recall == RecallMode::Off);
  CHECK(parsed({"t.json", "--recall=tombstones"}).recall == RecallMode::Tombstones);
  CHECK(parsed({"t.json", "--recall", "from-start"}).recall == RecallMode::FromStart);
  CHECK(error_of({"t.json", "--recall", "some"}).find("--recall: unknown recall mode 'some'") != std::string::npos);
}

TEST_CASE("replay: --recall-margin is the lines a charged recall call asks around a needed one") {
  CHECK(parsed({"t.json"}).recall_margin == 10);
  CHECK(parsed({"t.json", "--recall-margin", "0"}).recall_margin == 0);
  CHECK(parsed({"t.json", "--recall-margin=40"}).recall_margin == 40);
  CHECK_FALSE(error_of({"t.json", "--recall-margin", "x"}).empty());
}

TEST_CASE("replay: usage errors") {
  CHECK(error_of({}) == "replay: no FILE or DIR given");
  CHECK(error_of({"--json"}) == "replay: no FILE or DIR given");
  CHECK(error_of({"t.json", "--bogus"}) == "replay: unknown option '--bogus'");
  CHECK(error_of({"t.json", "--pricing=google"}) ==
        "replay: --pricing: unknown pricing 'google' (openai or anthropic)");
  CHECK(error_of({"t.json", "--profile"}) == "replay: --profile: missing value");
}

TEST_CASE("replay --help: every option and what it does") {
  auto p = parse_replay_args({"--help"});
  REQUIRE(p.stop);
  CHECK(p.stop->status == 0);
  const std::string& help = p.stop->text;
  CHECK(help.find("usage: tokendiet replay FILE...|DIR") == 0);
  for (const char* line : {"  --profile NAME  the config's profile NAME", "  --pricing P     openai (default)",
                           "\n                  128-token steps", "  --config FILE   tokendiet config",
                           "  --json          one JSON object", "  --requests      also a line per request",
                           "  --semantic      also replay each trajectory with semantic mode off",
                           "  --recall MODE   which cuts a lost line can be recalled from", "\nExit status: 0 ok"})
    CHECK_MESSAGE(help.find(line) != std::string::npos, line);
}

TEST_CASE("replay: --token-threshold sets the recap's threshold to measure") {
  CHECK_FALSE(parsed({"a.json"}).token_threshold);
  CHECK(parsed({"a.json", "--token-threshold", "50000"}).token_threshold == 50000u);
  CHECK(parsed({"--token-threshold=100000", "a.json"}).token_threshold == 100000u);
  CHECK(error_of({"a.json", "--token-threshold", "lots"}).find("token-threshold") != std::string::npos);
}
