// The shared command-line style (cli/options.hpp), on a command made up here.
#include <doctest/doctest.h>

#include <sstream>

#include "cli/options.hpp"

using namespace td::cli;

namespace {

struct Demo {
  std::string name, file;
  std::vector<std::string> tags;
  bool quiet = false;
};

Parsed<Demo> parse_demo(const std::vector<std::string>& args) {
  Parsed<Demo> p;
  auto app = make_app("demo", "usage: demo [--name N] [FILE]\n\n", "Exit status: 0.\n", 12);
  app->add_option("FILE", p.options.file, "a file");
  app->add_option("--name", p.options.name, "who\nacross two lines")->type_name("N");
  app->add_option("--tag", p.options.tags, "repeatable")->type_name("T");
  app->add_flag("--quiet", p.options.quiet, "");  // no description: not listed
  app->add_option("--kind", p.options.name)->type_name("K")->check(one_of({"a", "b", "c"}, "kind"));
  p.stop = parse(*app, args);
  return p;
}

}  // namespace

TEST_CASE("--name value and --name=value are the same; the last of a repeated one wins") {
  auto spaced = parse_demo({"--name", "x", "f.txt", "--quiet"});
  auto joined = parse_demo({"--name=x", "--quiet", "f.txt"});
  REQUIRE_FALSE(spaced.stop);
  REQUIRE_FALSE(joined.stop);
  CHECK(spaced.options.name == "x");
  CHECK(joined.options.name == "x");
  CHECK(spaced.options.file == "f.txt");
  CHECK(joined.options.file == "f.txt");
  CHECK(joined.options.quiet);
  CHECK(parse_demo({"--name=x", "--name", "y"}).options.name == "y");
  CHECK(parse_demo({"--name=a=b"}).options.name == "a=b");      // only the first '=' splits
  auto empty = parse_demo({"--name=x", "--name=", "--quiet"});  // an empty value, not the next word
  REQUIRE_FALSE(empty.stop);
  CHECK(empty.options.name.empty());
  CHECK(empty.options.quiet);
  CHECK(parse_demo({"--", "--name="}).options.file == "--name=");  // after --, a word is an argument
  auto tags = parse_demo({"--tag", "a", "--tag=b", "--tag", "c"});
  CHECK(tags.options.tags == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("usage errors: the command's name, the reason, the help page; status 2") {
  auto unknown = parse_demo({"--bogus"});
  REQUIRE(unknown.stop);
  CHECK(unknown.stop->status == 2);
  CHECK(unknown.stop->text.find("demo: unknown option '--bogus'\n\nusage: demo") == 0);
  CHECK(parse_demo({"--bogus=1"}).stop->text.find("demo: unknown option '--bogus=1'") == 0);
  CHECK(parse_demo({"a", "b"}).stop->text.find("demo: unexpected argument 'b'\n") == 0);
  CHECK(parse_demo({"--name"}).stop->text.find("demo: --name: missing value\n") == 0);
  auto bad = parse_demo({"--kind=d"});
  REQUIRE(bad.stop);
  CHECK(bad.stop->status == 2);
  CHECK(bad.stop->text.find("demo: --kind: unknown kind 'd' (a, b or c)\n") == 0);
  CHECK_FALSE(parse_demo({"--kind", "c"}).stop);
}

TEST_CASE("--help: synopsis, one line per described option from the column on, footer; status 0") {
  for (const char* flag : {"--help", "-h"}) {
    auto help = parse_demo({"--name", "x", flag});
    REQUIRE(help.stop);
    CHECK(help.stop->status == 0);
    CHECK(help.stop->text ==
          "usage: demo [--name N] [FILE]\n\n"
          "  FILE      a file\n"
          "  --name N  who\n"
          "            across two lines\n"
          "  --tag T   repeatable\n"  // --quiet and --kind have no description
          "Exit status: 0.\n");
  }
}

TEST_CASE("finish prints help on out and errors on err") {
  std::ostringstream out, err;
  CHECK(finish(ParseStop{0, "page\n"}, out, err) == 0);
  CHECK(finish(ParseStop{2, "demo: why\n"}, out, err) == 2);
  CHECK(out.str() == "page\n");
  CHECK(err.str() == "demo: why\n");
}
