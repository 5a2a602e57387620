#include <doctest/doctest.h>

#include "config/config.hpp"
#include "proxy/phases/routing.hpp"

using namespace td::proxy;

namespace {
td::config::Config cfg(std::string dflt = "openai") {
  td::config::Config c;
  c.default_upstream = std::move(dflt);
  return c;
}
}  // namespace

TEST_CASE("OpenAI paths route to openai") {
  auto c = cfg();
  for (auto p : {"/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/models",
                 "/v1/models/ft:gpt-4o:org::abc", "/v1/files/x", "/v1"}) {
    CAPTURE(p);
    auto r = route_for_path(p, c);
    CHECK(r.provider == Provider::openai);
    CHECK(r.upstream == "openai");
  }
}

TEST_CASE("Anthropic paths route to anthropic, on a segment boundary") {
  auto c = cfg();
  CHECK(route_for_path("/v1/messages", c).provider == Provider::anthropic);
  CHECK(route_for_path("/v1/messages/count_tokens", c).upstream == "anthropic");
  CHECK(route_for_path("/v1/messages/batches/x", c).provider == Provider::anthropic);
  CHECK(route_for_path("/v1/messagesX", c).provider == Provider::openai);
}

TEST_CASE("Gemini paths route to gemini with the model from the path") {
  auto c = cfg();
  auto r = route_for_path("/v1beta/models/gemini-2.5-flash:streamGenerateContent", c);
  CHECK(r.provider == Provider::gemini);
  CHECK(r.upstream == "gemini");
  CHECK(r.model == "gemini-2.5-flash");
  r = route_for_path("/v1/models/gemini-2.0-pro:generateContent", c);
  CHECK(r.provider == Provider::gemini);
  CHECK(r.model == "gemini-2.0-pro");
  CHECK(route_for_path("/v1beta/files", c).provider == Provider::gemini);
  CHECK(route_for_path("/v1beta/files", c).model == "");
  CHECK(route_for_path("/v1alpha/models/x:countTokens", c).provider == Provider::gemini);
  // An OpenAI fine-tune id has colons but no Gemini method: stays openai.
  CHECK(route_for_path("/v1/models/ft:gpt-4o:org:custom", c).provider == Provider::openai);
}

TEST_CASE("Other paths go to the default upstream") {
  auto anthropic = cfg("anthropic"), local = cfg("local");
  auto r = route_for_path("/something/else", anthropic);
  CHECK(r.provider == Provider::anthropic);
  CHECK(r.upstream == "anthropic");
  r = route_for_path("/", local);
  CHECK(r.provider == Provider::other);
  CHECK(r.upstream == "local");
  CHECK(route_for_path("/v1beta2/x", local).upstream == "local");
}

TEST_CASE("origin_form ignores an absolute-form authority") {
  CHECK(origin_form("/v1/chat/completions?a=b") == std::string_view("/v1/chat/completions?a=b"));
  CHECK(origin_form("http://evil.example/v1/messages?x=1") == std::string_view("/v1/messages?x=1"));
  CHECK(origin_form("HTTPS://h:443") == std::string_view("/"));
  CHECK_FALSE(origin_form("*").has_value());
  CHECK_FALSE(origin_form("evil.example:443").has_value());
  CHECK_FALSE(origin_form("http://h?q").has_value());
}

TEST_CASE("redact_target hides secret query values and keeps the rest") {
  CHECK(redact_target("/v1beta/models/m:streamGenerateContent?alt=sse&key=AIzaSECRET") ==
        "/v1beta/models/m:streamGenerateContent?alt=sse&key=REDACTED");
  CHECK(redact_target("/p?KEY=x&access_token=y&z=1") == "/p?KEY=REDACTED&access_token=REDACTED&z=1");
  CHECK(redact_target("/p") == "/p");
  CHECK(redact_target("/p?keyword=k") == "/p?keyword=k");
}

TEST_CASE("redact_target reads names as servers do: percent-decoded, ';' a separator too") {
  CHECK(redact_target("/m?%6Bey=AIzaSECRET") == "/m?%6Bey=REDACTED");
  CHECK(redact_target("/m?k%65y=AIzaSECRET&x=1") == "/m?k%65y=REDACTED&x=1");
  CHECK(redact_target("/m?%4B%45%59=S") == "/m?%4B%45%59=REDACTED");
  CHECK(redact_target("/m?alt=sse;key=AIzaSECRET") == "/m?alt=sse;key=REDACTED");
  CHECK(redact_target("/m?a=1;%61pi_key=S&token=T;b=2") == "/m?a=1;%61pi_key=REDACTED&token=REDACTED;b=2");
  CHECK(redact_target("/m?%6Bey") == "/m?%6Bey");           // no value to hide
  CHECK(redact_target("/m?%6=x&%zz=y&%") == "/m?%6=x&%zz=y&%");  // bad escapes kept as they are
  CHECK(redact_target("/m?ke%79word=k") == "/m?ke%79word=k");
}
