// json_value_end against the parser: for every object and array in real
// request bodies (and in random JSON dense in brackets, quotes and escapes
// inside strings), at every offset, the end it finds is the parser's.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "bodies.hpp"
#include "providers/json_spans.hpp"
#include "providers/json_value_end.hpp"
#include "roundtrip.hpp"

using namespace td::providers::json;

namespace {

std::size_t check_every_container(const std::string& text) {
  Document d;
  REQUIRE(d.parse(text));
  std::size_t checked = 0;
  for (const Node& n : d.nodes()) {
    if (n.type != Type::Object && n.type != Type::Array) continue;
    REQUIRE(json_value_end(text, n.begin) == n.end);
    ++checked;
  }
  return checked;
}

std::string random_string(std::mt19937& rng) {
  static const std::string pieces[] = {"{", "}", "[", "]", "\\\"", "\\\\", "\\n", "x", ",", ":", "\\u005d", "é"};
  std::string s = "\"";
  for (std::size_t i = rng() % 12; i > 0; --i) s += pieces[rng() % std::size(pieces)];
  return s + "\"";
}

std::string random_value(std::mt19937& rng, int depth) {
  const unsigned pick = depth > 4 ? rng() % 3 : rng() % 6;
  if (pick == 0) return random_string(rng);
  if (pick == 1) return std::to_string(rng() % 1000);
  if (pick == 2) return "null";
  std::string out = pick == 3 ? "[" : "{";
  for (std::size_t i = rng() % 5; i > 0; --i) {
    if (out.size() > 1) out += ',';
    if (pick != 3) out += random_string(rng) + ":";
    out += random_value(rng, depth + 1);
  }
  return out + (pick == 3 ? "]" : "}");
}

}  // namespace

TEST_CASE("json_value_end: the parser's end for every object and array") {
  std::size_t checked = 0;
  for (const auto& file : td::providers::test::fixture_files("replay", ".json")) {
    const auto t = td::providers::test::load_trajectory(std::string(TD_FIXTURES) + "/" + file);
    checked += check_every_container(td::providers::test::chat_body(t, t.messages.size()));
  }
  std::mt19937 rng(5);
  for (int rep = 0; rep < 3000; ++rep) {
    // A prefix of spaces moves the value across the 64-byte windows.
    const std::string text = std::string(rng() % 70, ' ') + "[" + random_value(rng, 0) + "," +
                             random_value(rng, 0) + "]";
    checked += check_every_container(text);
  }
  CHECK(checked > 20000);
}

TEST_CASE("json_value_end: no end") {
  CHECK(json_value_end("[1,2", 0) == std::string_view::npos);
  CHECK(json_value_end("{\"a\":\"]}\"", 0) == std::string_view::npos);
  CHECK(json_value_end("{\"a\\\"]}\"", 0) == std::string_view::npos);
  CHECK(json_value_end("]", 0) == std::string_view::npos);
  CHECK(json_value_end(std::string(100, '[') + std::string(99, ']'), 0) == std::string_view::npos);
  CHECK(json_value_end(std::string(100, '[') + std::string(100, ']'), 0) == 200);
}
