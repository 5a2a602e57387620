#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "cli/check_config_command.hpp"

using td::cli::check_config_run;

namespace {

struct Run {
  int status;
  std::string out, err;
};

Run run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int status = check_config_run(args, out, err);
  return {status, out.str(), err.str()};
}

}  // namespace

TEST_CASE("check-config: exit codes and output") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("td-check-config-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string good = (dir / "good.yaml").string(), bad = (dir / "bad.yaml").string();
  std::ofstream(good) << "listen: 127.0.0.1:9999\n";
  std::ofstream(bad) << "listen: 127.0.0.1:9999\ntreads: 4\nlimits:\n  idle_timeout_ms: soon\n";

  Run ok = run({good});
  CHECK(ok.status == 0);
  CHECK(ok.out == good + ": ok\n");
  CHECK(ok.err.empty());

  Run fail = run({bad});
  CHECK(fail.status == 1);
  CHECK(fail.out.empty());
  CHECK(fail.err.find(bad + ":2:1: unknown key 'treads' (did you mean 'threads'?)\n") == 0);
  CHECK(fail.err.find(bad + ":4:20: limits.idle_timeout_ms: expected a duration") != std::string::npos);

  Run both = run({good, bad});
  CHECK(both.status == 1);
  CHECK(both.out == good + ": ok\n");

  Run missing = run({(dir / "nope.yaml").string()});
  CHECK(missing.status == 1);
  CHECK(missing.err == (dir / "nope.yaml").string() + ": No such file or directory\n");
  // A directory reads as an empty file, which is valid: refused by name instead.
  Run directory = run({dir.string()});
  CHECK(directory.status == 1);
  CHECK(directory.out.empty());
  CHECK(directory.err == dir.string() + ": is a directory\n");

  std::ofstream(dir / "warn.yaml") << "upstreams:\n  openai: {url: 'https://x', verify_tls: false}\n";
  Run warn = run({(dir / "warn.yaml").string()});
  CHECK(warn.status == 0);
  CHECK(warn.err.find(":2:") != std::string::npos);
  CHECK(warn.err.find("warning: ") != std::string::npos);

  // A renamed profile key (config/renamed_keys.hpp): still ok, with one deprecation line.
  const std::string old_key = (dir / "old_key.yaml").string();
  std::ofstream(old_key) << "profiles:\n  - name: a\n    dedup_tool_outputs: false\n";
  Run renamed = run({old_key});
  CHECK(renamed.status == 0);
  CHECK(renamed.out == old_key + ": ok\n");
  CHECK(renamed.err ==
        old_key + ":3:5: warning: profiles[0].dedup_tool_outputs: deprecated name; use identical_tool_outputs\n");
  fs::remove_all(dir);
}

TEST_CASE("check-config: usage") {
  Run help = run({"--help"});
  CHECK(help.status == 0);
  CHECK(help.out.find("usage: tokendiet check-config FILE") == 0);
  CHECK(run({}).status == 2);
  CHECK(run({"--frobnicate"}).status == 2);
}

TEST_CASE("check-config accepts the shipped example") {
  Run r = run({TD_SOURCE_DIR "/config/tokendiet.example.yaml"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
}

TEST_CASE("check-config: FILEs in order, options anywhere; usage errors name the word") {
  auto p = td::cli::parse_check_config_args({"a.yaml", "b.yaml"});
  REQUIRE_FALSE(p.stop);
  CHECK(p.options.files == std::vector<std::string>{"a.yaml", "b.yaml"});
  auto unknown = td::cli::parse_check_config_args({"a.yaml", "--strict"});
  REQUIRE(unknown.stop);
  CHECK(unknown.stop->status == 2);
  CHECK(unknown.stop->text.find("check-config: unknown option '--strict'\n\nusage: tokendiet check-config FILE") == 0);
  Run none = run({});
  CHECK(none.err.find("check-config: no FILE given\n\nusage: tokendiet check-config FILE") == 0);
  CHECK(none.out.empty());
}

TEST_CASE("check-config shows the file's control characters in its messages as text") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("td-check-config-esc-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string bad = (dir / "esc.yaml").string();
  std::ofstream(bad) << "\"tr\x1b]0;owned\x07"
                        "eads\": 4\nlisten: \"\x1b[2J\xc2\x9b\"\n";
  Run r = run({bad});
  CHECK(r.status == 1);
  CHECK(r.err.find('\x1b') == std::string::npos);
  CHECK(r.err.find('\x07') == std::string::npos);
  CHECK(r.err.find("\xc2\x9b") == std::string::npos);
  CHECK(r.err.find("tr\\x1b]0;owned\\x07eads") != std::string::npos);
  fs::remove_all(dir);
}
