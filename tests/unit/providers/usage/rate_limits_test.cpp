// Rate-limit headers and error classification.
#include <doctest/doctest.h>

#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "providers/rate_limits.hpp"
#include "providers/response_error.hpp"
#include "test_util.hpp"

using namespace td::providers;
using namespace std::chrono;
using td::usage_test::read_fixture;

namespace {

SysTime at(int y, int mo, int d, int h, int mi, int s) {
  return sys_days{year{y} / mo / d} + hours{h} + minutes{mi} + seconds{s};
}

// Headers of a recorded response (tests/fixtures/wire/*.headers.json).
struct RecordedHeaders {
  std::vector<std::string> names, values;
  std::vector<Header> list;
};
RecordedHeaders recorded(const std::string& file) {
  std::string text = read_fixture(file);
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  RecordedHeaders r;
  for (auto& m : d["headers"].GetObject())
    for (auto& v : m.value.GetArray()) {
      r.names.emplace_back(m.name.GetString());
      r.values.emplace_back(v.GetString());
    }
  for (std::size_t i = 0; i < r.names.size(); ++i) r.list.push_back({r.names[i], r.values[i]});
  return r;
}

}  // namespace

TEST_CASE("go durations as OpenAI sends them") {
  CHECK(parse_go_duration("6m0s") == minutes{6});
  CHECK(parse_go_duration("12ms") == milliseconds{12});
  CHECK(parse_go_duration("1.5s") == milliseconds{1500});
  CHECK(parse_go_duration("0s") == nanoseconds{0});
  CHECK(parse_go_duration("1h2m3s") == hours{1} + minutes{2} + seconds{3});
  CHECK(parse_go_duration("6m0.123s") == minutes{6} + milliseconds{123});
  CHECK(parse_go_duration("300us") == microseconds{300});
  CHECK(parse_go_duration("7ns") == nanoseconds{7});
  for (const char* bad : {"", "s", "6", "6x", "m6", "1.2.3s", "--1s"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_go_duration(bad));
  }
}

TEST_CASE("RFC 3339 and HTTP dates") {
  CHECK(parse_rfc3339("2024-06-01T12:00:30Z") == at(2024, 6, 1, 12, 0, 30));
  CHECK(parse_rfc3339("2024-06-01T14:00:30+02:00") == at(2024, 6, 1, 12, 0, 30));
  CHECK(parse_rfc3339("2024-06-01T12:00:30.250Z") == at(2024, 6, 1, 12, 0, 30) + milliseconds{250});
  CHECK(parse_rfc3339("2024-06-01T11:30:30-00:30") == at(2024, 6, 1, 12, 0, 30));
  for (const char* bad : {"2024-06-01T12:00:30", "2024-13-01T12:00:30Z", "2024-02-30T00:00:00Z", "2024-06-01 12:00Z",
                          "yesterday", "2024-06-01T12:00:30Zjunk"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_rfc3339(bad));
  }
  CHECK(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT") == at(1994, 11, 6, 8, 49, 37));
  CHECK(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT") == at(1994, 11, 6, 8, 49, 37));
  CHECK(parse_http_date("Sun Nov  6 08:49:37 1994") == at(1994, 11, 6, 8, 49, 37));
  CHECK(parse_http_date("Thu, 06 Aug 2026 18:32:24 GMT") == at(2026, 8, 6, 18, 32, 24));
  CHECK_FALSE(parse_http_date("Sun, 06 Nov 1994 08:49:37 PST"));
  CHECK_FALSE(parse_http_date("soon"));
}

TEST_CASE("OpenAI: the recorded x-ratelimit headers") {
  auto h = recorded("wire/openai-chat-nonstream.headers.json");
  SysTime now = at(2026, 7, 21, 0, 4, 27);
  RateLimits r = parse_rate_limits(h.list, now);
  CHECK(r.present());
  CHECK(r.requests.limit == 10000);
  CHECK(r.requests.remaining == 9999);
  CHECK(r.requests.reset == now + milliseconds{6});
  CHECK(r.tokens.limit == 50000000);
  CHECK(r.tokens.remaining == 49999975);
  CHECK(r.tokens.reset == now);
  CHECK_FALSE(r.input_tokens.known());
  CHECK_FALSE(r.retry_after);
}

TEST_CASE("no rate-limit headers: Gemini and the recorded error responses") {
  SysTime now = at(2026, 6, 17, 23, 0, 0);
  for (const char* f :
       {"wire/gemini-generatecontent-verbatim.headers.json", "wire/gemini-stream-vertex-verbatim.headers.json",
        "wire/openai-error-invalid-api-key.headers.json", "wire/anthropic-error-model-not-found.headers.json"}) {
    CAPTURE(f);
    auto h = recorded(f);
    CHECK_FALSE(parse_rate_limits(h.list, now).present());
  }
}

TEST_CASE("Anthropic: four windows with absolute resets, names in any case") {
  std::vector<Header> h = {
      {"anthropic-ratelimit-requests-limit", "4000"},
      {"anthropic-ratelimit-requests-remaining", "3999"},
      {"anthropic-ratelimit-requests-reset", "2026-08-06T18:32:25Z"},
      {"Anthropic-RateLimit-Tokens-Limit", "480000"},
      {"anthropic-ratelimit-tokens-remaining", "472000"},
      {"anthropic-ratelimit-tokens-reset", "2026-08-06T18:32:31Z"},
      {"anthropic-ratelimit-input-tokens-limit", "400000"},
      {"anthropic-ratelimit-input-tokens-remaining", "393000"},
      {"anthropic-ratelimit-input-tokens-reset", "2026-08-06T18:32:31.500Z"},
      {"anthropic-ratelimit-output-tokens-limit", "80000"},
      {"anthropic-ratelimit-output-tokens-remaining", "79000"},
      {"anthropic-ratelimit-output-tokens-reset", "2026-08-06T18:32:26Z"},
      {"anthropic-ratelimit-unified-status", "allowed"},
      {"content-type", "application/json"},
  };
  RateLimits r = parse_rate_limits(h, at(2026, 8, 6, 18, 32, 24));
  CHECK(r.requests.limit == 4000);
  CHECK(r.requests.remaining == 3999);
  CHECK(r.requests.reset == at(2026, 8, 6, 18, 32, 25));
  CHECK(r.tokens.limit == 480000);
  CHECK(r.tokens.remaining == 472000);
  CHECK(r.input_tokens.remaining == 393000);
  CHECK(r.input_tokens.reset == at(2026, 8, 6, 18, 32, 31) + milliseconds{500});
  CHECK(r.output_tokens.limit == 80000);
  CHECK(r.output_tokens.reset == at(2026, 8, 6, 18, 32, 26));
}

TEST_CASE("retry-after: seconds, HTTP date, milliseconds (preferred)") {
  SysTime now = at(2026, 8, 6, 18, 0, 0);
  std::vector<Header> secs = {{"retry-after", "20"}};
  CHECK(parse_rate_limits(secs, now).retry_after == now + seconds{20});
  std::vector<Header> date = {{"Retry-After", "Thu, 06 Aug 2026 18:01:00 GMT"}};
  CHECK(parse_rate_limits(date, now).retry_after == now + minutes{1});
  std::vector<Header> both = {{"retry-after", "2"}, {"retry-after-ms", "1500.5"}};
  CHECK(parse_rate_limits(both, now).retry_after == now + microseconds{1500500});
  std::vector<Header> bad = {{"retry-after", "later"}, {"retry-after-ms", "-3"}};
  CHECK_FALSE(parse_rate_limits(bad, now).retry_after);
}

TEST_CASE("-1 or 0 from a proxy in front means unknown, not empty") {
  SysTime now = at(2026, 1, 1, 0, 0, 0);
  std::vector<Header> azure = {
      {"x-ratelimit-limit-tokens", "-1"},  {"x-ratelimit-remaining-tokens", "0"},
      {"x-ratelimit-limit-requests", "0"}, {"x-ratelimit-remaining-requests", "-1"},
      {"x-ratelimit-reset-tokens", "0s"},
  };
  RateLimits r = parse_rate_limits(azure, now);
  CHECK_FALSE(r.tokens.limit);
  CHECK_FALSE(r.tokens.remaining);
  CHECK_FALSE(r.requests.limit);
  CHECK_FALSE(r.requests.remaining);
  // A real limit with nothing left is empty, and says so.
  std::vector<Header> empty = {{"x-ratelimit-limit-tokens", "30000"},
                               {"x-ratelimit-remaining-tokens", "0"},
                               {"x-ratelimit-reset-tokens", "6m0s"}};
  r = parse_rate_limits(empty, now);
  CHECK(r.tokens.limit == 30000);
  CHECK(r.tokens.remaining == 0);
  CHECK(r.tokens.reset == now + minutes{6});
  // Malformed values are unknown, and extras are other budgets.
  std::vector<Header> odd = {{"x-ratelimit-remaining-tokens", "many"},
                             {"x-ratelimit-reset-tokens", "soon"},
                             {"x-ratelimit-remaining-tokens_usage_based", "5"}};
  CHECK_FALSE(parse_rate_limits(odd, now).present());
}

// ------------------------------------------------------------ errors

TEST_CASE("context length exceeded, as each provider says it") {
  struct Case {
    const char* file;
    int status;
    bool overflow;
    const char* code;
  } cases[] = {
      {"synth/openai-error-context-length.json", 400, true, "context_length_exceeded"},
      {"synth/anthropic-error-context-length.json", 400, true, "invalid_request_error"},
      {"synth/gemini-error-context-length.json", 400, true, "INVALID_ARGUMENT"},
      {"synth/openai-error-server.json", 500, false, "server_error"},
      {"synth/anthropic-error-server.json", 500, false, "api_error"},
      {"synth/gemini-error-server.json", 500, false, "INTERNAL"},
      {"wire/openai-error-model-not-found.json", 404, false, "model_not_found"},
      {"wire/openai-error-invalid-api-key.json", 401, false, "invalid_api_key"},
      {"wire/anthropic-error-model-not-found.json", 404, false, "not_found_error"},
      {"wire/gemini-error-model-not-found.json", 404, false, "NOT_FOUND"},
      {"wire/gemini-error-invalid-api-key.json", 400, false, "INVALID_ARGUMENT"},
      {"wire/gemini-stream-error-not-found.json", 404, false, "NOT_FOUND"},
      {"wire/gemini-stream-error-invalid-api-key.json", 400, false, "INVALID_ARGUMENT"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.file);
    auto e = classify_error_body(c.status, read_fixture(c.file));
    CHECK(e.is_error);
    CHECK(e.context_length_exceeded == c.overflow);
    CHECK(e.code == c.code);
    CHECK_FALSE(e.message.empty());
    CHECK_FALSE(e.rate_limited);
  }
}

TEST_CASE("rate limits and overload: the harness's 429 and 529 fixtures") {
  auto o = classify_error_body(429, read_fixture("synth/openai-error-rate-limit.json"));
  CHECK(o.rate_limited);
  CHECK(o.code == "rate_limit_exceeded");
  CHECK(o.retry_delay == std::chrono::milliseconds{1634});
  auto a = classify_error_body(429, read_fixture("synth/anthropic-error-rate-limit.json"));
  CHECK(a.rate_limited);
  CHECK_FALSE(a.retry_delay);
  auto g = classify_error_body(429, read_fixture("synth/gemini-error-resource-exhausted.json"));
  CHECK(g.rate_limited);
  CHECK(g.code == "RESOURCE_EXHAUSTED");
  CHECK(g.retry_delay == std::chrono::seconds{31});  // details[].RetryInfo.retryDelay
  auto ov = classify_error_body(529, read_fixture("synth/anthropic-error-overloaded.json"));
  CHECK(ov.overloaded);
  CHECK_FALSE(ov.rate_limited);
  for (auto* e : {&o, &a, &g, &ov}) CHECK_FALSE(e->context_length_exceeded);
}

TEST_CASE("rate-limit headers of the harness's 429 fixtures") {
  SysTime now = at(2026, 7, 21, 0, 5, 0);
  auto oh = recorded("synth/openai-error-rate-limit.headers.json");
  RateLimits o = parse_rate_limits(oh.list, now);
  CHECK(o.retry_after == now + milliseconds{1634});  // retry-after-ms beats retry-after: 2
  CHECK(o.tokens.limit == 30000);
  CHECK(o.tokens.remaining == 437);
  CHECK(o.tokens.reset == now + milliseconds{1634});
  CHECK(o.requests.reset == now + milliseconds{120});
  auto ah = recorded("synth/anthropic-error-rate-limit.headers.json");
  RateLimits a = parse_rate_limits(ah.list, now);
  CHECK(a.retry_after == now + seconds{17});
  CHECK(a.input_tokens.limit == 40000);
  CHECK(a.input_tokens.remaining == 0);  // a real limit: empty means empty
  CHECK(a.input_tokens.reset == at(2026, 7, 21, 0, 5, 17));
  CHECK(a.tokens.remaining == 47000);
  CHECK(a.requests.reset == at(2026, 7, 21, 0, 5, 1));
  auto gh = recorded("synth/gemini-error-resource-exhausted.headers.json");
  CHECK_FALSE(parse_rate_limits(gh.list, now).present());
}

TEST_CASE("other spellings of overflow, rate limits, and non-errors") {
  CHECK(
      classify_error(
          400,
          R"({"message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens","type":"BadRequestError","code":400})")
          .context_length_exceeded);  // vLLM
  CHECK(
      classify_error(
          400,
          R"({"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 190000 + 20000 > 200000, decrease input length or `max_tokens` and try again"})")
          .context_length_exceeded);
  CHECK(
      classify_error(
          400,
          R"({"code":400,"message":"Unable to submit request because the input token count is 1196265 but model only supports up to 1048576. Reduce the input token count and try again.","status":"INVALID_ARGUMENT"})")
          .context_length_exceeded);                                              // Vertex
  CHECK(classify_error(400, R"("prompt is too long")").context_length_exceeded);  // plain string
  auto rl = classify_error(
      429,
      R"({"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"})");
  CHECK(rl.rate_limited);
  CHECK_FALSE(rl.context_length_exceeded);
  CHECK(classify_error(429, "").rate_limited);
  CHECK(classify_error(529, R"({"type":"overloaded_error","message":"Overloaded"})").overloaded);
  CHECK_FALSE(classify_error(200, "").is_error);
  auto garbage = classify_error(500, "{not json");
  CHECK(garbage.is_error);
  CHECK_FALSE(garbage.context_length_exceeded);
  CHECK(classify_error_body(
            400,
            "[{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"The input token count (2000000) exceeds the "
            "maximum number of tokens allowed (1048576).\",\n    \"status\": \"INVALID_ARGUMENT\"\n  }\n}\n]")
            .context_length_exceeded);
}

TEST_CASE("dates past what a nanosecond clock holds are bad headers, not overflows (found by fuzz_rate_limits)") {
  CHECK_FALSE(parse_http_date("Tue, 21 Jul 9184 00:04:27 GMT"));
  CHECK_FALSE(parse_rfc3339("9999-12-31T23:59:59Z"));
  CHECK_FALSE(parse_rfc3339("1492-10-12T00:00:00Z"));
  CHECK(parse_http_date("Tue, 21 Jul 2026 00:04:27 GMT") == at(2026, 7, 21, 0, 4, 27));
}

TEST_CASE("durations past a year are bad headers, not overflows (found by fuzz_rate_limits)") {
  const SysTime now = at(2026, 1, 1, 0, 0, 0);
  auto parse = [&](std::string name, std::string value) {
    const Header h{name, value};
    return parse_rate_limits(std::span<const Header>(&h, 1), now);
  };
  CHECK_FALSE(parse("retry-after-ms", "163000000000000000000").retry_after);
  CHECK_FALSE(parse("retry-after", "1.63e20").retry_after);
  CHECK_FALSE(parse("retry-after", "nan").retry_after);
  CHECK_FALSE(parse_go_duration("99999999999999h"));
  CHECK(parse("retry-after", "30").retry_after == now + std::chrono::seconds{30});
  CHECK(parse("retry-after-ms", "250").retry_after == now + std::chrono::milliseconds{250});
  CHECK(parse_go_duration("1h30m") == std::chrono::minutes{90});
}
