#include <doctest/doctest.h>

#include "proxy/net/beast_header_map.hpp"

using namespace td::proxy;
namespace http = boost::beast::http;

TEST_CASE("strip_dropped_fields removes hop-by-hop fields, the ones Connection names, and ours") {
  http::fields f;
  f.insert("Authorization", "Bearer sk");
  f.insert("Connection", "keep-alive, X-Private");
  f.insert("Keep-Alive", "timeout=5");
  f.insert("X-Private", "1");
  f.insert("Proxy-Authorization", "Basic x");
  f.insert("x-tokendiet-session", "s1");
  f.insert("anthropic-version", "2023-06-01");
  f.insert("Transfer-Encoding", "chunked");
  f.insert("connection", " x-other ,");  // a second Connection field counts too
  f.insert("X-Other", "2");
  strip_dropped_fields(f, true);
  std::vector<std::string> left;
  for (auto& field : f) left.emplace_back(field.name_string());
  CHECK(left == std::vector<std::string>{"Authorization", "anthropic-version"});
}

TEST_CASE("strip_dropped_fields keeps our headers in a response and leaves a clean block alone") {
  http::fields f;
  f.insert("content-type", "text/event-stream");
  f.insert("x-tokendiet-note", "kept");
  f.insert("x-request-id", "r1");
  strip_dropped_fields(f, false);
  CHECK(std::distance(f.begin(), f.end()) == 3);
  for (const char* hop : {"Upgrade", "TE", "Trailer", "Proxy-Connection", "Keep-Alive"}) f.insert(hop, "x");
  strip_dropped_fields(f, false);
  CHECK(std::distance(f.begin(), f.end()) == 3);
  CHECK(f.find("upgrade") == f.end());
}
