#include <doctest/doctest.h>

#include <string>

#include "proxy/phases/failure_response.hpp"

using namespace td::proxy;
using Kind = UpstreamFailure::Kind;

TEST_CASE("client_answer: every upstream failure's status, code, cause and message") {
  struct Row {
    Kind kind;
    const char* detail;
    std::uint32_t limit_ms;
    unsigned status;
    const char* code;
    const char* error;
  };
  const Row rows[] = {
      {Kind::connect_failed, "cannot connect to api.example:443: Connection refused", 0, 502, "upstream_unreachable",
       "cannot connect to api.example:443: Connection refused"},
      {Kind::connect_failed, "TLS handshake with api.example failed: certificate verify failed", 0, 502,
       "upstream_unreachable", "TLS handshake with api.example failed: certificate verify failed"},
      {Kind::connect_timeout, "cannot connect to api.example:443: connect timed out", 10000, 504, "upstream_timeout",
       "cannot connect to api.example:443: connect timed out"},
      {Kind::send_failed, "Broken pipe", 0, 502, "upstream_unreachable", "cannot send the request: Broken pipe"},
      {Kind::send_timeout, "", 600, 504, "upstream_timeout", "cannot send the request within 600 ms"},
      {Kind::response_timeout, "", 400, 504, "upstream_timeout", "no response headers within 400 ms"},
      {Kind::no_response, "end of stream", 0, 502, "upstream_unreachable", "no response: end of stream"},
      {Kind::no_response, "bad version", 0, 502, "upstream_unreachable", "no response: bad version"},
      {Kind::bad_response, "101 Switching Protocols to a request that did not ask to upgrade", 0, 502,
       "upstream_bad_response", "bad response: 101 Switching Protocols to a request that did not ask to upgrade"},
      {Kind::bad_response, "broke before any byte reached the client: bad chunk", 0, 502, "upstream_bad_response",
       "bad response: broke before any byte reached the client: bad chunk"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.error);
    UpstreamFailure f{r.kind, r.detail, r.limit_ms};
    FailureAnswer a = client_answer(f, "openai", "https://api.example");
    CHECK(a.status == r.status);
    CHECK(a.code == r.code);
    CHECK(a.error == r.error);
    CHECK(a.message == std::string("tokendiet: upstream openai (https://api.example): ") + r.error);
  }
}

TEST_CASE("client_answer: no upstream for the route, and a client that left") {
  FailureAnswer none = client_answer(UpstreamFailure{Kind::no_upstream, "mistral"}, "", "");
  CHECK(none.status == 502);
  CHECK(none.code == "upstream_unreachable");
  CHECK(none.error == "no upstream configured for 'mistral'");
  CHECK(none.message == "tokendiet: no upstream configured for 'mistral'");

  FailureAnswer gone = client_answer(UpstreamFailure{Kind::client_gone, "whatever"}, "openai", "http://x");
  CHECK(gone.status == 0);
  CHECK(gone.error.empty());
  CHECK(gone.message.empty());
}

TEST_CASE("client_answer: a reused connection changes nothing the client sees") {
  UpstreamFailure f{Kind::send_failed, "Connection reset by peer"};
  f.reused_connection = true;
  FailureAnswer a = client_answer(f, "anthropic", "https://api.anthropic.com");
  CHECK(a.status == 502);
  CHECK(a.message ==
        "tokendiet: upstream anthropic (https://api.anthropic.com): cannot send the request: Connection reset by peer");
}

TEST_CASE("the failure phase's own rule: only a write that failed on a pooled connection goes once more") {
  auto failure = [](Kind kind, bool reused) {
    UpstreamFailure f;
    f.kind = kind;
    f.reused_connection = reused;
    return f;
  };
  CHECK(stale_connection_retry(failure(Kind::send_failed, true)));
  CHECK_FALSE(stale_connection_retry(failure(Kind::send_failed, false)));  // a fresh connection: a real failure
  CHECK_FALSE(stale_connection_retry(failure(Kind::send_timeout, true)));  // slow, not stale
  CHECK_FALSE(stale_connection_retry(failure(Kind::no_response, true)));   // the request may have got through
  CHECK_FALSE(stale_connection_retry(failure(Kind::response_timeout, true)));
  CHECK_FALSE(stale_connection_retry(failure(Kind::connect_failed, false)));
}
