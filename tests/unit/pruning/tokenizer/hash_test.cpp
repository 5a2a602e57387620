// hash.hpp: the dispatched long-input path computes XXH3 exactly as the
// inlined code does (cache keys and the vocabulary table depend on it), at
// every length across the short/long boundary and from every alignment.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "pruning/tokenizer/hash.hpp"

using namespace td::tok;

TEST_CASE("hash_bytes and hash128 equal the inlined XXH3 at every length, offset and seed") {
  std::mt19937_64 rng(7);
  std::string buf(70000, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  std::size_t checked_long = 0;
  auto check = [&](std::size_t offset, std::size_t len, std::uint64_t seed) {
    const char* p = buf.data() + offset;
    REQUIRE(hash_bytes(p, len, seed) == XXH3_64bits_withSeed(p, len, seed));
    const XXH128_hash_t want = XXH3_128bits_withSeed(p, len, seed);
    const Hash128 got = hash128(p, len, seed);
    REQUIRE(got.lo == want.low64);
    REQUIRE(got.hi == want.high64);
    checked_long += len > detail::kLongInput;
  };
  for (std::uint64_t seed : {0ULL, 1ULL, 0x9E3779B97F4A7C15ULL})
    for (std::size_t offset = 0; offset < 16; offset += 5)
      for (std::size_t len = 0; len <= 1100; ++len) check(offset, len, seed);
  for (std::size_t len : {4095u, 4096u, 4097u, 50000u, 65536u, 69990u}) check(3, len, 42);
  CHECK(checked_long > 2000);
}
