#include "diet/cached_counter.hpp"

#include "pruning/tokenizer/hash.hpp"

namespace td::diet {

std::uint64_t CachedCounter::count(std::string_view text) const {
  const std::uint64_t salt = inner_.cache_salt();
  if (salt == 0 || text.size() < kMinCachedBytes) return inner_.count(text);
  std::uint64_t key = tok::hash_bytes(text.data(), text.size(), salt);
  if (key == 0) key = 1;  // 0 marks an empty cache slot
  if (auto hit = cache_.get(key)) return *hit;
  const std::uint64_t n = inner_.count(text);
  cache_.put(key, n);
  return n;
}

}  // namespace td::diet
