#include "providers/json_string_end.hpp"

#include <cstdint>
#include <cstring>

#include "providers/json_masks.hpp"

namespace td::providers::json {
namespace {

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
    const StringMasks m = string_masks64(w);
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

}  // namespace td::providers::json
