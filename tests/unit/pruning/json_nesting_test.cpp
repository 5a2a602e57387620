// The depth guard in front of every recursive JSON reader, and the strategy
// that reads tool-call arguments a second time: a million levels leave the
// part as it is instead of overflowing the stack.
#include <doctest/doctest.h>

#include <string>

#include "pruning/json_nesting.hpp"
#include "pruning/strategies/stale_assistant_text.hpp"

using namespace td::pruning;

namespace {
std::string nested(std::size_t depth, char open = '[', char close = ']') {
  return std::string(depth, open) + std::string(depth, close);
}
// The issue's reproduction: a deep first member, then a string worth snipping.
std::string deep_arguments(std::size_t depth) {
  return "{\"a\":" + nested(depth) + ",\"p\":\"" + std::string(300, 'x') + "\"}";
}
}  // namespace

TEST_CASE("json nesting: counts brackets outside strings only") {
  CHECK(json_nesting_within("", 0));
  CHECK(json_nesting_within("1", 0));
  CHECK_FALSE(json_nesting_within("[]", 0));
  CHECK(json_nesting_within("[]", 1));
  CHECK(json_nesting_within(R"({"a":[1,{"b":[]}]})", 4));
  CHECK_FALSE(json_nesting_within(R"({"a":[1,{"b":[]}]})", 3));
  CHECK(json_nesting_within(R"(["[[[[{{{{"])", 1));        // brackets in a string
  CHECK(json_nesting_within(R"(["\"[[[[\\", "x"])", 1));   // escaped quote, escaped backslash
  CHECK_FALSE(json_nesting_within(R"(["\\", [[]]])", 2));  // the string ends at \\"
  CHECK(json_nesting_within(R"(["unterminated [[[[)", 1));
  CHECK(json_nesting_within(nested(kMaxJsonNesting), kMaxJsonNesting));
  CHECK_FALSE(json_nesting_within(nested(kMaxJsonNesting + 1)));
}

TEST_CASE("json nesting: a million levels of arrays or objects are refused, in one pass") {
  CHECK_FALSE(json_nesting_within(nested(1'000'000)));
  std::string objects;
  for (int i = 0; i < 1'000'000; ++i) objects += "{\"k\":";
  objects += "1" + std::string(1'000'000, '}');
  CHECK_FALSE(json_nesting_within(objects));
}

TEST_CASE("stale assistant text: arguments nested a million deep are left as they are") {
  Profile p;
  const std::string shallow = deep_arguments(3);
  REQUIRE(snip_arguments(shallow, p) != shallow);  // the same shape, shallow, is snipped
  const std::string deep = deep_arguments(1'000'000);
  CHECK(snip_arguments(deep, p) == deep);
  CHECK_FALSE(snip_arguments_template(deep, p).cut);
  const std::string at_limit = deep_arguments(kMaxJsonNesting - 1);
  CHECK(snip_arguments(at_limit, p) != at_limit);  // the guard's limit still snips
}
