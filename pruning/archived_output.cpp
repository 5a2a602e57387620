#include "pruning/archived_output.hpp"

#include "pruning/tokenizer/hash.hpp"

namespace td::pruning {

std::string archive_id(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  const tok::Hash128 h = tok::hash128(text.data(), text.size());
  std::string out = "td-";
  out.reserve(3 + 32);
  for (std::uint64_t half : {h.hi, h.lo})
    for (int shift = 60; shift >= 0; shift -= 4) out.push_back(kHex[(half >> shift) & 15]);
  return out;
}

}  // namespace td::pruning
