#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <random>

#include "json/json_spans.hpp"

using namespace td::json;

namespace {

// The oracle for decode_string: RapidJSON's reading of the same string
// token. RapidJSON refuses a lone surrogate; we write U+FFFD for it.
std::string rapidjson_decoded(const std::string& body) {
  std::string ref = body;
  for (std::size_t p = ref.find(R"(\ud800)"); p != std::string::npos; p = ref.find(R"(\ud800)", p))
    ref.replace(p, 6, R"(\ufffd)");
  const std::string token = "\"" + ref + "\"";
  rapidjson::Document rd;
  rd.Parse(token.data(), token.size());
  REQUIRE_MESSAGE(!rd.HasParseError(), token);
  return std::string(rd.GetString(), rd.GetStringLength());
}

}  // namespace

TEST_CASE("json: spans of values, keys and members") {
  std::string text = R"( {"a" : [1, -2.5e+3, "x\"y"], "b":{"c":null,"d":true}, "e\u0041":false } )";
  Document d;
  REQUIRE(d.parse(text));
  const auto root = d.root();
  CHECK(d.node(root).type == Type::Object);
  CHECK(d.node(root).count == 3);
  auto a = d.find(root, "a");
  REQUIRE(a != kNone);
  CHECK(d.raw(a) == R"([1, -2.5e+3, "x\"y"])");
  CHECK(d.raw_member(a) == R"("a" : [1, -2.5e+3, "x\"y"])");
  auto s = d.node(d.node(d.node(a).first).next).next;
  CHECK(d.node(s).type == Type::String);
  CHECK(d.node(s).escaped);
  CHECK(d.str(s) == "x\"y");
  CHECK(d.str_is(s, "x\"y"));
  auto ea = d.find(root, "eA");  // escaped key
  REQUIRE(ea != kNone);
  CHECK(d.node(ea).type == Type::False);
  CHECK(d.key(ea) == "eA");
  CHECK(d.find(root, "zzz") == kNone);
}

TEST_CASE("json: rejects what RFC 8259 rejects") {
  for (std::string bad :
       {"",        " ",     "{",          "}",           "{\"a\":}",   "{\"a\" 1}",  "{\"a\":1,}", "[1,]",
        "[01]",    "[1.]",  "[.5]",       "[-]",         "[1e]",       "[+1]",       "[tru]",      "[nul]",
        "{'a':1}", "{a:1}", "[\"\\x\"]",  "[\"\\u12\"]", "[\"a\nb\"]", "[\"a\tb\"]", "[\"abc]",    "{\"a\":1} x",
        "[1] [2]", "[NaN]", "[Infinity]", "{\"a\":1}}",  "[\"\\\"]"}) {
    Document d;
    std::string err;
    CHECK_MESSAGE(!d.parse(bad, &err), bad);
    CHECK_MESSAGE(!err.empty(), bad);
  }
  Document d;
  CHECK(d.parse("[[[[1]]]]", nullptr, 8));
  CHECK_FALSE(d.parse(std::string(600, '[') + std::string(600, ']')));
}

TEST_CASE("json: agrees with RapidJSON on valid documents") {
  for (std::string ok : {"0", "-0", "1.5E-7", "\"\"", "[]", "{}", " [ ] ", "{\"\":\"\"}", "[\"\\/\\b\\f\\n\\r\\t\"]",
                         "[\"\\ud83d\\ude00 caf\xC3\xA9\"]", "{\"a\":{\"b\":[{\"c\":[null,true,false]}]}}"}) {
    Document d;
    CHECK_MESSAGE(d.parse(ok), ok);
    rapidjson::Document rd;
    rd.Parse(ok.data(), ok.size());
    CHECK_MESSAGE(!rd.HasParseError(), ok);
  }
}

TEST_CASE("json: decoding escapes, surrogates and lone surrogates") {
  std::string out;
  decode_string(R"(a\"b\\c\/d\n\u00e9\ud83d\ude00\u2028)", out);
  CHECK(out == "a\"b\\c/d\n\xC3\xA9\xF0\x9F\x98\x80\xE2\x80\xA8");
  out.clear();
  decode_string(R"(x\ud800y\udc00z)", out);  // lone halves become U+FFFD
  CHECK(out == "x\xEF\xBF\xBDy\xEF\xBF\xBDz");
}

TEST_CASE("json: decoding agrees with RapidJSON for each escape at every offset, alone and in runs") {
  const std::vector<std::string> escapes = {R"(\n)",     R"(\")",     R"(\\)",           R"(\/)",     R"(\t)",
                                            R"(\u00e9)", R"(\u2028)", R"(\ud83d\ude00)", R"(\ud800)", "\xC3\xA9"};
  int checked = 0;
  for (std::size_t len = 0; len <= 40; ++len) {
    for (std::size_t at = 0; at <= len; ++at) {
      for (const std::string& e : escapes) {
        for (int copies : {1, 2, 17}) {
          std::string body(at, 'a');
          for (int c = 0; c < copies; ++c) body += e;
          body += std::string(len - at, 'b');
          std::string out = "keep:";
          decode_string(body, out);
          CHECK_MESSAGE(out == "keep:" + rapidjson_decoded(body), body);
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 20000);
}

TEST_CASE("json: decoding agrees with RapidJSON on long escape-dense strings, escapes at every window offset") {
  // Long strings decode 64 bytes at a time: escapes at each offset of a
  // window, straddling its end, consuming backslashes (\\) and the next
  // window's first bytes (\u escapes, surrogate pairs).
  const std::vector<std::string> pieces = {
      R"(\n)",           R"(\")",           R"(\\)",     R"(\\\\)",  R"(\/)", R"(\t)", R"(\u00e9)",
      R"(\ud83d\ude00)", R"(\ud800\u0041)", R"(\ud800)", "\xC3\xA9", "x",     "yz",    "0123456789abcdef"};
  auto check = [](const std::string& body) {
    std::string out = "keep:";
    decode_string(body, out);
    REQUIRE_MESSAGE(out == "keep:" + rapidjson_decoded(body), body);
  };
  int checked = 0;
  for (std::size_t at = 0; at < 150; ++at)
    for (const std::string& e : pieces)
      for (std::size_t tail : {0, 1, 63, 64, 65, 140, 200}) {
        check(std::string(at, 'a') + e + std::string(tail, 'b'));
        check(std::string(at, 'a') + e + e + e + std::string(tail, 'b'));
        checked += 2;
      }
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
  for (int rep = 0; rep < 3000; ++rep) {
    std::string body;
    const std::size_t len = rng() % 700;
    while (body.size() < len) body += pieces[pick(rng)];
    check(body);
    ++checked;
  }
  CHECK(checked > 20000);
}

TEST_CASE("json: append_json_string finds each byte to escape wherever it sits in a 16-byte block") {
  // The plain runs are skipped 16 bytes at a time: put every kind of byte
  // that ends a run at every offset of a long string, and check the result
  // against the short-string cases above.
  const std::vector<std::pair<std::string, std::string>> cases = {{"\"", "\\\""},
                                                                  {"\\", "\\\\"},
                                                                  {"\n", "\\n"},
                                                                  {std::string(1, '\x01'), "\\u0001"},
                                                                  {"\x7f", "\x7f"},
                                                                  {"\xC3\xA9", "\xC3\xA9"},
                                                                  {"\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80"},
                                                                  {"\x80", "\xEF\xBF\xBD"},
                                                                  {"\xE2\x9C", "\xEF\xBF\xBD\xEF\xBF\xBD"}};
  for (const auto& entry : cases) {
    const auto& raw = entry.first;       // not a structured binding: clang 14's doctest
    const auto& escaped = entry.second;  // macros cannot capture one
    for (std::size_t at = 0; at < 40; ++at) {
      CAPTURE(at);
      CAPTURE(escaped);
      const std::string before(at, 'a'), after(40 - at, 'b');
      CHECK(json_string(before + raw + after) == "\"" + before + escaped + after + "\"");
    }
  }
}

TEST_CASE("json: append_json_string escapes what must be and keeps UTF-8 whole") {
  CHECK(json_string("plain") == "\"plain\"");
  CHECK(json_string("q\"b\\n\nr\rt\tb\bf\f") == R"("q\"b\\n\nr\rt\tb\bf\f")");
  CHECK(json_string(std::string("\x00\x01\x1f\x7f", 4)) == "\"\\u0000\\u0001\\u001f\x7f\"");
  CHECK(json_string("caf\xC3\xA9 \xF0\x9F\x98\x80") == "\"caf\xC3\xA9 \xF0\x9F\x98\x80\"");
  // Invalid UTF-8 never reaches the wire: a cut sequence, a stray continuation
  // byte, an overlong form and an encoded surrogate each become U+FFFD.
  CHECK(json_string("ab\xE2\x9C") == "\"ab\xEF\xBF\xBD\xEF\xBF\xBD\"");
  CHECK(json_string("\x80x") == "\"\xEF\xBF\xBDx\"");
  CHECK(json_string("\xC0\xAF") == "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");
  CHECK(json_string("\xED\xA0\x80") == "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
  // Whatever the bytes, the output parses and decodes back (valid input unchanged).
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  std::string encoded = json_string(all);
  Document d;
  REQUIRE(d.parse(encoded));
  rapidjson::Document rd;
  rd.Parse<rapidjson::kParseValidateEncodingFlag>(encoded.data(), encoded.size());
  CHECK_FALSE(rd.HasParseError());
  std::string valid = "tab\t \"q\" \\ \xE2\x80\xA8 \xF0\x9D\x84\x9E end";
  std::string enc = json_string(valid);
  REQUIRE(d.parse(enc));
  CHECK(d.str(d.root()) == valid);
}

TEST_CASE("json: string bytes that are not UTF-8 are accepted and kept as they came (the one leniency)") {
  const std::string bad[] = {"\x80", "\xC3(", "\xED\xA0\x80", "\xF8\x88\x80\x80\x80", "\xFF\xFE", "ok \xE2\x9C"};
  for (const std::string& b : bad) {
    const std::string text = "{\"s\":\"" + b + "\",\"t\":[\"" + b + "\"]}";
    Document d;
    REQUIRE(d.parse(text));
    CHECK(d.str(d.find(0, "s")) == b);
    CHECK(d.raw(d.find(0, "s")) == "\"" + b + "\"");
    // Re-rendered, the same text is valid UTF-8: one U+FFFD per invalid byte.
    const std::string rendered = json_string(b);
    rapidjson::Document rd;
    rd.Parse<rapidjson::kParseValidateEncodingFlag>(rendered.data(), rendered.size());
    CHECK_FALSE(rd.HasParseError());
  }
}
