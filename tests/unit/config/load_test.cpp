// The loader: every key and type, and every error kind at its line:column.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "config/load.hpp"
#include "helpers.hpp"

using namespace td::config;
using td::config::test::all_errors;
using td::config::test::expect_one_error;
using td::config::test::has_error;

TEST_CASE("an empty document gives the built-in defaults") {
  LoadResult r = load_string("", "empty.yaml");
  REQUIRE(r.ok());
  CHECK(r.config.listen_host == "127.0.0.1");
  CHECK(r.config.listen_port == 8787);
  CHECK(r.config.upstreams.size() == 3);
  CHECK(r.config.upstreams.at("gemini").host == "generativelanguage.googleapis.com");
  CHECK(r.config.source == "empty.yaml");
  CHECK(r.config.profiles.empty());
}

TEST_CASE("every top-level key, every field type") {
  LoadResult r = load_string(R"(listen: "[::1]:9000"
threads: 4
upstreams:
  openai: http://127.0.0.1:18080/prefix/
  anthropic: {url: "https://api.anthropic.com", verify_tls: yes}
default_upstream: anthropic
limits:
  max_body_bytes: 1MiB
  max_header_bytes: 8192
  max_header_count: 50
  connect_timeout_ms: 2s
  header_timeout_ms: 1m30s
  idle_timeout_ms: 45000
  client_header_timeout_ms: 500ms
  keepalive_timeout_ms: 1m
  drain_grace_ms: 10s
  drain_timeout_ms: 0
  pool_max_idle_per_upstream: 8
ledger:
  enabled: false
  path: /var/tmp/td.db
  queue_size: 100
profiles:
  - name: quiet
    models: [gpt-4o*, "o[34]-*"]
    enabled: false
    shadow: on
    stream_usage: false
prices:
  - model: gpt-4o*
    input: 2.5
    cached_input: 1.25
    cache_write: 0
    output: 10
)",
                             "all.yaml");
  INFO(all_errors(r));
  REQUIRE(r.ok());
  const Config& c = r.config;
  CHECK(c.listen_host == "::1");
  CHECK(c.listen_port == 9000);
  CHECK(c.threads == 4);
  const Upstream& o = c.upstreams.at("openai");
  CHECK_FALSE(o.tls);
  CHECK(o.host == "127.0.0.1");
  CHECK(o.port == 18080);
  CHECK(o.path_prefix == "/prefix");
  CHECK(c.upstreams.at("anthropic").tls);
  CHECK(c.upstreams.at("gemini").host == "generativelanguage.googleapis.com");  // kept
  CHECK(c.default_upstream == "anthropic");
  CHECK(c.limits.max_body_bytes == 1u << 20);
  CHECK(c.limits.max_header_bytes == 8192);
  CHECK(c.limits.max_header_count == 50);
  CHECK(c.limits.connect_timeout_ms == 2000);
  CHECK(c.limits.header_timeout_ms == 90'000);
  CHECK(c.limits.idle_timeout_ms == 45'000);
  CHECK(c.limits.client_header_timeout_ms == 500);
  CHECK(c.limits.keepalive_timeout_ms == 60'000);
  CHECK(c.limits.drain_grace_ms == 10'000);
  CHECK(c.limits.drain_timeout_ms == 0);
  CHECK(c.limits.pool_max_idle_per_upstream == 8);
  CHECK_FALSE(c.ledger.enabled);
  CHECK(c.ledger.path == "/var/tmp/td.db");
  CHECK(c.ledger.queue_size == 100);
  REQUIRE(c.profiles.size() == 1);
  const auto& p = c.profiles[0];
  CHECK(p.name == "quiet");
  CHECK(p.models == std::vector<std::string>{"gpt-4o*", "o[34]-*"});
  CHECK_FALSE(p.enabled);
  CHECK(p.shadow);
  CHECK_FALSE(p.stream_usage);
  REQUIRE(c.prices.size() == 1);
  CHECK(c.prices[0].model == "gpt-4o*");
  CHECK(c.prices[0].input == doctest::Approx(2.5));
  CHECK(c.prices[0].cached_input == doctest::Approx(1.25));
  CHECK(c.prices[0].output == doctest::Approx(10));
  CHECK(r.warnings.empty());
}

TEST_CASE("profiles as a map; a profile without models matches everything") {
  LoadResult r = load_string(R"(profiles:
  cheap: {models: "gpt-4o-mini*", shadow: true}
  default:
)");
  INFO(all_errors(r));
  REQUIRE(r.ok());
  REQUIRE(r.config.profiles.size() == 2);
  CHECK(r.config.profiles[0].name == "cheap");
  CHECK(r.config.profiles[0].models == std::vector<std::string>{"gpt-4o-mini*"});
  CHECK(r.config.profiles[0].shadow);
  CHECK(r.config.profiles[1].name == "default");
  CHECK(r.config.profiles[1].models == std::vector<std::string>{"*"});
}

TEST_CASE("unknown keys are errors at every level, with a suggestion") {
  expect_one_error("treads: 4\n", 1, 1, "unknown key 'treads' (did you mean 'threads'?)");
  expect_one_error("limits:\n  max_bdy_bytes: 5\n", 2, 3,
                   "limits: unknown key 'max_bdy_bytes' (did you mean 'max_body_bytes'?)");
  expect_one_error("ledger:\n  enabled: true\n  pth: x\n", 3, 3, "did you mean 'path'?");
  expect_one_error("upstreams:\n  openai: {url: 'http://a', verfy_tls: true}\n", 2, 29,
                   "upstreams.openai: unknown key 'verfy_tls' (did you mean 'verify_tls'?)");
  expect_one_error("profiles:\n  - name: a\n    shaddow: true\n", 3, 5,
                   "profiles[0]: unknown key 'shaddow' (did you mean 'shadow'?)");
  expect_one_error("profiles:\n  a:\n    name: b\n", 3, 5, "profiles.a: unknown key 'name'");
  expect_one_error("prices:\n  - {model: x, inptu: 1}\n", 2, 16, "did you mean 'input'?");
  // Nothing close: the known keys are listed instead.
  expect_one_error("zzzzzz: 1\n", 1, 1, "known keys: listen, threads");
}

TEST_CASE("wrong types, each at its value") {
  expect_one_error("threads: many\n", 1, 10, "threads: expected an integer, got 'many'");
  expect_one_error("threads: \"4\"\n", 1, 10, "threads: expected an integer");  // quoted: a string
  expect_one_error("threads: [1]\n", 1, 10, "got a list");
  expect_one_error("threads:\n", 1, 1, "got nothing");  // empty value: reported at the key
  expect_one_error("ledger:\n  enabled: maybe\n", 2, 12, "ledger.enabled: expected true or false, got 'maybe'");
  expect_one_error("ledger:\n  path: {a: 1}\n", 2, 9, "ledger.path: expected a string, got a map");
  expect_one_error("limits: 5\n", 1, 9, "limits: expected a map of keys");
  expect_one_error("prices:\n  - {model: x, input: cheap}\n", 2, 23, "prices[0].input: expected a number");
  expect_one_error("prices: {model: x}\n", 1, 9, "prices: expected a list");
  expect_one_error("profiles:\n  - name: a\n    models: {x: 1}\n", 3, 13, "expected a list of strings");
  expect_one_error("profiles:\n  - name: a\n    models: [x, [y]]\n", 3, 17, "models[1]: expected a string");
  expect_one_error("profiles: 3\n", 1, 11, "expected a list or a map of profiles");
  expect_one_error("- a\n- b\n", 1, 1, "expected a map of top-level keys");
  expect_one_error("upstreams:\n  openai: [1]\n", 2, 11, "upstreams.openai: expected a string");
  expect_one_error("limits:\n  connect_timeout_ms: soon\n", 2, 23, "limits.connect_timeout_ms: expected a duration");
  expect_one_error("limits:\n  connect_timeout_ms: 5 days\n", 2, 23,
                   "limits.connect_timeout_ms: invalid duration '5 days': unknown unit 'days' (use ms, s, m, h)");
  expect_one_error("limits:\n  max_body_bytes: 32MB5\n", 2, 19, "limits.max_body_bytes: invalid size");
}

TEST_CASE("out-of-range values") {
  expect_one_error("threads: 5000\n", 1, 10, "threads: 5000 is out of range (0 to 1024)");
  expect_one_error("threads: -1\n", 1, 10, "out of range");
  expect_one_error("listen: 127.0.0.1:70000\n", 1, 9, "listen: port 70000 out of range");
  expect_one_error("listen: localhost\n", 1, 9, "missing port");
  expect_one_error("limits:\n  connect_timeout_ms: 0\n", 2, 23, "0 ms is out of range (1 to");
  expect_one_error("limits:\n  max_header_bytes: 16GiB\n", 2, 21, "bytes is out of range");
  expect_one_error("ledger:\n  queue_size: 0\n", 2, 15, "out of range");
  expect_one_error("archive:\n  max_bytes: -1\n", 2, 14, "out of range");
  expect_one_error("archive:\n  max_age_ms: soon\n", 2, 15, "archive.max_age_ms");
  expect_one_error("archive:\n  max_byte: 1\n", 2, 3, "did you mean 'max_bytes'?");
  expect_one_error("prices:\n  - {model: x, output: -1}\n", 2, 24, "-1 is out of range (0 to 1000000)");
}

TEST_CASE("semantic mode's task tool specs: each checked, an error at the bad item") {
  expect_one_error(
      "profiles:\n  - name: q\n    completed_tasks_tools:\n      - TodoWrite list=/todos text=/content status=/status\n"
      "      - TodoWrite list=todos status=/status\n",
      5, 9, "profiles[0].completed_tasks_tools[1]: 'list=todos': not a JSON pointer");
  LoadResult ok = load_string(
      "profiles:\n  - name: q\n    semantic_threshold: 20000\n    completed_tasks_tools:\n"
      "      - update_plan list=/plan text=/step status=/status\n",
      "q.yaml");
  INFO(all_errors(ok));
  REQUIRE(ok.ok());
  CHECK(ok.config.profiles[0].semantic_threshold == 20000);
  CHECK(ok.config.profiles[0].completed_tasks_tools.size() == 1);
  // The embedded default lists every agent's task tool.
  CHECK(default_config().profiles.front().completed_tasks_tools.size() == 8);
}

TEST_CASE("recalled_lines: answered, output or off, a bad value at its key") {
  expect_one_error("profiles:\n  - name: q\n    recalled_lines: always\n", 3, 21,
                   "profiles[0].recalled_lines: must be answered, output or off");
  LoadResult ok = load_string("profiles:\n  - name: q\n    recalled_lines: answered\n", "q.yaml");
  INFO(all_errors(ok));
  REQUIRE(ok.errors.empty());
  CHECK(ok.config.profiles[0].recalled_lines == "answered");
  CHECK(ok.config.profiles[0].recalled_lines_kept());
  CHECK(default_config().profiles.front().recalled_lines == "off");
}

TEST_CASE("the policy's keys out of range, each at its key") {
  expect_one_error("profiles:\n  - name: q\n    quota_margin: 0.5\n", 3, 19,
                   "profiles[0].quota_margin: must be between 1 and 10");
  expect_one_error("profiles:\n  - name: q\n    quota_window_ms: 0\n", 3, 22, "quota_window_ms: must be at least 1 ms");
  expect_one_error("profiles:\n  - name: q\n    control_fraction: 1.5\n", 3, 23,
                   "profiles[0].control_fraction: must be between 0 and 1");
  expect_one_error("profiles:\n  - name: q\n    control_fraction: -0.1\n", 3, 23,
                   "control_fraction: must be between 0 and 1");
  expect_one_error("profiles:\n  - name: q\n    thinking_budget_runway_fraction: 2\n", 3, 38,
                   "thinking_budget_runway_fraction: must be between 0 and 1");
  expect_one_error("profiles:\n  - name: q\n    thinking_budget_effort: turbo\n", 3, 29,
                   "thinking_budget_effort: must be one of none, minimal, low, medium, high");
  expect_one_error("profiles:\n  - name: q\n    anonymous_clients: together\n", 3, 24,
                   "profiles[0].anonymous_clients: must be separate or shared");
  expect_one_error("profiles:\n  - name: q\n    anonymous_clients: [shared]\n", 3, 24, "anonymous_clients");
  LoadResult ok = load_string(
      "profiles:\n  - name: q\n    tpm_limit: 30000\n    quota_window_ms: 2s\n"
      "    quota_group: shared\n    max_wait_ms: 5s\n",
      "q.yaml");
  INFO(all_errors(ok));
  REQUIRE(ok.ok());
  CHECK(ok.config.profiles[0].tpm_limit == 30000);
  CHECK(ok.config.profiles[0].quota_window_ms == 2000);
  CHECK(ok.config.profiles[0].quota_group == "shared");
  CHECK(ok.config.profiles[0].max_wait_ms == 5000);
  // Anonymous clients: each conversation its own runway unless shared.
  CHECK(ok.config.profiles[0].anonymous_clients == "separate");
  CHECK_FALSE(ok.config.profiles[0].anonymous_clients_shared());
  LoadResult shared = load_string("profiles:\n  - name: q\n    anonymous_clients: shared\n", "q.yaml");
  REQUIRE(shared.ok());
  CHECK(shared.config.profiles[0].anonymous_clients_shared());
}

TEST_CASE("bad upstream URLs and providers") {
  expect_one_error("upstreams:\n  openai: ftp://x\n", 2, 11, "scheme must be http or https");
  expect_one_error("upstreams:\n  openai: https://k:s@x\n", 2, 11, "user info");
  expect_one_error("upstreams:\n  openai:\n    ca_file: /x\n", 3, 5, "upstreams.openai: missing 'url'");
  expect_one_error("upstreams:\n  opneai: http://x\n", 2, 3, "unknown provider 'opneai' (did you mean 'openai'?)");
  expect_one_error("default_upstream: mistral\n", 1, 19, "default_upstream: unknown provider 'mistral'");
  expect_one_error("upstreams:\n  openai: {url: 'https://x', ca_file: /nonexistent/ca.pem}\n", 2, 39,
                   "ca_file: cannot read '/nonexistent/ca.pem'");
}

TEST_CASE("verify_tls: false is allowed, with a warning") {
  LoadResult r = load_string("upstreams:\n  openai: {url: 'https://x', verify_tls: false}\n");
  REQUIRE(r.ok());
  CHECK_FALSE(r.config.upstreams.at("openai").verify_tls);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].line == 2);
  CHECK(r.warnings[0].reason.find("not checked") != std::string::npos);
}

TEST_CASE("an upstream URL ending in its API version loads, with a warning naming the fix") {
  LoadResult r = load_string(
      "listen: 127.0.0.1:8080\nupstreams:\n  openai: https://api.openai.com/v1/\n  gemini: "
      "{url: 'https://gw.example/google/v1beta'}\n  anthropic: https://api.anthropic.com\n",
      "t.yaml");
  REQUIRE(r.ok());
  REQUIRE(r.warnings.size() == 2);
  CHECK(r.warnings[0].line == 3);
  CHECK(r.warnings[0].reason ==
        "upstreams.openai: the URL ends in /v1, but clients send paths that start with it (/v1/...), which "
        "tokendiet appends: every request would go to /v1/v1/... and get a 404. Use https://api.openai.com");
  CHECK(r.warnings[1].line == 4);
  CHECK(r.warnings[1].reason.find("/google/v1beta/v1beta/... and get a 404. Use https://gw.example/google") !=
        std::string::npos);
}

TEST_CASE("bad globs, missing and duplicate names") {
  expect_one_error("profiles:\n  - name: a\n    models: ['gpt-*', 'gpt-[4']\n", 3, 23,
                   "profiles[0].models: invalid glob 'gpt-[4': '[' without a closing ']'");
  expect_one_error("profiles:\n  - name: a\n    models: 'x\\'\n", 3, 13, "ends with a lone");
  expect_one_error("profiles:\n  - name: a\n    models: []\n", 3, 13, "at least one glob");
  expect_one_error("profiles:\n  - models: ['*']\n", 2, 5, "profiles[0]: missing 'name'");
  expect_one_error("profiles:\n  - name: a\n  - name: a\n", 3, 11, "duplicate profile name 'a'");
  expect_one_error("profiles:\n  a: {}\n  a: {}\n", 3, 3, "duplicate key 'profiles.a' (first at line 2)");
  expect_one_error("prices:\n  - {input: 1}\n", 2, 5, "prices[0]: missing 'model'");
  expect_one_error("prices:\n  - {model: 'x['}\n", 2, 13, "prices[0].model: invalid glob 'x[': '[' without a closing");
  expect_one_error("threads: 1\nthreads: 2\n", 2, 1, "duplicate key 'threads' (first at line 1)");
}

TEST_CASE("YAML syntax errors carry their place") {
  LoadResult r = load_string("listen: [127.0.0.1\nthreads: 2\n", "bad.yaml");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].file == "bad.yaml");
  CHECK(r.errors[0].line == 2);
  CHECK(r.errors[0].reason.find("YAML syntax") != std::string::npos);
}

TEST_CASE("all errors are collected, in file order") {
  LoadResult r = load_string(R"(listen: nowhere
treads: 2
limits:
  idle_timeout_ms: forever
  max_header_count: 3
profiles:
  - name: x
    enabled: sometimes
prices:
  - {model: "[", input: 1}
)",
                             "many.yaml");
  INFO(all_errors(r));
  REQUIRE(r.errors.size() == 6);
  CHECK(has_error(r, 1, 9, "missing port"));
  CHECK(has_error(r, 2, 1, "unknown key 'treads'"));
  CHECK(has_error(
      r, 4, 20,
      "limits.idle_timeout_ms: expected a duration (milliseconds, or e.g. \"500ms\", \"30s\", \"5m\"), got 'forever'"));
  CHECK(has_error(r, 5, 21, "out of range"));
  CHECK(has_error(r, 8, 14, "expected true or false"));
  CHECK(has_error(r, 10, 13, "without a closing"));
  for (std::size_t i = 1; i < r.errors.size(); ++i) CHECK(r.errors[i - 1].line <= r.errors[i].line);
  CHECK(format_error(r.errors[0]) ==
        "many.yaml:1:9: listen: missing port in listen address 'nowhere' (want HOST:PORT)");
}

TEST_CASE("load_file: errors name the file; relative paths are relative to it") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("td-config-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "ca.pem") << "not really a pem, but readable\n";
  std::ofstream(dir / "good.yaml") << "upstreams:\n  openai: {url: 'https://x', ca_file: ca.pem}\n"
                                      "ledger: {path: state/usage.db}\n"
                                      "archive: {path: state/archive, max_bytes: 2MiB, max_age_ms: 1h}\n";
  std::ofstream(dir / "bad.yaml") << "threads: x\n";

  LoadResult good = load_file((dir / "good.yaml").string());
  INFO(all_errors(good));
  REQUIRE(good.ok());
  CHECK(good.config.upstreams.at("openai").ca_file == (dir / "ca.pem").string());
  CHECK(good.config.ledger.path == (dir / "state/usage.db").string());
  CHECK(good.config.archive.path == (dir / "state/archive").string());
  CHECK(good.config.archive.max_bytes == 2u << 20);
  CHECK(good.config.archive.max_age_ms == 3'600'000);
  CHECK(good.config.source == (dir / "good.yaml").string());

  LoadResult bad = load_file((dir / "bad.yaml").string());
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.errors[0].file == (dir / "bad.yaml").string());
  CHECK(bad.errors[0].line == 1);

  LoadResult missing = load_file((dir / "missing.yaml").string());
  REQUIRE(missing.errors.size() == 1);
  CHECK(missing.errors[0].line == 0);
  CHECK(missing.errors[0].reason.find("cannot read") != std::string::npos);
  CHECK(format_error(missing.errors[0]).find((dir / "missing.yaml").string() + ": cannot read") == 0);
  fs::remove_all(dir);
}

TEST_CASE("YAML nested a million deep is an error at its place, not a crash") {
  const std::string flow =
      "listen: 127.0.0.1:1\nprofiles: " + std::string(1'000'000, '[') + std::string(1'000'000, ']') + "\n";
  LoadResult r = load_string(flow, "t.yaml");
  INFO(all_errors(r));
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].line == 2);
  CHECK(r.errors[0].reason.find("nested deeper than") != std::string::npos);
}

TEST_CASE("a profile's summarizer: read, and its errors at their keys") {
  LoadResult ok = load_string(
      "profiles:\n  - name: q\n    summarizer:\n      provider: anthropic\n"
      "      model: claude-haiku-4-5\n      timeout_ms: 5s\n      max_tokens: 800\n",
      "q.yaml");
  INFO(all_errors(ok));
  REQUIRE(ok.ok());
  const auto& s = ok.config.profiles[0].summarizer;
  CHECK(s.enabled());
  CHECK(s.provider == "anthropic");
  CHECK(s.model == "claude-haiku-4-5");
  CHECK(s.upstream.empty());
  CHECK(s.timeout_ms == 5000);
  CHECK(s.max_tokens == 800);
  LoadResult none = load_string("profiles:\n  - name: q\n", "q.yaml");
  CHECK_FALSE(none.config.profiles[0].summarizer.enabled());

  expect_one_error("profiles:\n  - name: q\n    summarizer:\n      provider: mistral\n      model: m\n", 4, 17,
                   "profiles[0].summarizer.provider: must be one of openai, anthropic, gemini");
  expect_one_error("profiles:\n  - name: q\n    summarizer:\n      provider: openai\n", 4, 7,
                   "profiles[0].summarizer.model: must name the model");
  expect_one_error(
      "profiles:\n  - name: q\n    summarizer:\n      provider: openai\n      model: m\n      upstream: x\n", 6, 17,
      "profiles[0].summarizer.upstream: must name an upstream");
  expect_one_error(
      "profiles:\n  - name: q\n    summarizer:\n      provider: openai\n      model: m\n      timeout_ms: 10\n", 6, 19,
      "out of range");
  expect_one_error("profiles:\n  - name: q\n    summarizer:\n      provider: openai\n      model: m\n      modle: n\n",
                   6, 7, "modle");
  expect_one_error("profiles:\n  - name: q\n    summarizer: yes\n", 3, 17, "summarizer");
}
