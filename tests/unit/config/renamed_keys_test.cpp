// Renamed profile keys (config/renamed_keys.hpp): an old name still loads,
// as the new one, with a deprecation warning at its place.
#include <doctest/doctest.h>

#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "config/load.hpp"
#include "config/renamed_keys.hpp"
#include "helpers.hpp"

using namespace td::config;
using detail::kRenamedProfileKeys;

namespace {

// Every field of a profile as text, by key.
struct FieldText {
  std::map<std::string, std::string> fields;
  template <class T>
  void operator()(std::string_view key, const T& v) {
    std::ostringstream s;
    if constexpr (std::is_same_v<T, std::vector<std::string>>)
      for (const auto& x : v) s << x << ",";
    else
      s << v;
    fields[std::string(key)] = s.str();
  }
};

std::map<std::string, std::string> fields_of(td::pruning::Profile p) {
  FieldText t;
  p.visit(t);
  return t.fields;
}

// A YAML value for each field that is not its built-in default.
struct NotDefault {
  std::map<std::string, std::string> values;
  template <class T>
  void operator()(std::string_view key, const T& v) {
    if constexpr (std::is_same_v<T, bool>)
      values[std::string(key)] = v ? "false" : "true";
    else if constexpr (std::is_integral_v<T>)
      values[std::string(key)] = std::to_string(v + 1);
    else if constexpr (std::is_same_v<T, std::vector<std::string>>)
      values[std::string(key)] = "[\"not a default\"]";
  }
};

std::string profile_yaml(const std::map<std::string, std::string>& keys) {
  std::string y = "profiles:\n  - name: p\n";
  for (const auto& [key, value] : keys) y += "    " + key + ": " + value + "\n";
  return y;
}

}  // namespace

TEST_CASE("renamed keys: every old name is a new name's value, with one warning each") {
  NotDefault wanted;
  td::pruning::Profile{}.visit(wanted);
  std::map<std::string, std::string> old_keys, new_keys;
  for (const auto& r : kRenamedProfileKeys) {
    const std::string value = wanted.values.at(std::string(r.names()[0]));
    old_keys[std::string(r.old_name)] = value;
    for (std::string_view name : r.names()) new_keys[std::string(name)] = value;
  }
  LoadResult by_old = load_string(profile_yaml(old_keys), "old.yaml");
  LoadResult by_new = load_string(profile_yaml(new_keys), "new.yaml");
  INFO(test::all_errors(by_old) << test::all_errors(by_new));
  REQUIRE(by_old.ok());
  REQUIRE(by_new.ok());
  CHECK(by_new.warnings.empty());
  const auto got = fields_of(by_old.config.profiles.at(0));
  CHECK(got == fields_of(by_new.config.profiles.at(0)));
  for (const auto& entry : new_keys) {
    const auto& key = entry.first;     // not a structured binding: clang 14's doctest
    const auto& value = entry.second;  // macros cannot capture one
    INFO(key);
    CHECK(got.at(key) != fields_of(td::pruning::Profile{}).at(key));  // the old key's value arrived
  }
  REQUIRE(by_old.warnings.size() == std::size(kRenamedProfileKeys));
  // One line per old key, at its line (the map above lists them sorted).
  int line = 3;
  for (const auto& [old_name, value] : old_keys) {
    const ConfigError& w = by_old.warnings.at(line - 3);
    INFO(format_error(w));
    CHECK(w.line == line++);
    CHECK(w.column == 5);
    CHECK(w.reason.find("profiles[0]." + old_name + ": deprecated name; use ") == 0);
  }
}

TEST_CASE("renamed keys: dedup_tool_outputs is identical_tool_outputs") {
  LoadResult r = load_string("profiles:\n  - name: a\n    dedup_tool_outputs: false\n", "t.yaml");
  INFO(test::all_errors(r));
  REQUIRE(r.ok());
  CHECK_FALSE(r.config.profiles.at(0).identical_tool_outputs);
  REQUIRE(r.warnings.size() == 1);
  CHECK(format_error(r.warnings[0]) ==
        "t.yaml:3:5: profiles[0].dedup_tool_outputs: deprecated name; use identical_tool_outputs");
  // In the map form of profiles too.
  LoadResult m = load_string("profiles:\n  a: {dedup_tool_outputs: false}\n", "t.yaml");
  REQUIRE(m.ok());
  CHECK_FALSE(m.config.profiles.at(0).identical_tool_outputs);
  REQUIRE(m.warnings.size() == 1);
  CHECK(m.warnings[0].reason == "profiles.a.dedup_tool_outputs: deprecated name; use identical_tool_outputs");
}

// Outputs an agent truncated itself are cut now; a config that listed their
// markers to leave them alone keeps doing so, and is told the new name.
TEST_CASE("renamed keys: stale_tool_outputs_skip_markers is stale_tool_outputs_saved_markers") {
  LoadResult r = load_string(
      "profiles:\n  - name: a\n    stale_tool_outputs_skip_markers: [\"<persisted-output>\", \" tokens truncated\"]\n",
      "t.yaml");
  INFO(test::all_errors(r));
  REQUIRE(r.ok());
  CHECK(r.config.profiles.at(0).stale_tool_outputs_saved_markers ==
        std::vector<std::string>{"<persisted-output>", " tokens truncated"});
  REQUIRE(r.warnings.size() == 1);
  CHECK(format_error(r.warnings[0]) ==
        "t.yaml:3:5: profiles[0].stale_tool_outputs_skip_markers: deprecated name; use "
        "stale_tool_outputs_saved_markers");
}

TEST_CASE("renamed keys: a key split in two sets both, with one warning") {
  LoadResult r = load_string("profiles:\n  - name: a\n    snippet_names: 4\n", "t.yaml");
  REQUIRE(r.ok());
  CHECK(r.config.profiles.at(0).stale_tool_outputs_names == 4);
  CHECK(r.config.profiles.at(0).stale_assistant_text_names == 4);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].reason ==
        "profiles[0].snippet_names: deprecated name; use stale_tool_outputs_names and stale_assistant_text_names");
}

TEST_CASE("renamed keys: old and new name both given is an error; a bad value names the key as written") {
  test::expect_one_error("profiles:\n  - name: a\n    identical_tool_outputs: true\n    dedup_tool_outputs: false\n", 4,
                         5,
                         "profiles[0].dedup_tool_outputs: the old name of identical_tool_outputs, which is given "
                         "too; remove 'dedup_tool_outputs'");
  test::expect_one_error("profiles:\n  - name: a\n    dedup_min_bytes: lots\n", 3, 22,
                         "profiles[0].dedup_min_bytes: expected a size");
}

TEST_CASE("renamed keys: every new name is a profile field, no old one is, and units agree") {
  const auto fields = fields_of(td::pruning::Profile{});
  auto unit = [](std::string_view k) { return k.ends_with("_bytes") ? "bytes" : k.ends_with("_ms") ? "ms" : ""; };
  for (const auto& r : kRenamedProfileKeys) {
    INFO(r.old_name);
    CHECK(fields.count(std::string(r.old_name)) == 0);
    for (std::string_view name : r.names()) {
      CHECK(fields.count(std::string(name)) == 1);
      // *_bytes and *_ms decide which units a value may carry.
      CHECK(std::string_view(unit(name)) == unit(r.old_name));
    }
  }
}
