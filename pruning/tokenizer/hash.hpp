// The one fast hash of the tokenizer, the count cache and the content hashes
// of message texts: XXH3 (Debian libxxhash-dev). Short inputs are hashed by
// the header's inlined code (no call at all: vocabulary lookups hash a few
// bytes); long ones by libxxhash's runtime-dispatched loop, which uses AVX2
// or AVX-512 where the CPU has them (the inlined code is SSE2 only, as the
// binary targets baseline x86-64). Both compute the same XXH3 value.
#pragma once

#include <cstddef>
#include <cstdint>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace td::tok {

struct Hash128 {
  std::uint64_t lo = 0, hi = 0;
  bool operator==(const Hash128&) const = default;
};

namespace detail {
// Past XXH3's mid-size path its bulk loop runs: from there on, dispatch.
inline constexpr std::size_t kLongInput = 240;
std::uint64_t hash_long(const void* p, std::size_t len, std::uint64_t seed);
void hash128_long(const void* p, std::size_t len, std::uint64_t seed, std::uint64_t (&lo_hi)[2]);
}  // namespace detail

inline std::uint64_t hash_bytes(const void* p, std::size_t len, std::uint64_t seed = 0) {
  if (len > detail::kLongInput) return detail::hash_long(p, len, seed);
  return XXH3_64bits_withSeed(p, len, seed);
}

inline Hash128 hash128(const void* p, std::size_t len, std::uint64_t seed = 0) {
  if (len > detail::kLongInput) {
    std::uint64_t h[2];
    detail::hash128_long(p, len, seed, h);
    return {h[0], h[1]};
  }
  const XXH128_hash_t h = XXH3_128bits_withSeed(p, len, seed);
  return {h.low64, h.high64};
}

}  // namespace td::tok
