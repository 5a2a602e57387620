#include "diet/cached_counter.hpp"

#include <optional>

#include "pruning/tokenizer/hash.hpp"

namespace td::diet {

std::uint64_t CachedCounter::count(std::string_view text) const {
  if (text.size() < kMinCachedBytes) return inner_.count(text);
  // A counter whose answer drifts (cache_salt() 0) may still have a part
  // that does not: that part is cached, the drifting step applied on each call.
  const std::uint64_t salt = inner_.cache_salt();
  const bool raw = salt == 0;
  const std::uint64_t key_salt = raw ? inner_.raw_salt() : salt;
  if (key_salt == 0) return inner_.count(text);
  std::uint64_t key = tok::hash_bytes(text.data(), text.size(), key_salt);
  if (key == 0) key = 1;  // 0 marks an empty cache slot
  std::optional<std::uint64_t> value = cache_.get(key);
  if (!value) {
    value = raw ? inner_.raw(text) : inner_.count(text);
    cache_.put(key, *value);
  }
  return raw ? inner_.count_from_raw(*value) : *value;
}

}  // namespace td::diet
