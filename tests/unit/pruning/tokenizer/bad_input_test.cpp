// Bad input never crashes or hangs, and is counted deterministically. No
// oracle exists for invalid UTF-8, so these check what must hold for any
// byte-level BPE: the tokens spell the input back byte for byte, count()
// equals encode().size(), and a second run gives the same answer. (Speed
// bounds live in scripts/bench, not here.)
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "pruning/tokenizer/encoding.hpp"

using namespace td::tok;

namespace {

void check_roundtrip(const std::string& text) {
  for (EncodingId id : {EncodingId::O200kBase, EncodingId::Cl100kBase}) {
    const Encoding& enc = Encoding::get(id);
    auto ids = enc.encode(text);
    std::string back;
    back.reserve(text.size());
    for (auto r : ids) back += enc.vocab().token(r);
    CHECK(back == text);
    const auto n = enc.count(text);
    CHECK(n == ids.size());  // a second, independent pass agrees
    CHECK(n <= text.size());
    if (!text.empty()) CHECK(n >= 1);
  }
}

std::string repeat(std::string_view s, std::size_t times) {
  std::string out;
  out.reserve(s.size() * times);
  for (std::size_t i = 0; i < times; ++i) out += s;
  return out;
}

}  // namespace

TEST_CASE("invalid UTF-8 is counted on its bytes, deterministically") {
  const char* samples[] = {
      "\x80",
      "\xBF\xBF",
      "a\xC3",
      "\xC3(",
      "\xE2\x82",
      "\xE2\x82(",
      "\xF0\x9F\x98",
      "\xF0\x9F\x98 x",
      "\xC0\xAF",
      "\xE0\x80\xAF",
      "\xED\xA0\x80",
      "\xF4\x90\x80\x80",
      "\xF8\x88\x80\x80\x80",
      "\xFE\xFF",
      "\xFF",
      "word\xFFword",
      " \x80\x80\x80 x",
      "'\xC5s",
      "\xC5\xBF",
      "12\x80"
      "34",
      "\r\n\xA0\r\n",
      "\xE3\x80\x80\xE3\x80",
  };
  for (const char* s : samples) {
    INFO("sample=" << s);
    check_roundtrip(s);
  }
  std::mt19937 rng(42);
  for (int round = 0; round < 200; ++round) {
    std::string s(1 + rng() % 64, '\0');
    for (auto& ch : s) ch = static_cast<char>(rng() & 0xFF);
    check_roundtrip(s);
  }
}

TEST_CASE("10 MB of one repeated character") {
  // One 10 MB piece for the rank-bucket merge. One pass per encoding keeps
  // the suite quick: the round trip under o200k, the count under cl100k
  // (checked against the structure of a run of 'a': at least one token per
  // longest 'a…a' token, at most one per byte).
  const std::string text(10u << 20, 'a');
  const Encoding& o200k = Encoding::get(EncodingId::O200kBase);
  auto ids = o200k.encode(text);
  std::string back;
  back.reserve(text.size());
  for (auto r : ids) back += o200k.vocab().token(r);
  CHECK(back == text);
  const auto n = Encoding::get(EncodingId::Cl100kBase).count(text);
  CHECK(n >= text.size() / Encoding::get(EncodingId::Cl100kBase).vocab().max_token_len());
  CHECK(n < text.size() / 2);
}

TEST_CASE("2 MB of one repeated multi-byte character, of spaces, of one digit") {
  check_roundtrip(repeat("\xE4\xB8\x80", (2u << 20) / 3));  // 一: one piece
  check_roundtrip(std::string(2u << 20, ' '));              // one white-space piece
  check_roundtrip(std::string(2u << 20, '7'));              // 3-digit pieces
}

TEST_CASE("1 MB without a space") {
  std::mt19937 rng(7);
  std::string letters(1u << 20, 'a');
  for (auto& ch : letters) ch = static_cast<char>('a' + rng() % 26);
  check_roundtrip(letters);  // one 1 MB piece
  std::string mixed(1u << 20, 'a');
  const char pool[] = "abcXYZ019_-./:=\"{}[]";
  for (auto& ch : mixed) ch = pool[rng() % (sizeof pool - 1)];
  check_roundtrip(mixed);
}

TEST_CASE("long combining sequences") {
  check_roundtrip("a" + repeat("\xCC\x81", 100000));           // a + 100k U+0301
  check_roundtrip(repeat("e\xCC\x81\xCC\xA7", 50000));         // stacked marks
  check_roundtrip(" " + repeat("\xCC\x81", 100000) + "x");     // marks after a space
  check_roundtrip(repeat("\xE0\xA4\x95\xE0\xA5\x8D", 50000));  // Devanagari virama chain
}
