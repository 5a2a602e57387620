#include <doctest/doctest.h>

#include <string>

#include "pruning/tokenizer/encoding.hpp"

using namespace td::tok;

TEST_CASE("the embedded vocabularies load with their full rank tables, compactly") {
  const Encoding& o = Encoding::get(EncodingId::O200kBase);
  const Encoding& c = Encoding::get(EncodingId::Cl100kBase);
  CHECK(Encoding::loaded(EncodingId::O200kBase));
  CHECK(o.vocab().size() == 199998);
  CHECK(c.vocab().size() == 100256);
  CHECK(o.vocab().max_token_len() == 128);
  CHECK(c.vocab().max_token_len() == 128);
  // Both loaded stay within the budget of 30 MB (about 18 MB now).
  CHECK(o.vocab().memory_bytes() + c.vocab().memory_bytes() < 30'000'000u);
  CHECK(o.vocab().token(0) == "!");
  auto hello = reinterpret_cast<const unsigned char*>("hello");
  CHECK(o.vocab().rank(hello, 5) == 24912);
  CHECK(c.vocab().rank(hello, 5) == 15339);
  CHECK(o.name() == "o200k_base");
  CHECK(encoding_from_name("cl100k_base") == EncodingId::Cl100kBase);
  CHECK_FALSE(encoding_from_name("p50k_base").has_value());
}

TEST_CASE("a malformed vocabulary is an error value, not a crash") {
  std::string error;
  Vocab v;
  CHECK_FALSE(v.parse("", &error));
  CHECK_FALSE(v.parse("IQ== 1\n", &error));  // ranks must start at 0
  CHECK(error.find("line 1") != std::string::npos);
  CHECK_FALSE(v.parse("I!Q== 0\n", &error));         // bad base64
  CHECK_FALSE(v.parse("IQ==\n", &error));            // no rank
  CHECK_FALSE(v.parse("IQ== 0\nIQ== 1\n", &error));  // duplicate
  CHECK_FALSE(v.parse("IQ== 0\n", &error));          // not every byte has a token
  CHECK(error.find("byte") != std::string::npos);
  std::string all;
  const char* b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int b = 0; b < 256; ++b) {
    all += b64[b >> 2];
    all += b64[(b & 3) << 4];
    all += "== " + std::to_string(b) + "\n";
  }
  all += "YWI= 256\n";  // "ab"
  CHECK(v.parse(all, &error));
  CHECK(v.size() == 257);
  auto ab = reinterpret_cast<const unsigned char*>("ab");
  CHECK(v.rank(ab, 2) == 256);
}
