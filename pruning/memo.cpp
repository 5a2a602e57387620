#include "pruning/memo.hpp"

#include "pruning/tokenizer/hash.hpp"

namespace td::pruning {

namespace memo_detail {

Key key_of(std::uint64_t salt, tok::Hash128 text) {
  const std::uint64_t in[2] = {text.lo, text.hi};
  const tok::Hash128 h = tok::hash128(in, sizeof in, salt);
  return Key{h.lo, h.hi};
}

std::size_t bytes_of(const Snipped& s) {
  std::size_t n = 0;
  for (const auto& p : s.pieces) {
    n += p.text.size() + 48;
    for (const auto& name : p.names) n += name.size() + 32;
  }
  return n;
}

}  // namespace memo_detail

std::uint64_t memo_salt(std::string_view transform, std::initializer_list<std::uint64_t> constants) {
  std::uint64_t h = tok::hash_bytes(transform.data(), transform.size(), 0x6d656d6fULL);
  for (std::uint64_t c : constants) h = tok::hash_bytes(&c, sizeof c, h);
  return h;
}

}  // namespace td::pruning
