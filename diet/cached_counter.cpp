#include "diet/cached_counter.hpp"

#include <optional>

#include "pruning/tokenizer/hash.hpp"

namespace td::diet {

std::uint64_t CachedCounter::key_salt() const {
  // A counter whose answer drifts (cache_salt() 0) may still have a part
  // that does not: that part is cached, the drifting step applied on each call.
  const std::uint64_t salt = inner_.cache_salt();
  return salt != 0 ? salt : inner_.raw_salt();
}

std::uint64_t CachedCounter::cached(std::string_view text, std::uint64_t key) const {
  const bool raw = inner_.cache_salt() == 0;
  if (key == 0) key = 1;  // 0 marks an empty cache slot
  std::optional<std::uint64_t> value = cache_.get(key);
  if (!value) {
    value = raw ? inner_.raw(text) : inner_.count(text);
    cache_.put(key, *value);
  }
  return raw ? inner_.count_from_raw(*value) : *value;
}

std::uint64_t CachedCounter::count(std::string_view text) const {
  const std::uint64_t salt = text.size() < kMinCachedBytes ? 0 : key_salt();
  if (salt == 0) return inner_.count(text);
  return cached(text, tok::hash_bytes(text.data(), text.size(), salt));
}

std::uint64_t CachedCounter::count_hashed(std::string_view text, std::uint64_t lo, std::uint64_t hi) const {
  const std::uint64_t salt = text.size() < kMinCachedBytes ? 0 : key_salt();
  if (salt == 0) return inner_.count(text);
  // The text's own 128-bit hash and its size, under the salt: no pass over
  // its bytes (the key space is another than count()'s: a text may have an
  // entry under each, with the same value).
  const std::uint64_t words[3] = {lo, hi, text.size()};
  return cached(text, tok::hash_bytes(words, sizeof words, salt ^ 0x686173686564ULL));
}

}  // namespace td::diet
