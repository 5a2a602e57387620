// A BPE vocabulary (tiktoken "mergeable ranks"): byte strings and their ranks,
// in one arena. The rank of a token is its id; lower rank = merged earlier.
// Lookups are the hot path of BPE, so they are tiered by length: one and two
// bytes index dense tables; up to 8 bytes a flat open-addressing table keyed
// by the bytes themselves (no hashing of the text, no comparison against the
// arena); longer tokens an XXH3-hashed table over the arena.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pruning/tokenizer/huge_alloc.hpp"

namespace td::tok {

inline constexpr std::uint32_t kNoRank = 0xFFFFFFFFu;

class Vocab {
 public:
  // Parses a .tiktoken file (`base64(token) rank\n` per line, ranks 0..N-1 in
  // order). On malformed input returns false and says why in *error.
  bool parse(std::string_view tiktoken_text, std::string* error);

  // Rank of the byte string, or kNoRank.
  std::uint32_t rank(const unsigned char* p, std::size_t len) const {
    if (len == 1) return byte_rank_[p[0]];
    if (len == 2) return pair_rank_[(std::size_t{p[0]} << 8) | p[1]];
    if (len <= 8) return lookup_short(p, len);
    if (len > max_token_len_) return kNoRank;
    return lookup(p, len);
  }

  std::string_view token(std::uint32_t rank) const {
    return {reinterpret_cast<const char*>(arena_.data()) + offsets_[rank], offsets_[rank + 1] - offsets_[rank]};
  }
  std::size_t size() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }
  std::size_t max_token_len() const { return max_token_len_; }
  // Heap bytes held (for the RSS budget test).
  std::size_t memory_bytes() const;

 private:
  template <class T>
  using Table = std::vector<T, HugePageAllocator<T>>;

  // Up to 8 bytes as one integer: with the length, unique (first and last
  // four bytes overlap for 4..8; bytes 0, len/2, len-1 for 1..3).
  static std::uint64_t short_key(const unsigned char* p, std::size_t len) {
    if (len >= 4) {
      std::uint32_t lo, hi;
      __builtin_memcpy(&lo, p, 4);
      __builtin_memcpy(&hi, p + len - 4, 4);
      return lo | (std::uint64_t{hi} << 32);
    }
    return p[0] | (std::uint64_t{p[len >> 1]} << 8) | (std::uint64_t{p[len - 1]} << 16);
  }
  std::size_t short_index(std::uint64_t key, std::size_t len) const {
    return static_cast<std::size_t>(((key + len) * 0x9E3779B97F4A7C15ull) >> short_shift_);
  }
  std::uint32_t lookup_short(const unsigned char* p, std::size_t len) const {
    const std::uint64_t key = short_key(p, len);
    for (std::size_t i = short_index(key, len);; i = (i + 1) & short_mask_) {
      const ShortSlot& s = short_slots_[i];
      if (s.len == len && s.key == key) return s.rank;
      if (s.len == 0) return kNoRank;
    }
  }
  std::uint32_t lookup(const unsigned char* p, std::size_t len) const;
  bool insert(std::uint32_t rank, std::string* error);

  struct ShortSlot {
    std::uint64_t key = 0;
    std::uint32_t len = 0;  // 0 = empty
    std::uint32_t rank = kNoRank;
  };
  Table<ShortSlot> short_slots_;  // tokens of 3..8 bytes
  std::size_t short_mask_ = 0;
  int short_shift_ = 64;

  Table<unsigned char> arena_;    // token bytes, in rank order
  Table<std::uint32_t> offsets_;  // size()+1 offsets into arena_
  Table<std::uint64_t> slots_;    // tokens of 9+ bytes: (hash tag << 32 | rank), ~0 = empty
  std::uint64_t mask_ = 0;
  std::size_t max_token_len_ = 0;
  std::uint32_t byte_rank_[256];
  Table<std::uint32_t> pair_rank_;  // 65536 two-byte strings, dense
};

}  // namespace td::tok
