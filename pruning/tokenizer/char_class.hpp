// Character classes of tiktoken's pretokenizer patterns, and a UTF-8 decoder
// that never fails: the scanner works on arbitrary bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pruning/tokenizer/unicode_tables.hpp"

namespace td::tok {

// Class bits (generated tables use the same values).
inline constexpr std::uint8_t kLetter = 1;     // \p{L}
inline constexpr std::uint8_t kNumber = 2;     // \p{N}
inline constexpr std::uint8_t kSpace = 4;      // \s = White_Space (Rust regex)
inline constexpr std::uint8_t kUpperish = 8;   // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
inline constexpr std::uint8_t kLowerish = 16;  // [\p{Ll}\p{Lm}\p{Lo}\p{M}]

[[gnu::always_inline]] inline std::uint8_t class_of(std::uint32_t cp) {
  if (cp >= 0x110000) return 0;
  return unicode::kBlockData[unicode::kBlockIndex[cp >> 8] * 256u + (cp & 0xFFu)];
}

// One character of the input: its class and its length in bytes.
struct Char {
  std::uint32_t cp;
  std::uint8_t len;
  std::uint8_t cls;
};

// Decodes the character at s[i] (i < n). A byte that does not start a valid,
// shortest-form UTF-8 sequence is one character of class 0 (punctuation-like,
// as U+FFFD would be), so invalid input is counted on its bytes,
// deterministically.
[[gnu::always_inline]] inline Char decode_at(const unsigned char* s, std::size_t n, std::size_t i) {
  unsigned char b0 = s[i];
  if (b0 < 0x80) return {b0, 1, class_of(b0)};
  std::size_t left = n - i;
  auto cont = [&](std::size_t k) { return k < left && (s[i + k] & 0xC0) == 0x80; };
  std::uint32_t cp;
  std::uint8_t len;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    if (!cont(1)) return {0xFFFD, 1, 0};
    cp = ((b0 & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu);
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (!cont(1) || !cont(2)) return {0xFFFD, 1, 0};
    cp = ((b0 & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);
    if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)) return {0xFFFD, 1, 0};
    len = 3;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return {0xFFFD, 1, 0};
    cp = ((b0 & 0x07u) << 18) | ((s[i + 1] & 0x3Fu) << 12) | ((s[i + 2] & 0x3Fu) << 6) | (s[i + 3] & 0x3Fu);
    if (cp < 0x10000 || cp > 0x10FFFF) return {0xFFFD, 1, 0};
    len = 4;
  } else {
    return {0xFFFD, 1, 0};
  }
  return {cp, len, class_of(cp)};
}

}  // namespace td::tok
