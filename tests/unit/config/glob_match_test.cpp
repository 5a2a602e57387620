#include <doctest/doctest.h>

#include "config/glob.hpp"
#include "config/load.hpp"
#include "config/match.hpp"

using namespace td::config;

TEST_CASE("glob matching") {
  CHECK(glob_match("*", ""));
  CHECK(glob_match("*", "gpt-4o"));
  CHECK(glob_match("gpt-4o*", "gpt-4o-mini"));
  CHECK_FALSE(glob_match("gpt-4o*", "gpt-4.1"));
  CHECK(glob_match("gemini-*-flash*", "gemini-2.5-flash-lite"));
  CHECK_FALSE(glob_match("gemini-*-flash*", "gemini-2.5-pro"));
  CHECK(glob_match("claude-?-opus", "claude-3-opus"));
  CHECK_FALSE(glob_match("claude-?-opus", "claude-35-opus"));
  CHECK(glob_match("o[134]-mini", "o3-mini"));
  CHECK_FALSE(glob_match("o[134]-mini", "o2-mini"));
  CHECK(glob_match("o[0-9]*", "o4-mini"));
  CHECK(glob_match("o[!0-3]*", "o4"));
  CHECK_FALSE(glob_match("o[!0-3]*", "o1"));
  CHECK(glob_match("a\\*b", "a*b"));
  CHECK_FALSE(glob_match("a\\*b", "axb"));
  CHECK(glob_match("*a*b*c*", "xxaxxbxxcxx"));
  CHECK_FALSE(glob_match("*a*b*c*", "xxaxxcxxbxx"));
  CHECK_FALSE(glob_match("gpt", "gpt-4o"));   // whole name, not a substring
  CHECK_FALSE(glob_match("GPT*", "gpt-4o"));  // case-sensitive
}

TEST_CASE("invalid globs") {
  CHECK(glob_error("gpt-*").empty());
  CHECK(glob_error("[]x]").empty());  // ']' first in a set is literal
  CHECK(glob_error("").find("empty") != std::string::npos);
  CHECK(glob_error("gpt-[4o").find("without a closing") != std::string::npos);
  CHECK(glob_error("gpt\\").find("lone") != std::string::npos);
}

TEST_CASE("profile_for: first matching profile wins, else the built-in default") {
  LoadResult r = load_string(R"(
profiles:
  - name: mini
    models: ["gpt-4o-mini*", "gemini-*-flash*"]
    shadow: true
  - name: openai
    models: "gpt-*"
  - name: late-mini
    models: ["gpt-4o-mini"]
)");
  REQUIRE(r.ok());
  CHECK(profile_for(r.config, "gpt-4o-mini-2024").name == "mini");
  CHECK(profile_for(r.config, "gpt-4o-mini").name == "mini");  // not late-mini: order
  CHECK(profile_for(r.config, "gemini-2.5-flash").name == "mini");
  CHECK(profile_for(r.config, "gpt-4.1").name == "openai");
  const auto& fallback = profile_for(r.config, "claude-sonnet-4");
  CHECK(fallback.name == "default");
  CHECK(fallback.models == std::vector<std::string>{"*"});
  CHECK(profile_named(r.config, "openai") != nullptr);
  CHECK(profile_named(r.config, "nope") == nullptr);
}

TEST_CASE("profile_for with a chosen name: the named profile, off, or the model's") {
  LoadResult r = load_string(R"(
profiles:
  - name: lean
    models: ["never-*"]
  - name: all
    models: ["*"]
)");
  REQUIRE(r.ok());
  CHECK(profile_for(r.config, "gpt-4o", "lean").name == "lean");
  CHECK(profile_for(r.config, "gpt-4o", "").name == "all");
  const auto& off = profile_for(r.config, "gpt-4o", kOffProfile);
  CHECK(off.name == "off");
  CHECK_FALSE(off.enabled);
  CHECK(profile_for(r.config, "gpt-4o", "nope").name == "all");  // unknown: the model's (the filter answers 400 first)
}

TEST_CASE("profile_for on the embedded default uses its default profile for any model") {
  Config cfg = default_config();
  CHECK(&profile_for(cfg, "anything") == &cfg.profiles.front());
}

TEST_CASE("price_for: first matching glob, or none") {
  LoadResult r = load_string(R"(
prices:
  - {model: "gpt-4o-mini*", input: 0.15, cached_input: 0.075, output: 0.6}
  - {model: "gpt-4o*", input: 2.5, cached_input: 1.25, output: 10}
)");
  REQUIRE(r.ok());
  REQUIRE(price_for(r.config, "gpt-4o-mini") != nullptr);
  CHECK(price_for(r.config, "gpt-4o-mini")->input == doctest::Approx(0.15));
  CHECK(price_for(r.config, "gpt-4o-mini")->cache_write == 0);
  CHECK(price_for(r.config, "gpt-4o")->output == doctest::Approx(10));
  CHECK(price_for(r.config, "claude") == nullptr);
}
