// The include_usage exception to transparency: request-side injection and the
// response-side scrubber that removes exactly what the injection added.
#include <doctest/doctest.h>

#include <rapidjson/document.h>

#include <algorithm>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "json/json_scan.hpp"
#include "providers/openai_chat/include_usage.hpp"
#include "test_util.hpp"

using namespace td::providers;
namespace json = td::json;
using td::usage_test::for_each_split;
using td::usage_test::read_fixture;

namespace {

bool valid_json(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.data(), s.size());
  return !d.HasParseError();
}

std::string scrub(const std::vector<std::string_view>& pieces, OpenAiUsageScrubber* keep = nullptr) {
  OpenAiUsageScrubber s;
  std::string out;
  for (auto p : pieces) s.feed(p, out);
  s.finish(out);
  if (keep) *keep = std::move(s);
  return out;
}

// An independent oracle for the recordings: plain text edits that remove the
// `"usage":null` members and the usage-only event, knowing how these
// particular recordings spell them.
std::string naive_unusage(std::string s, const std::string& eol) {
  for (const char* pat : {",\"usage\":null", "\"usage\":null,"}) {
    for (std::size_t p; (p = s.find(pat)) != std::string::npos;) s.erase(p, std::strlen(pat));
  }
  std::size_t u = s.find("\"choices\":[],\"usage\":{");
  REQUIRE(u != std::string::npos);
  std::size_t begin = s.rfind("data: ", u);
  std::size_t end = s.find(eol + eol, u) + 2 * eol.size();
  s.erase(begin, end - begin);
  return s;
}

std::string with_eol(std::string_view s, const std::string& eol) {
  std::string out;
  for (char c : s) {
    if (c == '\n')
      out += eol;
    else
      out += c;
  }
  return out;
}

// What differs between two recordings of the same request: ids, timestamps
// and OpenAI's random-length "obfuscation" padding.
std::string normalise_ids(const std::string& s) {
  static const std::regex id(R"re("id":"[^"]*")re"), created(R"re("created":[0-9]+)re"),
      obf(R"re("obfuscation":"[^"]*")re");
  std::string out = std::regex_replace(s, id, R"("id":"ID")");
  out = std::regex_replace(out, created, R"("created":0)");
  return std::regex_replace(out, obf, R"("obfuscation":"PAD")");
}

const char* kIncludeUsageRecordings[] = {
    "wire/openai-chat-stream-include-usage.sse",
    "wire/openai-chat-stream-tool-calls-include-usage.sse",
    "wire/openai-chat-stream-text-include-usage.sse",
    "wire/openai-chat-stream-tool-calls-include-usage-verbatim.sse",
    "synth/openai-chat-stream-long.sse",
};

}  // namespace

// ------------------------------------------------------------ request side

TEST_CASE("inject: appended after the last member, every other byte kept") {
  std::string body = R"({"model":"gpt-5.1","messages":[{"role":"user","content":"hi"}],"stream":true})";
  auto r = inject_include_usage(body);
  REQUIRE(r.outcome == IncludeUsage::injected);
  CHECK(
      r.body ==
      R"({"model":"gpt-5.1","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}})");

  std::string pretty = "{\n  \"stream\": true,\n  \"model\": \"gpt-4o\"\n}\n";
  r = inject_include_usage(pretty);
  REQUIRE(r.outcome == IncludeUsage::injected);
  CHECK(r.body == "{\n  \"stream\": true,\n  \"model\": \"gpt-4o\",\"stream_options\":{\"include_usage\":true}\n}\n");
}

TEST_CASE("inject: an existing stream_options object is extended, not replaced") {
  struct Case {
    const char* in;
    IncludeUsage outcome;
    const char* out;
  } cases[] = {
      {R"({"stream":true,"stream_options":{}})", IncludeUsage::injected,
       R"({"stream":true,"stream_options":{"include_usage":true}})"},
      {R"({"stream":true,"stream_options":{ }})", IncludeUsage::injected,
       R"({"stream":true,"stream_options":{"include_usage":true }})"},
      {R"({"stream":true,"stream_options":{"include_obfuscation":false},"n":1})", IncludeUsage::injected,
       R"({"stream":true,"stream_options":{"include_obfuscation":false,"include_usage":true},"n":1})"},
      {R"({"stream_options": {"include_usage": false}, "stream": true})", IncludeUsage::injected,
       R"({"stream_options": {"include_usage": true}, "stream": true})"},
      {R"({"stream":true,"stream_options":null})", IncludeUsage::injected,
       R"({"stream":true,"stream_options":{"include_usage":true}})"},
      {R"({"stream":true,"stream_options":{"include_usage":true}})", IncludeUsage::client_asked, ""},
      {R"({"stream": true, "stream_options": {"include_usage" : true}})", IncludeUsage::client_asked, ""},
      {R"({"stream":false})", IncludeUsage::not_streaming, ""},
      {R"({"model":"x","messages":[]})", IncludeUsage::not_streaming, ""},
      {R"({"stream":"true"})", IncludeUsage::not_streaming, ""},
      {R"({"stream":true,"stream_options":[1]})", IncludeUsage::unsupported, ""},
      {R"({"stream":true,"stream_options":{"include_usage":"yes"}})", IncludeUsage::unsupported, ""},
      {R"([{"stream":true}])", IncludeUsage::unsupported, ""},
      {R"({"stream":true,"messages":[)", IncludeUsage::unsupported, ""},
      {"", IncludeUsage::unsupported, ""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.in);
    auto r = inject_include_usage(c.in);
    CHECK(static_cast<int>(r.outcome) == static_cast<int>(c.outcome));
    if (c.outcome == IncludeUsage::injected) {
      CHECK(r.body == c.out);
      CHECK(valid_json(r.body));
    }
  }
}

TEST_CASE("inject: the recorded request without include_usage becomes the recorded one with it") {
  std::string rec = read_fixture("wire/openai-chat-stream.request.json");
  std::string body(json::top_level_value(rec, "body"));
  REQUIRE_FALSE(body.empty());
  auto r = inject_include_usage(body);
  REQUIRE(r.outcome == IncludeUsage::injected);
  REQUIRE(valid_json(r.body));
  rapidjson::Document d;
  d.Parse(r.body.data(), r.body.size());
  CHECK(d["stream_options"]["include_usage"].GetBool());
  // Removing the added member gives the original bytes back.
  std::string added = R"(,"stream_options":{"include_usage":true})";
  std::string back = r.body;
  back.erase(back.find(added), added.size());
  CHECK(back == body);

  std::string asked = read_fixture("wire/openai-chat-stream-include-usage.request.json");
  CHECK(inject_include_usage(json::top_level_value(asked, "body")).outcome == IncludeUsage::client_asked);
}

// ------------------------------------------------------------ response side

TEST_CASE("scrub: the include_usage recording becomes the no-usage recording's shape") {
  std::string with = read_fixture("wire/openai-chat-stream-include-usage.sse");
  std::string without = read_fixture("wire/openai-chat-stream.sse");
  OpenAiUsageScrubber s;
  std::string out = scrub({with}, &s);
  // Same model and prompt recorded twice: identical once ids, timestamps and
  // the random padding are masked, including where every member sits.
  CHECK(normalise_ids(out) == normalise_ids(without));
  CHECK(out.find("usage") == std::string::npos);
  CHECK(s.removed_nulls() == 3);
  CHECK(s.removed_usage_chunk());
  CHECK(s.facts().usage() == Usage{33, 10, 0, 0, 0, true});
}

TEST_CASE("scrub: byte-exact over every recording, every split, three line-ending styles") {
  for (const char* file : kIncludeUsageRecordings) {
    for (std::string eol : {"\n", "\r\n", "\r"}) {
      CAPTURE(file);
      CAPTURE(eol.size());
      std::string in = with_eol(read_fixture(file), eol);
      std::string want = naive_unusage(in, eol);
      REQUIRE(want.find("usage") == std::string::npos);
      int failures = 0;
      for_each_split(in, [&](const std::vector<std::string_view>& pieces, const std::string& how) {
        if (scrub(pieces) != want && ++failures <= 3) FAIL_CHECK(how);
      });
      // Every single cut point (first and last 2 KiB of the long recording).
      for (std::size_t cut = 1; cut < in.size(); ++cut) {
        if (in.size() > 4096 && cut > 2048 && cut < in.size() - 2048) continue;
        std::string_view v = in;
        if (scrub({v.substr(0, cut), v.substr(cut)}) != want && ++failures <= 3) FAIL_CHECK("cut at " << cut);
      }
      CHECK(failures == 0);
    }
  }
}

TEST_CASE("scrub: usage is read from the removed chunk in every split") {
  for (const char* file : kIncludeUsageRecordings) {
    CAPTURE(file);
    std::string in = read_fixture(file);
    OpenAiUsageScrubber whole;
    scrub({in}, &whole);
    REQUIRE(whole.facts().usage().present);
    int failures = 0;
    for_each_split(in, [&](const std::vector<std::string_view>& pieces, const std::string& how) {
      OpenAiUsageScrubber s;
      scrub(pieces, &s);
      if (!(s.facts().usage() == whole.facts().usage()) && ++failures <= 3) FAIL_CHECK(how);
    });
    CHECK(failures == 0);
  }
}

TEST_CASE("scrub: holds back at most the event in progress") {
  std::string in = read_fixture("wire/openai-chat-stream-tool-calls-include-usage-verbatim.sse");
  std::size_t longest = 0;
  for (std::size_t p = 0, q; (q = in.find("\n\n", p)) != std::string::npos; p = q + 2)
    longest = std::max(longest, q + 2 - p);
  for (std::size_t k : {1u, 5u, 64u, 333u}) {
    OpenAiUsageScrubber s;
    std::string out;
    std::string_view v = in;
    for (std::size_t i = 0; i < v.size(); i += k) {
      s.feed(v.substr(i, k), out);
      CHECK(s.held_back() < longest);
      std::size_t upto = std::min(v.size(), i + k);
      if (v.substr(0, upto).ends_with("\n\n")) CHECK(s.held_back() == 0);
    }
  }
}

TEST_CASE("scrub: streams without the injected parts pass through unchanged") {
  for (const char* file : {"wire/openai-chat-stream.sse", "wire/gemini-stream-thinking.sse",
                           "wire/openai-error-model-not-found.json", "wire/gemini-stream-error-not-found.json"}) {
    CAPTURE(file);
    std::string in = read_fixture(file);
    for_each_split(in, [&](const std::vector<std::string_view>& pieces, const std::string& how) {
      CAPTURE(how);
      CHECK(scrub(pieces) == in);
    });
  }
}

TEST_CASE("scrub: a JSON error answered to the injected request passes through and is read") {
  std::string in = read_fixture("synth/openai-error-context-length.json");
  OpenAiUsageScrubber s;
  CHECK(scrub(td::usage_test::fixed_split(in, 7), &s) == in);
  CHECK(s.facts().error_json().find("context_length_exceeded") != std::string::npos);
}

TEST_CASE("scrub: member position and spacing variants") {
  struct Case {
    const char* in;
    const char* out;
  } cases[] = {
      // first member, spaced
      {"data: {\"usage\": null, \"id\":\"a\",\"choices\":[{\"index\":0}]}\n\n",
       "data: {\"id\":\"a\",\"choices\":[{\"index\":0}]}\n\n"},
      // middle, spaces around
      {"data: {\"id\":\"a\", \"usage\" : null , \"choices\":[]}\n\n", "data: {\"id\":\"a\" , \"choices\":[]}\n\n"},
      // last
      {"data: {\"id\":\"a\",\"choices\":[{\"delta\":{}}],\"usage\":null}\n\n",
       "data: {\"id\":\"a\",\"choices\":[{\"delta\":{}}]}\n\n"},
      // a "usage":null inside a nested object or a string is not ours
      {"data: {\"choices\":[{\"delta\":{\"content\":\"\\\"usage\\\":null\"},\"usage\":null}]}\n\n",
       "data: {\"choices\":[{\"delta\":{\"content\":\"\\\"usage\\\":null\"},\"usage\":null}]}\n\n"},
      // usage-only chunk from servers that send choices null or no choices
      {"data: {\"id\":\"a\",\"choices\":null,\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}\n\ndata: "
       "[DONE]\n\n",
       "data: [DONE]\n\n"},
      {"data: {\"id\":\"a\",\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n",
       "data: [DONE]\n\n"},
      // usage on a chunk that carries choices would have been sent anyway
      {"data: {\"choices\":[{\"index\":0,\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1}}\n\n",
       "data: {\"choices\":[{\"index\":0,\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1}}\n\n"},
      // comments, other fields and an unterminated tail are relayed as they are
      {": keep-alive\n\nid: 7\ndata: {\"usage\":null}\n\ndata: {\"x\":1}",
       ": keep-alive\n\nid: 7\ndata: {}\n\ndata: {\"x\":1}"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.in);
    for_each_split(c.in, [&](const std::vector<std::string_view>& pieces, const std::string& how) {
      CAPTURE(how);
      CHECK(scrub(pieces) == c.out);
    });
  }
}
