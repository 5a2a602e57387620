// JSON string bodies decoded to UTF-8 and text encoded as JSON strings: the
// two directions the request writer needs (declared in json_strings.hpp).
#include "json/json_strings.hpp"

#include <array>

#include "json/json_simd.hpp"

namespace td::json {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

char* put_utf8(char* o, std::uint32_t cp) {
  if (cp < 0x80) {
    *o++ = static_cast<char>(cp);
  } else if (cp < 0x800) {
    *o++ = static_cast<char>(0xC0 | (cp >> 6));
    *o++ = static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *o++ = static_cast<char>(0xE0 | (cp >> 12));
    *o++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *o++ = static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *o++ = static_cast<char>(0xF0 | (cp >> 18));
    *o++ = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *o++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *o++ = static_cast<char>(0x80 | (cp & 0x3F));
  }
  return o;
}

std::uint32_t read_hex4(std::string_view s, std::size_t i) {
  std::uint32_t v = 0;
  for (std::size_t k = 0; k < 4; ++k) v = v * 16 + static_cast<std::uint32_t>(hex_value(s[i + k]));
  return v;
}

// Length of the valid UTF-8 sequence starting at s[i], 0 if invalid
// (overlongs, surrogates, > U+10FFFF and truncations are invalid).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  auto cont = [&](std::size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // > U+10FFFF
    return 4;
  }
  return 0;
}

// What each one-character escape stands for (\u is decoded apart). Those
// JSON does not define cannot reach here (the parser refuses them); they
// stand for themselves, as \" \\ and \/ do.
constexpr auto kUnescaped = [] {
  std::array<char, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = static_cast<char>(c);
  t['b'] = '\b';
  t['f'] = '\f';
  t['n'] = '\n';
  t['r'] = '\r';
  t['t'] = '\t';
  return t;
}();

// Decodes the \u escape at s[i] (and the low surrogate after a high one)
// into *o; returns the index after it. Lone halves become U+FFFD.
std::size_t decode_u_escape(std::string_view body, std::size_t i, char*& o) {
  const char* s = body.data();
  const std::size_t n = body.size();
  i += 2;
  std::uint32_t cp = read_hex4(body, i);
  i += 4;
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    if (i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u') {
      std::uint32_t lo = read_hex4(body, i + 2);
      if (lo >= 0xDC00 && lo <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        i += 6;
      } else {
        cp = 0xFFFD;
      }
    } else {
      cp = 0xFFFD;
    }
  } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
    cp = 0xFFFD;
  }
  o = put_utf8(o, cp);  // at most 4 bytes from at least 6 escaped ones
  return i;
}

// Decodes the escape at s[i] (s[i] == '\\', validated by the parser) into
// *o; returns the index after it.
inline std::size_t decode_escape(std::string_view body, std::size_t i, char*& o) {
  const auto e = static_cast<unsigned char>(body[i + 1]);
  if (e == 'u') return decode_u_escape(body, i, o);
  *o++ = kUnescaped[e];
  return i + 2;
}

}  // namespace

void decode_string(std::string_view body, std::string& out) {
  // Decoded text is never longer than its escaped form: write into a buffer
  // of that size through a pointer, then trim. Tool output is full of \n
  // and \", one every few dozen bytes, so the per-escape cost is what
  // matters. Long strings go 64 bytes at a time: the window is stored as it
  // is, then for each escape in it (in order) its character is written and
  // the 64 bytes after it are stored again right behind, each store
  // overwriting what the shift left wrong. No branch depends on where the
  // escapes are but the loop over them. Every store stays inside the buffer
  // and every load inside `body`: windows need 140 bytes ahead (64 for the
  // window, 12 for a surrogate pair escaped at its last byte, 64 for the
  // store after it), and output trails input.
  const std::size_t base = out.size();
  out.resize(base + body.size());
  char* o = out.data() + base;
  const char* s = body.data();
  const std::size_t n = body.size();
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i backslash = _mm_set1_epi8('\\');
  auto copy64 = [](char* to, const char* from) {
    for (int k = 0; k < 64; k += 16)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to + k), _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + k)));
  };
  while (i + 140 <= n) {
    std::uint64_t mask = 0;
    for (int k = 0; k < 64; k += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + k));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + k), v);
      mask |= std::uint64_t(static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash)))) << k;
    }
    const std::size_t start = i;
    std::size_t next = i;  // input index of the next byte not yet decoded
    while (mask != 0) {
      const std::size_t at = start + static_cast<std::size_t>(__builtin_ctzll(mask));
      o += at - next;  // the bytes before the escape are in place already
      next = decode_escape(body, at, o);
      copy64(o, s + next);
      // Backslashes the escape consumed (\\ or inside \u....) are not escapes.
      const std::size_t done = next - start;
      mask = done >= 64 ? 0 : mask & (~std::uint64_t{0} << done);
    }
    const std::size_t end = std::max(start + 64, next);
    o += end - next;
    i = end;
  }
  while (i + 16 <= n) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o), v);
    const int mask = _mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash));
    if (mask == 0) {
      i += 16;
      o += 16;
      continue;
    }
    const auto k = static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
    o += k;
    i = decode_escape(body, i + k, o);
  }
#endif
  while (i < n) {
    if (s[i] != '\\') {
      *o++ = s[i++];
      continue;
    }
    i = decode_escape(body, i, o);
  }
  out.resize(static_cast<std::size_t>(o - out.data()));
}

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.reserve(out.size() + s.size() + 2);
  out.push_back('"');
  std::size_t i = 0, run = 0;  // [run, i) is a stretch copied verbatim
  auto flush = [&] { out.append(s.data() + run, i - run); };
  while (i < s.size()) {
    i = scan_plain_ascii(s.data(), i, s.size());
    if (i == s.size()) break;
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      std::size_t len = utf8_sequence_length(s, i);
      if (len > 0) {
        i += len;
        continue;
      }
      flush();
      out.append("\xEF\xBF\xBD");  // U+FFFD for each invalid byte
      run = ++i;
      continue;
    }
    flush();
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\f':
        out.append("\\f");
        break;
      default:
        out.append("\\u00");
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xF]);
    }
    run = ++i;
  }
  flush();
  out.push_back('"');
}

std::string json_string(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

}  // namespace td::json
