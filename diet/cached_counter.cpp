#include "diet/cached_counter.hpp"

#include "pruning/tokenizer/hash.hpp"

namespace td::diet {

std::uint64_t CachedCounter::count(std::string_view text) const {
  const std::uint64_t salt = inner_.cache_salt();
  if (text.size() < kMinCachedBytes) return inner_.count(text);
  if (salt == 0) {
    // A counter whose answer drifts may still have a part that does not:
    // that part is cached, the drifting step applied on each call.
    const std::uint64_t raw_salt = inner_.raw_salt();
    if (raw_salt == 0) return inner_.count(text);
    std::uint64_t key = tok::hash_bytes(text.data(), text.size(), raw_salt);
    if (key == 0) key = 1;  // 0 marks an empty cache slot
    if (auto hit = cache_.get(key)) return inner_.count_from_raw(*hit);
    const std::uint64_t raw = inner_.raw(text);
    cache_.put(key, raw);
    return inner_.count_from_raw(raw);
  }
  std::uint64_t key = tok::hash_bytes(text.data(), text.size(), salt);
  if (key == 0) key = 1;  // 0 marks an empty cache slot
  if (auto hit = cache_.get(key)) return *hit;
  const std::uint64_t n = inner_.count(text);
  cache_.put(key, n);
  return n;
}

}  // namespace td::diet
