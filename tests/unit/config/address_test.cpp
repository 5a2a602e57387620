#include <doctest/doctest.h>

#include "config/address.hpp"

using namespace td::config;

TEST_CASE("listen: HOST:PORT, bracketed IPv6, port 0 for any") {
  auto a = parse_listen("127.0.0.1:8787");
  REQUIRE(a.ok());
  CHECK(a.value.host == "127.0.0.1");
  CHECK(a.value.port == 8787);
  auto b = parse_listen("[::1]:9000");
  REQUIRE(b.ok());
  CHECK(b.value.host == "::1");
  CHECK(b.value.port == 9000);
  CHECK(parse_listen("localhost:0").value.port == 0);
  CHECK(parse_listen("0.0.0.0:65535").ok());
}

TEST_CASE("listen: refused forms") {
  CHECK(parse_listen("127.0.0.1").error.find("missing port") != std::string::npos);
  CHECK(parse_listen("127.0.0.1:65536").error.find("out of range") != std::string::npos);
  CHECK(parse_listen("127.0.0.1:-1").error.find("invalid port") != std::string::npos);
  CHECK(parse_listen("127.0.0.1:http").error.find("invalid port") != std::string::npos);
  CHECK(parse_listen(":8787").error.find("missing host") != std::string::npos);
  CHECK_FALSE(parse_listen("::1:8787").ok());  // IPv6 needs brackets
  CHECK_FALSE(parse_listen("[::1:8787").ok());
  CHECK_FALSE(parse_listen("[zz]:80").ok());
  CHECK_FALSE(parse_listen("a b:80").ok());
}

TEST_CASE("upstream URL: origin with default ports") {
  auto u = parse_upstream_url("https://api.openai.com");
  REQUIRE(u.ok());
  CHECK(u.value.tls);
  CHECK(u.value.host == "api.openai.com");
  CHECK(u.value.port == 443);
  CHECK(u.value.path_prefix == "");
  CHECK(u.value.url == "https://api.openai.com");
  CHECK(u.value.verify_tls);

  auto h = parse_upstream_url("http://127.0.0.1:18080/");
  REQUIRE(h.ok());
  CHECK_FALSE(h.value.tls);
  CHECK(h.value.port == 18080);
  CHECK(h.value.path_prefix == "");
  CHECK(parse_upstream_url("http://example.com").value.port == 80);
  CHECK(parse_upstream_url("HTTPS://API.Example.COM").value.host == "api.example.com");
}

TEST_CASE("upstream URL: path prefix, IPv6") {
  auto v1 = parse_upstream_url("https://api.openai.com/v1");
  REQUIRE(v1.ok());
  CHECK(v1.value.path_prefix == "/v1");
  CHECK(parse_upstream_url("https://gw.example/llm/openai/").value.path_prefix == "/llm/openai");
  auto v6 = parse_upstream_url("http://[::1]:8080/p");
  REQUIRE(v6.ok());
  CHECK(v6.value.host == "::1");
  CHECK(v6.value.port == 8080);
  CHECK(v6.value.path_prefix == "/p");
}

TEST_CASE("upstream URL: refused forms say why") {
  CHECK(parse_upstream_url("ftp://x.org").error.find("scheme must be http or https") != std::string::npos);
  CHECK(parse_upstream_url("api.openai.com").error.find("want http://") != std::string::npos);
  CHECK(parse_upstream_url("https://user:pw@x.org").error.find("user info") != std::string::npos);
  CHECK(parse_upstream_url("https://x.org/?key=1").error.find("query or fragment") != std::string::npos);
  CHECK(parse_upstream_url("https://x.org#f").error.find("query or fragment") != std::string::npos);
  CHECK(parse_upstream_url("https://x.org:0").error.find("out of range") != std::string::npos);
  CHECK(parse_upstream_url("https://x.org:99999").error.find("out of range") != std::string::npos);
  CHECK(parse_upstream_url("https://").error.find("missing host") != std::string::npos);
  CHECK(parse_upstream_url("https://x.org//v1").error.find("empty segment") != std::string::npos);
  CHECK(parse_upstream_url("https://x.org/a b").error.find("space") != std::string::npos);
}
