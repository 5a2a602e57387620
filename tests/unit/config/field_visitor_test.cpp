// The generic field reader: any struct with a visit() over supported field
// types is configurable, which is how pruning::Profile fields reach YAML.
#include <doctest/doctest.h>

#include "config/yaml_fields.hpp"

using namespace td::config;
using namespace td::config::detail;

namespace {

// Stands in for a future Profile: one field of every supported type.
struct AllTypes {
  bool flag = false;
  int small = -1;
  unsigned count = 0;
  std::int64_t big_signed = 0;
  std::uint64_t big = 0;
  std::uint8_t tiny = 0;
  std::size_t window = 0;
  double ratio = 0;
  float weight = 0;
  std::string text;
  std::vector<std::string> list;
  std::uint32_t keep_ms = 0;
  std::uint64_t snippet_bytes = 0;

  template <class V>
  void visit(V&& v) {
    v("flag", flag);
    v("small", small);
    v("count", count);
    v("big_signed", big_signed);
    v("big", big);
    v("tiny", tiny);
    v("window", window);
    v("ratio", ratio);
    v("weight", weight);
    v("text", text);
    v("list", list);
    v("keep_ms", keep_ms);
    v("snippet_bytes", snippet_bytes);
  }
};

struct Read {
  AllTypes value;
  std::vector<ConfigError> errors;
};

Read read(const std::string& yaml) {
  Diagnostics d;
  d.file = "f.yaml";
  YAML::Node root = YAML::Load(yaml);
  Read out;
  MapFields fields(d, root, "p.");
  out.value.visit(fields);
  fields.finish();
  out.errors = d.errors;
  return out;
}

}  // namespace

TEST_CASE("every supported field type is read by name") {
  Read r = read(R"(flag: true
small: -7
count: 12
big_signed: -9000000000
big: 18446744073709551615
tiny: 255
window: 16
ratio: 1.2e-3
weight: 0.5
text: hello world
list: [a, "b c"]
keep_ms: 2m
snippet_bytes: 4KiB
)");
  REQUIRE(r.errors.empty());
  const AllTypes& v = r.value;
  CHECK(v.flag);
  CHECK(v.small == -7);
  CHECK(v.count == 12);
  CHECK(v.big_signed == -9'000'000'000);
  CHECK(v.big == 18446744073709551615ull);
  CHECK(v.tiny == 255);
  CHECK(v.window == 16);
  CHECK(v.ratio == doctest::Approx(0.0012));
  CHECK(v.weight == doctest::Approx(0.5));
  CHECK(v.text == "hello world");
  CHECK(v.list == std::vector<std::string>{"a", "b c"});
  CHECK(v.keep_ms == 120'000);
  CHECK(v.snippet_bytes == 4096);
}

TEST_CASE("absent keys keep the struct's defaults") {
  Read r = read("count: 3\n");
  REQUIRE(r.errors.empty());
  CHECK(r.value.count == 3);
  CHECK(r.value.small == -1);
  CHECK(r.value.list.empty());
}

TEST_CASE("each type's range and shape is enforced, every error reported") {
  Read r = read(R"(flag: 1
small: 3000000000
count: -1
big: 18446744073709551616
tiny: 256
ratio: .nan
text: [x]
list: {a: b}
keep_ms: 50 days
snippet_bytes: lots
unknown_field: 1
)");
  REQUIRE(r.errors.size() == 11);
  auto at = [&](int line, const char* text) {
    for (const auto& e : r.errors)
      if (e.line == line && e.reason.find(text) != std::string::npos) return true;
    return false;
  };
  CHECK(at(1, "p.flag: expected true or false, got '1'"));
  CHECK(at(2, "p.small: 3000000000 is out of range (-2147483648 to 2147483647)"));
  CHECK(at(3, "p.count: -1 is out of range (0 to 4294967295)"));
  CHECK(at(4, "p.big: 18446744073709551616 is out of range"));
  CHECK(at(5, "p.tiny: 256 is out of range (0 to 255)"));
  CHECK(at(6, "p.ratio: expected a number"));
  CHECK(at(7, "p.text: expected a string, got a list"));
  CHECK(at(8, "p.list: expected a list of strings, got a map"));
  CHECK(at(9, "p.keep_ms: invalid duration '50 days'"));
  CHECK(at(10, "p.snippet_bytes: expected a size"));
  CHECK(at(11, "p: unknown key 'unknown_field'"));
}

TEST_CASE("explicit bounds narrow a field's range") {
  Diagnostics d;
  YAML::Node root = YAML::Load("n: 11\nx: 0.5\n");
  MapFields f(d, root, "");
  unsigned n = 0;
  double x = 0;
  f("n", n, Bounds{1, 10});
  f("x", x, RealBounds{1, 2});
  f.finish();
  REQUIRE(d.errors.size() == 2);
  CHECK(d.errors[0].reason == "n: 11 is out of range (1 to 10)");
  CHECK(d.errors[1].reason == "x: 0.5 is out of range (1 to 2)");
  CHECK(n == 0);  // a bad value leaves the field as it was
}
