// A BPE vocabulary (tiktoken "mergeable ranks"): byte strings and their ranks,
// in one arena with a flat open-addressing hash over it. The rank of a token
// is its id; lower rank = merged earlier.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
    if (len > max_token_len_) return kNoRank;
    return lookup(p, len);
  }

  std::string_view token(std::uint32_t rank) const {
    return {reinterpret_cast<const char*>(arena_.data()) + offsets_[rank],
            offsets_[rank + 1] - offsets_[rank]};
  }
  std::size_t size() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }
  std::size_t max_token_len() const { return max_token_len_; }
  // Heap bytes held (for the RSS budget test).
  std::size_t memory_bytes() const;

 private:
  std::uint32_t lookup(const unsigned char* p, std::size_t len) const;
  bool insert(std::uint32_t rank, std::string* error);

  std::vector<unsigned char> arena_;   // token bytes, in rank order
  std::vector<std::uint32_t> offsets_; // size()+1 offsets into arena_
  std::vector<std::uint64_t> slots_;   // (hash tag << 32 | rank), ~0 = empty
  std::uint64_t mask_ = 0;
  std::size_t max_token_len_ = 0;
  std::uint32_t byte_rank_[256];
  std::vector<std::uint32_t> pair_rank_;  // 65536 two-byte strings, dense
};

}  // namespace td::tok
