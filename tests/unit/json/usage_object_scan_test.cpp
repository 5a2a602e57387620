// The document-free usage reader against RapidJSON: whatever it reads, it
// reads as a RapidJSON document would; whatever it cannot, it declines.
#include <doctest/doctest.h>

#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <vector>

#include "json/json_scan.hpp"
#include "json/usage_object_scan.hpp"
#include "test_util.hpp"

using td::json::UsageObjectScan;
using td::usage_test::read_fixture;

namespace {

std::optional<std::int64_t> doc_count(const rapidjson::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) return std::nullopt;
  const auto& v = it->value;
  if (v.IsInt64()) return v.GetInt64();
  if (v.IsUint64()) return static_cast<std::int64_t>(v.GetUint64());
  if (v.IsDouble()) return static_cast<std::int64_t>(v.GetDouble());
  return std::nullopt;
}

std::optional<std::int64_t> doc_nested(const rapidjson::Value& obj, const char* parent, const char* key) {
  auto it = obj.FindMember(parent);
  if (it == obj.MemberEnd() || !it->value.IsObject()) return std::nullopt;
  return doc_count(it->value, key);
}

// Every key either reader could be asked for, top level and nested.
const std::vector<const char*> kKeys = {"prompt_tokens",
                                        "completion_tokens",
                                        "total_tokens",
                                        "input_tokens",
                                        "output_tokens",
                                        "cache_read_input_tokens",
                                        "cache_creation_input_tokens",
                                        "promptTokenCount",
                                        "candidatesTokenCount",
                                        "cachedContentTokenCount",
                                        "thoughtsTokenCount",
                                        "a",
                                        "b",
                                        "x"};
const std::vector<std::pair<const char*, const char*>> kNested = {{"prompt_tokens_details", "cached_tokens"},
                                                                  {"completion_tokens_details", "reasoning_tokens"},
                                                                  {"input_tokens_details", "cached_tokens"},
                                                                  {"output_tokens_details", "reasoning_tokens"},
                                                                  {"o", "a"},
                                                                  {"o", "b"},
                                                                  {"a", "x"}};

void check_same_as_rapidjson(const std::string& json) {
  CAPTURE(json);
  UsageObjectScan scan(json);
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  const bool doc_ok = !doc.HasParseError() && doc.IsObject();
  if (!scan.ok()) return;  // declined: the caller asks RapidJSON
  REQUIRE(doc_ok);         // never reads what RapidJSON refuses
  for (const char* k : kKeys) {
    CAPTURE(k);
    CHECK(scan.count(k) == doc_count(doc, k));
  }
  for (const auto& entry : kNested) {
    const auto& p = entry.first;   // not a structured binding: clang 14's doctest
    const auto& k = entry.second;  // macros cannot capture one
    CAPTURE(p);
    CAPTURE(k);
    CHECK(scan.nested_count(p, k) == doc_nested(doc, p, k));
  }
}

}  // namespace

TEST_CASE("usage scan: every recorded usage object reads as RapidJSON reads it") {
  int read = 0;
  for (const char* f : {"wire/openai-chat-nonstream.json", "wire/openai-chat-nonstream-tool-calls.json",
                        "wire/anthropic-messages-tool-use.json", "wire/anthropic-messages-thinking.json",
                        "wire/gemini-generatecontent-thinking.json", "wire/gemini-generatecontent-functioncall.json"}) {
    CAPTURE(f);
    std::string body = read_fixture(f);
    for (const char* key : {"usage", "usageMetadata"}) {
      std::string u(td::json::top_level_value(body, key));
      if (u.empty()) continue;
      CHECK(UsageObjectScan(u).ok());
      check_same_as_rapidjson(u);
      ++read;
    }
  }
  CHECK(read >= 4);
}

TEST_CASE("usage scan: numbers, nesting, duplicates and odd values as RapidJSON has them") {
  for (const char* j : {
           R"({"prompt_tokens": 33, "completion_tokens": 10, "total_tokens": 43})",
           R"( {"prompt_tokens":-5,"completion_tokens":0,"input_tokens":1.9,"output_tokens":2e3} )",
           R"({"prompt_tokens": 18446744073709551615, "completion_tokens": 9223372036854775807})",
           R"({"prompt_tokens": 1E2, "completion_tokens": -0, "total_tokens": 0.5e-3})",
           R"({"a": 1, "a": 2, "b": null, "x": "7", "o": {"a": 3, "a": 4, "b": true}})",
           R"({"o": null, "o": {"a": 1}})",
           R"({"o": {"a": {"a": 1}, "b": [1, {"a": 2}, [3]]}, "a": [], "b": {}})",
           R"({"prompt_tokens_details": {"cached_tokens": 12, "audio_tokens": 0}, "prompt_tokens": 40})",
           R"({"x": "a \"quoted\" \\ \/ \b\f\n\r\t \u00e9 string", "a": 5})",
           R"({"a":
               5	,"b":6})",
           "{}",
       }) {
    check_same_as_rapidjson(j);
    CHECK(UsageObjectScan(j).ok());
  }
}

TEST_CASE("usage scan: malformed or unusual objects are declined, never misread") {
  for (const char* j : {
           "",
           "[1]",
           "{",
           "{\"a\":1,}",
           "{\"a\" 1}",
           "{\"a\":}",
           "{\"a\":01}",
           "{\"a\":1.}",
           "{\"a\":.5}",
           "{\"a\":1e}",
           "{\"a\":+1}",
           "{\"a\":tru}",
           "{\"a\":\"x}",
           "{\"a\":1} x",
           "{\"a\":[1,]}",
           "{\"a\\u0062\":1}",  // escaped key: RapidJSON decodes it
           "{\"a\":\"\x01\"}",  // control character in a string
           "{\"a\":\"\\q\"}",   // bad escape
           "{\"a\":1e999}",     // out of range
           "{\"a\":NaN}",
       }) {
    CAPTURE(j);
    CHECK_FALSE(UsageObjectScan(j).ok());
    check_same_as_rapidjson(j);
  }
  std::string deep = "{\"a\":" + std::string(40, '[') + std::string(40, ']') + "}";
  CHECK_FALSE(UsageObjectScan(deep).ok());
  std::string many = "{";
  for (int i = 0; i < 60; ++i) many += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  many += "}";
  CHECK_FALSE(UsageObjectScan(many).ok());  // more members than it keeps: RapidJSON reads it
}
