#include <doctest/doctest.h>

#include "config/config.hpp"
#include "proxy/phases/body_peek.hpp"
#include "proxy/phases/errors.hpp"
#include "proxy/phases/filter.hpp"
#include "proxy/net/http_rules.hpp"
#include "proxy/phases/routing.hpp"

using namespace td::proxy;

TEST_CASE("hop-by-hop field names (RFC 9110 7.6.1)") {
  for (const char* n : {"Connection", "keep-alive", "TE", "Trailer", "transfer-encoding", "Upgrade",
                        "Proxy-Authorization", "PROXY-CONNECTION"})
    CHECK(is_hop_by_hop(n));
  for (const char* n : {"x-api-key", "Authorization", "trailers", "tex", "proxy", "content-type"})
    CHECK_FALSE(is_hop_by_hop(n));
}

TEST_CASE("request head limits") {
  td::config::Limits l;
  l.max_header_count = 10;
  l.max_body_bytes = 100;
  auto head = [](std::size_t count, bool cl, bool te, std::optional<std::uint64_t> len) {
    RequestHeadFacts f;
    f.header_count = count;
    f.has_content_length = cl;
    f.has_transfer_encoding = te;
    f.content_length = len;
    return f;
  };
  CHECK(check_request_head(head(10, false, false, {}), l) == 0);
  CHECK(check_request_head(head(11, false, false, {}), l) == 431);
  CHECK(check_request_head(head(2, true, true, {}), l) == 400);
  CHECK(check_request_head(head(2, true, false, 100), l) == 0);
  CHECK(check_request_head(head(2, true, false, 101), l) == 413);
}

TEST_CASE("API key is found and only its fingerprint kept") {
  SimpleHeaderMap openai{{"Authorization", "Bearer sk-test-123"}};
  CHECK(find_api_key(openai, "") == "sk-test-123");
  SimpleHeaderMap anthropic{{"x-api-key", "sk-ant"}};
  CHECK(find_api_key(anthropic, "") == "sk-ant");
  SimpleHeaderMap none;
  CHECK(find_api_key(none, "alt=sse&key=AIza") == "AIza");
  CHECK(find_api_key(none, "alt=sse") == "");
  auto fp = key_fingerprint("sk-test-123");
  CHECK(fp.size() == 16);
  CHECK(fp == key_fingerprint("sk-test-123"));
  CHECK(fp != key_fingerprint("sk-test-124"));
  CHECK(fp.find("sk") == std::string::npos);
  CHECK(key_fingerprint("") == "");
}

// docs/design.md §Client identity: every form a provider takes a
// credential in identifies the client, and a different credential in any of
// them is a different client.
namespace {
std::string fp_of(std::initializer_list<std::pair<std::string, std::string>> headers, std::string_view query = "") {
  return key_fingerprint(find_api_key(SimpleHeaderMap(headers), query));
}
}  // namespace

TEST_CASE("client identity: each header form of a credential is found, and another value is another client") {
  const std::pair<const char*, const char*> forms[] = {
      {"Authorization", "Bearer "}, {"x-api-key", ""}, {"api-key", ""}, {"x-goog-api-key", ""}};
  for (const auto& form : forms) {
    const char* name = form.first;
    const char* prefix = form.second;
    CAPTURE(name);
    CHECK(find_api_key(SimpleHeaderMap{{name, std::string(prefix) + "secret-1"}}, "") == "secret-1");
    const std::string one = fp_of({{name, std::string(prefix) + "secret-1"}});
    CHECK(one.size() == 16);
    CHECK(one != fp_of({{name, std::string(prefix) + "secret-2"}}));
    // The same secret in another form is the same client.
    CHECK(one == fp_of({}, "key=secret-1"));
  }
  // Header names in any case, values without the space around them.
  CHECK(find_api_key(SimpleHeaderMap{{"API-Key", "  az-1 \t"}}, "") == "az-1");
  CHECK(find_api_key(SimpleHeaderMap{{"authorization", "bearer   tok"}}, "") == "tok");
  CHECK(find_api_key(SimpleHeaderMap{{"Authorization", "BEARER\ttok"}}, "") == "tok");
}

TEST_CASE("client identity: other Authorization schemes are the scheme and its credentials") {
  CHECK(find_api_key(SimpleHeaderMap{{"Authorization", "Basic dXNlcjpwdw=="}}, "") == "basic dXNlcjpwdw==");
  CHECK(fp_of({{"Authorization", "Basic dXNlcjpwdw=="}}) == fp_of({{"Authorization", "BASIC dXNlcjpwdw=="}}));
  CHECK(fp_of({{"Authorization", "Basic dXNlcjpwdw=="}}) != fp_of({{"Authorization", "Basic dXNlcjpxeA=="}}));
  // The same secret under another scheme is not the bearer's client.
  CHECK(fp_of({{"Authorization", "Token abc"}}) != fp_of({{"Authorization", "Bearer abc"}}));
  CHECK(fp_of({{"Authorization", "Token abc"}}) != fp_of({{"Authorization", "Basic abc"}}));
  // One word with no scheme is the credential itself.
  CHECK(find_api_key(SimpleHeaderMap{{"Authorization", "sk-raw"}}, "") == "sk-raw");
}

TEST_CASE("client identity: the key query parameter as a server decodes it") {
  SimpleHeaderMap none;
  CHECK(find_api_key(none, "key=AIza-1") == "AIza-1");
  CHECK(find_api_key(none, "alt=sse&KEY=AIza-1") == "AIza-1");
  CHECK(find_api_key(none, "Key=AIza-1&alt=sse") == "AIza-1");
  CHECK(find_api_key(none, "%6Bey=AIza-1") == "AIza-1");      // k percent-encoded
  CHECK(find_api_key(none, "%4B%45%59=AIza-1") == "AIza-1");  // KEY
  CHECK(find_api_key(none, "key=AI%7Aa-1") == "AIza-1");      // the value decoded too
  CHECK(fp_of({}, "key=AI%7Aa-1") == fp_of({{"x-goog-api-key", "AIza-1"}}));
  CHECK(fp_of({}, "key=AIza-1") != fp_of({}, "key=AIza-2"));
  CHECK(fp_of({}, "k%65y=AIza-1") != fp_of({}, "k%65y=AIza-2"));
  // The first one with a value; names that only contain `key` are not it.
  CHECK(find_api_key(none, "key=&key=second") == "second");
  CHECK(find_api_key(none, "key=first&key=second") == "first");
  CHECK(find_api_key(none, "apikey=x&monkey=y&key") == "");
  CHECK(find_api_key(none, "%zzkey=x") == "");
  CHECK(percent_decode("a%2Bb+c%zz%4") == "a+b c%zz%4");
}

TEST_CASE("client identity: the precedence when several credentials are present") {
  // Authorization, then x-api-key, api-key, x-goog-api-key, then ?key=.
  CHECK(find_api_key(
            SimpleHeaderMap{
                {"x-goog-api-key", "g"}, {"api-key", "az"}, {"x-api-key", "ant"}, {"Authorization", "Bearer oa"}},
            "key=q") == "oa");
  CHECK(find_api_key(SimpleHeaderMap{{"x-goog-api-key", "g"}, {"api-key", "az"}, {"x-api-key", "ant"}}, "key=q") ==
        "ant");
  CHECK(find_api_key(SimpleHeaderMap{{"x-goog-api-key", "g"}, {"api-key", "az"}}, "key=q") == "az");
  CHECK(find_api_key(SimpleHeaderMap{{"x-goog-api-key", "g"}}, "key=q") == "g");
  // An empty field is no credential: the next form is read.
  CHECK(find_api_key(SimpleHeaderMap{{"Authorization", "Bearer"}, {"api-key", "az"}}, "") == "az");
  CHECK(find_api_key(SimpleHeaderMap{{"x-api-key", "  "}}, "key=q") == "q");
}

TEST_CASE("client identity: a request with no credential has none (an anonymous client)") {
  CHECK(find_api_key(SimpleHeaderMap{}, "") == "");
  CHECK(find_api_key(SimpleHeaderMap{{"content-type", "application/json"}, {"x-tokendiet-session", "s"}},
                     "alt=sse&keys=1") == "");
  CHECK(fp_of({}) == "");
  // Empty credentials are none: `Bearer` with no token (an SDK given an empty
  // key), blank key headers, an empty ?key=. Not a client called "Bearer"
  // that every such request would share.
  CHECK(find_api_key(SimpleHeaderMap{{"Authorization", "Bearer"}}, "") == "");
  CHECK(find_api_key(SimpleHeaderMap{{"Authorization", "bearer \t"}}, "") == "");
  CHECK(find_api_key(SimpleHeaderMap{{"x-api-key", " "}, {"api-key", ""}, {"x-goog-api-key", "\t"}}, "key=") == "");
  CHECK(fp_of({{"Authorization", "Bearer"}}, "key=&KEY=") == "");
}

TEST_CASE("provider error bodies have each provider's own shape") {
  CHECK(
      provider_error_body(Provider::openai, 502, "upstream \"x\" down") ==
      R"({"error":{"message":"upstream \"x\" down","type":"server_error","param":null,"code":"upstream_unreachable"}})");
  CHECK(provider_error_body(Provider::anthropic, 504, "slow") ==
        R"({"type":"error","error":{"type":"api_error","message":"slow"}})");
  CHECK(provider_error_body(Provider::gemini, 502, "down") ==
        R"({"error":{"code":502,"message":"down","status":"UNAVAILABLE"}})");
  CHECK(provider_error_body(Provider::anthropic, 413, "big") ==
        R"({"type":"error","error":{"type":"request_too_large","message":"big"}})");
}

TEST_CASE("an OpenAI-shaped 502 or 504 names its cause in code; other statuses keep code null") {
  CHECK(provider_error_body(Provider::openai, 502, "bad", "upstream_bad_response") ==
        R"({"error":{"message":"bad","type":"server_error","param":null,"code":"upstream_bad_response"}})");
  CHECK(provider_error_body(Provider::openai, 504, "slow") ==
        R"({"error":{"message":"slow","type":"server_error","param":null,"code":"upstream_timeout"}})");
  CHECK(provider_error_body(Provider::openai, 400, "no", "bad_request") ==
        R"({"error":{"message":"no","type":"invalid_request_error","param":null,"code":null}})");
  CHECK(provider_error_body(Provider::anthropic, 502, "bad", "upstream_bad_response") ==
        R"({"type":"error","error":{"type":"api_error","message":"bad"}})");
}

TEST_CASE("body peek finds the top-level model and stream flag") {
  auto p =
      peek_body(R"({"messages":[{"role":"user","content":"say \"model\": \"x\""}],"model" : "gpt-4o","stream":true})");
  CHECK(p.model == "gpt-4o");
  CHECK(p.stream);
  p = peek_body(
      R"({"tools":[{"input_schema":{"properties":{"model":{"type":"string"}}}}],"model":"claude","stream_options":{},"stream":false})");
  CHECK(p.model == "claude");
  CHECK_FALSE(p.stream);
  std::string big = R"({"messages":[{"role":"user","content":")" + std::string(20000, 'x') +
                    R"("}],"model":"gpt-4o-mini","stream":true})";
  p = peek_body(big);
  CHECK(p.model == "gpt-4o-mini");
  CHECK(p.stream);
  big = R"({"model":"claude","messages":[{"role":"user","content":")" + std::string(20000, 'x') + R"("}]})";
  p = peek_body(big);
  CHECK(p.model == "claude");
  CHECK_FALSE(p.stream);
  p = peek_body("not json");
  CHECK(p.model == "");
  CHECK_FALSE(p.stream);
}

TEST_CASE("body peek finds the keys at every offset of the 16-byte search, past look-alike keys") {
  for (std::size_t pad = 0; pad < 40; ++pad) {
    const std::string body =
        R"({"p":")" + std::string(pad, 'm') + R"(","mode":"m","models":"s","m\"":1,"model":"gpt-5","stream":true})";
    CAPTURE(pad);
    auto p = peek_body(body);
    CHECK(p.model == "gpt-5");
    CHECK(p.stream);
    const std::string no_stream = body.substr(0, body.size() - 15) + "}";  // no "stream" at all
    p = peek_body(no_stream);  // its views point into the body, which must outlive them
    CHECK(p.model == "gpt-5");
    CHECK_FALSE(p.stream);
  }
}
