// The long-input half of hash.hpp: libxxhash's x86 dispatch (the shared
// library picks SSE2, AVX2 or AVX-512 once, at first use). hash.hpp is not
// included: its XXH_INLINE_ALL renames the very types these declarations use.
#define XXH_DISPATCH_DISABLE_REPLACE
#include <xxh_x86dispatch.h>

#include <cstddef>
#include <cstdint>

namespace td::tok::detail {

std::uint64_t hash_long(const void* p, std::size_t len, std::uint64_t seed) {
  return XXH3_64bits_withSeed_dispatch(p, len, seed);
}

void hash128_long(const void* p, std::size_t len, std::uint64_t seed, std::uint64_t (&lo_hi)[2]) {
  const XXH128_hash_t h = XXH3_128bits_withSeed_dispatch(p, len, seed);
  lo_hi[0] = h.low64;
  lo_hi[1] = h.high64;
}

}  // namespace td::tok::detail
