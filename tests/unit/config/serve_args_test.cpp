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

}  // namespace

TEST_CASE("serve with no file: listen and upstream from the command line") {
  Config cfg = default_config();
  auto errors = apply_serve_args(cfg, {"--listen", "127.0.0.1:18090", "--upstream", "openai=http://127.0.0.1:18080"});
  REQUIRE(errors.empty());
  CHECK(cfg.listen_host == "127.0.0.1");
  CHECK(cfg.listen_port == 18090);
  const Upstream& o = cfg.upstreams.at("openai");
  CHECK(o.host == "127.0.0.1");
  CHECK(o.port == 18080);
  CHECK_FALSE(o.tls);
  CHECK(cfg.upstreams.at("anthropic").host == "api.anthropic.com");  // untouched
  REQUIRE(cfg.profiles.size() == 1);  // still the embedded default otherwise
}

TEST_CASE("--opt=value, --threads, repeated --upstream, --help") {
  auto p = parse_serve_args({"--threads=3", "--upstream=gemini=http://h:1", "--upstream", "anthropic=http://h:2/p", "-h"});
  REQUIRE(p.errors.empty());
  CHECK(p.args.threads == 3u);
  REQUIRE(p.args.upstreams.size() == 2);
  CHECK(p.args.upstreams[0].first == "gemini");
  CHECK(p.args.upstreams[1].second.path_prefix == "/p");
  CHECK(p.args.help);
  CHECK_FALSE(p.args.listen.has_value());
  CHECK(p.args.config_file.empty());
}

TEST_CASE("bad serve arguments: every one reported") {
  auto p = parse_serve_args({"--listen", "nowhere", "--threads", "-2", "--upstream", "mistral=http://x",
                             "--upstream", "openai", "--upstream", "openai=ftp://x", "--verbose", "--config"});
  REQUIRE(p.errors.size() == 7);
  CHECK(p.errors[0].reason.find("--listen: missing port") == 0);
  CHECK(p.errors[1].reason.find("--threads: expected an integer") == 0);
  CHECK(p.errors[2].reason.find("unknown provider 'mistral'") != std::string::npos);
  CHECK(p.errors[3].reason.find("expected PROVIDER=URL") != std::string::npos);
  CHECK(p.errors[4].reason.find("scheme must be http or https") != std::string::npos);
  CHECK(p.errors[5].reason.find("unknown option '--verbose'") == 0);
  CHECK(p.errors[6].reason == "--config: missing value");
  CHECK(format_error(p.errors[0]).find("tokendiet serve: --listen") == 0);
  CHECK(parse_serve_args({"--threads", "2000"}).errors.size() == 1);
}

TEST_CASE("--config FILE, then the command line wins over it") {
  auto path = temp_yaml("serve.yaml",
                        "listen: 127.0.0.1:1111\nthreads: 2\n"
                        "upstreams:\n  openai: {url: 'https://gw.example', verify_tls: false}\n");
  Config cfg = default_config();
  auto errors = apply_serve_args(cfg, {"--config", path.string(), "--threads", "5", "--upstream",
                                       "openai=https://other.example"});
  REQUIRE(errors.empty());
  CHECK(cfg.listen_port == 1111);
  CHECK(cfg.threads == 5);
  CHECK(cfg.upstreams.at("openai").host == "other.example");
  CHECK_FALSE(cfg.upstreams.at("openai").verify_tls);  // TLS options from the file stay
  CHECK(cfg.source == path.string());
  CHECK(cfg.profiles.empty());  // a file without profiles: the built-in default applies
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("a bad --config file leaves the config as it was") {
  auto path = temp_yaml("bad.yaml", "threads: x\nlisten: y\n");
  Config cfg = default_config();
  auto errors = apply_serve_args(cfg, {"--config", path.string(), "--listen", "127.0.0.1:1"});
  REQUIRE(errors.size() == 2);
  CHECK(errors[0].file == path.string());
  CHECK(errors[0].line == 1);
  CHECK(cfg.listen_port == 8787);
  CHECK(apply_serve_args(cfg, {"--config", path.string() + ".missing"}).size() == 1);
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("reload: the file again, with the command line still on top") {
  auto path = temp_yaml("reload.yaml", "threads: 2\n");
  auto parsed = parse_serve_args({"--config", path.string(), "--listen", "127.0.0.1:2222"});
  REQUIRE(parsed.errors.empty());
  LoadResult first = load_for_serve(parsed.args);
  REQUIRE(first.ok());
  CHECK(first.config.threads == 2);
  CHECK(first.config.listen_port == 2222);

  std::ofstream(path) << "threads: 2\nlisten: 0.0.0.0:9\nprofiles:\n  - name: new\n";
  LoadResult second = reload_config(parsed.args);
  REQUIRE(second.ok());
  CHECK(second.config.listen_port == 2222);  // --listen still wins
  REQUIRE(second.config.profiles.size() == 1);
  CHECK(second.config.profiles[0].name == "new");
  CHECK(restart_required(first.config, second.config).empty());

  std::ofstream(path) << "threads: 8\n";
  LoadResult third = reload_config(parsed.args);
  REQUIRE(third.ok());
  auto changes = restart_required(first.config, third.config);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0] == "threads: 2 -> 8");

  std::ofstream(path) << "threads: [\n";
  LoadResult broken = reload_config(parsed.args);
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

TEST_CASE("the help text names every option") {
  std::string help = serve_options_help();
  for (const char* opt : {"--config", "--listen", "--threads", "--upstream"})
    CHECK(help.find(opt) != std::string::npos);
}
