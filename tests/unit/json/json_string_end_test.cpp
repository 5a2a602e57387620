// find_string_end against a byte-by-byte reading of RFC 8259's string
// grammar: random bodies dense in backslashes, quotes and the other bytes
// that matter, at every length and start offset (so runs of backslashes
// straddle the 64-byte windows in every way), and the error cases.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "json/json_string_end.hpp"

using td::json::find_string_end;
using td::json::StringEnd;

namespace {

bool hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// The oracle: one byte at a time. Returns whether the string is well formed
// and, if so, where its closing quote is.
bool reference(const std::string& t, std::size_t i, std::size_t& quote, bool& escaped) {
  escaped = false;
  while (i < t.size()) {
    const auto c = static_cast<unsigned char>(t[i]);
    if (c == '"') {
      quote = i;
      return true;
    }
    if (c < 0x20) return false;
    if (c != '\\') {
      ++i;
      continue;
    }
    escaped = true;
    if (i + 1 >= t.size()) return false;
    const char e = t[i + 1];
    if (e == 'u') {
      if (i + 6 > t.size()) return false;
      for (std::size_t k = 2; k < 6; ++k)
        if (!hex(t[i + k])) return false;
      i += 6;
    } else if (std::string_view("\"\\/bfnrt").find(e) != std::string_view::npos) {
      i += 2;
    } else {
      return false;
    }
  }
  return false;
}

void agree(const std::string& t, std::size_t body) {
  std::size_t quote = 0;
  bool escaped = false;
  const bool ok = reference(t, body, quote, escaped);
  const StringEnd e = find_string_end(t, body);
  INFO("text of " << t.size() << " bytes from " << body);
  REQUIRE((e.error == nullptr) == ok);
  if (ok) {
    REQUIRE(e.quote == quote);
    REQUIRE(e.escaped == escaped);
  }
}

}  // namespace

TEST_CASE("find_string_end: agrees with the byte-by-byte grammar on random text dense in escapes") {
  std::mt19937 rng(2026);
  // Weighted toward backslash runs and the letters after them.
  const std::string alphabet = "\\\\\\\\\\\\\"nntu0aF/x\x01\x7f\xc3\xa9 ";
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::size_t cases = 0, well_formed = 0;
  for (std::size_t len = 0; len <= 200; ++len) {
    for (int rep = 0; rep < 60; ++rep) {
      std::string t(len, ' ');
      for (char& c : t) c = alphabet[pick(rng)];
      // Half the cases: a plain run first, so the escapes sit late in a window.
      if (rep % 2) t = std::string(rng() % 130, 'p') + t;
      for (std::size_t body : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {
        if (body > t.size()) continue;
        agree(t, body);
        std::size_t q;
        bool esc;
        well_formed += reference(t, body, q, esc);
        ++cases;
      }
    }
  }
  CHECK(cases > 30000);
  CHECK(well_formed > 1000);  // the random text does end strings, escapes and all
}

TEST_CASE("find_string_end: a run of n backslashes before a quote, at every offset across two windows") {
  for (std::size_t pad = 0; pad < 140; ++pad)
    for (std::size_t run = 0; run < 70; ++run) {
      const std::string t = std::string(pad, 'x') + std::string(run, '\\') + "\"tail\"";
      agree(t, 0);
      const StringEnd e = find_string_end(t, 0);
      REQUIRE(e.error == nullptr);
      // An odd run escapes the first quote: the string ends at the second.
      CHECK(e.quote == (run % 2 ? t.size() - 1 : pad + run));
    }
}

TEST_CASE("find_string_end: errors") {
  auto error = [](const std::string& t) { return find_string_end(t, 0).error != nullptr; };
  CHECK(error(""));
  CHECK(error("abc"));
  CHECK(error("abc\\"));
  CHECK(error("abc\\\""));
  CHECK(error("a\\x\""));
  CHECK(error("a\\u12\""));
  CHECK(error("a\\u12"));
  CHECK(error("a\\uZZZZ\""));
  CHECK(error("a\nb\""));
  CHECK(error("a\\\tb\""));
  CHECK(error(std::string(100, 'a') + "\\u00"));
  CHECK(error(std::string(63, 'a') + "\\"));
  CHECK_FALSE(error("\\u00e9\\/\\b\\f\\n\\r\\t\\\\\\\"\""));
  CHECK_FALSE(error(std::string(64, 'a') + "\""));
}
