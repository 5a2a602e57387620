#include "proxy/phases/body_peek.hpp"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace td::proxy {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Where `quoted_key` (a quote, then at least one byte) first starts at or
// after `from`, or npos. Candidates are found 16 bytes at a time as the pair
// of the opening quote and the key's first letter, which JSON text rarely
// has side by side (faster here than glibc's memmem:
// scripts/bench/proxy/record-2026-11-24.md).
std::size_t find_quoted_key(std::string_view body, std::size_t from, std::string_view quoted_key) {
  const char* s = body.data();
  const std::size_t n = body.size();
  const std::size_t k = quoted_key.size();
  std::size_t i = from;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8(quoted_key[0]);
  const __m128i first = _mm_set1_epi8(quoted_key[1]);
  for (; i + 17 <= n; i += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 1));
    auto mask =
        static_cast<unsigned>(_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, quote), _mm_cmpeq_epi8(b, first))));
    while (mask != 0) {
      const std::size_t at = i + static_cast<std::size_t>(__builtin_ctz(mask));
      if (at + k <= n && std::memcmp(s + at, quoted_key.data(), k) == 0) return at;
      mask &= mask - 1;
    }
  }
#endif
  if (i >= n) return std::string_view::npos;
  auto* p = static_cast<const char*>(memmem(s + i, n - i, quoted_key.data(), k));
  return p ? static_cast<std::size_t>(p - s) : std::string_view::npos;
}

// Position just after `"key"` + ws + ':' + ws, for the first occurrence of
// the key; npos when absent.
std::size_t value_of(std::string_view body, std::string_view quoted_key) {
  std::size_t from = 0;
  while (from < body.size()) {
    const std::size_t hit = find_quoted_key(body, from, quoted_key);
    if (hit == std::string_view::npos) return std::string_view::npos;
    auto i = hit + quoted_key.size();
    while (i < body.size() && is_ws(body[i])) ++i;
    if (i < body.size() && body[i] == ':') {
      ++i;
      while (i < body.size() && is_ws(body[i])) ++i;
      return i;
    }
    from = hit + 1;
  }
  return std::string_view::npos;
}

}  // namespace

BodyPeek peek_body(std::string_view whole) {
  BodyPeek out;
  // Only the ends: SDKs put "model" (and "stream") first or last, and the
  // middle of a large body (the messages) is the expensive part to scan.
  constexpr std::size_t kEnd = 4096;
  if (whole.size() > 2 * kEnd) {
    out = peek_body(whole.substr(0, kEnd));
    if (out.model.empty()) {
      auto tail = peek_body(whole.substr(whole.size() - kEnd));
      out.model = tail.model;
      out.stream = out.stream || tail.stream;
    } else if (!out.stream) {
      out.stream = peek_body(whole.substr(whole.size() - kEnd)).stream;
    }
    return out;
  }
  std::string_view body = whole;
  std::size_t from = 0;
  // The first "model" key whose value is a string (a nested schema property
  // called "model" has an object value and is skipped).
  while (from < body.size()) {
    auto v = value_of(body.substr(from), "\"model\"");
    if (v == std::string_view::npos) break;
    v += from;
    if (v < body.size() && body[v] == '"') {
      auto end = body.find('"', v + 1);
      if (end != std::string_view::npos) {
        auto model = body.substr(v + 1, end - v - 1);
        if (model.find('\\') == std::string_view::npos && model.size() <= 256) out.model = model;
        break;
      }
      break;
    }
    from = v;
  }
  auto s = value_of(body, "\"stream\"");
  out.stream = s != std::string_view::npos && body.substr(s).starts_with("true");
  return out;
}

}  // namespace td::proxy
