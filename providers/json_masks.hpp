// Bit masks of 64 bytes of JSON text (bit k: byte k), SSE2 where it exists
// (every x86-64), byte by byte elsewhere, and the carry arithmetic that turns
// them into which bytes are escaped and which lie inside strings. Shared by
// the scans that look at JSON 64 bytes at a time (json_string_end.cpp,
// json_value_end.cpp).
#pragma once

#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace td::providers::json {

namespace detail {
#if defined(__SSE2__)
inline unsigned eq16(__m128i v, char c) {
  return static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c))));
}
inline __m128i load16(const char* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
#endif
}  // namespace detail

// Bit k set where the k-th of 16 bytes is '"', '\\', or < 0x20.
inline void masks16(const char* p, unsigned& quote, unsigned& backslash, unsigned& control) {
#if defined(__SSE2__)
  const __m128i v = detail::load16(p);
  const __m128i ctl_max = _mm_set1_epi8(0x1F);
  quote = detail::eq16(v, '"');
  backslash = detail::eq16(v, '\\');
  // unsigned v <= 0x1F  <=>  max(v, 0x1F) == 0x1F
  control = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v, ctl_max), ctl_max)));
#else
  quote = backslash = control = 0;
  for (unsigned k = 0; k < 16; ++k) {
    const auto c = static_cast<unsigned char>(p[k]);
    quote |= unsigned{c == '"'} << k;
    backslash |= unsigned{c == '\\'} << k;
    control |= unsigned{c < 0x20} << k;
  }
#endif
}

struct StringMasks {
  std::uint64_t quote = 0, backslash = 0, control = 0;
};

// The string masks of 64 readable bytes at p.
inline StringMasks string_masks64(const char* p) {
  StringMasks m;
  for (unsigned k = 0; k < 4; ++k) {
    unsigned q, b, c;
    masks16(p + 16 * k, q, b, c);
    m.quote |= std::uint64_t{q} << (16 * k);
    m.backslash |= std::uint64_t{b} << (16 * k);
    m.control |= std::uint64_t{c} << (16 * k);
  }
  return m;
}

struct StructureMasks {
  std::uint64_t quote = 0, backslash = 0, open = 0, close = 0;  // open: '{' '['; close: '}' ']'
};

// The structure masks of 64 readable bytes at p.
inline StructureMasks structure_masks64(const char* p) {
  StructureMasks m;
  for (unsigned k = 0; k < 4; ++k) {
    unsigned q, b, o, c;
#if defined(__SSE2__)
    const __m128i v = detail::load16(p + 16 * k);
    q = detail::eq16(v, '"');
    b = detail::eq16(v, '\\');
    o = detail::eq16(v, '{') | detail::eq16(v, '[');
    c = detail::eq16(v, '}') | detail::eq16(v, ']');
#else
    q = b = o = c = 0;
    for (unsigned j = 0; j < 16; ++j) {
      const char x = p[16 * k + j];
      q |= unsigned{x == '"'} << j;
      b |= unsigned{x == '\\'} << j;
      o |= unsigned{x == '{' || x == '['} << j;
      c |= unsigned{x == '}' || x == ']'} << j;
    }
#endif
    m.quote |= std::uint64_t{q} << (16 * k);
    m.backslash |= std::uint64_t{b} << (16 * k);
    m.open |= std::uint64_t{o} << (16 * k);
    m.close |= std::uint64_t{c} << (16 * k);
  }
  return m;
}

// The bytes of the window that a backslash escapes: the one after each
// odd-length run of backslashes (the backslashes at odd offsets inside a run
// are escaped too). `carry` says the window's first byte is escaped by a run
// that ended the previous window, and is set for the next one.
//
// A run that starts at an even bit escapes the bytes at odd bits after its
// start, one that starts at an odd bit those at even bits. Adding each
// odd-starting run's first bit to the backslash mask clears that run and
// sets the bit past its end; shifted by one, that flips the even/odd pattern
// over exactly the bytes following odd-starting runs. The addition's
// overflow is an odd-starting run that reaches the window's end: an odd
// length, so the next window starts escaped.
inline std::uint64_t escaped_bytes(std::uint64_t backslash, std::uint64_t& carry) {
  constexpr std::uint64_t kEvenBits = 0x5555555555555555ULL;
  backslash &= ~carry;  // an escaped backslash starts no run
  const std::uint64_t follows_backslash = (backslash << 1) | carry;
  const std::uint64_t odd_starts = backslash & ~kEvenBits & ~follows_backslash;
  std::uint64_t sum;
  carry = __builtin_add_overflow(odd_starts, backslash, &sum) ? 1 : 0;
  return (kEvenBits ^ (sum << 1)) & follows_backslash;
}

// Bit k set when an odd number of bits at or below k are: with the mask of
// unescaped quotes, the bytes inside strings (opening quote included, closing
// quote not).
inline std::uint64_t prefix_xor(std::uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

}  // namespace td::providers::json
