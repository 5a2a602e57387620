// A TokenCounter that remembers: the same text (a history is resent every
// turn) is counted once per cache (the diet's, diet/diet_caches.hpp),
// then costs a hash and a lookup (docs/design.md §Principles (6)). Wraps the exact tokenizers; a counter whose
// cache_salt() is 0 (the calibrated estimator, whose ratio moves) has its
// raw() cached instead when it has a raw_salt() (the byte-class sum: a
// pass over every byte of every message of every request otherwise), and is
// called straight through when it has none.
#pragma once

#include <cstdint>
#include <string_view>

#include "pruning/token_counter.hpp"
#include "pruning/tokenizer/count_cache.hpp"

namespace td::diet {

class CachedCounter final : public pruning::TokenCounter {
 public:
  CachedCounter(const pruning::TokenCounter& inner, tok::CountCache& cache) : inner_(inner), cache_(cache) {}
  std::uint64_t count(std::string_view text) const override;
  std::uint64_t count_hashed(std::string_view text, std::uint64_t lo, std::uint64_t hi) const override;
  std::uint64_t cache_salt() const override { return inner_.cache_salt(); }
  bool exact() const override { return inner_.exact(); }

  // Shorter texts are counted directly: hashing them costs about as much.
  static constexpr std::size_t kMinCachedBytes = 64;

 private:
  // The salt the cache's keys carry (the count's, else the raw value's; 0:
  // not cached), and the count of `text` under `key` (0 to be made).
  std::uint64_t key_salt() const;
  std::uint64_t cached(std::string_view text, std::uint64_t key) const;

  const pruning::TokenCounter& inner_;
  tok::CountCache& cache_;
};

}  // namespace td::diet
