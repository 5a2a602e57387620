// The one fast hash of the tokenizer and the count cache: XXH3-64 (Debian
// libxxhash-dev, used header-only so nothing is linked).
#pragma once

#include <cstddef>
#include <cstdint>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace td::tok {

inline std::uint64_t hash_bytes(const void* p, std::size_t len, std::uint64_t seed = 0) {
  return XXH3_64bits_withSeed(p, len, seed);
}

}  // namespace td::tok
