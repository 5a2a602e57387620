// `tokendiet count`'s command line (cli/count_command.hpp).
#include <doctest/doctest.h>

#include "cli/count_command.hpp"

using namespace td::cli;

namespace {

CountOptions parsed(const std::vector<std::string>& args) {
  auto p = parse_count_args(args);
  INFO((p.stop ? p.stop->text : std::string()));
  REQUIRE_FALSE(p.stop);
  return p.options;
}

std::string error_of(const std::vector<std::string>& args) {
  auto p = parse_count_args(args);
  REQUIRE(p.stop);
  CHECK(p.stop->status == 2);
  return p.stop->text.substr(0, p.stop->text.find('\n'));
}

}  // namespace

TEST_CASE("count: --name value and --name=value give the same options") {
  CountOptions spaced = parsed(
      {"--encoding", "cl100k_base", "--model", "gpt-4o", "--format", "anthropic", "--request", "body.json", "--json"});
  CountOptions joined =
      parsed({"--encoding=cl100k_base", "--model=gpt-4o", "--format=anthropic", "--request=body.json", "--json"});
  CHECK(spaced == joined);
  CHECK(spaced.encoding == "cl100k_base");
  CHECK(spaced.model == "gpt-4o");
  CHECK(spaced.format == td::providers::Api::anthropic);
  CHECK(spaced.request == "body.json");
  CHECK(spaced.json);
  CHECK_FALSE(spaced.jsonl);
  CHECK(spaced.file == "-");
}

TEST_CASE("count: FILE anywhere, stdin by default, --jsonl") {
  CHECK(parsed({}).file == "-");
  CHECK(parsed({"in.txt", "--encoding=estimate"}).file == "in.txt");
  CHECK(parsed({"--encoding", "estimate", "in.txt"}).file == "in.txt");
  CHECK(parsed({"-"}).file == "-");
  CHECK(parsed({"--jsonl"}).jsonl);
  CHECK(parsed({"--format=openai_responses", "--request", "-"}).format == td::providers::Api::openai_responses);
}

TEST_CASE("count: usage errors name the option or the value") {
  CHECK(error_of({"--bogus"}) == "count: unknown option '--bogus'");
  CHECK(error_of({"--encoding=p50k_base"}) ==
        "count: --encoding: unknown encoding 'p50k_base' (o200k_base, cl100k_base or estimate)");
  CHECK(error_of({"--request", "x.json", "--format", "bogus"}).find("count: --format: unknown format 'bogus'") == 0);
  CHECK(error_of({"--encoding"}) == "count: --encoding: missing value");
  CHECK(error_of({"--request"}) == "count: --request: missing value");
  CHECK(error_of({"--json"}) == "count: --json requires --request");
  CHECK(error_of({"a.txt", "b.txt"}) == "count: unexpected argument 'b.txt'");
}

TEST_CASE("count --help: every option and what it does") {
  auto p = parse_count_args({"--help"});
  REQUIRE(p.stop);
  CHECK(p.stop->status == 0);
  const std::string& help = p.stop->text;
  CHECK(help.find("usage: tokendiet count") == 0);
  for (const char* line : {"  FILE|-          count the whole file", "  --jsonl         read JSON lines",
                           "  --request FILE  a chat request body of any format", "  --json          with --request",
                           "  --encoding E    o200k_base (default)", "  --model M       pick the counter",
                           "  --format F      the request body's wire format", "\nExit status: 0 ok"})
    CHECK_MESSAGE(help.find(line) != std::string::npos, line);
}
