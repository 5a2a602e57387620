// Every recorded provider response (tests/fixtures/wire, copied from real
// cassettes) and every synthesized shape (tests/fixtures/synth/usage) parsed
// with the exact numbers the provider reported, whole and in every split.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "providers/usage_reader.hpp"
#include "test_util.hpp"

using namespace td::providers;
using td::usage_test::for_each_split;
using td::usage_test::read_fixture;

namespace {

struct Expect {
  const char* file;
  Api api;
  const char* content_type;
  Usage usage;  // present=false: the body reports none
  const char* model;
};

Usage U(std::uint64_t prompt, std::uint64_t completion, std::uint64_t cached_read = 0, std::uint64_t cache_write = 0,
        std::uint64_t reasoning = 0) {
  return Usage{prompt, completion, cached_read, cache_write, reasoning, true};
}
const Usage kNone{};
constexpr const char* kJson = "application/json";
constexpr const char* kSse = "text/event-stream; charset=utf-8";

// Numbers read off the recordings by hand (see usage.hpp for the rules):
// Gemini completion = candidatesTokenCount + thoughtsTokenCount; Anthropic
// prompt = input_tokens + cache reads + cache writes.
const std::vector<Expect> kWire = {
    {"wire/openai-chat-nonstream.json", Api::openai_chat, kJson, U(33, 10), "gpt-5.1-2025-11-13"},
    {"wire/openai-chat-nonstream-tool-calls.json", Api::openai_chat, kJson, U(71, 46), "gpt-4o-2024-08-06"},
    {"wire/openai-chat-nonstream-tool-calls-verbatim.json", Api::openai_chat, kJson, U(161, 24), "gpt-5.1-2025-11-13"},
    {"wire/openai-chat-stream.sse", Api::openai_chat, kSse, kNone, "gpt-5.1-2025-11-13"},
    {"wire/openai-chat-stream-include-usage.sse", Api::openai_chat, kSse, U(33, 10), "gpt-5.1-2025-11-13"},
    {"wire/openai-chat-stream-tool-calls-include-usage.sse", Api::openai_chat, kSse, U(364, 40), "gpt-4o-2024-08-06"},
    {"wire/openai-chat-stream-text-include-usage.sse", Api::openai_chat, kSse, U(448, 49), "gpt-4o-2024-08-06"},
    {"wire/openai-chat-stream-tool-calls-include-usage-verbatim.sse", Api::openai_chat, kSse, U(161, 24),
     "gpt-5.1-2025-11-13"},
    {"wire/openai-error-model-not-found.json", Api::openai_chat, kJson, kNone, ""},
    {"wire/openai-error-invalid-api-key.json", Api::openai_chat, kJson, kNone, ""},
    {"wire/gemini-generatecontent-functioncall.json", Api::gemini, kJson, U(23, 5), "gemini-2.0-flash-exp"},
    {"wire/gemini-generatecontent-thinking.json", Api::gemini, kJson, U(29, 736 + 1001, 0, 0, 1001),
     "gemini-3-pro-preview"},
    {"wire/gemini-generatecontent-verbatim.json", Api::gemini, kJson, U(18, 1 + 125, 0, 0, 125), "gemini-3.5-flash"},
    {"wire/gemini-stream-functioncall-thoughtsignature.sse", Api::gemini, "text/event-stream",
     U(29, 10 + 202, 0, 0, 202), "gemini-3-pro-preview"},
    // The last chunk's usageMetadata wins: its prompt (257) differs from the earlier chunks' (55).
    {"wire/gemini-stream-after-functionresponse.sse", Api::gemini, "text/event-stream", U(257, 8),
     "gemini-3-pro-preview"},
    {"wire/gemini-stream-thinking.sse", Api::gemini, "text/event-stream", U(34, 469 + 787, 0, 0, 787),
     "gemini-2.5-pro"},
    // Vertex: the first chunk's usageMetadata has no counts; it must not erase
    // the last one's. (Vertex's own totalTokenCount, 214, is one short of
    // 18 + 1 + 196; we report the fields, not the total.)
    {"wire/gemini-stream-vertex-verbatim.sse", Api::gemini, "text/event-stream", U(18, 1 + 196, 0, 0, 196),
     "gemini-3.5-flash"},
    {"wire/gemini-stream-functioncall-verbatim.sse", Api::gemini, "text/event-stream", U(148, 16 + 177, 0, 0, 177),
     "gemini-3.5-flash"},
    {"wire/gemini-error-model-not-found.json", Api::gemini, "application/json; charset=UTF-8", kNone, ""},
    {"wire/gemini-error-invalid-api-key.json", Api::gemini, "application/json; charset=UTF-8", kNone, ""},
    // Errors to alt=sse requests: plain JSON although labelled text/event-stream.
    {"wire/gemini-stream-error-not-found.json", Api::gemini, "text/event-stream", kNone, ""},
    {"wire/gemini-stream-error-invalid-api-key.json", Api::gemini, "text/event-stream", kNone, ""},
    {"wire/anthropic-messages-thinking.json", Api::anthropic, kJson, U(43, 321), "claude-sonnet-4-5-20250929"},
    {"wire/anthropic-messages-tool-use.json", Api::anthropic, kJson, U(658, 76), "claude-sonnet-4-6"},
    {"wire/anthropic-stream-thinking.sse", Api::anthropic, "text/event-stream", U(43, 282), "claude-sonnet-4-20250514"},
    // message_delta carries a larger input count (server tool use read more
    // input) than message_start: the later count wins.
    {"wire/anthropic-stream-tool-use.sse", Api::anthropic, "text/event-stream", U(1591, 175), "claude-sonnet-4-6"},
    {"wire/anthropic-error-model-not-found.json", Api::anthropic, kJson, kNone, ""},
    // Synthesized shapes (tests/fixtures/synth/usage/README.md says how).
    {"synth/usage/anthropic-messages-cache.json", Api::anthropic, kJson, U(12 + 18204 + 1577, 312, 18204, 1577),
     "claude-sonnet-4-5-20250929"},
    {"synth/usage/anthropic-stream-cache.sse", Api::anthropic, "text/event-stream", U(7 + 2911 + 340, 515, 2911, 340),
     "claude-opus-4-1-20250805"},
    {"synth/usage/openai-chat-nonstream-cached-reasoning.json", Api::openai_chat, kJson, U(4212, 1890, 3968, 0, 1472),
     "o4-mini-2025-04-16"},
    {"synth/usage/openai-responses-nonstream.json", Api::openai_responses, kJson, U(1840, 415, 1536, 0, 256),
     "gpt-5.1-2025-11-13"},
    {"synth/usage/openai-responses-stream.sse", Api::openai_responses, "text/event-stream", U(912, 120, 768, 0, 64),
     "gpt-5.1-2025-11-13"},
    {"synth/usage/gemini-generatecontent-cached.json", Api::gemini, kJson, U(40961 + 112, 820 + 1311, 32768, 0, 1311),
     "gemini-2.5-pro"},
    {"synth/usage/gemini-streamgeneratecontent-array.json", Api::gemini, kJson, U(61, 9), "gemini-2.5-flash"},
    // The harness's synthesized bodies (tests/fixtures/synth/README.md).
    {"synth/anthropic-messages-nonstream.json", Api::anthropic, kJson, U(43, 321), "claude-sonnet-4-5-20250929"},
    {"synth/anthropic-messages-tool-use-nonstream.json", Api::anthropic, kJson, U(658, 76), "claude-sonnet-4-6"},
    {"synth/openai-responses-nonstream.json", Api::openai_responses, kJson, U(27, 2), "gpt-5.1-2025-11-13"},
    {"synth/openai-responses-stream.sse", Api::openai_responses, "text/event-stream", U(27, 2), "gpt-5.1-2025-11-13"},
    {"synth/openai-chat-stream-long.sse", Api::openai_chat, kSse, U(13102, 28, 12800), "gpt-4o-2024-08-06"},
    {"synth/openai-error-context-length.json", Api::openai_chat, kJson, kNone, ""},
    {"synth/openai-error-rate-limit.json", Api::openai_chat, kJson, kNone, ""},
    {"synth/openai-error-server.json", Api::openai_chat, kJson, kNone, ""},
    {"synth/anthropic-error-context-length.json", Api::anthropic, kJson, kNone, ""},
    {"synth/anthropic-error-rate-limit.json", Api::anthropic, kJson, kNone, ""},
    {"synth/anthropic-error-overloaded.json", Api::anthropic, kJson, kNone, ""},
    {"synth/anthropic-error-server.json", Api::anthropic, kJson, kNone, ""},
    {"synth/gemini-error-context-length.json", Api::gemini, kJson, kNone, ""},
    {"synth/gemini-error-resource-exhausted.json", Api::gemini, kJson, kNone, ""},
    {"synth/gemini-error-server.json", Api::gemini, kJson, kNone, ""},
};

ResponseUsageTee run(const Expect& e, const std::vector<std::string_view>& pieces) {
  ResponseUsageTee tee(e.api, e.content_type);
  for (auto p : pieces) tee.feed(p);
  tee.finish();
  return tee;
}

}  // namespace

TEST_CASE("every wire sample: exact usage and model, read in one piece") {
  for (const auto& e : kWire) {
    CAPTURE(e.file);
    std::string body = read_fixture(e.file);
    auto tee = run(e, {body});
    CHECK(to_string(tee.usage()) == to_string(e.usage));
    CHECK(tee.model() == e.model);
  }
}

TEST_CASE("every wire sample: the same usage in every split") {
  for (const auto& e : kWire) {
    CAPTURE(e.file);
    std::string body = read_fixture(e.file);
    const std::string want = to_string(e.usage);
    int failures = 0;
    for_each_split(body, [&](const std::vector<std::string_view>& pieces, const std::string& how) {
      auto tee = run(e, pieces);
      if (to_string(tee.usage()) != want || tee.model() != e.model) {
        if (++failures <= 3) FAIL_CHECK(how << ": " << to_string(tee.usage()) << " model " << tee.model());
      }
    });
    CHECK(failures == 0);
  }
}

TEST_CASE("SSE samples: every single cut point gives the same usage") {
  // Two pieces cut at every byte (for big recordings, every byte of the first
  // and last 2 KiB, where message_start and the usage-bearing events sit).
  for (const auto& e : kWire) {
    if (std::string_view(e.file).ends_with(".json")) continue;
    CAPTURE(e.file);
    std::string body = read_fixture(e.file);
    const std::string want = to_string(e.usage);
    int failures = 0;
    for (std::size_t cut = 1; cut < body.size(); ++cut) {
      if (body.size() > 4096 && cut > 2048 && cut < body.size() - 2048) continue;
      std::string_view b = body;
      auto tee = run(e, {b.substr(0, cut), b.substr(cut)});
      if (to_string(tee.usage()) != want && ++failures <= 3) FAIL_CHECK("cut at " << cut);
    }
    CHECK(failures == 0);
  }
}

TEST_CASE("total is prompt + completion, and fresh input excludes both cache counts") {
  Expect e{"synth/usage/anthropic-messages-cache.json", Api::anthropic, kJson, kNone, ""};
  auto tee = run(e, {read_fixture(e.file)});
  Usage u = tee.usage();
  CHECK(u.total() == 12 + 18204 + 1577 + 312);
  CHECK(u.fresh_prompt() == 12);  // Anthropic's own input_tokens
}

TEST_CASE("error samples: the error member is captured for classification") {
  for (const auto& e : kWire) {
    if (std::string_view(e.file).find("error") == std::string_view::npos) continue;
    CAPTURE(e.file);
    auto tee = run(e, {read_fixture(e.file)});
    CHECK_FALSE(tee.error_json().empty());
    CHECK(tee.error_json().front() == '{');
  }
}

TEST_CASE("a body that is neither JSON nor SSE yields nothing, without failing") {
  ResponseUsageTee tee(Api::openai_chat, "text/html");
  tee.feed("<html>bad gateway</html>");
  tee.finish();
  CHECK_FALSE(tee.usage().present);
  CHECK(tee.model().empty());
}

TEST_CASE("truncated and malformed bodies never throw and report what was complete") {
  std::string body = read_fixture("wire/openai-chat-nonstream.json");
  for (std::size_t n = 0; n < body.size(); ++n) {
    ResponseUsageTee tee(Api::openai_chat, kJson);
    tee.feed(std::string_view(body).substr(0, n));
    tee.finish();
    // The usage member is complete only once its closing brace arrived.
    if (tee.usage().present) CHECK(tee.usage() == U(33, 10));
  }
  std::string sse = read_fixture("wire/anthropic-stream-thinking.sse");
  for (std::size_t n = 0; n < sse.size(); n += 7) {
    ResponseUsageTee tee(Api::anthropic, "text/event-stream");
    tee.feed(std::string_view(sse).substr(0, n));
    tee.finish();
    if (tee.usage().present) CHECK(tee.usage().prompt == 43);
  }
  for (const char* junk : {"{\"usage\": {\"prompt_tokens\": \"x\"}}", "{\"usage\": [1,2]}", "{\"usage\": {", "{{{{",
                           "data: {\"usage\":{]}\n\n", "\xff\xfe"}) {
    ResponseUsageTee a(Api::openai_chat, kJson), b(Api::openai_chat, "text/event-stream");
    a.feed(junk);
    b.feed(junk);
    a.finish();
    b.finish();
    CHECK_FALSE(a.usage().present);
    CHECK_FALSE(b.usage().present);
  }
}

TEST_CASE("a negative count is read as 0, after the provider's sums") {
  struct Case {
    Api api;
    const char* body;
    Usage want;
  };
  const Case cases[] = {
      {Api::openai_chat, R"({"usage":{"prompt_tokens":-5,"completion_tokens":7}})", U(0, 7)},
      {Api::gemini,
       R"({"usageMetadata":{"promptTokenCount":-5,"toolUsePromptTokenCount":9,"candidatesTokenCount":-1}})", U(4, 0)},
      {Api::anthropic,
       R"({"usage":{"input_tokens":-20,"cache_read_input_tokens":5,"output_tokens":3,"cache_creation_input_tokens":-2}})",
       U(0, 3, 5, 0)},
  };
  for (const Case& c : cases) {
    CAPTURE(c.body);
    ResponseUsageTee tee(c.api, kJson);
    tee.feed(c.body);
    tee.finish();
    CHECK(to_string(tee.usage()) == to_string(c.want));
  }
}
