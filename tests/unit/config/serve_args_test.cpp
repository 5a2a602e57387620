#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "config/reload.hpp"
#include "config/serve_args.hpp"

using namespace td::config;

namespace {

std::filesystem::path temp_yaml(const std::string& name, const std::string& text) {
  auto dir = std::filesystem::temp_directory_path() / ("td-serve-args-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path) << text;
  return path;
}

// The overrides of a command line already split into its options' values.
ServeArgs checked(const ServeArgsText& text) {
  ParsedServeArgs p = check_serve_args(text);
  INFO((p.errors.empty() ? std::string() : format_error(p.errors.front())));
  REQUIRE(p.errors.empty());
  return p.args;
}

}  // namespace

TEST_CASE("--upstream with a URL ending in /v1: a warning naming the fix") {
  ServeArgsText text;
  text.upstreams = {"openai=http://127.0.0.1:18080/v1"};
  LoadResult r = load_for_serve(checked(text));
  REQUIRE(r.ok());
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].file == "tokendiet serve");
  CHECK(r.warnings[0].reason.starts_with("--upstream openai: the URL ends in /v1"));
  CHECK(r.warnings[0].reason.ends_with("Use http://127.0.0.1:18080"));
}

TEST_CASE("serve with no file: listen and upstream from the command line") {
  ServeArgsText text;
  text.listen = "127.0.0.1:18090";
  text.upstreams = {"openai=http://127.0.0.1:18080"};
  LoadResult r = load_for_serve(checked(text));
  REQUIRE(r.ok());
  const Config& cfg = r.config;
  CHECK(cfg.listen_host == "127.0.0.1");
  CHECK(cfg.listen_port == 18090);
  const Upstream& o = cfg.upstreams.at("openai");
  CHECK(o.host == "127.0.0.1");
  CHECK(o.port == 18080);
  CHECK_FALSE(o.tls);
  CHECK(cfg.upstreams.at("anthropic").host == "api.anthropic.com");  // untouched
  REQUIRE(cfg.profiles.size() == 1);                                 // still the embedded default otherwise
}

TEST_CASE("--threads, repeated --upstream in order; options not given stay unset") {
  ServeArgsText text;
  text.threads = "3";
  text.upstreams = {"gemini=http://h:1", "anthropic=http://h:2/p"};
  ServeArgs a = checked(text);
  CHECK(a.threads == 3u);
  REQUIRE(a.upstreams.size() == 2);
  CHECK(a.upstreams[0].first == "gemini");
  CHECK(a.upstreams[1].second.path_prefix == "/p");
  CHECK_FALSE(a.listen.has_value());
  CHECK(a.config_file.empty());
}

TEST_CASE("bad serve values: every one reported") {
  ServeArgsText text;
  text.listen = "nowhere";
  text.threads = "-2";
  text.upstreams = {"mistral=http://x", "openai", "openai=ftp://x"};
  text.config_file = "";
  auto p = check_serve_args(text);
  REQUIRE(p.errors.size() == 6);
  CHECK(p.errors[0].reason == "--config: empty file name");
  CHECK(p.errors[1].reason.find("--listen: missing port") == 0);
  CHECK(p.errors[2].reason.find("--threads: expected an integer") == 0);
  CHECK(p.errors[3].reason.find("unknown provider 'mistral'") != std::string::npos);
  CHECK(p.errors[4].reason.find("expected PROVIDER=URL") != std::string::npos);
  CHECK(p.errors[5].reason.find("scheme must be http or https") != std::string::npos);
  CHECK(format_error(p.errors[1]).find("tokendiet serve: --listen") == 0);
  ServeArgsText many;
  many.threads = "2000";
  CHECK(check_serve_args(many).errors.size() == 1);
  many.threads = "1024";
  CHECK(check_serve_args(many).errors.empty());
  many.threads = "4x";
  CHECK(check_serve_args(many).errors.size() == 1);
}

TEST_CASE("--config FILE, then the command line wins over it") {
  auto path = temp_yaml("serve.yaml",
                        "listen: 127.0.0.1:1111\nthreads: 2\n"
                        "upstreams:\n  openai: {url: 'https://gw.example', verify_tls: false}\n");
  ServeArgsText text;
  text.config_file = path.string();
  text.threads = "5";
  text.upstreams = {"openai=https://other.example"};
  LoadResult r = load_for_serve(checked(text));
  REQUIRE(r.ok());
  const Config& cfg = r.config;
  CHECK(cfg.listen_port == 1111);
  CHECK(cfg.threads == 5);
  CHECK(cfg.upstreams.at("openai").host == "other.example");
  CHECK_FALSE(cfg.upstreams.at("openai").verify_tls);  // TLS options from the file stay
  CHECK(cfg.source == path.string());
  CHECK(cfg.profiles.empty());  // a file without profiles: the built-in default applies
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("a bad --config file is reported at its lines") {
  auto path = temp_yaml("bad.yaml", "threads: x\nlisten: y\n");
  ServeArgsText text;
  text.config_file = path.string();
  text.listen = "127.0.0.1:1";
  LoadResult r = load_for_serve(checked(text));
  REQUIRE(r.errors.size() == 2);
  CHECK(r.errors[0].file == path.string());
  CHECK(r.errors[0].line == 1);
  text.config_file = path.string() + ".missing";
  CHECK(load_for_serve(checked(text)).errors.size() == 1);
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("reload: the file again, with the command line still on top") {
  auto path = temp_yaml("reload.yaml", "threads: 2\n");
  ServeArgsText text;
  text.config_file = path.string();
  text.listen = "127.0.0.1:2222";
  const ServeArgs args = checked(text);
  LoadResult first = load_for_serve(args);
  REQUIRE(first.ok());
  CHECK(first.config.threads == 2);
  CHECK(first.config.listen_port == 2222);

  std::ofstream(path) << "threads: 2\nlisten: 0.0.0.0:9\nprofiles:\n  - name: new\n";
  LoadResult second = reload_config(args);
  REQUIRE(second.ok());
  CHECK(second.config.listen_port == 2222);  // --listen still wins
  REQUIRE(second.config.profiles.size() == 1);
  CHECK(second.config.profiles[0].name == "new");
  CHECK(restart_required(first.config, second.config).empty());

  std::ofstream(path) << "threads: 8\n";
  LoadResult third = reload_config(args);
  REQUIRE(third.ok());
  auto changes = restart_required(first.config, third.config);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0] == "threads: 2 -> 8");

  std::ofstream(path) << "threads: [\n";
  LoadResult broken = reload_config(args);
  CHECK_FALSE(broken.ok());
  CHECK(broken.errors[0].file == path.string());
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("restart_required names a listen change") {
  Config a = default_config(), b = default_config();
  b.listen_host = "::1";
  b.listen_port = 9;
  auto changes = restart_required(a, b);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0] == "listen: 127.0.0.1:8787 -> [::1]:9");
}
