#include "json/json_string_end.hpp"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace td::json {
namespace {

struct Masks {
  std::uint64_t quote = 0, backslash = 0, control = 0;  // bit k: byte k of the window
};

#if defined(__SSE2__)
// Bit k set where the k-th of 16 bytes is '"', '\\', or < 0x20.
inline void masks16(const char* p, unsigned& quote, unsigned& backslash, unsigned& control) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i ctl_max = _mm_set1_epi8(0x1F);
  quote = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"'))));
  backslash = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
  // unsigned v <= 0x1F  <=>  max(v, 0x1F) == 0x1F
  control = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v, ctl_max), ctl_max)));
}
#endif

// The masks of 64 readable bytes at p.
Masks masks64(const char* p) {
  Masks m;
#if defined(__SSE2__)
  for (unsigned k = 0; k < 4; ++k) {
    unsigned q, b, c;
    masks16(p + 16 * k, q, b, c);
    m.quote |= std::uint64_t{q} << (16 * k);
    m.backslash |= std::uint64_t{b} << (16 * k);
    m.control |= std::uint64_t{c} << (16 * k);
  }
#else
  for (unsigned k = 0; k < 64; ++k) {
    const auto c = static_cast<unsigned char>(p[k]);
    m.quote |= std::uint64_t{c == '"'} << k;
    m.backslash |= std::uint64_t{c == '\\'} << k;
    m.control |= std::uint64_t{c < 0x20} << k;
  }
#endif
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
std::uint64_t escaped_bytes(std::uint64_t backslash, std::uint64_t& carry) {
  constexpr std::uint64_t kEvenBits = 0x5555555555555555ULL;
  backslash &= ~carry;  // an escaped backslash starts no run
  const std::uint64_t follows_backslash = (backslash << 1) | carry;
  const std::uint64_t odd_starts = backslash & ~kEvenBits & ~follows_backslash;
  std::uint64_t sum;
  carry = __builtin_add_overflow(odd_starts, backslash, &sum) ? 1 : 0;
  return (kEvenBits ^ (sum << 1)) & follows_backslash;
}

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// What may follow a backslash (RFC 8259 section 7): 1 a letter that stands
// for one character, 2 'u' (four hex digits to check), 0 nothing else.
struct EscapeTable {
  unsigned char kind[256] = {};
  constexpr EscapeTable() {
    for (unsigned char c : {'"', '\\', '/', 'b', 'f', 'n', 'r', 't'}) kind[c] = 1;
    kind[static_cast<unsigned char>('u')] = 2;
  }
};
constexpr EscapeTable kEscape;

}  // namespace

StringEnd find_string_end(std::string_view text, std::size_t body) {
  const char* s = text.data();
  const std::size_t n = text.size();
  StringEnd out;
#if defined(__SSE2__)
  // Most strings are keys and short values: one block, no escape.
  if (body + 16 <= n) {
    unsigned q, b, c;
    masks16(s + body, q, b, c);
    const unsigned first = q | b | c;
    if (first != 0 && (first & (0u - first) & q) != 0) {
      out.quote = body + static_cast<std::size_t>(__builtin_ctz(first));
      return out;
    }
  }
#endif
  std::uint64_t carry = 0;
  for (std::size_t at = body; at < n; at += 64) {
    const std::size_t avail = n - at;
    const char* w = s + at;
    char padded[64];
    if (avail < 64) {  // the text's last bytes: padded with a byte that is none of the three
      std::memset(padded, 'a', sizeof padded);
      std::memcpy(padded, w, avail);
      w = padded;
    }
    const Masks m = masks64(w);
    const std::uint64_t escaped = escaped_bytes(m.backslash, carry);
    const std::uint64_t stop = (m.quote & ~escaped) | m.control;
    const std::uint64_t upto = stop != 0 ? stop ^ (stop - 1) : ~std::uint64_t{0};  // bits through the first stop
    std::uint64_t esc = escaped & upto;
    if (avail < 64) esc &= (std::uint64_t{1} << avail) - 1;  // a trailing backslash escapes no padding
    out.escaped |= (m.backslash & upto) != 0;
    for (; esc != 0; esc &= esc - 1) {
      const std::size_t k = static_cast<std::size_t>(__builtin_ctzll(esc));
      const unsigned char kind = kEscape.kind[static_cast<unsigned char>(w[k])];
      if (kind == 0) {
        out.error = "bad escape";
        return out;
      }
      if (kind == 2) {
        const std::size_t u = at + k;
        if (u + 4 >= n) {
          out.error = "unterminated string";
          return out;
        }
        if (!is_hex(s[u + 1]) || !is_hex(s[u + 2]) || !is_hex(s[u + 3]) || !is_hex(s[u + 4])) {
          out.error = "bad \\u escape";
          return out;
        }
      }
    }
    if (stop != 0) {
      const auto k = static_cast<unsigned>(__builtin_ctzll(stop));
      if ((m.control >> k) & 1) {
        out.error = "control character in string";
        return out;
      }
      out.quote = at + k;
      return out;
    }
  }
  out.error = "unterminated string";
  return out;
}

}  // namespace td::json
