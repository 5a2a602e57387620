// Byte scans that JSON string handling spends most of its time in, 16 bytes
// at a time where SSE2 exists (every x86-64), byte by byte elsewhere. Shared
// by the request parser (json_spans) and the response scanner (json_scan).
#pragma once

#include <cstddef>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace td::json {

namespace detail {
// Index of the first byte at or after `i` that is '"', '\\', a control
// character (< 0x20) or, with StopAtNonAscii, a byte >= 0x80; `n` if none.
template <bool StopAtNonAscii>
inline std::size_t scan_string_bytes(const char* s, std::size_t i, std::size_t n) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i ctl_max = _mm_set1_epi8(0x1F);
  while (i + 16 <= n) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash));
    // unsigned v <= 0x1F  <=>  max(v, 0x1F) == 0x1F
    hit = _mm_or_si128(hit, _mm_cmpeq_epi8(_mm_max_epu8(v, ctl_max), ctl_max));
    int mask = _mm_movemask_epi8(hit);
    if constexpr (StopAtNonAscii) mask |= _mm_movemask_epi8(v);  // a byte's high bit is its own flag
    if (mask != 0) return i + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
    i += 16;
  }
#endif
  for (; i < n; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\' || c < 0x20 || (StopAtNonAscii && c >= 0x80)) return i;
  }
  return n;
}
}  // namespace detail

// Index of the first byte at or after `i` that is '"', '\\' or a control
// character (< 0x20), or `n` if none. Strings are most of a chat body, so this
// loop is the parsers' hot path.
inline std::size_t scan_string_body(const char* s, std::size_t i, std::size_t n) {
  return detail::scan_string_bytes<false>(s, i, n);
}

// Index of the first byte at or after `i` that a JSON string writer cannot
// copy as is: '"', '\\', a control character (< 0x20) or a non-ASCII byte
// (>= 0x80, to be checked as UTF-8); `n` if none. Encoding edited text back
// into a body is mostly long plain runs.
inline std::size_t scan_plain_ascii(const char* s, std::size_t i, std::size_t n) {
  return detail::scan_string_bytes<true>(s, i, n);
}

// Bit k set when s[k] (k < n <= 16) is '"', '\\', '{', '}', '[' or ']': the
// bytes a scan inside nested JSON must look at, quotes and escapes included,
// so whole strings are stepped over without a second scan.
inline unsigned nesting_mask(const char* s, std::size_t n) {
#if defined(__SSE2__)
  if (n == 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    __m128i q = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
    __m128i braces = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('{')), _mm_cmpeq_epi8(v, _mm_set1_epi8('}')));
    __m128i brackets = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('[')), _mm_cmpeq_epi8(v, _mm_set1_epi8(']')));
    return static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(q, _mm_or_si128(braces, brackets))));
  }
#endif
  unsigned mask = 0;
  for (std::size_t k = 0; k < n; ++k) {
    char c = s[k];
    if (c == '"' || c == '\\' || c == '{' || c == '}' || c == '[' || c == ']') mask |= 1u << k;
  }
  return mask;
}

}  // namespace td::json
