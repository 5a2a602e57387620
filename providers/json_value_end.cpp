#include "providers/json_value_end.hpp"

#include <cstdint>
#include <cstring>

#include "providers/json_masks.hpp"

namespace td::providers::json {

std::size_t json_value_end(std::string_view text, std::size_t open) {
  const char* s = text.data();
  const std::size_t n = text.size();
  std::uint64_t escape_carry = 0;
  std::uint64_t in_string = 0;  // all ones: the window starts inside a string
  std::size_t depth = 0;
  for (std::size_t at = open; at < n; at += 64) {
    const std::size_t avail = n - at;
    const char* w = s + at;
    char padded[64];
    if (avail < 64) {  // the text's last bytes, padded with spaces
      std::memset(padded, ' ', sizeof padded);
      std::memcpy(padded, w, avail);
      w = padded;
    }
    const StructureMasks m = structure_masks64(w);
    const std::uint64_t quotes = m.quote & ~escaped_bytes(m.backslash, escape_carry);
    const std::uint64_t strings = prefix_xor(quotes) ^ in_string;
    in_string = (strings >> 63) ? ~std::uint64_t{0} : 0;
    const std::uint64_t close = m.close & ~strings;
    std::uint64_t brackets = (m.open | m.close) & ~strings;
    for (; brackets != 0; brackets &= brackets - 1) {
      const auto k = static_cast<unsigned>(__builtin_ctzll(brackets));
      if ((close >> k) & 1) {
        if (depth == 0) return std::string_view::npos;  // `open` held no bracket
        if (--depth == 0) return at + k + 1;
      } else {
        ++depth;
      }
    }
  }
  return std::string_view::npos;
}

}  // namespace td::providers::json
