// The two building blocks: the top-level JSON member scanner and the SSE
// event splitter.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "json/json_scan.hpp"
#include "json/sse.hpp"
#include "test_util.hpp"

using namespace td::json;
using td::usage_test::for_each_split;
using td::usage_test::read_fixture;

TEST_CASE("json scan: top-level members with exact spans, nested and quoted braces ignored") {
  std::string j = R"( { "a" : 1 , "s":"x\"}{,\\", "o":{"usage":null,"b":[1,{"c":"}"}]}, "usage" :null } )";
  auto ms = top_level_members(j);
  REQUIRE(ms.size() == 4);
  CHECK(ms[0].key == "a");
  CHECK(ms[0].value == "1");
  CHECK(ms[1].key == "s");
  CHECK(ms[1].value == R"("x\"}{,\\")");
  CHECK(ms[2].key == "o");
  CHECK(ms[2].value == R"({"usage":null,"b":[1,{"c":"}"}]})");
  CHECK(ms[3].key == "usage");
  CHECK(ms[3].value == "null");
  CHECK(j[ms[3].sep_pos] == ',');
  CHECK(j.substr(ms[3].key_pos, 7) == "\"usage\"");
  CHECK(j[ms[0].sep_pos] == '{');
  CHECK(top_level_value(j, "usage") == "null");
  CHECK(top_level_value(j, "b").empty());
}

TEST_CASE("json scan: fed byte by byte it finds what it finds in one piece") {
  std::string body = read_fixture("wire/gemini-generatecontent-thinking.json");
  for (std::size_t k : {1u, 2u, 3u, 7u, 64u, 100000u}) {
    JsonTopLevelScanner s({"usageMetadata", "modelVersion"});
    for (std::size_t i = 0; i < body.size(); i += k) s.feed(std::string_view(body).substr(i, k));
    CHECK(s.complete());
    REQUIRE(s.find("usageMetadata"));
    CHECK(s.find("usageMetadata")->value == top_level_value(body, "usageMetadata"));
    CHECK(s.find("modelVersion")->value == "\"gemini-3-pro-preview\"");
    CHECK_FALSE(s.find("candidates"));  // not captured
  }
}

TEST_CASE("json scan: nested values skipped 16 bytes at a time keep exact spans and captures") {
  // Long runs of indentation, commas and numbers inside nested values, with
  // quoted brackets, as a pretty-printed response has them.
  const std::string usage =
      "{\n      \"prompt_tokens\": 19,      \"completion_tokens\": 10,\n      \"details\": {\n"
      "        \"cached_tokens\": 0,                \"audio_tokens\": [1, 2, 3,    4]\n      }\n    }";
  const std::string choices =
      "[\n    {\n      \"index\": 0,\n      \"message\": {\"content\": \"a ] } { [ , b\"},"
      "                                  \"finish_reason\": \"stop\"\n    }\n  ]";
  const std::string body = "{\n  \"choices\": " + choices + ",\n  \"usage\": " + usage + "   ,\n  \"model\": \"m\"\n}";
  for (std::size_t k : {1u, 5u, 15u, 16u, 17u, 31u, 100000u}) {
    CAPTURE(k);
    JsonTopLevelScanner s({"usage", "choices"}, /*record_all=*/true);
    for (std::size_t i = 0; i < body.size(); i += k) s.feed(std::string_view(body).substr(i, k));
    CHECK(s.complete());
    REQUIRE(s.find("usage"));
    CHECK(s.find("usage")->value == usage);
    CHECK(body.substr(s.find("usage")->value_pos, s.find("usage")->value_end - s.find("usage")->value_pos) == usage);
    REQUIRE(s.find("choices"));
    CHECK(s.find("choices")->value == choices);
    REQUIRE(s.members().size() == 3);
  }
}

TEST_CASE("json scan: escapes inside nested strings at every offset of a 16-byte block") {
  // An escaped quote, an escaped backslash before a closing quote, and quoted
  // brackets, shifted through every position of the block walk and cut into
  // pieces of every small size: an escape split from its byte must not end a
  // string, and an escaped backslash must not escape the quote after it.
  const std::string nested = R"({"t":"a\"]}\\","u":["\\\"[{","\"",{"v":"\\"}],"w":"}\\\\"})";
  for (std::size_t pad = 0; pad < 17; ++pad) {
    const std::string body = R"({"p":")" + std::string(pad, 'x') + R"(","usage":)" + nested + R"(,"z":1})";
    for (std::size_t k : {1u, 2u, 3u, 5u, 15u, 16u, 17u, 100000u}) {
      CAPTURE(pad);
      CAPTURE(k);
      JsonTopLevelScanner s({"usage"}, /*record_all=*/true);
      for (std::size_t i = 0; i < body.size(); i += k) s.feed(std::string_view(body).substr(i, k));
      CHECK(s.complete());
      REQUIRE(s.find("usage"));
      CHECK(s.find("usage")->value == nested);
      CHECK(s.find("usage")->value_end == body.size() - std::string_view(R"(,"z":1})").size());
      REQUIRE(s.members().size() == 3);
      CHECK(s.members()[2].key == "z");
    }
  }
}

TEST_CASE("json scan: not an object, or broken, reports nothing") {
  for (const char* bad : {"", "[1]", "\"x\"", "{\"a\" 1}", "{\"a\":1,}", "{\"a\":}", "{\"a\":1]", "{\"a\":1"}) {
    CAPTURE(bad);
    CHECK(top_level_members(bad).empty());
  }
  CHECK(top_level_members("{}").empty());
  JsonTopLevelScanner s;
  CHECK(s.feed("{} trailing") == 2);
  CHECK(s.complete());
}

TEST_CASE("json scan: capture cap drops an oversized value") {
  JsonTopLevelScanner s({"big", "small"}, false, 16);
  s.feed(R"({"big":"0123456789abcdefghij","small":[1,2]})");
  REQUIRE(s.find("big"));
  CHECK(s.find("big")->truncated);
  CHECK(s.find("small")->value == "[1,2]");
}

namespace {
struct Seen {
  std::string raw, name, data;
  bool has_data, continuation, overflow, incomplete;
};
std::vector<Seen> split_all(const std::vector<std::string_view>& pieces, std::size_t max = 1 << 20) {
  SseSplitter sp(max);
  std::vector<Seen> out;
  auto sink = [&](const SseEvent& e) {
    out.push_back({std::string(e.raw), std::string(e.name), std::string(e.data), e.has_data, e.continuation, e.overflow,
                   e.incomplete});
  };
  for (auto p : pieces) sp.feed(p, sink);
  sp.finish(sink);
  return out;
}
std::string joined_raw(const std::vector<Seen>& evs) {
  std::string s;
  for (const auto& e : evs) s += e.raw;
  return s;
}
}  // namespace

TEST_CASE("sse: fields, line endings, comments and multi-line data") {
  std::string s =
      "event: message_start\r\ndata: {\"a\":1}\r\n\r\n"
      ": comment\n\n"
      "data:first\ndata: second\nid: 3\n\n"
      "data: cr\r\r"
      "event:x\ndata";
  auto evs = split_all({s});
  REQUIRE(evs.size() == 5);
  CHECK(evs[0].name == "message_start");
  CHECK(evs[0].data == "{\"a\":1}");
  CHECK(evs[0].raw == "event: message_start\r\ndata: {\"a\":1}\r\n\r\n");
  CHECK_FALSE(evs[1].has_data);
  CHECK(evs[2].data == "first\nsecond");
  CHECK(evs[3].data == "cr");
  CHECK(evs[4].incomplete);
  CHECK(evs[4].name == "x");
  CHECK(evs[4].has_data);
  CHECK(evs[4].data.empty());
  CHECK(joined_raw(evs) == s);
}

TEST_CASE("sse: a \\r\\n split between its two bytes at an event's end") {
  auto evs = split_all({"data: a\r\n\r", "\ndata: b\r", "\n\r\n"});
  REQUIRE(evs.size() == 3);
  CHECK(evs[0].raw == "data: a\r\n\r");  // handed over at once, not held for the "\n"
  CHECK(evs[1].continuation);
  CHECK(evs[1].raw == "\n");
  CHECK(evs[2].data == "b");
  CHECK(evs[2].raw == "data: b\r\n\r\n");
}

TEST_CASE("sse: every recording splits into the same events however it is cut") {
  for (const char* f : {"wire/anthropic-stream-thinking.sse", "wire/gemini-stream-vertex-verbatim.sse",
                        "wire/openai-chat-stream-include-usage.sse"}) {
    CAPTURE(f);
    std::string s = read_fixture(f);
    auto whole = split_all({s});
    std::vector<std::string> want;
    for (const auto& e : whole) want.push_back(e.name + "|" + e.data);
    for_each_split(s, [&](const std::vector<std::string_view>& pieces, const std::string& how) {
      CAPTURE(how);
      auto evs = split_all(pieces);
      CHECK(joined_raw(evs) == s);
      std::vector<std::string> got;
      for (const auto& e : evs)
        if (!e.continuation) got.push_back(e.name + "|" + e.data);
      CHECK(got == want);
    });
  }
}

TEST_CASE("sse: an event over the cap is relayed in pieces, then framing resumes") {
  std::string big(100, 'x');
  std::string s = "data: " + big + "\ndata: more\n\ndata: small\n\n";
  for (std::size_t k : {1u, 10u, 1000u}) {
    auto evs = split_all(td::usage_test::fixed_split(s, k), 32);
    CHECK(joined_raw(evs) == s);
    REQUIRE_FALSE(evs.empty());
    CHECK(evs.front().overflow);
    CHECK(evs.back().data == "small");
    CHECK_FALSE(evs.back().overflow);
  }
}
