#include <doctest/doctest.h>

#include "proxy/telemetry/log.hpp"

using namespace td::proxy;

TEST_CASE("the access line redacts query secrets and carries only the key's fingerprint") {
  RequestContext ctx;
  ctx.request_id = 7;
  ctx.method = "POST";
  ctx.target = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=AIzaSECRET";
  ctx.provider = Provider::gemini;
  ctx.upstream = "gemini";
  ctx.model = "gemini-2.5-flash";
  ctx.stream = true;
  ctx.status = 200;
  ctx.bytes_in = 10;
  ctx.bytes_out = 20;
  ctx.total_ms = 1.5;
  ctx.key_fingerprint = "0123456789abcdef";
  ctx.session_id = "s\"1";
  auto line = access_line(ctx);
  const std::string& text = line.text();
  CHECK(text.find("AIzaSECRET") == std::string::npos);
  CHECK(text.find(R"("path":"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=REDACTED")") !=
        std::string::npos);
  CHECK(text.find(R"("event":"request","id":7,"method":"POST")") != std::string::npos);
  CHECK(text.find(R"("provider":"gemini","upstream":"gemini","model":"gemini-2.5-flash","stream":true,"status":200)") !=
        std::string::npos);
  CHECK(text.find(R"("key":"0123456789abcdef")") != std::string::npos);
  CHECK(text.find(R"("session":"s\"1")") != std::string::npos);
  CHECK(text.find(R"("ms":1.500)") != std::string::npos);
  CHECK(text.find("ttfb_ms") == std::string::npos);  // no response byte was sent
  CHECK(text.front() == '{');
  CHECK(text.back() == '}');
}
