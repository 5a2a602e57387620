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
  CHECK(redact_target("/m?%6Bey") == "/m?%6Bey");                // no value to hide
  CHECK(redact_target("/m?%6=x&%zz=y&%") == "/m?%6=x&%zz=y&%");  // bad escapes kept as they are
  CHECK(redact_target("/m?ke%79word=k") == "/m?ke%79word=k");
}

TEST_CASE("redact_target hides a secret under every spelling a server decodes to its name") {
  // The separator itself encoded (a server that decodes before splitting sees key=…).
  CHECK(redact_target("/m?key%3DAIzaSECRET") == "/m?key%3DREDACTED");
  CHECK(redact_target("/m?%6Bey%3DAIzaSECRET&x=1") == "/m?%6Bey%3DREDACTED&x=1");
  CHECK(redact_target("/m?a=1%26key%3DSECRET&b=2") == "/m?a=1%26key%3DREDACTED&b=2");
  // Control bytes, NUL (a C string ends there), spaces and '+', case.
  CHECK(redact_target("/m?KEY%00=SECRET") == "/m?KEY%00=REDACTED");
  CHECK(redact_target("/m?key%00junk=SECRET") == "/m?key%00junk=REDACTED");
  CHECK(redact_target("/m?key%09=SECRET") == "/m?key%09=REDACTED");
  CHECK(redact_target("/m?+key+=SECRET&x=1") == "/m?+key+=REDACTED&x=1");
  CHECK(redact_target("/m?%20Key%20=SECRET") == "/m?%20Key%20=REDACTED");
  CHECK(redact_target("/m?k\x01"
                      "ey=SECRET") ==
        "/m?k\x01"
        "ey=REDACTED");
  // Encoded twice (a proxy in front decoded once already).
  CHECK(redact_target("/m?ke%2579=SECRET") == "/m?ke%2579=REDACTED");
  CHECK(redact_target("/m?key%253DSECRET") == "/m?key%253DREDACTED");
  // Separators and casing of the longer names; array-style names.
  CHECK(redact_target("/m?api-key=SECRET") == "/m?api-key=REDACTED");
  CHECK(redact_target("/m?Api.Key=SECRET") == "/m?Api.Key=REDACTED");
  CHECK(redact_target("/m?apiKey=SECRET") == "/m?apiKey=REDACTED");
  CHECK(redact_target("/m?accessToken=SECRET") == "/m?accessToken=REDACTED");
  CHECK(redact_target("/m?x_goog_api_key=SECRET") == "/m?x_goog_api_key=REDACTED");
  CHECK(redact_target("/m?key[]=SECRET") == "/m?key[]=REDACTED");
  CHECK(redact_target("/m?key%5B0%5D=SECRET") == "/m?key%5B0%5D=REDACTED");
  // A value with an encoded separator: hidden whole (a server that splits first reads it all).
  CHECK(redact_target("/m?key=SEC%26RET;x=1") == "/m?key=REDACTED;x=1");
  CHECK(redact_target("/m?key=SEC%26key%3DRET&x=1") == "/m?key=REDACTED&x=1");
  // Names that only contain a secret name stay.
  CHECK(redact_target("/m?monkey=x&keys=y&q=key&key_id=z") == "/m?monkey=x&keys=y&q=key&key_id=z");
}

TEST_CASE("redact_target hides the userinfo of an absolute-form target logged as it came") {
  CHECK(redact_target("http://user:pass@h?key=SECRET") == "http://REDACTED@h?key=REDACTED");
  CHECK(redact_target("https://u@h/p") == "https://REDACTED@h/p");
  CHECK(redact_target("http://h/p?a=b@c") == "http://h/p?a=b@c");
}
