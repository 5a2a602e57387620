// `tokendiet archive ls|show|id`: the operator's read-only view of the archive.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "archive/store.hpp"
#include "cli/archive_command.hpp"
#include "temp_dir.hpp"

using namespace td;
using td::test::TempDir;

namespace {

struct Run {
  int status;
  std::string out, err;
};

Run run(std::vector<std::string> args) {
  std::ostringstream out, err;
  int status = cli::archive_run(args, out, err);
  return {status, out.str(), err.str()};
}

pruning::ArchivedOutput output(std::string text, std::string task) {
  return {pruning::archive_id(text), std::move(task), 12, std::move(text)};
}

}  // namespace

TEST_CASE("archive ls and show: every key's entries; show prints the text exactly; nothing is written") {
  TempDir tmp;
  const auto a = output("the log of a finished task\nline 2\n", "fix the parser\nsecond line");
  const auto b = output("another key's output", "other task");
  {
    archive::Store store(tmp.path());
    REQUIRE(store.write("0123456789abcdef", std::span(&a, 1)));
    REQUIRE(store.write("fedcba9876543210", std::span(&b, 1)));
  }
  const auto before = std::filesystem::last_write_time(tmp.path() + "/0123456789abcdef/index");

  Run ls = run({"ls", "--dir", tmp.path()});
  REQUIRE_MESSAGE(ls.status == 0, ls.err);
  CHECK(ls.out.find(a.id) != std::string::npos);
  CHECK(ls.out.find(b.id) != std::string::npos);
  CHECK(ls.out.find("fix the parser\n") != std::string::npos);  // the task's first line only
  CHECK(ls.out.find("second line") == std::string::npos);

  Run mine = run({"ls", "--dir", tmp.path(), "--key", "fedcba9876543210", "--json"});
  REQUIRE_MESSAGE(mine.status == 0, mine.err);
  rapidjson::Document doc;
  REQUIRE_FALSE(doc.Parse(mine.out.c_str()).HasParseError());
  REQUIRE(doc.Size() == 1);
  CHECK(std::string(doc[0]["id"].GetString()) == b.id);
  CHECK(std::string(doc[0]["task"].GetString()) == "other task");
  CHECK(doc[0]["tokens"].GetInt() == 12);

  Run show = run({"show", a.id, "--dir", tmp.path()});
  REQUIRE_MESSAGE(show.status == 0, show.err);
  CHECK(show.out == a.text);
  Run wrong_key = run({"show", a.id, "--dir", tmp.path(), "--key", "fedcba9876543210"});
  CHECK(wrong_key.status == 1);
  CHECK(wrong_key.out.empty());
  CHECK(std::filesystem::last_write_time(tmp.path() + "/0123456789abcdef/index") == before);
}

TEST_CASE("archive id: the content address of a file's bytes") {
  TempDir tmp;
  std::ofstream(tmp.file("out.txt"), std::ios::binary) << "some output";
  Run r = run({"id", tmp.file("out.txt")});
  REQUIRE(r.status == 0);
  CHECK(r.out == pruning::archive_id("some output") + "\n");
}

TEST_CASE("archive: usage errors exit 2") {
  CHECK(run({}).status == 2);
  CHECK(run({"list"}).status == 2);
  CHECK(run({"show"}).status == 2);
  CHECK(run({"ls", "extra"}).status == 2);
  CHECK(run({"ls", "--key", "nothex"}).status == 2);
  CHECK(run({"--help"}).status == 0);
}

TEST_CASE("archive ls shows a task title's control characters as text; show keeps the text exact off a terminal") {
  TempDir tmp;
  const std::string evil =
      "retitle\x1b]0;owned\x07 and clear\x1b[2J\x1b[H \xc2\x9b"
      "31m \xff";
  const auto a = output("output with \x1b[31mcolour\x1b[0m\r\n", evil);
  {
    archive::Store store(tmp.path());
    REQUIRE(store.write("0123456789abcdef", std::span(&a, 1)));
  }
  Run ls = run({"ls", "--dir", tmp.path()});
  REQUIRE_MESSAGE(ls.status == 0, ls.err);
  CHECK(ls.out.find('\x1b') == std::string::npos);
  CHECK(ls.out.find('\x07') == std::string::npos);
  CHECK(ls.out.find("\xc2\x9b") == std::string::npos);
  CHECK(ls.out.find("retitle\\x1b]0;owned\\x07 and clear\\x1b[2J\\x1b[H \\u009b31m \\xff") != std::string::npos);

  Run json = run({"ls", "--dir", tmp.path(), "--json"});
  REQUIRE_MESSAGE(json.status == 0, json.err);
  CHECK(json.out.find('\x1b') == std::string::npos);
  CHECK(json.out.find("\xc2\x9b") == std::string::npos);
  rapidjson::Document doc;
  REQUIRE_FALSE(doc.Parse(json.out.c_str()).HasParseError());
  CHECK(std::string(doc[0]["task"].GetString()).starts_with("retitle\x1b]0;owned\x07 and clear\x1b[2J\x1b[H \xc2\x9b"));

  Run exact = run({"show", a.id, "--dir", tmp.path()});
  CHECK(exact.out == a.text);
  std::ostringstream out, err;
  REQUIRE(cli::archive_run({"show", a.id, "--dir", tmp.path()}, out, err, true) == 0);
  CHECK(out.str() == "output with \\x1b[31mcolour\\x1b[0m\\x0d\n");
}

TEST_CASE("archive ls and show: a directory that is not there is an error naming it") {
  TempDir tmp;
  const std::string missing = tmp.path() + "/nonexistent";
  Run ls = run({"ls", "--dir", missing});
  CHECK(ls.status == 1);
  CHECK(ls.out.empty());
  CHECK(ls.err == "archive: " + missing + ": No such file or directory\n");
  Run show = run({"show", pruning::archive_id("x"), "--dir", missing});
  CHECK(show.status == 1);
  CHECK(show.err == "archive: " + missing + ": No such file or directory\n");
  std::ofstream(tmp.file("plain")) << "x";
  Run file = run({"ls", "--dir", tmp.file("plain")});
  CHECK(file.status == 1);
  CHECK(file.err == "archive: " + tmp.file("plain") + ": not a directory\n");
  Run config = run({"ls", "--config", tmp.path()});
  CHECK(config.status == 1);
  CHECK(config.err == tmp.path() + ": is a directory\n");
  Run id = run({"id", missing});
  CHECK(id.status == 1);
  CHECK(id.err == "archive: " + missing + ": No such file or directory\n");
}
