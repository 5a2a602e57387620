#include <doctest/doctest.h>

#include "proxy/key_fingerprint.hpp"

using namespace td::proxy;

TEST_CASE("fingerprints are 16 hex digits, stable, distinct, never the key") {
  std::string a = key_fingerprint("sk-test-aaaaaaaaaaaaaaaaaaaa");
  CHECK(a.size() == 16);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a == key_fingerprint("sk-test-aaaaaaaaaaaaaaaaaaaa"));
  CHECK(a != key_fingerprint("sk-test-aaaaaaaaaaaaaaaaaaab"));
  CHECK(key_fingerprint("").empty());
  // SHA-256("tokendiet-key:sk-abc") starts with these 8 bytes (openssl dgst -sha256).
  CHECK(key_fingerprint("sk-abc") == "c8de03e59df23026");
}

TEST_CASE("the API key is found where each provider puts it") {
  CHECK(api_key_from_headers("Bearer sk-1", "", "") == "sk-1");
  CHECK(api_key_from_headers("bearer  sk-1 ", "", "") == "sk-1");
  CHECK(api_key_from_headers("", "ant-key", "") == "ant-key");
  CHECK(api_key_from_headers("", "", "goog-key") == "goog-key");
  CHECK(api_key_from_headers("Basic abc", "", "goog-key") == "goog-key");
  CHECK(api_key_from_headers("", "", "").empty());
}
