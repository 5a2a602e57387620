#include "pruning/archived_output.hpp"

#include "pruning/tokenizer/hash.hpp"

namespace td::pruning {

std::string archive_id(std::string_view text) {
  const tok::Hash128 h = tok::hash128(text.data(), text.size());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = "td-";
  for (std::uint64_t word : {h.hi, h.lo})
    for (int shift = 60; shift >= 0; shift -= 4) id += kHex[(word >> shift) & 0xF];
  return id;
}

}  // namespace td::pruning
