// The embedded default config is config/tokendiet.example.yaml, byte for byte,
// it loads without errors, and it documents the same defaults the C++ structs
// carry (so neither can drift from the other).
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "config/load.hpp"
#include "helpers.hpp"

using namespace td::config;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every field a visit() names, rendered as text, for comparing two structs.
struct FieldText {
  std::map<std::string, std::string> fields;
  template <class T>
  void operator()(std::string_view key, const T& v, auto&&...) {
    std::ostringstream s;
    if constexpr (std::is_same_v<T, std::vector<std::string>>)
      for (const auto& x : v) s << x << ",";
    else
      s << v;
    fields[std::string(key)] = s.str();
  }
};

template <class T>
std::map<std::string, std::string> fields_of(T copy) {
  FieldText t;
  copy.visit(t);
  return t.fields;
}

}  // namespace

TEST_CASE("the embedded default is config/tokendiet.example.yaml") {
  std::string example = read_file(TD_SOURCE_DIR "/config/tokendiet.example.yaml");
  REQUIRE(!example.empty());
  CHECK(embedded_default_yaml() == example);
}

TEST_CASE("the embedded default loads cleanly and says what the structs say") {
  LoadResult r = load_string(embedded_default_yaml(), "<embedded>");
  INFO(td::config::test::all_errors(r));
  REQUIRE(r.ok());
  CHECK(r.warnings.empty());
  const Config& c = r.config;
  const Config defaults;
  CHECK(c.listen_host == "127.0.0.1");
  CHECK(c.listen_port == 8787);
  CHECK(c.threads == 0);
  CHECK(c.default_upstream == "openai");
  REQUIRE(c.upstreams.size() == 3);
  CHECK(c.upstreams.at("openai").url == "https://api.openai.com");
  CHECK(c.upstreams.at("gemini").url == "https://generativelanguage.googleapis.com");
  CHECK(c.upstreams.at("anthropic").url == "https://api.anthropic.com");
  for (const auto& [name, up] : c.upstreams) {
    CHECK(up.tls);
    CHECK(up.port == 443);
    CHECK(up.verify_tls);
    CHECK(up.path_prefix.empty());
  }
  // Limits: the example's values are the struct's defaults.
  CHECK(c.limits.max_body_bytes == defaults.limits.max_body_bytes);
  CHECK(c.limits.max_header_bytes == defaults.limits.max_header_bytes);
  CHECK(c.limits.max_header_count == defaults.limits.max_header_count);
  CHECK(c.limits.connect_timeout_ms == defaults.limits.connect_timeout_ms);
  CHECK(c.limits.header_timeout_ms == defaults.limits.header_timeout_ms);
  CHECK(c.limits.idle_timeout_ms == defaults.limits.idle_timeout_ms);
  CHECK(c.limits.client_header_timeout_ms == defaults.limits.client_header_timeout_ms);
  CHECK(c.limits.keepalive_timeout_ms == defaults.limits.keepalive_timeout_ms);
  CHECK(c.limits.drain_grace_ms == defaults.limits.drain_grace_ms);
  CHECK(c.limits.drain_timeout_ms == defaults.limits.drain_timeout_ms);
  CHECK(c.limits.pool_max_idle_per_upstream == defaults.limits.pool_max_idle_per_upstream);
  CHECK(c.ledger.enabled);
  CHECK(c.ledger.path.empty());
  CHECK(c.ledger.queue_size == defaults.ledger.queue_size);
  CHECK(c.archive.enabled);
  CHECK(c.archive.path.empty());
  CHECK(c.archive.max_bytes == defaults.archive.max_bytes);
  CHECK(c.archive.max_age_ms == defaults.archive.max_age_ms);
  REQUIRE(c.profiles.size() == 1);
  CHECK(c.profiles[0].name == "default");
}

TEST_CASE("the example documents every profile field with its built-in default") {
  // A field added to pruning::Profile must also be added, with its default
  // value and a comment, to the default profile in config/tokendiet.example.yaml.
  Config c = default_config();
  REQUIRE(c.profiles.size() == 1);
  auto documented = fields_of(c.profiles[0]);
  auto builtin = fields_of(td::pruning::Profile{});
  for (const auto& field : builtin) {
    const std::string& key = field.first;  // not a structured binding: clang 14's INFO cannot capture one
    const auto& value = field.second;
    INFO("profile field '" << key << "': add it to config/tokendiet.example.yaml's default profile");
    CHECK(documented.count(key) == 1);
    std::string example_text = read_file(TD_SOURCE_DIR "/config/tokendiet.example.yaml");
    CHECK(example_text.find("    " + key + ":") != std::string::npos);
    INFO("example says " << documented[key] << ", pruning::Profile says " << value);
    CHECK(documented[key] == value);
  }
}

TEST_CASE("default_config() is the parsed embedded default") {
  Config c = default_config();
  CHECK(c.source == "<embedded>");
  CHECK(c.upstreams.size() == 3);
}
